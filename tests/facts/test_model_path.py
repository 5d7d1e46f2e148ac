"""The model path: one structured call over the shown candidates; a decision naming anything
else, or output that does not parse, keeps the fact as new and logs a warning."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.store.base import BaseStore

from langgraph_episodic.facts import FactRecord
from langgraph_episodic.tools import ENGLISH, create_memory_tools
from tests.fakes import ScriptedChatModel, call_tool
from tests.tools.conftest import Call, bullets

from .conftest import Clock, user

NS = ("memories", "alice")


def decide(action: str, fact: int | None = None) -> AIMessage:
    return call_tool("FactDecision", action=action, fact=fact)


def records(store: BaseStore, ns: tuple[str, ...] = NS) -> list[FactRecord]:
    found = [FactRecord.from_value(i.value) for i in store.search(ns, limit=100)]
    return [r for r in found if r is not None]


def shown(model: ScriptedChatModel) -> str:
    """The text of the last decision request the model received."""
    messages: list[BaseMessage] = model.received[-1]
    return str(messages[-1].content)


def tools(store: BaseStore, clock: Clock, model: ScriptedChatModel, **kw: Any) -> Any:
    return create_memory_tools(store=store, clock=clock, model=model, min_score=None, **kw)


async def test_the_model_decides_an_update_over_numbered_candidates(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    model = ScriptedChatModel(script=[decide("update", 1)])
    save, recall = tools(store, clock, model)
    await call(save, {"information": "Ich wohne in München."}, user("alice"))  # no candidates
    assert model.position == 0  # nothing to decide over: no call
    clock.set(2026, 6, 1)
    answer = await call(save, {"information": "Mein Zuhause ist jetzt Berlin."}, user("alice"))
    assert "(ersetzt: „Ich wohne in München.“)" in answer
    assert "1. Ich wohne in München." in shown(model) and "fact-" not in shown(model)
    assert bullets(await call(recall, {"frage": "Wo wohne ich?"}, user("alice"))) == [
        "Mein Zuhause ist jetzt Berlin. (seit Juni 2026)"]
    assert {r.method for r in records(store)} == {"model"}


@pytest.mark.parametrize(("action", "current"), [("same", 1), ("end", 0), ("new", 2)])
async def test_each_model_decision_is_applied(
    store: BaseStore, call: Call, clock: Clock, action: str, current: int
) -> None:
    model = ScriptedChatModel(script=[decide(action, None if action == "new" else 1)])
    save, _ = tools(store, clock, model)
    await call(save, {"information": "Ich spiele Tennis."}, user("alice"))
    await call(save, {"information": "Tennis ist mein Sport."}, user("alice"))
    assert sum(r.current for r in records(store)) == current
    assert model.exhausted


@pytest.mark.parametrize("reply", [
    decide("update", 7),  # a number it was not shown
    decide("end", None),  # no number
    "Sure! I think it is an update of the first one.",  # no structured answer at all
    call_tool("FactDecision", action="replace", fact=1),  # not an action
])
async def test_a_garbage_decision_keeps_the_fact_as_new_and_warns(
    store: BaseStore, call: Call, clock: Clock, reply: Any, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedChatModel(script=[reply])
    save, _ = tools(store, clock, model)
    await call(save, {"information": "Ich wohne in München."}, user("alice"))
    with caplog.at_level(logging.WARNING, logger="langgraph_episodic.facts"):
        answer = await call(save, {"information": "Ich bin nach Berlin gezogen."}, user("alice"))
    assert answer == "Gespeichert: Ich bin nach Berlin gezogen."
    assert sorted((r.text, r.current) for r in records(store)) == [
        ("Ich bin nach Berlin gezogen.", True), ("Ich wohne in München.", True)]
    assert any("kept as new" in r.getMessage() for r in caplog.records)


async def test_the_model_is_shown_only_this_users_facts(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    model = ScriptedChatModel(script=[decide("new")])
    save, _ = tools(store, clock, model)
    store.put(("memories", "bob"), "b1", {"text": "Bob wohnt in Bremen.", "kind": "fact"})
    store.put(("memories", "alice", "notes"), "n1", {"text": "Alice wohnt laut Notiz in Rom.",
                                                     "kind": "fact"})
    await call(save, {"information": "Ich wohne in München."}, user("alice"))
    await call(save, {"information": "Ich wohne in Berlin."}, user("alice"))
    request = shown(model)
    assert "München" in request and "Bremen" not in request and "Rom" not in request


def test_a_model_without_structured_output_is_refused_with_the_fix() -> None:
    class Plain(ScriptedChatModel):
        def with_structured_output(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    with pytest.raises(TypeError, match="model=None"):
        create_memory_tools(model=Plain(script=[]))


async def test_what_replaces_a_fact_keeps_its_topic_and_answers_it_in_other_words(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    model = ScriptedChatModel(script=[decide("update", 1)])
    save, recall = create_memory_tools(store=store, clock=clock, model=model, locale="en")
    await call(save, {"information": "My employer is Hillside Primary."}, user("alice"))
    clock.set(2026, 6, 1)
    await call(save, {"information": "My first term lecturing at Sussex University went well."},
               user("alice"))
    assert [r.slot for r in records(store) if r.current] == ["work"]
    # The question shares no word with the current fact: the topic finds it, by filter.
    answer = await call(recall, {"query": "Where do I work?"}, user("alice"))
    assert bullets(answer, ENGLISH)[0].startswith(
        "My first term lecturing at Sussex University went well.")
