"""The context the writers store by default (:mod:`langgraph_episodic.memory_context`).

Pinned: a fact the save tool writes holds ``context`` (the day in words, the run's thread) and
the put indexes it after the text (found by the day's words, in the store's field map, and
lifting a fact of the same conversation in ``ChromaStore``); ``memory_context=False`` stores
and indexes the text only; the context never carries one user's memories into another's
search; episodes and entity facts carry it too; a bad option value is refused."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore, memory_context
from langgraph_episodic.chroma.ranking.shared_fields import field_key
from langgraph_episodic.chroma.testing import field_groups
from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.tools import create_memory_tools

from .conftest import Call, hash_index, make_store

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
DAY = "Monday, 8 May 2023"
NS = ("memories", "alice")


def cfg(user_id: str = "alice", thread: str = "alice:s1", **extra: Any) -> dict[str, Any]:
    return {"configurable": {"user_id": user_id, "thread_id": thread, **extra}}


def tools(store: BaseStore, when: datetime = WHEN) -> Any:
    return create_memory_tools(store=store, locale="en", k=10, min_score=None,
                               clock=lambda: when)


def facts(store: BaseStore, ns: tuple[str, ...] = NS) -> list[dict[str, Any]]:
    return [item.value for item in store.search(ns, limit=100)]


def test_the_day_in_words() -> None:
    assert memory_context.day_text(WHEN) == DAY
    assert memory_context.day_text(datetime(2024, 2, 29)) == "Thursday, 29 February 2024"


async def test_a_saved_fact_holds_its_day_and_thread(store: BaseStore, call: Call) -> None:
    save, _ = tools(store)
    await call(save, {"information": "I went kayaking on the lake."}, cfg())
    (value,) = facts(store)
    assert value["context"] == {"day": DAY, "thread": "alice:s1"}


async def test_without_a_thread_the_day_alone(store: BaseStore, call: Call) -> None:
    save, _ = tools(store)
    await call(save, {"information": "I went kayaking on the lake."},
               {"configurable": {"user_id": "alice"}})
    assert facts(store)[0]["context"] == {"day": DAY}


async def test_the_context_is_indexed_after_the_text(call: Call) -> None:
    store = ChromaStore.ephemeral(index=hash_index())
    save, _ = tools(store)
    await call(save, {"information": "I went kayaking on the lake."}, cfg())
    store.search(NS, query="kayak")  # (a search loads the namespace's field map)
    keys = set(field_groups(store, NS))
    assert field_key("context.day", DAY) in keys
    assert field_key("context.thread", "alice:s1") not in keys  # the thread is a filter
    (hit,) = store.search(NS, query="May 2023")
    assert hit.score is not None and hit.score > 0.1  # found by the day's words alone


async def test_a_fact_of_the_same_conversation_is_lifted(call: Call) -> None:
    store = ChromaStore.ephemeral(index=hash_index())
    save, _ = tools(store)
    await call(save, {"information": "We rented a kayak at the lake."}, cfg())
    await call(save, {"information": "Afterwards we grilled fish by the water."}, cfg())
    later = datetime(2023, 7, 17, tzinfo=timezone.utc)
    save_later, _ = tools(store, later)
    await call(save_later, {"information": "The dentist moved my appointment."},
               cfg(thread="alice:s2"))
    save_other, _ = tools(store, datetime(2023, 8, 3, tzinfo=timezone.utc))
    await call(save_other, {"information": "Planted tomatoes and basil in the garden."},
               cfg(thread="alice:s3"))
    hits = {h.item.value["text"]: h for h in store.explain(NS, query="kayak lake").hits}
    assert hits["Afterwards we grilled fish by the water."].lift > 0.0
    assert hits["The dentist moved my appointment."].lift == 0.0


async def test_memory_context_false_stores_the_text_only(call: Call) -> None:
    store = ChromaStore.ephemeral(index=hash_index())
    save, _ = tools(store)
    await call(save, {"information": "I went kayaking on the lake."},
               cfg(memory_context=False))
    (value,) = facts(store)
    assert value.get("context") is None
    store.search(NS, query="kayak")
    assert {path for path, _ in field_groups(store, NS)} == {"text"}
    assert [hit.score for hit in store.search(NS, query="May 2023")] == [0.0]


async def test_a_bad_option_value_is_refused(store: BaseStore, call: Call) -> None:
    save, _ = tools(store)
    with pytest.raises(TypeError, match="memory_context"):
        await call(save, {"information": "I went kayaking on the lake."},
                   cfg(memory_context="no"))


async def test_the_same_day_and_thread_never_cross_users(backend: str, call: Call) -> None:
    store = make_store(backend)
    save, _ = tools(store)
    await call(save, {"information": "Alice rented a kayak at the lake."}, cfg("alice", "t1"))
    await call(save, {"information": "Bob grilled fish by the water."}, cfg("bob", "t1"))
    for query in ("kayak lake", "fish water", "May 2023", "Monday"):
        texts = [r.value["text"] for r in store.search(NS, query=query, limit=10)]
        assert "Bob grilled fish by the water." not in texts, query
        bob = [r.value["text"] for r in store.search(("memories", "bob"), query=query, limit=10)]
        assert "Alice rented a kayak at the lake." not in bob, query


async def test_a_context_every_memory_shares_lifts_nothing(call: Call) -> None:
    store = ChromaStore.ephemeral(index=hash_index())
    save, _ = tools(store)
    for text in ("We rented a kayak at the lake.", "Afterwards we grilled fish by the water.",
                 "The dentist moved my appointment.", "I planted tomatoes in the garden."):
        await call(save, {"information": text}, cfg())
    assert all(h.lift == 0.0 for h in store.explain(NS, query="kayak lake").hits)


async def test_an_update_keeps_each_versions_context(store: BaseStore, call: Call) -> None:
    save, _ = tools(store)
    await call(save, {"information": "I work at Initech."}, cfg(thread="alice:s1"))
    save_later, _ = tools(store, datetime(2023, 7, 17, tzinfo=timezone.utc))
    await call(save_later, {"information": "I work at ACME now."}, cfg(thread="alice:s2"))
    by_text = {v["text"]: v for v in facts(store)}
    assert by_text["I work at Initech."]["context"] == {"day": DAY, "thread": "alice:s1"}
    assert by_text["I work at Initech."]["current"] is False
    assert by_text["I work at ACME now."]["context"]["thread"] == "alice:s2"


def test_a_recorded_episode_holds_its_context() -> None:
    from langgraph_episodic.graph.episode_nodes import record_episode_node

    store = InMemoryStore(index={"dims": 64, "embed": HashEmbeddings(64)})  # type: ignore[arg-type]
    node = record_episode_node(store=store, clock=lambda: WHEN.timestamp())
    state = {"task": "Sort a list", "messages": [("user", "Sort [3, 1]"), ("ai", "[1, 3]")],
             "feedback": {"reward": 1.0}}
    node.invoke(state, cfg())
    node.invoke(state, cfg(user_id="bob", memory_context=False))
    (alice,) = [i.value for i in store.search(("episodes", "alice"), limit=10)]
    (bob,) = [i.value for i in store.search(("episodes", "bob"), limit=10)]
    assert alice["context"] == {"day": DAY, "thread": "alice:s1"}
    assert "context" not in bob


def test_an_entity_fact_holds_its_context() -> None:
    from langgraph_episodic.graph.entities import entity_extract_node

    store = InMemoryStore(index={"dims": 64, "embed": HashEmbeddings(64)})  # type: ignore[arg-type]
    node = entity_extract_node(store=store)
    node.invoke({"messages": [("user", "I work at ACME.")]}, cfg())
    contexts = [i.value.get("context") for i in store.search(("entities", "alice"), limit=20)
                if i.value.get("kind") == "fact"]
    assert contexts and all(c is not None and c["thread"] == "alice:s1" for c in contexts)


def test_the_middlewares_entity_facts_hold_their_context() -> None:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from langgraph_episodic.middleware import EpisodicMemoryMiddleware

    store = InMemoryStore(index={"dims": 64, "embed": HashEmbeddings(64)})  # type: ignore[arg-type]
    agent = create_agent(GenericFakeChatModel(messages=iter(["Hi Alice!"])), tools=[],
                         middleware=[EpisodicMemoryMiddleware(store=store)], store=store)
    agent.invoke({"messages": [("user", "I am Alice and I work at ACME.")]}, cfg())
    contexts = [i.value.get("context") for i in store.search(("entities", "alice"), limit=20)
                if i.value.get("kind") == "fact"]
    assert contexts and all(c is not None and c["thread"] == "alice:s1" for c in contexts)
