"""Working memory: the per-customer history window with TTL, and the output log."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import BaseStore, Op, PutOp, Result, SearchOp
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.graph.working_memory import (
    DEFAULT_TTL_DAYS,
    MAX_UNRESOLVED,
    CustomerHistory,
    OutputLog,
)

DAY = 86400.0


class SpyTTLStore(BaseStore):
    """An InMemoryStore that claims TTL support and records every op (to see the TTL passed)."""

    supports_ttl = True

    def __init__(self) -> None:
        self.inner = InMemoryStore()
        self.ops: list[Op] = []

    def batch(self, ops: Any) -> list[Result]:
        ops = list(ops)
        self.ops += ops
        return self.inner.batch(ops)

    async def abatch(self, ops: Any) -> list[Result]:
        ops = list(ops)
        self.ops += ops
        return await self.inner.abatch(ops)


def test_history_keeps_last_n_turns(chroma_store: BaseStore) -> None:
    history = CustomerHistory(chroma_store, max_turns=3)
    for i in range(5):
        history.add_turn("c1", f"question {i}", f"answer {i}", now=1000.0 + i)
    history.add_turn("c2", "other", "customer", now=1000.0)
    turns = history.recent("c1", now=1010.0)
    assert [t.user for t in turns] == ["question 2", "question 3", "question 4"]
    assert len(chroma_store.search(("working_memory", "c1"), limit=50)) == 3
    assert [t.user for t in history.recent("c2", now=1010.0)] == ["other"]


def test_history_default_ttl_is_30_days_in_store_minutes() -> None:
    spy = SpyTTLStore()
    history = CustomerHistory(spy)
    assert history.ttl_days == DEFAULT_TTL_DAYS == 30
    history.add_turn("c1", "hello there", "hi!")
    puts = [op for op in spy.ops if isinstance(op, PutOp) and op.value is not None]
    assert puts and all(op.ttl == 30 * 24 * 60 for op in puts)


async def test_reading_history_and_output_log_never_refreshes_ttl() -> None:
    """A turn expires ``ttl_days`` after it was written: reads must not extend it."""
    spy = SpyTTLStore()
    history, log = CustomerHistory(spy), OutputLog(spy, ttl_days=7.0)
    history.add_turn("c1", "hello there", "hi!")
    await history.aadd_turn("c1", "and again", "sure")
    history.recent("c1")
    await history.arecent("c1")
    log.record("c1", "Your key expires on Friday.")
    log.unresolved("c1")
    await log.aunresolved("c1")
    searches = [op for op in spy.ops if isinstance(op, SearchOp)]
    assert len(searches) >= 6 and all(op.refresh_ttl is False for op in searches)


def test_history_expires_through_the_store_ttl(chroma_store: BaseStore) -> None:
    history = CustomerHistory(chroma_store, ttl_days=0.5 / DAY)  # half a second
    history.add_turn("c1", "short lived", "yes")
    assert len(history.recent("c1")) == 1
    time.sleep(1.0)
    assert history.recent("c1", now=0.0) == []  # gone from the store, not filtered by time
    assert chroma_store.search(("working_memory", "c1")) == []


def test_turns_older_than_ttl_are_not_returned(chroma_store: BaseStore) -> None:
    history = CustomerHistory(chroma_store, ttl_days=30)
    now = time.time()
    history.add_turn("c1", "old one", "x", now=now - 31 * DAY)
    history.add_turn("c1", "new one", "y", now=now)
    assert [t.user for t in history.recent("c1", now=now)] == ["new one"]


def test_store_without_ttl_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match="ttl_days=None"):
        CustomerHistory(InMemoryStore())
    history = CustomerHistory(InMemoryStore(), ttl_days=None, max_turns=2)
    history.add_turn("c1", "hello", "hi")
    assert history.as_messages("c1") == [HumanMessage("hello"), AIMessage("hi")]


async def test_history_async_and_clear(chroma_store: BaseStore) -> None:
    history = CustomerHistory(chroma_store, max_turns=2)
    for i in range(3):
        await history.aadd_turn("c1", f"q{i}", f"a{i}", now=100.0 + i)
    assert [t.user for t in await history.arecent("c1", now=110.0)] == ["q1", "q2"]
    assert await history.aclear("c1") == 2
    assert history.recent("c1") == []


def test_output_log_record_resolve_unresolved(store: BaseStore) -> None:
    log = OutputLog(store)
    now = 10 * DAY
    a = log.record("alice", "Your API key expires Friday.", kind="warning", now=now - 2 * DAY)
    b = log.record("alice", "Consider upgrading to v2.", now=now - 1 * DAY)
    log.record("alice", "Very old notice about the beta.", now=now - 30 * DAY)
    log.record("bob", "Bob's own notice here.", now=now)
    unresolved = log.unresolved("alice", days=7, now=now)
    assert [i.key for i in unresolved] == [b.key, a.key]  # newest first, old one outside window
    assert unresolved[1].kind == "warning"
    assert log.resolve("alice", a.key, now=now)
    assert [i.key for i in log.unresolved("alice", days=7, now=now)] == [b.key]
    assert not log.resolve("alice", "no-such-key")
    assert not log.resolve("bob", b.key)


def test_output_log_re_recording_updates_one_item_and_reopens(store: BaseStore) -> None:
    log = OutputLog(store)
    first = log.record("alice", "Your API key expires Friday.", now=100.0)
    log.resolve("alice", first.key, now=101.0)
    again = log.record("alice", "your api key   expires friday.", now=200.0)
    assert again.key == first.key and again.times == 2 and again.first_surfaced == 100.0
    assert not again.resolved
    assert [i.surfaced_at for i in log.unresolved("alice", days=1, now=200.0)] == [200.0]
    assert log.was_surfaced("alice", "Your API key expires Friday.", now=200.0)
    assert not log.was_surfaced("alice", "Your API key expires Friday.", now=200.0 + 8 * DAY)
    assert not log.was_surfaced("alice", "Something never said.", now=200.0)


def test_output_log_caps_at_newest_100(store: BaseStore) -> None:
    log = OutputLog(store)
    for i in range(MAX_UNRESOLVED + 5):
        log.record("alice", f"Notice number {i} for you.", now=1000.0 + i)
    unresolved = log.unresolved("alice", days=1, now=1000.0 + 200)
    assert len(unresolved) == MAX_UNRESOLVED
    assert unresolved[0].text == f"Notice number {MAX_UNRESOLVED + 4} for you."
    assert unresolved[-1].text == "Notice number 5 for you."
    with pytest.raises(ValueError, match="cap"):
        OutputLog(store, cap=101)


async def test_output_log_async(store: BaseStore) -> None:
    log = OutputLog(store)
    item = await log.arecord("alice", "Your API key expires Friday.", now=50.0)
    assert [i.key for i in await log.aunresolved("alice", now=60.0)] == [item.key]
    assert await log.awas_surfaced("alice", "Your API key expires Friday.", now=60.0)
    assert await log.aresolve("alice", item.key)
    assert await log.aunresolved("alice", now=60.0) == []
    with pytest.raises(ValueError, match="empty"):
        await log.arecord("alice", "   ")
