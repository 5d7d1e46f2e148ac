"""Deferred formation in one process: the turn returns first, the worker forms afterwards.

Each test drives a real graph or agent; the memory model is scripted and, where the order in
time matters, held on a ``threading.Event`` so that "answered but not formed" is a state the
test observes rather than a timing it hopes for.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import EpisodicMemoryMiddleware, build_memory_graph
from langgraph_episodic.chroma.store import ChromaStore
from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.formation import (
    FORMED_THROUGH,
    PENDING,
    DeferredFormation,
    Former,
    PendingTurn,
)
from langgraph_episodic.graph.threads import thread_config
from langgraph_episodic.kinds.entities import EntityWriter
from tests.fakes import ScriptedChatModel

ALICE = "I work at ACME and I use LangGraph daily."


def answer(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [("ai", "Noted.")]}


def pending(store: BaseStore) -> list[Any]:
    return store.search((PENDING,), limit=1000)


def entities(store: BaseStore, user: str) -> dict[str, str]:
    return {i.value["name"]: i.value["description"]
            for i in store.search(("entities", user), limit=1000, filter={"kind": "entity"})}


class GatedExtractor(ScriptedChatModel):
    """A memory model whose every call waits for ``gate``; counts its calls."""

    gate: Any = None
    calls: int = 0

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        assert self.gate.wait(30), "the test never opened the gate"
        return super()._generate(messages, *args, **kwargs)


def extraction(*names: str) -> AIMessage:
    """A structured-output reply naming ``names`` (as a tool call, as LangChain parses it)."""
    return AIMessage(content="", tool_calls=[{
        "name": "ExtractedEntities", "id": f"call-{'-'.join(names)}", "type": "tool_call",
        "args": {"entities": [{"name": n, "description": f"The user mentioned {n}."}
                              for n in names]}}])


@pytest.fixture
def formation() -> Iterator[DeferredFormation]:
    made = DeferredFormation(debounce=0.05)
    yield made
    made.close(timeout=5)


def test_turn_returns_before_formation_with_the_turn_already_queued(
        formation: DeferredFormation) -> None:
    gate = threading.Event()
    model = GatedExtractor(script=[extraction("ACME")], gate=gate)
    store = memory_store()
    graph = build_memory_graph(answer, model=model, store=store, summarize=False, episodes=False,
                               defer=formation)
    out = graph.invoke({"messages": [("user", ALICE)]}, thread_config("alice", "s1"))
    assert out["messages"][-1].content == "Noted."
    queued = pending(store)
    assert [i.value["text"] for i in queued] == [ALICE], "the turn is in the queue on return"
    assert entities(store, "alice") == {}, "nothing formed while the model is held"
    gate.set()
    assert formation.flush(timeout=10)
    assert entities(store, "alice") == {"ACME": "The user mentioned ACME."}
    assert pending(store) == [], "a formed turn leaves the queue"


def test_a_burst_of_ten_turns_costs_one_extraction() -> None:
    gate = threading.Event()
    model = GatedExtractor(script=[extraction(*(f"Project{i}" for i in range(10)))], gate=gate)
    store = memory_store()
    formation = DeferredFormation(debounce=0.5, max_wait=30)
    graph = build_memory_graph(answer, model=model, store=store, summarize=False,
                               episodes=False, defer=formation)
    config = thread_config("alice", "burst")
    for i in range(10):
        graph.invoke({"messages": [("user", f"I also work on Project{i} these days.")]}, config)
    gate.set()
    assert formation.close(timeout=10)
    assert model.calls == 1, "ten quick turns, one extraction over all of them"
    assert sorted(entities(store, "alice")) == sorted(f"Project{i}" for i in range(10))
    prompt = model.received[0][-1].content
    assert [prompt.index(f"Project{i} these") for i in range(10)] == sorted(
        prompt.index(f"Project{i} these") for i in range(10)), "the turns in their order"


def test_close_with_a_timeout_leaves_the_rest_in_the_store_for_the_next_start() -> None:
    gate = threading.Event()
    store = memory_store()
    first = DeferredFormation(debounce=0.0)
    graph = build_memory_graph(answer, model=GatedExtractor(script=[extraction("ACME")],
                                                            gate=gate),
                               store=store, summarize=False, episodes=False, defer=first)
    graph.invoke({"messages": [("user", ALICE)]}, thread_config("alice", "s1"))
    assert first.close(timeout=0.2) is False, "the model is held: close cannot drain"
    assert [i.value["text"] for i in pending(store)] == [ALICE], "left persisted"
    gate.set()  # the first worker may now finish its batch too: the replay must not double it

    again = DeferredFormation(debounce=0.0)
    model = ScriptedChatModel(script=[extraction("ACME"), extraction("ACME")])
    build_memory_graph(answer, model=model, store=store, summarize=False, episodes=False,
                       defer=again)
    assert again.close(timeout=10), "the next start forms what was left"
    assert entities(store, "alice") == {"ACME": "The user mentioned ACME."}
    assert pending(store) == []


def test_a_replayed_or_older_batch_never_overwrites_a_newer_one(store: BaseStore) -> None:
    former = Former(EntityWriter(None), episodes=False)
    config = thread_config("alice", "s1")
    old = PendingTurn.of_run(config, "alice", text="I work at ACME in Berlin.", episode=None)
    new = PendingTurn.of_run(config, "alice", text="I work at ACME in Vienna now.",
                             episode=None)
    assert old.key < new.key
    first = former.form(store, [new])
    assert "ACME" in first.entities
    stored = store.get(("entities", "alice"), "acme")
    assert stored is not None and stored.value[FORMED_THROUGH] == new.key
    late = former.form(store, [old])  # an older batch arriving late (another process)
    assert "ACME" in late.skipped and "ACME" not in late.entities
    again = former.form(store, [new])  # the same batch replayed after a crash
    assert again.entities == () and set(again.skipped) == set(first.entities)
    after = store.get(("entities", "alice"), "acme")
    assert after is not None and after.value == stored.value


def test_a_fact_told_in_a_turn_is_in_the_next_sessions_first_request() -> None:
    store = memory_store()
    formation = DeferredFormation(debounce=0.05)
    agent_model = ScriptedChatModel(script=["Noted.", "Hello again."])
    memory_model = ScriptedChatModel(script=[extraction("ACME")])
    agent = create_agent(agent_model, tools=[], store=store, middleware=[
        EpisodicMemoryMiddleware(store=store, model=memory_model, profile=False, memories=False,
                                 episodes=False, defer=formation)])
    agent.invoke({"messages": [("user", ALICE)]}, thread_config("alice", "s1"))
    assert formation.close(timeout=10)
    agent.invoke({"messages": [("user", "Where do I work?")]}, thread_config("alice", "s2"))
    first_request = agent_model.received[1]
    assert "The user mentioned ACME." in first_request[0].content


def test_an_episode_with_feedback_is_recorded_once_after_the_turn() -> None:
    store = memory_store()
    formation = DeferredFormation(debounce=0.0)
    graph = build_memory_graph(answer, store=store, summarize=False, defer=formation)
    config = thread_config("alice", "s1")
    out = graph.invoke({"messages": [("user", "Sort a list of numbers")],
                        "feedback": {"reward": 1.0}}, config)
    assert out.get("feedback") is None, "the feedback is used up, as inline"
    assert formation.close(timeout=10)
    episodes = store.search(("episodes", "alice"), limit=10)
    assert [e.value["solution"] for e in episodes] == ["Noted."]


def test_the_middleware_on_the_agents_own_store_records_the_episode_afterwards() -> None:
    store = memory_store()
    formation = DeferredFormation(debounce=0.0)
    agent = create_agent(ScriptedChatModel(script=["Use sorted()."]), tools=[], store=store,
                         middleware=[EpisodicMemoryMiddleware(profile=False, memories=False,
                                                              defer=formation)])
    agent.invoke({"messages": [("user", "Sort a list of numbers")],
                  "feedback": {"reward": 1.0}}, thread_config("alice", "s1"))
    assert formation.close(timeout=10)
    assert [e.value["solution"] for e in store.search(("episodes", "alice"), limit=10)] == [
        "Use sorted()."]


def test_an_async_turn_queues_without_blocking_and_is_formed_afterwards() -> None:
    store = memory_store()
    formation = DeferredFormation(debounce=0.0)
    graph = build_memory_graph(answer, store=store, summarize=False, episodes=False,
                               defer=formation)
    asyncio.run(graph.ainvoke({"messages": [("user", ALICE)]}, thread_config("alice", "s1")))
    assert formation.close(timeout=10)
    assert sorted(entities(store, "alice")) == ["ACME", "LangGraph"]
    assert pending(store) == []


def memory_store() -> ChromaStore:
    """A store in memory that two threads can use at once (the worker's and the graph's)."""
    return ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})


def test_an_in_memory_store_that_threads_cannot_share_is_refused_with_the_fix() -> None:
    """LangGraph's InMemoryStore iterates its dicts unlocked: the worker's writes during the
    graph's reads would raise at random; refused at once, naming the stores to use."""
    formation = DeferredFormation()
    store = InMemoryStore()
    with pytest.raises(TypeError, match=r"InMemoryStore is not safe.*ChromaStore\.ephemeral"):
        build_memory_graph(answer, store=store, summarize=False, episodes=False,
                           defer=formation)
    assert store.search(()) == [], "nothing was written"
    formation.close(timeout=1)


