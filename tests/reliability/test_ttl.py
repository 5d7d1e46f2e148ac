"""TTL: expired items are never returned, and the sweep removes them everywhere: the item and
vector records, the in-process lexical index and vector cache. Working memory (the customer
history) expires by default, end to end.

Time is moved by setting the clock the store was made with (``clock=``), never by sleeping.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from langgraph_episodic.graph import CustomerHistory

from .conftest import (
    cached_vector_rows,
    hash_index,
    lexical_doc_count,
    raw_records,
    strings_held,
)

DAY_S = 86_400.0
NS = ("working_memory", "alice")
OTHER = ("working_memory", "bob")


def make(search_mode: str = "hybrid", ttl: Any = None) -> Any:
    from langgraph_episodic import ChromaStore

    return ChromaStore.ephemeral(
        index=hash_index(), search_mode=search_mode, ttl=ttl, clock=Clock(time.time())
    )


class Clock:
    """A settable epoch-seconds clock for the store's ``clock=``."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def at(store: Any, when: float) -> None:
    store.clock.now = when  # the Clock the store was made with


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "dense"])
def test_expired_items_are_never_returned_and_the_sweep_removes_them(mode: str) -> None:
    store = make(mode)
    t0 = time.time()
    at(store, t0)
    store.put(NS, "old", {"text": "the zanzibar turn"}, ttl=60.0)
    store.put(NS, "new", {"text": "the zanzibar plan"}, ttl=600.0)
    store.put(OTHER, "keep", {"text": "bob's zanzibar note"})
    for _ in range(2):  # load the namespaces into the in-process caches
        assert {i.key for i in store.search(NS, query="zanzibar turn")} == {"old", "new"}

    at(store, t0 + 2 * 3600.0)  # "old" expired, nothing swept yet
    assert store.get(NS, "old") is None
    assert {i.key for i in store.search(NS, query="zanzibar turn", limit=10)} == {"new"}
    assert {i.key for i in store.search(NS, limit=10)} == {"new"}
    assert {i.key for i in store.search(NS, filter={"text": "the zanzibar turn"})} == set()

    assert store.sweep_ttl() == 1
    records = raw_records(store)
    assert not [r for r in records if "zanzibar turn" in repr(r)], "swept records remain"
    assert lexical_doc_count(store, NS) <= 1
    assert cached_vector_rows(store, NS) <= 1
    assert [h for h in strings_held(store) if "zanzibar turn" in h] == []

    at(store, t0)  # back in time: a deleted item must not come back from any index
    assert store.get(NS, "old") is None
    assert "old" not in {i.key for i in store.search(NS, query="zanzibar turn", limit=10)}
    assert store.get(OTHER, "keep") is not None

    at(store, t0 + 20 * 3600.0)  # everything of alice expired: her namespace is not listed
    assert store.list_namespaces(prefix=("working_memory",)) == [OTHER]
    assert store.sweep_ttl() == 1
    assert lexical_doc_count(store, NS) == 0
    assert cached_vector_rows(store, NS) == 0
    assert [r for r in raw_records(store) if "alice" in repr(r)] == []


def test_default_ttl_from_the_store_config_applies_and_is_configurable() -> None:
    store = make(ttl={"default_ttl": 30.0, "refresh_on_read": False})
    t0 = time.time()
    at(store, t0)
    store.put(NS, "a", {"text": "default ttl"})
    store.put(NS, "b", {"text": "no ttl"}, ttl=None)
    at(store, t0 + 29 * 60.0)
    assert store.get(NS, "a") is not None
    at(store, t0 + 31 * 60.0)
    assert store.get(NS, "a") is None
    assert store.get(NS, "b") is not None


def test_customer_history_expires_by_default() -> None:
    store = make()
    history = CustomerHistory(store)
    t0 = time.time()
    at(store, t0)
    history.add_turn("alice", "my order zanzibar-7?", "It ships Monday.", now=t0)
    history.add_turn("bob", "hello", "hi", now=t0)

    at(store, t0 + 29 * DAY_S)
    assert len(store.search(NS, refresh_ttl=False)) == 1  # still there on day 29
    at(store, t0 + 31 * DAY_S)
    assert history.recent("alice", now=t0 + 31 * DAY_S) == []
    assert store.sweep_ttl() == 2
    assert "zanzibar" not in repr(raw_records(store))


def test_customer_history_ttl_is_configurable() -> None:
    store = make()
    history = CustomerHistory(store, ttl_days=1.0)
    t0 = time.time()
    at(store, t0)
    history.add_turn("alice", "short lived", "ok", now=t0)
    at(store, t0 + 0.9 * DAY_S)
    assert len(history.recent("alice", now=t0 + 0.9 * DAY_S)) == 1
    at(store, t0 + 1.1 * DAY_S)
    assert history.recent("alice", now=t0 + 1.1 * DAY_S) == []


def test_reading_the_history_does_not_extend_its_lifetime() -> None:
    """CustomerHistory promises: a turn expires ``ttl_days`` after it was written, reads or not."""
    store = make()
    history = CustomerHistory(store)
    t0 = time.time()
    at(store, t0)
    history.add_turn("alice", "remember zanzibar", "noted", now=t0)
    at(store, t0 + 20 * DAY_S)
    assert len(history.recent("alice", now=t0 + 20 * DAY_S)) == 1  # a read on day 20
    at(store, t0 + 31 * DAY_S)
    assert history.recent("alice", now=t0 + 31 * DAY_S) == []
    assert store.sweep_ttl() == 1, "the read on day 20 extended the turn's TTL"
