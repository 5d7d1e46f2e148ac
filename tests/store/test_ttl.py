"""TTL on ChromaStore: per-put ``ttl``, ``TTLConfig`` defaults, refresh on read, sweeping.

Time is simulated: the store reads the time from its ``clock=`` (epoch seconds), here a
:class:`FakeClock`. To see that a sweep really deleted an item (and did not just hide it), a
second store over the same data reads it with the real clock, which has not moved.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest
from langgraph.store.base import BaseStore

from ._support import CHROMA_BACKENDS, FakeClock, hash_index, key_set

pytestmark = pytest.mark.parametrize("backend", CHROMA_BACKENDS)

NS = ("ttl",)
WAIT_S = 20.0
"""Longest wait for the background sweeper to act (it runs every 60 ms here)."""


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ttl_store(make_store: Any, clock: FakeClock) -> Any:
    """``ttl_store(**ttl_config)``: a store on the fake clock."""

    def build(**ttl: Any) -> BaseStore:
        return make_store(ttl=ttl or None, clock=clock)

    return build


def _alive(store: BaseStore, key: str, ns: tuple[str, ...] = NS) -> bool:
    return store.get(ns, key, refresh_ttl=False) is not None


def _wait_until(predicate: Any) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


def test_put_ttl_expires_the_item_everywhere(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    store.put(NS, "short", {"text": "short lived note"}, ttl=1)
    store.put(("tmp", "only"), "short", {"text": "short lived note"}, ttl=1)
    store.put(NS, "forever", {"text": "long lived note"})
    clock.advance(minutes=0.5)
    assert _alive(store, "short") and _alive(store, "forever")
    assert ("tmp", "only") in store.list_namespaces()
    clock.advance(minutes=0.6)
    assert store.get(NS, "short") is None
    assert store.get(("tmp", "only"), "short") is None
    assert key_set(store.search(NS)) == {"forever"}
    assert key_set(store.search((), query="short lived note")) == {"forever"}
    assert key_set(store.search(NS, filter={"text": "short lived note"})) == set()
    assert store.list_namespaces() == [NS]
    assert _alive(store, "forever")


def test_expired_items_do_not_take_page_slots(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    for i in range(6):
        store.put(NS, f"k{i}", {"text": f"note {i}"}, ttl=1 if i % 2 else None)
    clock.advance(minutes=2)
    assert key_set(store.search(NS, limit=3)) == {"k0", "k2", "k4"}
    assert key_set(store.search(NS, query="note", limit=3)) == {"k0", "k2", "k4"}
    assert store.search(NS, limit=3, offset=3) == []


def test_sweep_deletes_expired_items_and_counts_them(
    ttl_store: Any, make_store: Any, clock: FakeClock
) -> None:
    store = ttl_store()
    store.put(NS, "a", {"v": 1}, ttl=1)
    store.put(NS, "b", {"v": 2}, ttl=1)
    store.put(NS, "c", {"v": 3}, ttl=10)
    store.put(NS, "d", {"v": 4})
    assert store.sweep_ttl() == 0
    clock.advance(minutes=2)
    assert store.sweep_ttl() == 2
    assert store.sweep_ttl() == 0
    # really gone, not hidden: a store whose clock did not move cannot see them either
    observer = make_store.twin(store, clock=time.time)
    assert not _alive(observer, "a") and not _alive(observer, "b")
    assert _alive(observer, "c") and _alive(observer, "d")
    assert key_set(store.search(NS)) == {"c", "d"}


async def test_async_sweep(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    await store.aput(NS, "a", {"v": 1}, ttl=1)
    clock.advance(minutes=2)
    assert await store.asweep_ttl() == 1
    assert await store.aget(NS, "a") is None


def test_default_ttl(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store(default_ttl=1)
    store.put(NS, "default", {"v": 1})
    store.put(NS, "never", {"v": 2}, ttl=None)
    store.put(NS, "longer", {"v": 3}, ttl=5)
    clock.advance(minutes=2)
    assert not _alive(store, "default")
    assert _alive(store, "never") and _alive(store, "longer")
    clock.advance(minutes=4)
    assert not _alive(store, "longer") and _alive(store, "never")


def test_reads_refresh_the_ttl_by_default(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    store.put(NS, "read", {"v": 1}, ttl=1)
    store.put(NS, "unread", {"v": 2}, ttl=1)
    clock.advance(minutes=0.8)
    assert store.get(NS, "read") is not None
    clock.advance(minutes=0.8)
    assert _alive(store, "read") and not _alive(store, "unread")
    clock.advance(minutes=1.1)
    assert not _alive(store, "read")


def test_refresh_ttl_false_does_not_refresh(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    store.put(NS, "k", {"v": 1}, ttl=1)
    clock.advance(minutes=0.8)
    assert store.get(NS, "k", refresh_ttl=False) is not None
    assert store.search(NS, refresh_ttl=False) != []
    clock.advance(minutes=0.8)
    assert store.get(NS, "k") is None


def test_refresh_on_read_false_in_config(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store(refresh_on_read=False)
    store.put(NS, "plain", {"v": 1}, ttl=1)
    store.put(NS, "asked", {"v": 2}, ttl=1)
    clock.advance(minutes=0.8)
    assert store.get(NS, "plain") is not None
    assert store.get(NS, "asked", refresh_ttl=True) is not None
    clock.advance(minutes=0.8)
    assert not _alive(store, "plain") and _alive(store, "asked")


def test_search_refreshes_only_returned_items(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    store.put(NS, "a", {"text": "apple pie", "tag": "a"}, ttl=1)
    store.put(NS, "b", {"text": "banana bread", "tag": "b"}, ttl=1)
    store.put(NS, "c", {"text": "cherry tart", "tag": "c"}, ttl=1)
    clock.advance(minutes=0.8)
    assert [r.key for r in store.search(NS, filter={"tag": "a"})] == ["a"]
    assert [r.key for r in store.search(NS, query="cherry tart", filter={"tag": "c"})] == ["c"]
    clock.advance(minutes=0.8)
    assert key_set(store.search(NS, refresh_ttl=False)) == {"a", "c"}


def test_put_restarts_the_ttl(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    store.put(NS, "again", {"v": 1}, ttl=1)
    store.put(NS, "unlimited", {"v": 1}, ttl=1)
    clock.advance(minutes=0.8)
    store.put(NS, "again", {"v": 2}, ttl=1)
    store.put(NS, "unlimited", {"v": 2}, ttl=None)
    clock.advance(minutes=0.8)
    assert _alive(store, "again") and _alive(store, "unlimited")
    clock.advance(minutes=100)
    assert not _alive(store, "again") and _alive(store, "unlimited")


def test_vectors_of_expired_items_are_not_searchable(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    store.put(NS, "old", {"text": "quantum physics lecture"}, ttl=1)
    clock.advance(minutes=2)
    assert store.sweep_ttl() == 1
    store.put(NS, "new", {"text": "cooking class"})
    results = store.search(NS, query="quantum physics lecture", limit=10)
    assert [r.key for r in results] == ["new"]


def test_background_sweeper_deletes_expired_items(
    ttl_store: Any, make_store: Any, clock: FakeClock
) -> None:
    store = ttl_store()
    store.put(NS, "soon", {"v": 1}, ttl=1)
    store.put(NS, "kept", {"v": 2})
    observer = make_store.twin(store, clock=time.time)
    assert _alive(observer, "soon")
    clock.advance(minutes=2)
    future = store.start_ttl_sweeper(sweep_interval_minutes=0.001)
    try:
        assert _wait_until(lambda: not _alive(observer, "soon")), "sweeper did not delete"
        assert _alive(observer, "kept")
    finally:
        assert store.stop_ttl_sweeper(timeout=10) is True
    assert future.result(timeout=10) is None
    assert store.stop_ttl_sweeper() is True  # stopping twice is harmless


def test_sweeper_starts_from_the_ttl_config(make_store: Any, clock: FakeClock) -> None:
    store = make_store(ttl={"default_ttl": 1, "sweep_interval_minutes": 0.001}, clock=clock)
    observer = make_store.twin(store, ttl=None, clock=time.time)
    store.put(NS, "soon", {"v": 1})
    clock.advance(minutes=2)
    assert _wait_until(lambda: not _alive(observer, "soon")), "configured sweeper did not run"
    assert store.stop_ttl_sweeper(timeout=10) is True


def test_tiny_ttl_on_the_real_clock(make_store: Any) -> None:
    store = make_store(index=hash_index(fields=["text"]))
    store.put(NS, "blink", {"text": "gone in a blink"}, ttl=0.001)  # 60 ms
    store.put(NS, "stay", {"text": "stays"})
    # Polling with a refreshing read would keep moving the expiry on a fast machine.
    assert _wait_until(lambda: store.get(NS, "blink", refresh_ttl=False) is None)
    assert key_set(store.search(NS, query="gone in a blink")) == {"stay"}
    assert store.sweep_ttl() == 1
    assert _alive(store, "stay")


def test_a_refreshed_item_keeps_its_namespace_listed(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    store.put(("by-get",), "k", {"v": 1}, ttl=1)
    store.put(("by-search",), "k", {"v": 1}, ttl=1)
    store.put(("by-put",), "k", {"v": 1}, ttl=1)
    store.put(("unread",), "k", {"v": 1}, ttl=1)
    clock.advance(minutes=0.8)
    assert store.get(("by-get",), "k") is not None
    assert key_set(store.search(("by-search",))) == {"k"}
    store.put(("by-put",), "k", {"v": 2}, ttl=1)
    clock.advance(minutes=0.8)
    assert store.list_namespaces() == [("by-get",), ("by-put",), ("by-search",)]


def test_namespace_listing_follows_the_latest_expiry(ttl_store: Any, clock: FakeClock) -> None:
    store = ttl_store()
    store.put(("mixed",), "short", {"v": 1}, ttl=1)
    store.put(("mixed",), "long", {"v": 2}, ttl=10)
    store.put(("gone",), "a", {"v": 1}, ttl=1)
    clock.advance(minutes=2)
    assert store.list_namespaces() == [("mixed",)]
    store.delete(("mixed",), "long")
    assert store.list_namespaces() == []
    store.put(("gone",), "b", {"v": 3})
    assert store.list_namespaces() == [("gone",)]
    assert key_set(store.search(("gone",))) == {"b"}


def test_a_namespace_is_unlisted_when_a_put_shortened_its_last_expiry(
    ttl_store: Any, clock: FakeClock
) -> None:
    """Found by the stateful test: an item put without TTL, then again with one; once that
    expires the namespace holds nothing live and is not listed."""
    store = ttl_store()
    store.put(("a", "b"), "k", {"v": 1})
    store.put(("a", "b"), "k", {"v": 2}, ttl=1)
    clock.advance(minutes=2)
    assert store.list_namespaces() == []
    assert store.search(("a", "b")) == []



def test_namespace_listed_at_the_exact_expiry_of_its_item(
    ttl_store: Any, clock: FakeClock
) -> None:
    """At the exact moment an item expires it is still live, so its namespace is still listed.

    Expiries come back from Chroma as floats, some one bit off; items compare them in whole
    microseconds, and so must the namespace listing (it once compared the raw float and left a
    namespace out while its item was live: a flaky failure of the stateful test, whose clock
    starts from the real time). Many start times, and the expiry reached both in one sum and
    in steps, so that some floats are one bit off the stored expiry.
    """
    rng = random.Random(20261130)
    disagree = []
    store = ttl_store()
    for i in range(150):
        start = 1.7e9 + rng.random() * 1e8
        ttl = rng.choice([0.5, 1.0, 2.0, 6.0])
        ns = ("exact", f"n{i}")
        clock.now = start
        store.put(ns, "k", {"v": i}, ttl=ttl)
        if i % 2:  # the expiry itself: still live
            clock.now = start + ttl * 60.0
        else:  # the same moment reached in two steps: often one bit off the stored sum
            clock.now = start + ttl * 20.0
            clock.advance(seconds=ttl * 60.0 - ttl * 20.0)
        live = store.get(ns, "k", refresh_ttl=False) is not None
        listed = ns in store.list_namespaces(prefix=ns)
        if not (live and listed):
            disagree.append((start, ttl, live, listed))
    assert disagree == []
