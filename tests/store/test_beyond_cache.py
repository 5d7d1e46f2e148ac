"""Searches whose vectors exceed the vector cache ask Chroma's index without a ``where`` and
keep the namespaces' items (:mod:`langgraph_episodic.chroma.nearest`): the answers must be the
filtered query's, item for item and in the same order, for every mode, prefix and filter, with
expired, deleted and rewritten items, and the filtered query must answer when the namespace is
too small a share of the collection.

Each store has a vector cache of two vectors, so every namespace here is beyond it. The
filtered path is what the same store answers with :func:`.nearest.unfiltered_size` patched to
refuse every unfiltered query.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma import nearest
from langgraph_episodic.chroma.gateway import Gateway

from ._support import FakeClock, hash_index

WORDS = ("deploy", "pasta", "port", "dinner", "river", "alpha", "beta", "gamma", "delta")
NAMESPACES = (("a",), ("a", "x"), ("b",))
PREFIXES = (("a",), ("a", "x"), ("b",))


def _store(**options: Any) -> ChromaStore:
    return ChromaStore.ephemeral(
        collection=f"beyond-{uuid.uuid4().hex[:12]}",
        index=hash_index(fields=["text"]),
        vector_cache_size=2,
        **options,
    )


EXACT_UP_TO = nearest.EXACT_UP_TO
"""The store's own bound (tests of the index's paths set it to 0, see :func:`index_paths`)."""


@pytest.fixture(autouse=True)
def index_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scopes this small are ranked exactly from their vectors read by id; these tests are of
    the paths through Chroma's index, so every scope takes them (unless a test says not)."""
    monkeypatch.setattr(nearest, "EXACT_UP_TO", 0)


class Queries:
    """The ``where`` of every query of Chroma's vector index (None: unfiltered)."""

    def __init__(self) -> None:
        self.wheres: list[dict[str, Any] | None] = []


@pytest.fixture
def queries(monkeypatch: pytest.MonkeyPatch) -> Queries:
    seen = Queries()
    original = Gateway.query_vectors

    def spy(self: Gateway, qvec: Any, depth: int, where: dict[str, Any] | None) -> Any:
        seen.wheres.append(where)
        return original(self, qvec, depth, where)

    monkeypatch.setattr(Gateway, "query_vectors", spy)
    return seen


