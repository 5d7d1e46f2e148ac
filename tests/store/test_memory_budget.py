"""The caches' default sizes follow the machine's available memory (and the vector size)."""

from __future__ import annotations

import pytest

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma import memory_budget
from langgraph_episodic.chroma.memory_budget import (
    MAX_CACHED_VECTORS,
    MIN_CACHED_VECTORS,
    VECTOR_CACHE_SHARE,
    vector_cache_size,
)
from langgraph_episodic.chroma.testing import cache_capacities, cached_item_records

GIB = 2**30


@pytest.mark.parametrize("dims", [16, 64, 384, 1536])
@pytest.mark.parametrize("available", [GIB // 4, GIB, 4 * GIB, 64 * GIB])
def test_the_cache_takes_a_share_of_the_available_memory_within_bounds(
    dims: int, available: int
) -> None:
    size = vector_cache_size(dims, available)
    assert MIN_CACHED_VECTORS <= size <= MAX_CACHED_VECTORS
    if MIN_CACHED_VECTORS < size < MAX_CACHED_VECTORS:
        assert size * 4 * dims <= VECTOR_CACHE_SHARE * available


def test_less_memory_or_larger_vectors_give_a_smaller_cache() -> None:
    assert vector_cache_size(384, GIB) < vector_cache_size(384, 4 * GIB)
    assert vector_cache_size(1536, 4 * GIB) < vector_cache_size(384, 4 * GIB)
    assert vector_cache_size(384, 64 * GIB) == MAX_CACHED_VECTORS
    assert vector_cache_size(None, None) == MAX_CACHED_VECTORS


def test_the_store_default_follows_the_machine_and_a_given_size_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = {"dims": 64, "embed": HashEmbeddings(64)}
    for available in (GIB // 2, 16 * GIB):
        monkeypatch.setattr(memory_budget, "available_memory", lambda a=available: a)
        store = ChromaStore.ephemeral(index=index)
        try:
            assert cache_capacities(store)[0] == vector_cache_size(64, available)
        finally:
            store.close()
    store = ChromaStore.ephemeral(index=index, vector_cache_size=1234)
    try:
        assert cache_capacities(store)[0] == 1234
    finally:
        store.close()


def test_available_memory_is_read_from_the_machine() -> None:
    available = memory_budget.available_memory()
    assert available is None or available > 0


@pytest.mark.parametrize("available", [GIB // 4, GIB, 4 * GIB, 64 * GIB, None])
def test_the_item_cache_takes_a_share_of_the_available_memory_within_bounds(
    available: int | None,
) -> None:
    size = memory_budget.item_cache_size(available)
    assert memory_budget.MIN_CACHED_ITEMS <= size <= memory_budget.MAX_CACHED_ITEMS
    if available is not None and memory_budget.MIN_CACHED_ITEMS < size < memory_budget.MAX_CACHED_ITEMS:
        assert size * memory_budget.ITEM_ENTRY_BYTES <= memory_budget.ITEM_CACHE_SHARE * available
    assert memory_budget.item_cache_size(GIB // 4) <= memory_budget.item_cache_size(4 * GIB)


def test_the_item_cache_follows_the_machine_and_a_given_size_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = {"dims": 64, "embed": HashEmbeddings(64)}
    monkeypatch.setattr(memory_budget, "available_memory", lambda: GIB)
    store = ChromaStore.ephemeral(index=index)
    try:
        assert cache_capacities(store)[1] == memory_budget.item_cache_size(GIB)
    finally:
        store.close()
    store = ChromaStore.ephemeral(index=index, item_cache_size=3)
    try:
        ns = ("users", "alice")
        for i in range(10):
            store.put(ns, f"k{i}", {"text": f"memory number {i}"})
        assert len(cached_item_records(store)) <= 3
        assert [store.get(ns, f"k{i}").value["text"] for i in range(10)] == [  # type: ignore[union-attr]
            f"memory number {i}" for i in range(10)
        ]
        store.put(ns, "k0", {"text": "rewritten"})  # its old record read from Chroma
        assert store.get(ns, "k0").value == {"text": "rewritten"}  # type: ignore[union-attr]
        assert store.verify().ok
    finally:
        store.close()


@pytest.mark.parametrize("option", ["item_cache_size", "vector_cache_size"])
@pytest.mark.parametrize("bad", [-1, 2.5, "100", True])
def test_a_cache_size_that_is_no_count_is_refused_naming_the_fix(option: str, bad: object) -> None:
    with pytest.raises(ValueError, match=rf"{option} must be a whole number .* \(or None"):
        ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)}, **{option: bad})
