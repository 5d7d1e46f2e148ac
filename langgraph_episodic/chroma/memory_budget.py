"""How much the in-process caches may hold, from the machine's available memory.

Each default cache size is a share of the memory available when the store opens, between a
floor and a ceiling (200,000 vectors of 384 dims take about 300 MB). A scope larger than the
vector cache is searched through Chroma's index and an item cache miss reads Chroma: a smaller
cache is slower, never wrong.
"""

from __future__ import annotations

import os
from pathlib import Path

VECTOR_CACHE_SHARE = 0.05
"""The part of the available memory the vector cache may use by default."""

MAX_CACHED_VECTORS = 200_000
"""The most vectors the default cache holds, however much memory there is."""

MIN_CACHED_VECTORS = 10_000
"""The fewest vectors the default cache holds, however little memory there is."""

ROW_OVERHEAD_BYTES = 100
"""Bytes a cached vector costs besides its floats (its row's owner key)."""

ASSUMED_DIMS = 384
"""Vector size assumed when the index does not say (the packaged model's)."""


ITEM_CACHE_SHARE = 0.01
"""The part of the available memory the item cache may use by default."""

MAX_CACHED_ITEMS = 100_000
"""The most item records the default item cache holds."""

MIN_CACHED_ITEMS = 10_000
"""The fewest item records the default item cache holds."""

ITEM_ENTRY_BYTES = 650
"""Bytes a cached item record costs with a short text (its values, value JSON, id and place in
the cache, with a LoCoMo turn as the text; ``benchmarks/memory.py`` measures the whole
cache). Longer values cost more."""


def available_memory() -> int | None:
    """Bytes of memory available for new allocations (Linux ``MemAvailable``; elsewhere the
    physical memory), or ``None`` when the platform tells neither."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


def vector_cache_size(dims: int | None, available: int | None) -> int:
    """The default vector cache size (vectors) for ``dims``-d vectors and ``available`` bytes.

    >>> vector_cache_size(384, 8 * 2**30)
    200000
    >>> vector_cache_size(384, 1 * 2**30)
    32816
    """
    if available is None:
        return MAX_CACHED_VECTORS
    per_vector = 4 * (dims or ASSUMED_DIMS) + ROW_OVERHEAD_BYTES
    fits = int(available * VECTOR_CACHE_SHARE / per_vector)
    return max(MIN_CACHED_VECTORS, min(MAX_CACHED_VECTORS, fits))


def item_cache_size(available: int | None) -> int:
    """The default item cache size (records) for ``available`` bytes.

    >>> item_cache_size(8 * 2**30)
    100000
    >>> item_cache_size(2**30)
    16519
    """
    if available is None:
        return MAX_CACHED_ITEMS
    fits = int(available * ITEM_CACHE_SHARE / ITEM_ENTRY_BYTES)
    return max(MIN_CACHED_ITEMS, min(MAX_CACHED_ITEMS, fits))
