"""A search with a query fills a short page with the items that have no vectors, in every mode.

``InMemoryStore`` returns its scored items, then the items without vectors (put with
``index=False``, or with no text in the indexed fields) with ``score=None``. ChromaStore does
the same in each ``search_mode``: the same items, the same count on each page, filters, TTL and
prefixes over several namespaces obeyed. Two differences are documented (docs/store.md): the
unscored items come newest first (as a search without a query), and every page is a slice of
the one list (scored, then unscored), where ``InMemoryStore`` starts its unscored items again
on each page past its scored ones (pinned in ``test_differences.py``). So a page is compared
with the slice of InMemoryStore's whole answer, its unscored items put in that order; and with
InMemoryStore's own page wherever the page starts within the scored items.

In lexical mode an indexed item that matches no term of the query is left out (it has no BM25
score); every indexed text here shares the word ``memo`` with every query, so that all of them
are scored in each mode.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import BaseStore, SearchItem
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma.gateway import Gateway
from langgraph_episodic.chroma.testing import record_namespace

from ._support import (
    EPHEMERAL,
    HTTP,
    FakeClock,
    assert_ranked,
    backend_param,
    hash_index,
    keys,
    tick,
)

on_ephemeral = pytest.mark.parametrize("backend", [backend_param(EPHEMERAL)])

MODES = ("hybrid", "dense", "lexical")
NS = ("fill",)
QUERY = "memo cat"
INDEX = hash_index(fields=["text"])
Ref = tuple[tuple[str, ...], str]

INDEXED = {
    "i1": {"text": "memo the cat sat on the mat", "tag": "a"},
    "i2": {"text": "memo dogs bark loudly", "tag": "b"},
    "i3": {"text": "memo a cat and a dog", "tag": "x"},
}
UNINDEXED: list[tuple[str, dict[str, Any], bool]] = [  # key, value, index=False (else no text)
    ("u1", {"text": "memo unindexed cat text", "tag": "a"}, True),
    ("u2", {"other": "no text in the indexed field", "tag": "b"}, False),
    ("u3", {"text": "memo kept raw", "tag": "x"}, True),
]
NEWEST_UNSCORED = ["u3", "u2", "u1"]


def _seed(*stores: BaseStore, ns: tuple[str, ...] = NS) -> None:
    """The same puts into each store: the indexed items, then the unindexed ones (newest
    last), each a clock tick after the one before."""
    for key, value in INDEXED.items():
        for store in stores:
            store.put(ns, key, value)
        tick()
    for key, value, index_false in UNINDEXED:
        for store in stores:
            store.put(ns, key, value, index=False if index_false else None)
        tick()


def _refs(items: Sequence[SearchItem]) -> list[Ref]:
    return [(tuple(it.namespace), it.key) for it in items]


def _split(items: Sequence[SearchItem]) -> tuple[list[SearchItem], list[SearchItem]]:
    return [it for it in items if it.score is not None], [it for it in items if it.score is None]


def _marked(items: Sequence[SearchItem]) -> set[tuple[Ref, bool]]:
    """Each result and whether it is unscored."""
    return {((tuple(it.namespace), it.key), it.score is None) for it in items}


def _in_memory(index: Any = INDEX) -> InMemoryStore:
    return InMemoryStore(index=index)


@on_ephemeral
@pytest.mark.parametrize("mode", MODES)
def test_a_short_page_is_filled_with_unindexed_items(make_store: Any, mode: str) -> None:
    store, reference = make_store(index=INDEX, search_mode=mode), _in_memory()
    _seed(store, reference)
    got = store.search(NS, query=QUERY, limit=10)
    want = reference.search(NS, query=QUERY, limit=10)
    assert_ranked(got)
    assert len(got) == len(want) == 6
    (scored, unscored), (ref_scored, ref_unscored) = _split(got), _split(want)
    assert set(_refs(scored)) == set(_refs(ref_scored)) == {(NS, k) for k in INDEXED}
    assert set(_refs(unscored)) == set(_refs(ref_unscored))
    assert keys(unscored) == NEWEST_UNSCORED  # as a search without a query: newest first


@on_ephemeral
@pytest.mark.parametrize("mode", MODES)
def test_pages_cross_from_scored_to_unscored_items(make_store: Any, mode: str) -> None:
    """Every page is the slice of the whole answer; pages past the scored items continue it
    (the brief's case: offset 4 of 3 scored items leaves two unscored ones, not three)."""
    store, reference = make_store(index=INDEX, search_mode=mode), _in_memory()
    _seed(store, reference)
    whole = keys(store.search(NS, query=QUERY, limit=100))
    n_scored = len(INDEXED)
    for limit in (1, 2, 3, 4, 10):
        walked: list[str] = []
        for offset in range(len(whole) + 2):
            page = store.search(NS, query=QUERY, limit=limit, offset=offset)
            assert keys(page) == whole[offset : offset + limit], (limit, offset)
            assert [it.score is None for it in page] == [
                n >= n_scored for n in range(offset, offset + len(page))
            ], (limit, offset)
            if offset <= n_scored:  # InMemoryStore's own page agrees from here on
                ref_page = reference.search(NS, query=QUERY, limit=limit, offset=offset)
                assert len(page) == len(ref_page), (limit, offset)
                assert {it.key for it in page if it.score is None} == set(
                    NEWEST_UNSCORED[: sum(it.score is None for it in ref_page)]
                ), (limit, offset)
            if offset % limit == 0:
                walked.extend(keys(page))
        assert walked == whole, limit  # paging through gives each item once
    assert keys(store.search(NS, query=QUERY, limit=10, offset=4)) == NEWEST_UNSCORED[1:]


@on_ephemeral
@pytest.mark.parametrize("mode", MODES)
def test_unscored_items_obey_the_filter(make_store: Any, mode: str) -> None:
    store, reference = make_store(index=INDEX, search_mode=mode), _in_memory()
    _seed(store, reference)
    for flt in (
        {"tag": "x"},
        {"tag": {"$ne": "a"}},
        {"tag": "none"},
        {"other": UNINDEXED[1][1]["other"]},
    ):
        got = store.search(NS, query=QUERY, filter=flt, limit=10)
        assert_ranked(got)
        assert _marked(got) == _marked(reference.search(NS, query=QUERY, filter=flt, limit=10)), flt


@on_ephemeral
@pytest.mark.parametrize("mode", MODES)
def test_a_query_matching_nothing_returns_the_unindexed_items(make_store: Any, mode: str) -> None:
    """Lexical mode leaves out indexed items with no term in common with the query, as it did;
    the items without vectors still fill its page."""
    store = make_store(index=INDEX, search_mode=mode)
    _seed(store)
    got = store.search(NS, query="zebra", limit=10)
    if mode == "lexical":
        assert keys(got) == NEWEST_UNSCORED
    else:
        assert len(got) == 6 and keys(got)[3:] == NEWEST_UNSCORED


@on_ephemeral
@pytest.mark.parametrize("mode", MODES)
def test_expired_unscored_items_never_fill_and_returned_ones_are_refreshed(
    make_store: Any, mode: str
) -> None:
    clock = FakeClock()
    store = make_store(index=INDEX, search_mode=mode, clock=clock)
    store.put(NS, "i", {"text": "memo cat"})
    for key, ttl in (("short", 1), ("left", 2), ("paged", 2)):  # newest last
        clock.advance(seconds=1)
        store.put(NS, key, {"text": "memo cat"}, index=False, ttl=ttl)
    clock.advance(minutes=1.5)  # "short" has expired
    assert keys(store.search(NS, query=QUERY, limit=10, refresh_ttl=False)) == [
        "i",
        "paged",
        "left",
    ]
    assert keys(store.search(NS, query=QUERY, limit=2)) == ["i", "paged"]  # refreshes "paged"
    assert keys(store.search(NS, query=QUERY, limit=1, offset=2, refresh_ttl=False)) == ["left"]
    clock.advance(minutes=1.0)  # "left" has expired; "paged" lives on from its refresh
    assert keys(store.search(NS, query=QUERY, limit=10)) == ["i", "paged"]
    assert store.get(NS, "left", refresh_ttl=False) is None


@on_ephemeral
@pytest.mark.parametrize("mode", MODES)
def test_a_prefix_over_several_namespaces_reads_only_those_with_unindexed_items(
    make_store: Any, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All users' memories at once: the unscored items of each namespace under the prefix, newest
    first across them; a namespace the registry knows holds none is not read for them."""
    store, reference = make_store(index=INDEX, search_mode=mode), _in_memory()
    alice, bob, carol = ("users", "alice"), ("users", "bob"), ("users", "carol")
    _seed(store, reference, ns=alice)
    _seed(store, reference, ns=bob)
    for key, value in INDEXED.items():
        for s in (store, reference):
            s.put(carol, key, value)
    fresh = make_store.twin(store)  # nothing of the namespaces in process yet
    read: list[tuple[str, ...] | None] = []
    real = Gateway.read_items

    def spying(self: Gateway, where: Any, *rest: Any) -> Any:
        rows = real(self, where, *rest)
        read.extend(record_namespace(meta) for _, meta in rows)
        return rows

    monkeypatch.setattr(Gateway, "read_items", spying)
    got = fresh.search(("users",), query=QUERY, limit=100)
    want = reference.search(("users",), query=QUERY, limit=100)
    assert set(_refs(got)) == set(_refs(want))
    unscored = _split(got)[1]
    assert set(_refs(unscored)) == set(_refs(_split(want)[1]))
    assert _refs(unscored) == [(ns, k) for ns in (bob, alice) for k in NEWEST_UNSCORED]
    assert read and carol not in read, sorted(set(read), key=str)
    read.clear()
    assert all(it.score is not None for it in fresh.search(carol, query=QUERY, limit=100))
    assert read == []  # no namespace under the prefix may hold unindexed items: no read at all


@pytest.mark.parametrize("backend", [backend_param(HTTP)])
@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
def test_pages_are_filled_on_a_server(make_store: Any, mode: str) -> None:
    store, reference = make_store(index=INDEX, search_mode=mode), _in_memory()
    _seed(store, reference)
    whole = store.search(NS, query=QUERY, limit=100)
    assert set(_refs(whole)) == set(_refs(reference.search(NS, query=QUERY, limit=100)))
    assert keys(_split(whole)[1]) == NEWEST_UNSCORED
    for offset in range(8):
        page = store.search(NS, query=QUERY, limit=2, offset=offset)
        assert keys(page) == keys(whole)[offset : offset + 2], offset
    assert keys(store.search(NS, query=QUERY, filter={"tag": "x"}, limit=10))[1:] == ["u3"]


@pytest.mark.parametrize("backend", [backend_param(HTTP)])
@pytest.mark.parametrize("mode", MODES)
def test_a_short_page_on_a_server_reads_the_registry_once(
    make_store: Any, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The filler takes the namespaces the ranking's own registry read flagged: on a server
    each registry read is a round trip, and a user with few memories gets a short page on
    every recall."""
    store, reference = make_store(index=INDEX, search_mode=mode), _in_memory()
    _seed(store, reference)
    reads = 0
    real = Gateway.registry_records

    def counting(self: Gateway, *args: Any, **kwargs: Any) -> Any:
        nonlocal reads
        reads += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Gateway, "registry_records", counting)
    got = store.search(NS, query=QUERY, limit=100)
    assert keys(_split(got)[1]) == NEWEST_UNSCORED
    assert reads == 1


# --- random puts against InMemoryStore ------------------------------------------------------

NAMESPACES = (("a",), ("a", "x"), ("b",))
PREFIXES = ((), ("a",), ("a", "x"), ("b",), ("c",))
KEYS = ("k0", "k1", "k2", "k3")
WORDS = ("cat", "dog", "mat", "bark", "tea")
TAGS = ("red", "blue")
KINDS = ("indexed", "index_false", "no_text", "delete")
FILTERS = (None, {"tag": "red"}, {"tag": {"$ne": "red"}})

puts = st.lists(
    st.tuples(
        st.sampled_from(NAMESPACES), st.sampled_from(KEYS), st.sampled_from(KINDS),
        st.sampled_from(WORDS), st.sampled_from(TAGS),
    ),
    min_size=1, max_size=14,
)  # fmt: skip
searches = st.lists(
    st.tuples(
        st.sampled_from(PREFIXES), st.sampled_from(FILTERS), st.sampled_from(WORDS),
        st.integers(1, 5), st.integers(0, 9),
    ),
    min_size=1, max_size=4,
)  # fmt: skip


@pytest.fixture(scope="module")
def mode_stores() -> Iterator[dict[str, ChromaStore]]:
    """One store per mode, shared by the examples (each writes under a root of its own)."""
    stores = {
        mode: ChromaStore.ephemeral(
            index=INDEX, collection=f"fill-{mode}-{uuid.uuid4().hex[:8]}", search_mode=mode
        )
        for mode in MODES
    }
    yield stores
    for store in stores.values():
        store.close()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=puts, queries=searches)
