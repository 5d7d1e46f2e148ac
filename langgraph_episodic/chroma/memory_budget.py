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
"""The part of the available memory the vector cache may use by default, for between
:data:`MIN_CACHED_VECTORS` and :data:`MAX_CACHED_VECTORS` vectors."""
MIN_CACHED_VECTORS = 10_000
MAX_CACHED_VECTORS = 200_000

ROW_OVERHEAD_BYTES = 100
"""Bytes a cached vector costs besides its floats (its row's owner key)."""

ASSUMED_DIMS = 384
"""Vector size assumed when the index does not say (the packaged model's)."""

ITEM_CACHE_SHARE = 0.01
"""The part of the available memory the item cache may use by default, for between
:data:`MIN_CACHED_ITEMS` and :data:`MAX_CACHED_ITEMS` records."""
MIN_CACHED_ITEMS = 10_000
MAX_CACHED_ITEMS = 100_000

ITEM_ENTRY_BYTES = 650
"""Bytes a cached item record with a short text costs (``benchmarks/memory.py`` measures the
whole cache); longer values cost more."""


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
    per_vector = 4 * (dims or ASSUMED_DIMS) + ROW_OVERHEAD_BYTES
    return _fits(available, VECTOR_CACHE_SHARE, per_vector, MIN_CACHED_VECTORS, MAX_CACHED_VECTORS)


def item_cache_size(available: int | None) -> int:
    """The default item cache size (records) for ``available`` bytes.

    >>> item_cache_size(8 * 2**30)
    100000
    >>> item_cache_size(2**30)
    16519
    """
    return _fits(available, ITEM_CACHE_SHARE, ITEM_ENTRY_BYTES, MIN_CACHED_ITEMS, MAX_CACHED_ITEMS)


def _fits(available: int | None, share: float, entry_bytes: int, least: int, most: int) -> int:
    """How many entries of ``entry_bytes`` fit in ``share`` of ``available`` bytes, between
    ``least`` and ``most`` (``most`` when the memory is unknown)."""
    if available is None:
        return most
    return max(least, min(most, int(available * share / entry_bytes)))