def test_deferred_entity_facts_hold_the_context_of_their_turn() -> None:
    """Formed after the turn, in one write batch, each entity's fact still carries the day and
    the thread of the run it was told in (:mod:`langgraph_episodic.memory_context`)."""
    store = memory_store()
    formation = DeferredFormation(debounce=0.0)
    agent = create_agent(ScriptedChatModel(script=["Noted."]), tools=[], store=store, middleware=[
        EpisodicMemoryMiddleware(store=store, model=ScriptedChatModel(
            script=[extraction("ACME", "LangGraph")]), profile=False, memories=False,
            episodes=False, defer=formation)])
    agent.invoke({"messages": [("user", ALICE)]}, thread_config("alice", "s7"))
    assert formation.close(timeout=10)
    facts = [i for i in store.search(("entities", "alice"), limit=20)
             if i.value.get("kind") == "fact"]
    assert {f.value.get("subject") for f in facts} == {"acme", "langgraph"}
    for fact in facts:
        context = fact.value.get("context")
        assert context is not None and context["thread"] == "alice:s7", fact.value
        assert context["day"].split(", ")[0] in {"Monday", "Tuesday", "Wednesday", "Thursday",
                                                 "Friday", "Saturday", "Sunday"}


# The queue's item as each earlier layout wrote it: the first release of deferred formation,
# then with the window's leaving messages and summary, then with the turn's items; one with
# nulls where a later release writes a value.
EARLIER_QUEUE_ITEMS = {
    "first": ("user_id", "thread_id", "text", "episode", "configurable", "enqueued_at"),
    "leaving": ("user_id", "thread_id", "text", "episode", "configurable", "enqueued_at",
                "leaving", "summary_base"),
    "turns": ("user_id", "thread_id", "text", "episode", "configurable", "enqueued_at",
              "leaving", "summary_base", "turns"),
}