def test_pages_match_in_memory_store_for_random_puts(
    mode_stores: dict[str, ChromaStore],
    ops: list[tuple[tuple[str, ...], str, str, str, str]],
    queries: list[tuple[tuple[str, ...], Any, str, int, int]],
) -> None:
    root = (f"r{uuid.uuid4().hex[:10]}",)
    reference = _in_memory()
    written: dict[Ref, int] = {}
    clock = itertools.count()
    for ns, key, kind, word, tag in ops:
        ns = root + ns
        stores: list[BaseStore] = [reference, *mode_stores.values()]
        # InMemoryStore keeps an item's old vectors when it is put again without text (a
        # documented difference): a delete first gives it the answer ChromaStore gives.
        reference.delete(ns, key)
        if kind == "delete":
            for store in stores:
                store.delete(ns, key)
            written.pop((ns, key), None)
            continue
        value = {"tag": tag, "text": f"memo {word}"}
        if kind == "no_text":
            value = {"tag": tag, "note": word}
        for store in stores:
            store.put(ns, key, value, index=False if kind == "index_false" else None)
        written[(ns, key)] = next(clock)
        tick()

    def newest(it: SearchItem) -> tuple[int, tuple[str, ...], str]:
        return (-written[(tuple(it.namespace), it.key)], tuple(it.namespace), it.key)

    for prefix, flt, word, limit, offset in queries:
        prefix, query = root + prefix, f"memo {word}"
        ref_scored, ref_unscored = _split(
            reference.search(prefix, query=query, filter=flt, limit=1000)
        )
        expected = [*ref_scored, *sorted(ref_unscored, key=newest)]
        for mode, store in mode_stores.items():
            whole = store.search(prefix, query=query, filter=flt, limit=1000)
            scored, unscored = _split(whole)
            context = (mode, prefix, flt, query, limit, offset)
            assert_ranked(whole)
            assert set(_refs(scored)) == set(_refs(ref_scored)), context
            assert _refs(unscored) == _refs(sorted(ref_unscored, key=newest)), context
            page = store.search(prefix, query=query, filter=flt, limit=limit, offset=offset)
            want = expected[offset : offset + limit]
            assert len(page) == len(want), context
            assert [it.score is None for it in page] == [it.score is None for it in want], context
            assert _refs(_split(page)[1]) == _refs(_split(want)[1]), context
            if mode == "dense":  # the same cosines: the same scores on the page (ties aside)
                assert [it.score for it in page if it.score is not None] == pytest.approx(
                    [it.score for it in want if it.score is not None], abs=1e-5
                ), context
            else:
                ranked = _refs(scored)[offset : offset + limit]
                assert set(_refs(_split(page)[0])) == set(ranked), context
            if offset <= len(ref_scored):
                ref_page = reference.search(
                    prefix, query=query, filter=flt, limit=limit, offset=offset
                )
                assert len(page) == len(ref_page), context