@contextmanager
def filtered_only() -> Iterator[None]:
    """Every search of Chroma's index uses the filtered query (the reference answer)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nearest, "unfiltered_size", lambda depth, held, total: None)
        yield


def _answer(store: ChromaStore, prefix: tuple[str, ...], **search: Any) -> list[Any]:
    found = store.search(prefix, **search)
    return [(item.namespace, item.key, round(item.score or 0.0, 5)) for item in found]


def _both(store: ChromaStore, prefix: tuple[str, ...], **search: Any) -> tuple[list[Any], list[Any]]:
    fast = _answer(store, prefix, **search)
    with filtered_only():
        reference = _answer(store, prefix, **search)
    return fast, reference


def _ranked(hits: list[Any]) -> list[Any]:
    """What two answers must share: every hit scored above 0 by namespace, key, score and
    place; hits scored 0 by count.

    A hybrid score is floored at 0 (below the question's baseline), so such hits tie, and which
    of them fill the page is up to Chroma's approximate index in the filtered query itself (seen
    once: the same query on the same store gave ``base0``, then ``base1``)."""
    return [hit if hit[2] else "(tied at 0)" for hit in hits]


def _text(n: int, words: list[str]) -> str:
    return " ".join([*words, f"t{n}"])  # a word of its own: no two items share a vector


items_strategy = st.lists(
    st.tuples(
        st.sampled_from(range(len(NAMESPACES))),
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
        st.sampled_from(["event", "fact"]),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    items=items_strategy,
    deleted=st.sets(st.integers(0, 39), max_size=8),
    searches=st.lists(
        st.tuples(
            st.sampled_from(PREFIXES),
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
            st.sampled_from(["hybrid", "dense"]),
            st.booleans(),
            st.integers(1, 12),
        ),
        min_size=1,
        max_size=6,
    ),
)
def test_same_answers_as_the_filtered_query(
    queries: Queries,
    items: list[tuple[int, list[str], str]],
    deleted: set[int],
    searches: list[tuple[tuple[str, ...], list[str], str, bool, int]],
) -> None:
    stores = {mode: _store(search_mode=mode) for mode in ("hybrid", "dense")}
    try:
        for store in stores.values():
            store.batch(
                [  # three items in each namespace at least: every scope exceeds the cache
                    PutOp(ns, f"base{i}", {"text": f"{WORDS[i]} base{i}", "kind": "fact"})
                    for ns in NAMESPACES
                    for i in range(3)
                ]
                + [
                    PutOp(NAMESPACES[ns], f"k{n}", {"text": _text(n, words), "kind": kind})
                    for n, (ns, words, kind) in enumerate(items)
                ]
                + [PutOp(NAMESPACES[items[n][0]], f"k{n}", None) for n in deleted if n < len(items)]
            )
        for prefix, words, mode, filtered, limit in searches:
            store = stores[mode]
            search: dict[str, Any] = {"query": " ".join(words), "limit": limit}
            if filtered:
                search["filter"] = {"kind": "event"}
            queries.wheres.clear()
            fast, reference = _both(store, prefix, **search)
            assert _ranked(fast) == _ranked(reference)
            assert None in queries.wheres, "the unfiltered query answered first"
            for ns, key, _ in fast:
                assert ns[: len(prefix)] == prefix
                if key.startswith("base"):
                    continue
                n = int(key[1:])
                assert n not in deleted
                assert not filtered or items[n][2] == "event"
    finally:
        for store in stores.values():
            store.close()


@pytest.mark.parametrize("mode", ["hybrid", "dense"])
def test_other_namespaces_are_never_returned(queries: Queries, mode: str) -> None:
    store = _store(search_mode=mode)
    try:
        store.batch(
            [PutOp(("big",), f"b{i}", {"text": f"river deploy {i}"}) for i in range(60)]
            + [PutOp(("mine",), f"m{i}", {"text": f"pasta dinner {i}"}) for i in range(40)]
        )
        fast, reference = _both(store, ("mine",), query="river deploy", limit=30)
        assert _ranked(fast) == _ranked(reference)
        assert len(fast) == 30
        assert {ns for ns, _, _ in fast} == {("mine",)}
        assert None in queries.wheres
    finally:
        store.close()


def test_a_rare_namespace_takes_the_filtered_query(
    queries: Queries, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(search_mode="dense")
    try:
        store.batch(
            [PutOp(("big",), f"b{i}", {"text": f"river {i}"}) for i in range(200)]
            + [PutOp(("rare",), f"r{i}", {"text": f"river {i}"}) for i in range(3)]
        )
        reference = _answer(store, ("rare",), query="river", limit=3)
        # Too small a share for an unfiltered query within the limit: the filtered one, alone.
        monkeypatch.setattr(nearest, "MAX_UNFILTERED", 100)
        queries.wheres.clear()
        assert _answer(store, ("rare",), query="river", limit=3) == reference
        assert queries.wheres and None not in queries.wheres
        # An unfiltered query that finds too few of the namespace's: the filtered one after it.
        monkeypatch.setattr(nearest, "MAX_UNFILTERED", 4_096)
        monkeypatch.setattr(nearest, "MARGIN", 0.01)
        queries.wheres.clear()
        assert _answer(store, ("rare",), query="river", limit=3) == reference
        assert queries.wheres[0] is None and queries.wheres[-1] is not None
    finally:
        store.close()


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_small_scope_beyond_the_cache_is_ranked_exactly(
    queries: Queries, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chroma's filtered query is approximate: for 3 items among 203 it left one out in about
    one run of eight. A scope of a few items is ranked from its vectors read by id."""
    monkeypatch.setattr(nearest, "EXACT_UP_TO", EXACT_UP_TO)
    for _ in range(5):  # fresh indexes: the approximate query missed at random
        store = _store(search_mode=mode)
        try:
            store.batch(
                [PutOp(("big",), f"b{i}", {"text": f"river {i}"}) for i in range(200)]
                + [PutOp(("rare",), f"r{i}", {"text": f"river {i}"}) for i in range(3)]
            )
            queries.wheres.clear()
            found = _answer(store, ("rare",), query="river", limit=3)
            assert {key for _, key, _ in found} == {"r0", "r1", "r2"}
            assert queries.wheres == [], "Chroma's index was asked"
            with filtered_only(), monkeypatch.context() as patch:  # Chroma's distances
                patch.setattr(nearest, "EXACT_UP_TO", 0)
                chroma = {key: score for _, key, score in _answer(store, ("rare",), query="river", limit=3)}
            exact = {key: score for _, key, score in found}
            assert chroma and {key: exact[key] for key in chroma} == chroma  # the same scores
        finally:
            store.close()


def test_expired_deleted_and_rewritten_items(queries: Queries) -> None:
    clock = FakeClock()
    store = _store(search_mode="hybrid", clock=clock, ttl={"refresh_on_read": False})
    try:
        store.batch(
            [PutOp(("other",), f"o{i}", {"text": f"river {i}"}) for i in range(30)]
            + [PutOp(("mine",), f"m{i}", {"text": f"river bank {i}"}) for i in range(20)]
            + [PutOp(("mine",), f"e{i}", {"text": f"river bank e{i}"}, ttl=1.0) for i in range(5)]
        )
        assert {key for _, key, _ in _answer(store, ("mine",), query="river bank", limit=25)} >= {
            f"e{i}" for i in range(5)
        }
        clock.advance(minutes=2)
        store.delete(("mine",), "m3")
        store.put(("mine",), "m4", {"text": "pasta dinner"})  # rewritten: new vectors, new tag
        fast, reference = _both(store, ("mine",), query="river bank", limit=25)
        assert _ranked(fast) == _ranked(reference)
        keys = [key for _, key, _ in fast]
        assert not {f"e{i}" for i in range(5)} & set(keys)
        assert "m3" not in keys
        assert set(keys) == {f"m{i}" for i in range(20) if i != 3}
        assert None in queries.wheres
    finally:
        store.close()


def test_a_store_on_a_server_reads_the_same(queries: Queries) -> None:
    """``shared=True`` (as on a server): the lexical shards are read again on each search."""
    writer = _store(search_mode="hybrid")
    try:
        writer.batch(
            [PutOp(("big",), f"b{i}", {"text": f"alpha beta {i}"}) for i in range(50)]
            + [PutOp(("mine",), f"m{i}", {"text": f"alpha gamma {i}"}) for i in range(30)]
        )
        reader = ChromaStore.ephemeral(
            collection=writer.collection_name,
            index=hash_index(fields=["text"]),
            vector_cache_size=2,
            shared=True,
        )
        try:
            fast, reference = _both(reader, ("mine",), query="alpha", limit=10)
            assert _ranked(fast) == _ranked(reference)
            assert {ns for ns, _, _ in fast} == {("mine",)}
            assert None in queries.wheres
        finally:
            reader.close()
    finally:
        writer.close()
