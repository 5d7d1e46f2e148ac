"""A namespace larger than one Chroma read can return (SQLite's 32,766 variables) searches
correctly in every mode, on its first search, from an embedded store and from fresh stores that
read everything from Chroma again (``shared=True``), also when its vectors exceed the cache and
Chroma's index answers.

The namespace holds 33,000 items (built once for the module: 4-dim vectors from
:class:`Needles`, one batch of puts). A few "needle" items, some of them beyond the 32,766th,
are the only ones whose text holds the word ``needle`` and whose vector points along the
question's: every mode must rank exactly them first (dense search through Chroma's
approximate index only has to score exactly what it finds).
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore

SIZE = 33_000
"""More items than SQLite's default limit of 32,766 variables per statement."""
NS = ("shared", "knowledge")
SMALL_NS = ("shared", "other")
"""A second, small namespace, so a search of ``NS`` alone needs a ``where`` on Chroma's index."""
NEEDLES = (0, 5_000, 32_765, 32_766, 32_767, SIZE - 2, SIZE - 1)
"""Positions of the needle items: both ends and both sides of the limit."""
NEEDLE_KEYS = {f"k{i:05d}" for i in NEEDLES}


class Needles(Embeddings):
    """4-dim vectors: the question is ``[1, 0, 0, 0]``; a text with the word "needle" lies
    within 0.001 of it (cosine), every other text in the other three dimensions (cosine 0).
    Each direction comes from the text's hash, so no two needles share a vector."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0, 0.0, 0.0]

    @staticmethod
    def _vector(text: str) -> list[float]:
        digest = hashlib.blake2b(text.encode(), digest_size=3).digest()
        if "needle" in text.split():
            return [1.0, *(b / 10_000 for b in digest)]
        return [0.0, *(b - 127.5 for b in digest)]


INDEX: dict[str, Any] = {"dims": 4, "embed": Needles(), "fields": ["text"]}


def _text(i: int) -> str:
    word = "needle" if i in NEEDLES else f"hay{i % 97}"
    return f"item {i} holds {word} and straw{i % 13}"


@pytest.fixture(scope="module")
def built() -> Iterator[tuple[ChromaStore, str]]:
    """A store whose ``NS`` holds ``SIZE`` items (no search has run on it yet)."""
    name = f"large-{uuid.uuid4().hex[:12]}"
    store = ChromaStore.ephemeral(collection=name, index=INDEX)
    store.batch(
        [PutOp(NS, f"k{i:05d}", {"text": _text(i), "n": i}) for i in range(SIZE)]
        + [PutOp(SMALL_NS, f"s{i}", {"text": f"other needle {i}", "n": i}) for i in range(3)]
    )
    yield store, name
    store.close()


def _fresh(name: str, **options: Any) -> ChromaStore:
    """Another store on the same collection with its own, empty in-process state."""
    return ChromaStore.ephemeral(collection=name, index=INDEX, shared=True, **options)


def _first_keys(store: ChromaStore) -> tuple[set[str], list[float | None]]:
    found = store.search(NS, query="needle", limit=len(NEEDLES) + 3)
    head = found[: len(NEEDLES)]
    return {item.key for item in head}, [item.score for item in found]


def test_first_search_of_the_embedded_store(built: tuple[ChromaStore, str]) -> None:
    store, _ = built
    keys, scores = _first_keys(store)
    assert keys == NEEDLE_KEYS
    assert min(s or 0.0 for s in scores[: len(NEEDLES)]) > max(
        (s or 0.0 for s in scores[len(NEEDLES) :]), default=0.0
    )


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_first_search_reading_everything_again(built: tuple[ChromaStore, str], mode: str) -> None:
    _, name = built
    store = _fresh(name, search_mode=mode)
    keys, scores = _first_keys(store)
    assert keys == NEEDLE_KEYS
    top = scores[: len(NEEDLES)]
    assert min(s or 0.0 for s in top) > max(
        (s or 0.0 for s in scores[len(NEEDLES) :]), default=0.0
    )
    if mode == "dense":
        assert top == pytest.approx([1.0] * len(NEEDLES), abs=1e-3)


def test_vectors_beyond_the_cache_use_chromas_index(built: tuple[ChromaStore, str]) -> None:
    _, name = built
    store = _fresh(name, vector_cache_size=1_000)
    keys, _ = _first_keys(store)
    assert keys == NEEDLE_KEYS
    # Dense alone: Chroma's approximate index ranks; every score it gives is the exact cosine.
    dense = _fresh(name, search_mode="dense", vector_cache_size=1_000)
    found = dense.search(NS, query="needle", limit=10)
    assert len(found) == 10
    for item in found:
        vector = Needles._vector(item.value["text"])
        assert item.score == pytest.approx(vector[0] / math.hypot(*vector), abs=1e-5)


def test_listing_filter_and_namespaces(built: tuple[ChromaStore, str]) -> None:
    _, name = built
    store = _fresh(name)
    last = {f"k{i:05d}" for i in range(SIZE - 3, SIZE)}
    assert {item.key for item in store.search(NS, filter={"n": {"$gte": SIZE - 3}})} == last
    # One batch wrote every item at the same time: newest first, then by key.
    assert {item.key for item in store.search(NS, limit=3, offset=SIZE - 3)} == last
    beyond = store.search(NS, query="needle", filter={"n": {"$gte": 32_766}}, limit=10)
    wanted = {k for k in NEEDLE_KEYS if int(k[1:]) >= 32_766}
    assert {item.key for item in beyond[: len(wanted)]} == wanted
    assert all(item.value["n"] >= 32_766 for item in beyond)
    assert set(store.list_namespaces(prefix=("shared",))) == {NS, SMALL_NS}
