"""The graph nodes remember the conversation as the middleware does: each turn, from any later
thread.

A thing said in passing in one thread (no entity, no episode) is in the next thread's first
prompt, fenced as data, for the same user and never for another; a replayed turn writes no
second copy; ``turns=False`` stores nothing; the deferred path stores the same items; the
redaction applies; a turn still in the thread's messages is not loaded again; a question the
memory knows nothing about loads nothing. Sync and async, ``InMemoryStore`` and ``ChromaStore``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from langgraph_episodic.formation import DeferredFormation
from langgraph_episodic.graph import TurnOptions, build_memory_graph
from langgraph_episodic.graph.turns import turn_key

from .conftest import cfg, make_chroma
from .fakes import ScriptedFakeModel
from .test_middleware import ask, system_text
from .test_middleware_turns import fenced, turns

MIA = "By the way, my daughter's name is Mia and she starts school in September."
QUESTION = "What is my daughter's name?"
ANSWER = "Mia starts school in September, noted."
WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
TOLD = f"| Monday, 8 May 2023, the user said: {MIA}"


def graph_with(store: BaseStore, model: Any, **options: Any) -> Any:
    """The prebuilt graph around ``model``, every group on, turns said at ``WHEN``."""
    options.setdefault("turns", TurnOptions(clock=lambda: WHEN))
    return build_memory_graph(model, store=store, checkpointer=InMemorySaver(),
                              system_prompt="You are helpful.", **options)


def memory_lines(messages: list[Any]) -> list[str]:
    """The data lines of the saved-memories block of a request's system message."""
    return fenced(system_text(messages)).splitlines()


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_said_in_one_thread_recalled_in_another_for_that_user_only(
        store: BaseStore, mode: str) -> None:
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    graph = graph_with(store, model)
    await ask(graph, MIA, cfg("alice", "s1"), mode)
    out = await ask(graph, QUESTION, cfg("alice", "s2"), mode)
    assert TOLD in memory_lines(model.sent[1])
    assert out["recalled_memories"][0]["value"]["text"] == MIA
    await ask(graph, QUESTION, cfg("bob", "s1"), mode)
    assert "Mia" not in system_text(model.sent[2])
    assert all("Mia" not in i.value["text"] for i in turns(store, "bob"))


def test_the_stored_turn_is_the_middlewares(store: BaseStore) -> None:
    graph = graph_with(store, ScriptedFakeModel(respond=lambda msgs: ANSWER))
    graph.invoke({"messages": [HumanMessage(MIA, id="m1")]}, cfg("alice", "s1"))
    said = store.get(("memories", "alice", "turns"), turn_key("alice:s1", "m1", "user"))
    assert said is not None and said.value["text"] == MIA and said.value["kind"] == "turn"
    assert said.value["context"] == {"day": "Monday, 8 May 2023", "thread": "alice:s1"}
    answer = store.get(("memories", "alice", "turns"), turn_key("alice:s1", "m1", "assistant"))
    assert answer is not None and answer.value["text"] == ANSWER
    assert answer.value["reply_to"] == "m1"


def test_a_replayed_turn_writes_no_second_copy(store: BaseStore) -> None:
    model = ScriptedFakeModel(respond=lambda msgs: ANSWER)
    graph = graph_with(store, model)
    config = cfg("alice", "s1")
    for _ in range(2):
        graph.invoke({"messages": [HumanMessage(MIA, id="m1")]}, config)
    before_agent = next(s for s in graph.get_state_history(config) if s.next == ("agent",))
    replay = {"configurable": {**before_agent.config["configurable"], "user_id": "alice"}}
    graph.invoke(None, replay)  # the turn again, from its checkpoint
    assert len(model.sent) == 3, "the replay ran the agent (and what follows it) again"
    assert sorted(i.value["role"] for i in turns(store)) == ["assistant", "user"]


def test_turns_false_stores_and_loads_nothing(store: BaseStore) -> None:
    store.put(("memories", "alice"), "m1", {"text": "Alice's daughter is called Mia."})
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    graph = graph_with(store, model, turns=False)
    graph.invoke({"messages": [HumanMessage(MIA)]}, cfg("alice", "s1"))
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("alice", "s2"))
    assert turns(store) == []
    assert memory_lines(model.sent[1]) == []


def test_replies_false_stores_only_the_users_message(store: BaseStore) -> None:
    graph = graph_with(store, ScriptedFakeModel(respond=lambda msgs: ANSWER),
                       turns=TurnOptions(replies=False, clock=lambda: WHEN))
    graph.invoke({"messages": [HumanMessage(MIA)]}, cfg("alice", "s1"))
    assert [i.value["text"] for i in turns(store)] == [MIA]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_deferred_path_stores_the_same_turns(chroma_store: BaseStore,
                                                      mode: str) -> None:
    store = chroma_store  # defer= refuses InMemoryStore (not thread-safe)
    formation = DeferredFormation(debounce=0.0)
    try:
        model = ScriptedFakeModel(respond=lambda msgs: ANSWER)
        graph = graph_with(store, model, defer=formation)
        payload = {"messages": [HumanMessage(MIA, id="m1")]}
        if mode == "sync":
            graph.invoke(payload, cfg("alice", "s1"))
        else:
            await graph.ainvoke(payload, cfg("alice", "s1"))
        assert formation.flush(timeout=10)
        found = {i.value["role"]: i for i in turns(store)}
        assert sorted(found) == ["assistant", "user"]
        assert found["user"].key == turn_key("alice:s1", "m1", "user")
        assert found["user"].value["context"] == {"day": "Monday, 8 May 2023",
                                                  "thread": "alice:s1"}
        await ask(graph, QUESTION, cfg("alice", "s2"), mode)
        assert TOLD in memory_lines(model.sent[1])
    finally:
        assert formation.close(timeout=10)


def test_what_is_remembered_is_redacted(store: BaseStore) -> None:
    graph = graph_with(store, ScriptedFakeModel(respond=lambda msgs: "Noted."))
    graph.invoke({"messages": [HumanMessage("Mia's school writes to me at alice@example.org.")]},
                 cfg("alice", "s1"))
    (said,) = [i for i in turns(store) if i.value["role"] == "user"]
    assert "alice@example.org" not in said.value["text"]
    assert "[EMAIL]" in said.value["text"]


def test_a_turn_still_in_the_thread_is_not_loaded_again(store: BaseStore) -> None:
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    graph = graph_with(store, model)
    graph.invoke({"messages": [HumanMessage(MIA)]}, cfg("alice", "s1"))
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("alice", "s1"))
    assert turns(store), "the turn is stored"
    assert not any("Mia" in line for line in memory_lines(model.sent[1]))
    assert any(MIA in str(m.content) for m in model.sent[1])  # it is in the messages


def test_a_question_never_told_loads_no_memory() -> None:
    store = make_chroma()
    try:
        model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
        graph = graph_with(store, model)
        graph.invoke({"messages": [HumanMessage(MIA)]}, cfg("alice", "s1"))
        out = graph.invoke({"messages": [HumanMessage("What is the capital of Peru?")]},
                           cfg("alice", "s2"))
        assert turns(store), "the turn is stored"
        assert out["recalled_memories"] == [] and memory_lines(model.sent[1]) == []
    finally:
        store.close()
