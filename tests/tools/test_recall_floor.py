"""The recall tool's floor decides whether a question is answered; the runners-up need less.

A paraphrase scores lower than the wording it paraphrases, and the right fact is often second
under a best hit that passes: once the best hit reaches ``min_score``, the next ones need
``min_score * RUNNER_UP_SHARE``. A question whose best hit is under the floor gets nothing.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, SearchItem, SearchOp
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.facts.recall import search_op
from langgraph_episodic.memory_kinds import RUNNER_UP_SHARE, passing
from langgraph_episodic.tools import create_memory_tools

from .conftest import Call, bullets, user

NOTHING = "Keine relevanten Informationen im Gedächtnis gefunden."
FACTS = [
    "Der Nutzer bevorzugt Python für Datenanalyse.",
    "Der Nutzer wohnt in Hamburg an der Elbe.",
    "Der Nutzer möchte bis Juni einen Marathon in Hamburg laufen.",
    "Der Nutzer trinkt keinen Kaffee.",
]
QUESTION = "Was macht der Nutzer in Hamburg?"
"""A question on no single-valued topic: only the floor decides (a topic's current value
answers by filter, see :func:`test_a_topic_s_current_value_answers_under_the_floor`)."""
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def hit(key: str, score: float | None) -> SearchItem:
    return SearchItem(("m",), key, {"text": key}, NOW, NOW, score=score)


def test_nothing_passes_when_the_best_hit_is_under_the_floor() -> None:
    assert passing([hit("a", 0.09), hit("b", 0.08)], 0.10) == []


def test_runners_up_pass_at_the_share_of_the_floor_best_first() -> None:
    share = 0.10 * RUNNER_UP_SHARE
    items = [hit("a", 0.30), hit("b", share), hit("c", share - 1e-6), hit("d", 0.12)]
    assert [i.key for i in passing(items, 0.10)] == ["a", "d", "b"]


def test_unscored_hits_beside_scored_ones_are_fillers_and_do_not_pass() -> None:
    """A store fills a short page with items put without an index (score None)."""
    assert [i.key for i in passing([hit("a", 0.30), hit("b", None)], 0.10)] == ["a"]
    assert passing([hit("a", 0.01), hit("b", None)], 0.10) == []


def test_a_store_without_an_index_answers_with_everything_and_no_floor_keeps_all() -> None:
    assert [i.key for i in passing([hit("a", None), hit("b", None)], 0.10)] == ["a", "b"]
    items = [hit("a", None), hit("b", 0.01)]
    assert [i.key for i in passing(items, None)] == ["a", "b"]


async def test_an_item_put_without_an_index_is_no_answer_to_a_question(
    store: BaseStore, call: Call
) -> None:
    """The page of a question is filled with the user's unindexed items; the recall answers
    with what the question found, not with them."""
    save, recall = create_memory_tools(store=store)
    for fact in FACTS[:2]:  # fewer than the recall's k: the page has room for a filler
        await call(save, {"information": fact}, user("alice"))
    store.put(("memories", "alice"), "raw", {"text": "Der Nutzer hat einen Hund.", "current": True,
                                              "kind": "fact"}, index=False)
    answer = bullets(await call(recall, {"frage": QUESTION}, user("alice")))
    assert answer and "Der Nutzer hat einen Hund." not in answer


async def test_the_runner_up_under_the_floor_is_in_the_answer(store: BaseStore, call: Call) -> None:
    save, _ = create_memory_tools(store=store, min_score=None)
    for fact in FACTS:
        await call(save, {"information": fact}, user("alice"))
    (found,) = store.batch([search_op(("memories", "alice"), QUESTION, 3)])
    scores = [item.score for item in found]
    assert all(s is not None for s in scores) and len(scores) == 3
    s1, s2, s3 = (float(s) for s in scores if s is not None)
    assert s1 > s2 > 0, scores  # the premise: a runner-up scored below the best
    floor = min(s1, s2 / RUNNER_UP_SHARE)  # the runner-up is under this floor, above its share
    _, recall = create_memory_tools(store=store, min_score=floor)
    answer = bullets(await call(recall, {"frage": QUESTION}, user("alice")))
    expected = [item.value["text"] for item in found if float(item.score or 0) >= floor * RUNNER_UP_SHARE]
    assert answer == expected
    assert len(answer) >= 2 and (s3 >= floor * RUNNER_UP_SHARE) == (len(answer) == 3)


@pytest.mark.parametrize("above", [1e-6, 0.05])
async def test_a_question_whose_best_hit_is_under_the_floor_gets_nothing(
    store: BaseStore, call: Call, above: float
) -> None:
    save, _ = create_memory_tools(store=store, min_score=None)
    for fact in FACTS:
        await call(save, {"information": fact}, user("alice"))
    (found,) = store.batch([search_op(("memories", "alice"), QUESTION, 3)])
    best = max(float(item.score or 0) for item in found)
    _, recall = create_memory_tools(store=store, min_score=best + above)
    assert await call(recall, {"frage": QUESTION}, user("alice")) == NOTHING


async def test_a_topic_s_current_value_answers_under_the_floor(store: BaseStore, call: Call) -> None:
    """A question about a single-valued topic (where the user lives) finds the topic's current
    value by filter; the floor, which its score may not reach, decides the rest."""
    save, _ = create_memory_tools(store=store, min_score=None)
    for fact in FACTS:
        await call(save, {"information": fact}, user("alice"))
    _, recall = create_memory_tools(store=store, min_score=10.0)
    assert await call(recall, {"frage": "Wo wohnt der Nutzer?"}, user("alice")) != NOTHING
    assert bullets(await call(recall, {"frage": "Wo wohnt der Nutzer?"}, user("alice"))) == [
        "Der Nutzer wohnt in Hamburg an der Elbe."]
    assert await call(recall, {"frage": "Trinkt der Nutzer Tee?"}, user("alice")) == NOTHING


async def test_the_user_s_facts_saved_in_the_third_person_answer_as_the_user_s(
    store: BaseStore, call: Call
) -> None:
    """An agent saves what Maya said as "Maya ..."; "Where do I live?" is about those facts
    when Maya is the user: her user id, or the ``user_name`` the app passes."""
    save, _ = create_memory_tools(store=store, min_score=None)
    _, recall = create_memory_tools(store=store, min_score=10.0)
    anonymous: RunnableConfig = {"configurable": {"user_id": "u-17"}}
    named: RunnableConfig = {"configurable": {"user_id": "u-17", "user_name": "Maya Patel"}}
    for config in (user("maya"), anonymous):
        await call(save, {"information": "Maya lives in Leeds."}, config)
        await call(save, {"information": "Rachel lives in Toronto."}, config)
    for config in (user("maya"), named):
        assert bullets(await call(recall, {"frage": "Wo wohne ich?"}, config)) == [
            "Maya lives in Leeds."]
    assert await call(recall, {"frage": "Wo wohne ich?"}, anonymous) == NOTHING


async def test_a_question_naming_someone_gets_their_fact_not_the_user_s(
    store: BaseStore, call: Call
) -> None:
    save, _ = create_memory_tools(store=store, min_score=None)
    for fact in ("I live in York.", "Rachel lives in Toronto."):
        await call(save, {"information": fact}, user("alice"))
    _, recall = create_memory_tools(store=store, min_score=10.0)
    assert bullets(await call(recall, {"frage": "Where does Rachel live?"}, user("alice"))) == [
        "Rachel lives in Toronto."]
    assert bullets(await call(recall, {"frage": "Where do I live?"}, user("alice"))) == [
        "I live in York."]


async def test_the_search_leaves_out_the_user_s_own_name(call: Call) -> None:
    """Every fact an agent saved about Lena holds "Lena": the name tells none apart, so the
    recall searches without it (a name that is not the user's stays)."""
    asked: list[str] = []

    class Recording(InMemoryStore):
        def batch(self, ops: Any) -> list[Any]:
            ops = list(ops)
            asked.extend(op.query for op in ops if isinstance(op, SearchOp) and op.query)
            return super().batch(ops)

        async def abatch(self, ops: Any) -> list[Any]:
            return self.batch(ops)

    _, recall = create_memory_tools(store=Recording())
    await call(recall, {"frage": "What is Lena saving for, and Rachel?"}, user("lena"))
    assert asked and all("Lena" not in q and "Rachel" in q for q in asked if "saving" in q)
    asked.clear()
    await call(recall, {"frage": "What is Lena saving for, and Rachel?"}, user("u-1"))
    assert any("Lena" in q for q in asked)
