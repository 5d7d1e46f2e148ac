"""Chroma's nearest vectors of some namespaces, for a scope whose vectors the cache does not hold.

Chroma's query with a ``where`` evaluates the filter over every matching record first, so its
cost grows with the namespace, while an unfiltered query costs about its number of results
(``docs/benchmarks.md``, "Searching beyond the vector cache"). So when the search knows which
items its namespaces hold (:meth:`.LexicalIndex.held_items`, under any tag), it asks without a
``where`` for enough results that ``depth`` are likely theirs and keeps those: the nearest
``depth`` of the namespaces are among the nearest ``k`` whenever ``depth`` of the ``k`` are
theirs. Otherwise, or past :data:`MAX_UNFILTERED` results, the filtered query answers.

A scope of at most :data:`EXACT_UP_TO` held items is ranked exactly from its vectors read by
id: Chroma's approximate filtered query could leave one of a few items among many out.
"""

from __future__ import annotations

import math
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from . import record_format
from .backend import Backend

MAX_UNFILTERED = 4_096
"""The most results one unfiltered query asks for (a few thousand still cost far less than a
filtered query over a large namespace); a search that would need more uses Chroma's filtered
query."""

EXACT_UP_TO = 256
"""A scope holding at most this many items is ranked exactly from its vectors, read by id (a
read of a few hundred vectors costs about what the filtered query does)."""

MARGIN = 1.5
"""How many more results than the namespaces' share predicts an unfiltered query asks for, so
that the share's spread rarely leaves it short (a short answer costs the filtered query)."""


def unfiltered_size(depth: int, held: int, total: int) -> int | None:
    """How many results an unfiltered query asks for so that ``depth`` of them are likely among
    ``held`` items' vectors, of ``total`` in the collection; None when that exceeds
    :data:`MAX_UNFILTERED` (the filtered query answers).

    >>> unfiltered_size(30, 90_000, 100_000)
    60
    >>> unfiltered_size(30, 1_000, 100_000) is None
    True
    """
    if held <= 0:
        return None
    k = math.ceil(depth * MARGIN * max(total, held) / held) + 10
    return k if k <= MAX_UNFILTERED else None


def nearest(
    b: Backend,
    qvec: np.ndarray,
    depth: int,
    where: dict[str, Any] | None,
    held: AbstractSet[str] | None,
) -> list[tuple[str, float]]:
    """(vector id, distance) of the ``depth`` nearest vector records matching ``where``: from
    an unfiltered query kept to the ``held`` items' records when that answers it (see the
    module docstring), else from Chroma's filtered query. ``held`` None: filtered always."""
    query = np.asarray(qvec, dtype=np.float32)
    if where is None:
        return b.gateway.query_vectors(query, depth, None)
    if held is not None and len(held) <= EXACT_UP_TO:
        return _exact(b, query, depth, held)
    if held is not None:
        k = unfiltered_size(depth, len(held), b.vector_total())
        if k is not None:
            found = b.gateway.query_vectors(query, k, None)
            kept = [(vid, d) for vid, d in found if record_format.item_of_vector(vid) in held]
            if len(kept) >= depth or len(found) >= b.vector_total():  # (or: no more to find)
                return kept[:depth]
    return b.gateway.query_vectors(query, depth, where)


def _exact(
    b: Backend, query: np.ndarray, depth: int, held: AbstractSet[str]
) -> list[tuple[str, float]]:
    """(vector id, cosine distance) of the ``depth`` nearest vectors of the ``held`` items, by
    reading them all (the distance Chroma's cosine space gives: 1 - cosine)."""
    rows = b.gateway.vectors_of_items(sorted(held))
    if not rows:
        return []
    matrix = np.asarray([emb for _, emb in rows], dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(query)) or 1.0)
    norms[norms == 0] = 1.0
    distances = 1.0 - (matrix @ query) / norms
    order = sorted(range(len(rows)), key=lambda n: (float(distances[n]), rows[n][0]))
    return [(rows[n][0], float(distances[n])) for n in order[:depth]]