@pytest.mark.parametrize("layout", [*EARLIER_QUEUE_ITEMS, "nulls"])
def test_a_turn_queued_by_an_earlier_release_is_formed_by_the_next_start(layout: str) -> None:
    store = memory_store()
    turn = PendingTurn.of_run(thread_config("alice", "s1"), "alice", text=ALICE)
    value = turn.to_value()
    if layout == "nulls":
        value = {**value, "text": ALICE, "episode": None, "configurable": None, "said_at": None,
                 "leaving": None, "summary_base": None, "turns": None}
    else:
        value = {name: value[name] for name in EARLIER_QUEUE_ITEMS[layout]}
    store.put(turn.namespace, turn.key, value, index=False)

    (read,) = pending(store)
    queued = PendingTurn.from_item(read)
    assert (queued.user_id, queued.thread_id, queued.key, queued.text) == (
        "alice", turn.thread_id, turn.key, ALICE)
    assert queued.told() is not None, "dated by when it was queued, or said"

    formation = DeferredFormation(debounce=0.0)
    build_memory_graph(answer, model=ScriptedChatModel(script=[extraction("ACME")]),
                       store=store, summarize=False, episodes=False, defer=formation)
    assert formation.close(timeout=10), "the start forms what an earlier release queued"
    assert entities(store, "alice") == {"ACME": "The user mentioned ACME."}
    assert pending(store) == []
