"""``EpisodicMemoryMiddleware`` remembers the conversation: each turn, from any later thread.

A turn said in one thread is in the next thread's first request (fenced as data) for the same
user and never for another; the stored item carries its thread and day as indexed context; a
replayed turn writes no second copy; ``remember_turns=False`` stores none; the deferred path
stores the same items; the redaction applies; a question the memory knows nothing about loads
nothing; a turn still in the thread's messages is not loaded again; the agent's messages that
open a thread are remembered once.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import EpisodicMemoryMiddleware, create_memory_tools
from langgraph_episodic._fence import begin_marker, end_marker
from langgraph_episodic.formation import DeferredFormation
from langgraph_episodic.graph.turns import turn_key

from .conftest import cfg, hash_index, make_chroma
from .fakes import ScriptedFakeModel
from .test_middleware import ask, system_text

TEA = "My favourite tea is smoky lapsang souchong from the corner shop."
WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
LABEL = "SAVED MEMORIES"


def turns(store: BaseStore, user: str = "alice") -> list[Any]:
    return store.search(("memories", user, "turns"), limit=100)


def agent_with(store: BaseStore, model: Any, **options: Any) -> Any:
    middleware = EpisodicMemoryMiddleware(store=store, clock=lambda: WHEN, **options)
    return create_agent(model, tools=[], system_prompt="You are helpful.",
                        middleware=[middleware], store=store, checkpointer=InMemorySaver())


def fenced(text: str, label: str = LABEL) -> str:
    """The data lines of the fenced block ``label`` in ``text`` ('' when there is none)."""
    if begin_marker(label) not in text:
        return ""
    return text.split(begin_marker(label), 1)[1].split(end_marker(label), 1)[0]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_turn_said_in_one_thread_is_recalled_in_another_for_that_user_only(
        store: BaseStore, mode: str) -> None:
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    agent = agent_with(store, model)
    await ask(agent, TEA, cfg("alice", "s1"), mode)
    await ask(agent, "Which tea do I like?", cfg("alice", "s2"), mode)
    block = fenced(system_text(model.sent[1]))
    assert f"| Monday, 8 May 2023, the user said: {TEA}" in block.splitlines()
    await ask(agent, "Which tea do I like?", cfg("bob", "s1"), mode)
    assert "lapsang" not in system_text(model.sent[2])
    assert all("lapsang" not in i.value["text"] for i in turns(store, "bob"))


def test_the_recall_tool_finds_a_remembered_turn_from_another_thread(store: BaseStore) -> None:
    agent = agent_with(store, ScriptedFakeModel(respond=lambda msgs: "Noted."))
    agent.invoke({"messages": [HumanMessage(TEA)]}, cfg("alice", "s1"))
    _, recall = create_memory_tools(store=store, locale="en")
    assert TEA in recall.invoke({"query": "Which tea do I like?"}, cfg("alice", "s2"))
    assert TEA not in recall.invoke({"query": "Which tea do I like?"}, cfg("bob", "s1"))


def test_the_stored_turn_carries_its_thread_and_day_as_indexed_fields() -> None:
    store = InMemoryStore(index=hash_index())
    agent = agent_with(store, ScriptedFakeModel(respond=lambda msgs: "Lapsang it is, noted."))
    agent.invoke({"messages": [HumanMessage(TEA, id="m1")]}, cfg("alice", "s1"))
    said = store.get(("memories", "alice", "turns"), turn_key("alice:s1", "m1", "user"))
    assert said is not None
    assert said.value["text"] == TEA and said.value["role"] == "user"
    assert said.value["context"] == {"day": "Monday, 8 May 2023", "thread": "alice:s1"}
    indexed = store._vectors[("memories", "alice", "turns")][said.key]
    assert set(indexed) == {"text", "context.day", "context.thread"}
    answer = store.get(("memories", "alice", "turns"), turn_key("alice:s1", "m1", "assistant"))
    assert answer is not None and answer.value["text"] == "Lapsang it is, noted."
    assert answer.value["reply_to"] == "m1"


def test_a_replayed_turn_writes_no_second_copy(store: BaseStore) -> None:
    agent = agent_with(store, ScriptedFakeModel(respond=lambda msgs: "Lapsang it is, noted."))
    for _ in range(3):
        agent.invoke({"messages": [HumanMessage(TEA, id="m1")]}, cfg("alice", "s1"))
    assert sorted(i.value["role"] for i in turns(store)) == ["assistant", "user"]


def test_remember_turns_false_stores_no_turn(store: BaseStore) -> None:
    agent = agent_with(store, ScriptedFakeModel(respond=lambda msgs: "Lapsang it is, noted."),
                       remember_turns=False)
    agent.invoke({"messages": [HumanMessage(TEA)]}, cfg("alice", "s1"))
    assert store.search(("memories", "alice"), limit=100) == []


def test_remember_replies_false_stores_only_the_users_message(store: BaseStore) -> None:
    agent = agent_with(store, ScriptedFakeModel(respond=lambda msgs: "Lapsang it is, noted."),
                       remember_replies=False)
    agent.invoke({"messages": [HumanMessage(TEA)]}, cfg("alice", "s1"))
    assert [i.value["text"] for i in turns(store)] == [TEA]


def test_the_deferred_path_stores_the_same_turns() -> None:
    store = make_chroma()
    formation = DeferredFormation(debounce=0.0)
    try:
        agent = agent_with(store, ScriptedFakeModel(respond=lambda msgs: "Lapsang it is, noted."),
                           defer=formation)
        agent.invoke({"messages": [HumanMessage(TEA, id="m1")]}, cfg("alice", "s1"))
        assert formation.close(timeout=10)
        found = {i.value["role"]: i for i in turns(store)}
        assert sorted(found) == ["assistant", "user"]
        assert found["user"].key == turn_key("alice:s1", "m1", "user")
        assert found["user"].value["context"] == {"day": "Monday, 8 May 2023",
                                                  "thread": "alice:s1"}
    finally:
        store.close()


def test_what_is_remembered_is_redacted(store: BaseStore) -> None:
    agent = agent_with(store, ScriptedFakeModel(respond=lambda msgs: "Noted."),
                       remember_replies=False)
    agent.invoke({"messages": [HumanMessage("Write to me at alice@example.org about the tea.")]},
                 cfg("alice", "s1"))
    (said,) = turns(store)
    assert "alice@example.org" not in said.value["text"]
    assert "[EMAIL]" in said.value["text"]


def test_small_talk_is_not_remembered(store: BaseStore) -> None:
    agent = agent_with(store, ScriptedFakeModel(respond=lambda msgs: "Hi!"))
    agent.invoke({"messages": [HumanMessage("Hallo, danke!")]}, cfg("alice", "s1"))
    assert turns(store) == []


def test_a_question_never_told_loads_no_memory() -> None:
    store = make_chroma()
    try:
        model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
        agent = agent_with(store, model, remember_replies=False)
        agent.invoke({"messages": [HumanMessage(TEA)]}, cfg("alice", "s1"))
        agent.invoke({"messages": [HumanMessage("What is the capital of Peru?")]},
                     cfg("alice", "s2"))
        assert begin_marker(LABEL) not in system_text(model.sent[1])
    finally:
        store.close()


def test_a_turn_still_in_the_thread_is_not_loaded_again(store: BaseStore) -> None:
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    agent = agent_with(store, model)
    agent.invoke({"messages": [HumanMessage(TEA)]}, cfg("alice", "s1"))
    agent.invoke({"messages": [HumanMessage("Which tea do I like?")]}, cfg("alice", "s1"))
    assert "lapsang" not in fenced(system_text(model.sent[1]))
    assert any("lapsang" in str(m.content) for m in model.sent[1])  # it is in the messages


def test_the_agents_opening_of_a_thread_is_remembered_once(store: BaseStore) -> None:
    opening = "Last time you told me about your trip to Porto; how was the flight back?"
    agent = agent_with(store, ScriptedFakeModel(respond=lambda msgs: "Glad to hear it."))
    agent.invoke({"messages": [AIMessage(opening, id="a0"), HumanMessage(TEA, id="m1")]},
                 cfg("alice", "s1"))
    agent.invoke({"messages": [HumanMessage("And I drink it without sugar.", id="m2")]},
                 cfg("alice", "s1"))
    texts = sorted(i.value["text"] for i in turns(store))
    assert texts.count(opening) == 1
    said = store.get(("memories", "alice", "turns"), turn_key("alice:s1", "a0", "assistant"))
    assert said is not None and said.value["role"] == "assistant"
    assert "reply_to" not in said.value


def test_a_store_without_an_index_recalls_nothing_before_the_model() -> None:
    """Such a store cannot rank: its search answers with its first items whatever is asked,
    so they are no answer to the question and stay out of the prompt."""
    store = InMemoryStore()
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    agent = agent_with(store, model)
    agent.invoke({"messages": [HumanMessage(TEA)]}, cfg("alice", "s1"))
    assert turns(store)  # remembered all the same
    agent.invoke({"messages": [HumanMessage("Where is my car parked?")]}, cfg("alice", "s2"))
    assert "lapsang" not in system_text(model.sent[1])
