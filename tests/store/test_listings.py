"""Searches without a query, answered from namespace listings held in process.

An embedded store loads a namespace's item records once and then follows its own writes
(puts, deletes, TTL refreshes, restored times, sweeps). Each test drives both the in-memory
path and the Chroma path and checks the answers against ``InMemoryStore`` or each other.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from ._support import CHROMA_BACKENDS, FakeClock, tick

pytestmark = pytest.mark.parametrize("backend", CHROMA_BACKENDS)

USERS = [("users", name, "notes") for name in ("alice", "bob", "carol")]


def _answer(store: BaseStore, prefix: tuple[str, ...], **kw: Any) -> dict[tuple[Any, ...], Any]:
    return {(r.namespace, r.key): r.value for r in store.search(prefix, limit=1000, **kw)}


def _assert_newest_first(store: BaseStore, prefix: tuple[str, ...]) -> None:
    stamps = [r.updated_at for r in store.search(prefix, limit=1000)]
    assert stamps == sorted(stamps, reverse=True)


def _check(store: BaseStore, reference: BaseStore) -> None:
    for prefix in [*USERS, ("users",), ("users", "alice")]:
        for flt in (None, {"kind": "event"}, {"n": {"$gte": 2}}):
            assert _answer(store, prefix, filter=flt) == _answer(reference, prefix, filter=flt)
        _assert_newest_first(store, prefix)


def test_listings_follow_puts_updates_and_deletes(make_store: Any) -> None:
    store, reference = make_store(), InMemoryStore()
    both = (store, reference)
    for n in range(4):
        for ns in USERS:
            for s in both:
                s.put(ns, f"k{n}", {"text": f"note {n}", "kind": "event" if n % 2 else "fact", "n": n})
    _check(store, reference)  # loads every listing
    for s in both:
        s.put(USERS[0], "k1", {"text": "changed", "kind": "fact", "n": 9})
        s.put(USERS[1], "new", {"text": "fresh", "kind": "event", "n": 5})
        s.delete(USERS[2], "k3")
    _check(store, reference)
    ops = [PutOp(USERS[0], "k0", None), PutOp(USERS[0], "k2", {"text": "x", "kind": "event", "n": 2})]
    for s in both:
        s.batch(ops)
    _check(store, reference)
    for s in both:
        for n in range(4):
            s.delete(USERS[2], f"k{n}")
    _check(store, reference)
    assert store.search(USERS[2]) == []


def test_listings_follow_ttl_refreshes_and_sweeps(make_store: Any) -> None:
    clock = FakeClock()
    store = make_store(ttl={"default_ttl": 1.0, "refresh_on_read": True}, clock=clock)
    store.put(USERS[0], "keep", {"text": "read again"})
    store.put(USERS[0], "drop", {"text": "never read"})
    assert {r.key for r in store.search(USERS[0], refresh_ttl=False)} == {"keep", "drop"}
    clock.advance(seconds=40)
    assert store.get(USERS[0], "keep") is not None  # refreshes: now expires at 100 s
    clock.advance(seconds=40)
    assert [r.key for r in store.search(USERS[0], refresh_ttl=False)] == ["keep"]
    assert store.sweep_ttl() == 1
    clock.advance(seconds=30)
    assert [r.key for r in store.search(USERS[0], refresh_ttl=False)] == []


def test_listings_follow_restored_times(make_store: Any) -> None:
    store = make_store()
    for key in ("a", "b", "c"):
        store.put(USERS[0], key, {"text": key})
        tick()
    assert [r.key for r in store.search(USERS[0])] == ["c", "b", "a"]
    old = datetime(2020, 1, 1, tzinfo=timezone.utc)
    assert store.restore_times({(USERS[0], "c"): (old, old, None)}) == 1
    assert [r.key for r in store.search(USERS[0])] == ["b", "a", "c"]
    later = datetime.now(timezone.utc) + timedelta(days=1)
    store.restore_times({(USERS[0], "a"): (old, later, None)})
    found = store.search(USERS[0])
    assert [r.key for r in found] == ["a", "b", "c"]
    assert found[0].updated_at == later.replace(microsecond=later.microsecond)


def test_many_namespaces_give_the_same_answer_from_chroma_and_from_memory(
    make_store: Any,
) -> None:
    store, reference = make_store(), InMemoryStore()
    users = [("users", f"u{i:02d}", "notes") for i in range(20)]  # more than load at once
    for i, ns in enumerate(users):
        for s in (store, reference):
            s.put(ns, "k", {"text": f"note {i}", "kind": "event" if i % 3 else "fact", "n": i})
    first = _answer(store, ("users",), filter={"kind": "event"})  # read from Chroma
    for ns in users:  # load each listing
        assert _answer(store, ns) == _answer(reference, ns)
    assert _answer(store, ("users",), filter={"kind": "event"}) == first
    assert first == _answer(reference, ("users",), filter={"kind": "event"})
