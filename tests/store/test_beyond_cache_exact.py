"""A namespace beyond the vector cache gives the answers of exact ranking.

A store with a vector cache of ten vectors ranks a namespace of hundreds through Chroma's
approximate index (:mod:`langgraph_episodic.chroma.nearest`); the same items in a store whose
cache holds them are ranked exactly in numpy. Dense top-10 ids agree on at least 95% (Chroma's
index is approximate), and a scope small enough to be ranked from its vectors read by id
(:data:`.nearest.EXACT_UP_TO` items) gives the exact answer, scores and all.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma.testing import vectors_held

from ._support import DIMS

WORDS = ("river", "pasta", "deploy", "port", "dinner", "alpha", "beta", "gamma", "kayak", "tea")
QUERIES = [f"{a} {b}" for a in WORDS for b in WORDS[::3] if a != b][:24]
BIG, SMALL, OTHER = ("team", "big"), ("team", "small"), ("others",)


class Seeded(Embeddings):
    """A random unit vector seeded by each text: no two items tie on their cosine."""

    def _unit(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        v = np.random.default_rng(seed).standard_normal(DIMS)
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._unit(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._unit(text)


def _pair(**options: Any) -> tuple[ChromaStore, ChromaStore]:
    """The same items in a store beyond its cache and in one that holds them (its default)."""
    ops = [
        PutOp(ns, f"{ns[-1]}{i}", {"text": f"{WORDS[i % 10]} {WORDS[i * 7 % 10]} note {i}"})
        for ns, n in ((BIG, 600), (SMALL, 40), (OTHER, 300))
        for i in range(n)
    ]
    stores = []
    for cache in (10, None):
        store = ChromaStore.ephemeral(
            collection=f"exact-{uuid.uuid4().hex[:12]}",
            index={"dims": DIMS, "embed": Seeded(), "fields": ["text"]},
            **({"vector_cache_size": cache} if cache else {}),
            **options,
        )
        store.batch(ops)
        stores.append(store)
    return stores[0], stores[1]


def _top(store: ChromaStore, ns: tuple[str, ...], query: str) -> list[tuple[str, float | None]]:
    return [(item.key, item.score) for item in store.search(ns, query=query, limit=10)]


def test_dense_beyond_the_cache_agrees_with_exact_ranking() -> None:
    beyond, exact = _pair(search_mode="dense")
    try:
        agree = total = 0
        for query in QUERIES:
            got, want = _top(beyond, BIG, query), _top(exact, BIG, query)
            assert len(got) == len(want) == 10
            agree += len({k for k, _ in got} & {k for k, _ in want})
            total += 10
        assert agree / total >= 0.95, f"{agree} of {total} top-10 ids agree"
        assert not vectors_held(beyond, BIG)  # ranked by Chroma's index
    finally:
        beyond.close()
        exact.close()


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_small_scope_beyond_the_cache_is_exact(mode: str) -> None:
    beyond, exact = _pair(search_mode=mode)
    try:
        for query in QUERIES:
            got, want = _top(beyond, SMALL, query), _top(exact, SMALL, query)
            assert [k for k, _ in got] == [k for k, _ in want]
            assert [v for _, v in got] == pytest.approx([v for _, v in want], abs=1e-6)
    finally:
        beyond.close()
        exact.close()
