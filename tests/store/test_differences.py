"""The documented differences between ChromaStore and InMemoryStore, both sides pinned.

Each test runs on every backend and asserts ChromaStore's behaviour on the Chroma backends and
InMemoryStore's on "memory", so a change on either side shows up here.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import BaseStore, PutOp

from ._support import CHROMA_BACKENDS, MEMORY, FakeClock, key_set, keys, tick

NS = ("diff",)


# --- a. created_at survives updates -------------------------------------------------------------


def test_created_at_on_update(store: BaseStore, backend: str) -> None:
    store.put(NS, "k", {"v": 1})
    first = store.get(NS, "k")
    tick()
    store.put(NS, "k", {"v": 2})
    second = store.get(NS, "k")
    assert first is not None and second is not None
    assert second.updated_at > first.updated_at
    if backend == MEMORY:
        assert second.created_at > first.created_at  # InMemoryStore resets it
    else:
        assert second.created_at == first.created_at
        assert second.created_at < second.updated_at


def test_created_at_restarts_after_delete(store: BaseStore) -> None:
    store.put(NS, "k", {"v": 1})
    first = store.get(NS, "k")
    tick()
    store.delete(NS, "k")
    store.put(NS, "k", {"v": 2})
    second = store.get(NS, "k")
    assert first is not None and second is not None
    assert second.created_at > first.created_at


# --- b. order of search without a query ---------------------------------------------------------


def test_search_without_query_order(store: BaseStore, backend: str) -> None:
    for key in ("first", "second", "third"):
        store.put(NS, key, {"key": key})
        tick()
    store.put(NS, "first", {"key": "first", "updated": True})
    got = keys(store.search(NS))
    if backend == MEMORY:
        assert got == ["first", "second", "third"]  # insertion order, updates keep their place
    else:
        assert got == ["first", "third", "second"]  # updated_at descending
    items = store.search(NS)
    if backend != MEMORY:
        stamps = [it.updated_at for it in items]
        assert stamps == sorted(stamps, reverse=True)


def test_search_without_query_ties_break_by_namespace_then_key(
    store: BaseStore, backend: str
) -> None:
    # one batch: one timestamp for all of its puts
    store.batch(
        [
            PutOp(("diff", "b"), "k1", {"v": 1}),
            PutOp(("diff", "a"), "k2", {"v": 2}),
            PutOp(("diff", "b"), "k0", {"v": 3}),
            PutOp(("diff", "a"), "k1", {"v": 4}),
        ]
    )
    got = [(it.namespace, it.key) for it in store.search(NS)]
    if backend == MEMORY:
        assert got == [(("diff", "b"), "k1"), (("diff", "b"), "k0"),
                       (("diff", "a"), "k2"), (("diff", "a"), "k1")]  # fmt: skip
    else:
        assert len({it.updated_at for it in store.search(NS)}) == 1
        assert got == sorted(got)


def test_search_without_query_pages_follow_the_order(store: BaseStore, backend: str) -> None:
    for i in range(6):
        store.put(NS, f"k{i}", {"i": i})
        tick()
    pages = [keys(store.search(NS, limit=2, offset=off)) for off in (0, 2, 4)]
    expected = [f"k{i}" for i in range(6)]
    if backend != MEMORY:
        expected.reverse()
    assert pages == [expected[0:2], expected[2:4], expected[4:6]]


# --- c. dotted filter keys ------------------------------------------------------------------------


def test_dotted_filter_keys(store: BaseStore, backend: str) -> None:
    store.put(NS, "nested", {"a": {"b": 1, "c": {"d": "deep"}}})
    store.put(NS, "other", {"a": {"b": 2}})
    for filter in ({"a.b": 1}, {"a.b": {"$eq": 1}}, {"a.c.d": "deep"}):
        got = key_set(store.search(NS, filter=filter))
        assert got == (set() if backend == MEMORY else {"nested"}), filter
    got = key_set(store.search(NS, filter={"a.b": {"$ne": 1}}))
    assert got == ({"nested", "other"} if backend == MEMORY else {"other"})
    if backend == MEMORY:  # the literal key "a.b" is missing: float(None) raises
        with pytest.raises(TypeError):
            store.search(NS, filter={"a.b": {"$lt": 2}})
    else:
        assert key_set(store.search(NS, filter={"a.b": {"$lt": 2}})) == {"nested"}


# --- d. comparisons: missing fields, strings, mixed types, booleans ----------------------------

COMPARISON_ITEMS: dict[str, dict[str, Any]] = {
    "num": {"x": 5},
    "float": {"x": 2.5},
    "str": {"x": "banana"},
    "numstr": {"x": "10"},
    "true": {"x": True},
    "false": {"x": False},
    "missing": {"y": 1},
    "null": {"x": None},
}


@pytest.fixture
def compared(store: BaseStore) -> BaseStore:
    for key, value in COMPARISON_ITEMS.items():
        store.put(NS, key, value)
    return store


COMPARISON_CASES: list[tuple[dict[str, Any], set[str]]] = [
    ({"x": {"$gt": 3}}, {"num"}),
    ({"x": {"$gte": 2.5}}, {"num", "float"}),
    ({"x": {"$lt": 5}}, {"float"}),
    ({"x": {"$lte": 5}}, {"num", "float"}),
    ({"x": {"$gt": 0}}, {"num", "float"}),  # booleans are not numbers
    ({"x": {"$gt": "apple"}}, {"str"}),
    ({"x": {"$lt": "c"}}, {"str", "numstr"}),
    ({"x": {"$gte": "10"}}, {"str", "numstr"}),
    ({"x": {"$lt": "2"}}, {"numstr"}),  # "10" < "2" as strings
    ({"x": {"$gt": 1, "$lt": "z"}}, set()),  # never both a number and a string
    ({"y": {"$gt": 0}}, {"missing"}),
    ({"x": {"$eq": 5}}, {"num"}),
    ({"x": True}, {"true"}),
]


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_comparisons_in_chroma(compared: BaseStore) -> None:
    failures = []
    for filter, expected in COMPARISON_CASES:
        for query in (None, "anything"):
            got = key_set(compared.search(NS, filter=filter, query=query, limit=100))
            if got != expected:
                failures.append(f"filter={filter!r} query={query!r}: expected "
                                f"{sorted(expected)}, got {sorted(got)}")  # fmt: skip
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("backend", [MEMORY])
def test_comparisons_in_memory(compared: BaseStore) -> None:
    # InMemoryStore converts with float(): a missing field or a word raises, "10" and True count.
    with pytest.raises((TypeError, ValueError)):
        compared.search(NS, filter={"x": {"$gt": 3}})
    with pytest.raises((TypeError, ValueError)):
        compared.search(NS, filter={"y": {"$gt": 0}})
    store = type(compared)()
    store.put(NS, "numstr", {"x": "10"})
    store.put(NS, "true", {"x": True})
    store.put(NS, "num", {"x": 0.5})
    assert key_set(store.search(NS, filter={"x": {"$gt": 0.75}})) == {"numstr", "true"}


# --- e. TTL ---------------------------------------------------------------------------------------


def test_ttl_support(store: BaseStore, backend: str) -> None:
    if backend == MEMORY:
        assert store.supports_ttl is False
        with pytest.raises(NotImplementedError):
            store.put(NS, "k", {"v": 1}, ttl=5)
        assert store.get(NS, "k") is None
    else:
        assert store.supports_ttl is True
        store.put(NS, "k", {"v": 1}, ttl=5)
        assert store.get(NS, "k") is not None


# --- f. hybrid search (ChromaStore's default) is not cosine ---------------------------------------


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_hybrid_mode_is_the_default_and_ranks_exact_matches_first(make_store: Any) -> None:
    store = make_store(search_mode=None)
    assert store.search_mode == "hybrid"
    store.put(NS, "pizza", {"text": "I love pizza with extra cheese"})
    store.put(NS, "rain", {"text": "cold and rainy weather"})
    store.put(NS, "code", {"text": "python programming language"})
    results = store.search(NS, query="pizza cheese", limit=3)
    assert results[0].key == "pizza"
    assert all(r.score is not None for r in results)
    assert key_set(store.search(NS)) == {"pizza", "rain", "code"}


# --- g. namespaces of deleted items and of reads --------------------------------------------------


def test_namespaces_without_items(store: BaseStore, backend: str) -> None:
    store.put(("kept",), "k", {"v": 1})
    store.put(("emptied",), "k", {"v": 1})
    store.delete(("emptied",), "k")
    store.get(("never", "written"), "k")
    if backend == MEMORY:  # InMemoryStore lists every namespace it has ever touched
        assert store.list_namespaces() == [("emptied",), ("kept",), ("never", "written")]
    else:
        assert store.list_namespaces() == [("kept",)]


# --- h. re-putting an item replaces all of its vectors --------------------------------------------


def test_reput_replaces_old_vectors(store: BaseStore, backend: str) -> None:
    store.put(NS, "k", {"text": "python programming"})
    store.put(NS, "other", {"text": "weather"})
    store.put(NS, "k", {"text": "python programming"}, index=False)
    stale = [r for r in store.search(NS, query="python programming") if r.key == "k"]
    assert len(stale) == 1
    if backend == MEMORY:  # InMemoryStore keeps the vector of the earlier put
        assert stale[0].score is not None
    else:
        assert stale[0].score is None


# --- the clock: ChromaStore reads time from its clock= ------------------------------------------


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_timestamps_come_from_the_store_clock(make_store: Any) -> None:
    clock = FakeClock(start=1_700_000_000.0)
    store = make_store(clock=clock)
    store.put(NS, "k", {"v": 1})
    clock.advance(seconds=90)
    store.put(NS, "k", {"v": 2})
    item = store.get(NS, "k")
    assert item is not None
    assert item.created_at.timestamp() == pytest.approx(1_700_000_000.0)
    assert item.updated_at.timestamp() == pytest.approx(1_700_000_090.0)


# --- i. top-level filter keys starting with "$" ---------------------------------------------------


def test_dollar_field_names_in_filters(store: BaseStore, backend: str) -> None:
    store.put(NS, "k", {"$or": 1, "$": 2})
    if backend == MEMORY:  # InMemoryStore reads them as field names
        assert key_set(store.search(NS, filter={"$or": 1})) == {"k"}
        assert key_set(store.search(NS, filter={"$": 2})) == {"k"}
    else:  # ChromaStore reads them as a misplaced operator and says so
        for filter in ({"$or": 1}, {"$": 2}):
            with pytest.raises(ValueError, match="operator"):
                store.search(NS, filter=filter)


# --- j. unscored items on pages past the scored ones ---------------------------------------------


def test_pages_past_the_scored_items(store: BaseStore, backend: str) -> None:
    store.put(NS, "scored", {"text": "cat"})
    store.put(NS, "raw1", {"text": "cat"}, index=False)
    tick()
    store.put(NS, "raw2", {"text": "cat"}, index=False)
    pages = [keys(store.search(NS, query="cat", limit=2, offset=o)) for o in (0, 2, 4, 10)]
    if backend == MEMORY:  # the unscored items start again on every page, without end
        assert pages == [["scored", "raw1"], ["raw1", "raw2"], ["raw1", "raw2"], ["raw1", "raw2"]]
    else:  # one list, scored then unscored (newest first), sliced
        assert pages == [["scored", "raw2"], ["raw1"], [], []]
