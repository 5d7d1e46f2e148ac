"""Helpers shared by the store tests: backend names, result views, a fake clock, probes, a
lexical shard unpacked into dicts for checks."""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig, Item

from langgraph_episodic.chroma.ranking.lexical import _Arrays, _Shard
from langgraph_episodic.embeddings import HashEmbeddings, simple_hash_embedding

DIMS = 64
"""Dimensions of the deterministic test embedder."""

MEMORY = "memory"
EPHEMERAL = "chroma-ephemeral"
PERSISTENT = "chroma-persistent"
HTTP = "chroma-http"
CHROMA = (EPHEMERAL, PERSISTENT, HTTP)


def _unpack(
    arrays: _Arrays,
) -> tuple[dict[str, dict[str, int]], dict[str, tuple[str, ...]], dict[str, int]]:
    """Whole ``arrays``' contents as a shard's dicts ``(postings, terms, lengths)``."""
    slots, starts, where, tf_array = arrays.flat()
    ids = arrays.ids
    names = list(slots)  # the slots are numbered in insertion order
    doc_of = list(map(ids.__getitem__, where.tolist()))
    tf = tf_array.tolist()
    bounds = starts.tolist()
    postings = {
        names[k]: dict(zip(doc_of[at:end], tf[at:end], strict=True))
        for k, (at, end) in enumerate(itertools.pairwise(bounds))
        if at != end
    }
    # Each document's terms: the pairs grouped by document, in slot order within one.
    slot_of = np.repeat(np.arange(len(names)), np.diff(starts))
    by_doc = slot_of[np.argsort(where, kind="stable")].tolist()
    ends = np.cumsum(np.bincount(where, minlength=len(ids))).tolist()
    held = map(names.__getitem__, by_doc)
    terms: dict[str, tuple[str, ...]] = {}
    at = 0
    for doc_id, end in zip(ids, ends, strict=True):
        terms[doc_id] = tuple(itertools.islice(held, end - at))
        at = end
    lengths = dict(zip(ids, map(int, arrays.lengths.tolist()), strict=True))
    return postings, terms, lengths


def unpacked(shard: _Shard) -> _Shard:
    """A changeable copy of ``shard`` holding every document in its dicts, none in a base
    (costs time in proportion to the namespace: for checks, not for writes)."""
    copy = _Shard()
    if shard.base is not None:
        copy.postings, copy.terms, copy.lengths = _unpack(shard.base)
        copy.total_length = sum(copy.lengths.values())
        ids = shard.base.ids
        for at in sorted(shard.dead):
            copy.discard(ids[at])
    for doc_id, terms in shard.terms.items():
        copy.discard(doc_id)
        for term in terms:
            copy.postings.setdefault(term, {})[doc_id] = shard.postings[term][doc_id]
        copy.terms[doc_id] = terms
        copy.lengths[doc_id] = shard.lengths[doc_id]
        copy.total_length += shard.lengths[doc_id]
    return copy


def backend_param(name: str) -> Any:
    """``pytest.param`` for a backend name, marked ``server`` when it needs the Chroma server."""
    marks = [pytest.mark.server] if name == HTTP else []
    return pytest.param(name, id=name, marks=marks)


ALL_BACKENDS = [backend_param(name) for name in (MEMORY, *CHROMA)]
CHROMA_BACKENDS = [backend_param(name) for name in CHROMA]
ONE_CHROMA = [backend_param(EPHEMERAL)]
"""For validation tests: it runs in the core every ChromaStore shares, before any client call."""
REFERENCE_AND_ONE_CHROMA = [backend_param(MEMORY), backend_param(EPHEMERAL)]


def hash_index(*, fields: list[str] | None = None, dims: int = DIMS) -> IndexConfig:
    """The test index: ``HashEmbeddings`` (instant, deterministic), optionally with fields."""
    index: IndexConfig = {"dims": dims, "embed": HashEmbeddings(dims)}
    if fields is not None:
        index["fields"] = fields
    return index


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity (0.0 when either vector is zero)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def hash_cosine(query: str, text: str, dims: int = DIMS) -> float:
    """Cosine similarity of two texts under ``simple_hash_embedding``."""
    return cosine(simple_hash_embedding(query, dims), simple_hash_embedding(text, dims))


def refs(items: Iterable[Item]) -> set[tuple[tuple[str, ...], str]]:
    """The (namespace, key) pairs of some items, as a set (for order-free comparisons)."""
    return {(item.namespace, item.key) for item in items}


def keys(items: Iterable[Item]) -> list[str]:
    """The keys of some items, in order."""
    return [item.key for item in items]


def key_set(items: Iterable[Item]) -> set[str]:
    """The keys of some items, as a set."""
    return {item.key for item in items}


def scores(items: Iterable[Any]) -> dict[str, float | None]:
    """key -> score of search results."""
    return {item.key: item.score for item in items}


def assert_scores_close(
    got: dict[str, float | None], expected: dict[str, float | None], tol: float = 1e-5
) -> None:
    """Same keys, and every score within ``tol`` of the expected one."""
    assert set(got) == set(expected), f"keys differ: got {sorted(got)}, expected {sorted(expected)}"
    for key, want in expected.items():
        have = got[key]
        if want is None:
            assert have is None, f"{key}: expected no score, got {have}"
        else:
            assert have is not None, f"{key}: expected score {want}, got None"
            assert abs(have - want) <= tol, f"{key}: score {have} != expected {want}"


def assert_ranked(results: Sequence[Any], tol: float = 1e-6) -> None:
    """Scored results come first, by score descending (ties within ``tol``)."""
    scored = [r.score for r in results if r.score is not None]
    assert [r.score is not None for r in results] == [True] * len(scored) + [False] * (
        len(results) - len(scored)
    ), f"unscored results must come after scored ones: {[r.score for r in results]}"
    for a, b in itertools.pairwise(scored):
        assert a >= b - tol, f"scores not descending: {scored}"


def tick() -> None:
    """Let the wall clock move on, so that two writes get different timestamps."""
    time.sleep(0.003)


class FakeClock:
    """A settable epoch-seconds clock to pass as ``ChromaStore(clock=...)``."""

    def __init__(self, start: float | None = None) -> None:
        self.now = time.time() if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, *, minutes: float = 0.0, seconds: float = 0.0) -> None:
        """Move the clock forward."""
        self.now += minutes * 60.0 + seconds


class CountingEmbeddings(Embeddings):
    """Wraps an ``Embeddings`` and counts calls and texts (to check batching and re-embedding)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.document_calls: list[list[str]] = []
        self.query_calls: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.document_calls.append(list(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.query_calls.append(text)
        return self.inner.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


class Orthogonal(Embeddings):
    """Every memory orthogonal to every question (cosine 0): scores come from the words only,
    so the expected order is known."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[0.0, 1.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


@contextmanager
def switching_every_microsecond() -> Iterator[None]:
    """Threads switch every microsecond inside (``sys.setswitchinterval(1e-6)``), so races
    that need an unlucky switch happen often."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)
