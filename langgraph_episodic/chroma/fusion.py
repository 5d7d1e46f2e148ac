"""Rank fusion: merge a dense (embedding) ranking and a lexical (BM25) ranking into one.

All methods return ``(doc_id, score)`` pairs best first with scores in ``[0, 1]``, higher is
better, and treat a document missing from one list as contributing nothing from that list.
``weight`` is the lexical side's share (``0.5`` weighs both sides equally).

- ``"rrf"`` (default): reciprocal rank fusion (Cormack et al., 2009),
  ``(1 - weight) / (k + rank_dense) + weight / (k + rank_lexical)`` with 1-based ranks and
  ``k = 60``, divided by its largest possible value ``1 / (k + 1)``. So ``1.0`` means "ranked
  first by both", ``0.5`` "first in one list and absent from the other" (at ``weight=0.5``).
  It uses ranks only, so it needs no calibration between cosine and BM25 scales.
- ``"minmax"``: each list's scores rescaled to ``[0, 1]`` by its own minimum and maximum, then
  combined as ``(1 - weight) * dense + weight * lexical``.
- ``"dbsf"``: distribution-based score fusion: each list's scores rescaled by
  ``mean ± 3 standard deviations`` and clipped to ``[0, 1]``, then combined like ``"minmax"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

FusionMethod = Literal["rrf", "minmax", "dbsf"]
METHODS: tuple[FusionMethod, ...] = ("rrf", "minmax", "dbsf")
RRF_K = 60
"""The standard reciprocal-rank-fusion constant."""

Ranking = Sequence[tuple[str, float]]


def fuse(
    dense: Ranking,
    lexical: Ranking,
    *,
    limit: int,
    method: FusionMethod = "rrf",
    weight: float = 0.5,
    k: int = RRF_K,
) -> list[tuple[str, float]]:
    """Fuse two rankings (each best first, higher score better) into the top ``limit``.

    Duplicate ids within one list keep their first (best) entry. Ties are broken by the best
    rank the document reached in either list, then by id, so the order is deterministic.

    >>> fused = fuse([("a", 0.9), ("b", 0.8)], [("b", 7.0), ("c", 3.0)], limit=3)
    >>> [(doc_id, round(score, 3)) for doc_id, score in fused]
    [('b', 0.992), ('a', 0.5), ('c', 0.492)]

    Args:
        dense: ``(doc_id, similarity)`` from the embedding search.
        lexical: ``(doc_id, bm25_score)`` from the keyword search.
        limit: How many results to return.
        method: ``"rrf"``, ``"minmax"`` or ``"dbsf"`` (see the module docstring).
        weight: The lexical side's share, in ``[0, 1]``.
        k: The RRF rank constant (``"rrf"`` only).
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight is the lexical share and must be in [0, 1], got {weight!r}.")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k!r}.")
    if limit <= 0:
        return []
    dense_list, lexical_list = _dedupe(dense), _dedupe(lexical)
    if method == "rrf":
        dense_part = _rrf(dense_list, k)
        lexical_part = _rrf(lexical_list, k)
    elif method == "minmax":
        dense_part = _minmax(dense_list)
        lexical_part = _minmax(lexical_list)
    elif method == "dbsf":
        dense_part = _dbsf(dense_list)
        lexical_part = _dbsf(lexical_list)
    else:
        raise ValueError(f"Unknown fusion method {method!r}; use one of {', '.join(METHODS)}.")

    best_rank: dict[str, int] = {}
    for ranking in (dense_list, lexical_list):
        for rank, (doc_id, _) in enumerate(ranking):
            best_rank[doc_id] = min(rank, best_rank.get(doc_id, rank))
    fused = {
        doc_id: (1.0 - weight) * dense_part.get(doc_id, 0.0)
        + weight * lexical_part.get(doc_id, 0.0)
        for doc_id in best_rank
    }
    ordered = sorted(fused.items(), key=lambda item: (-item[1], best_rank[item[0]], item[0]))
    return [(doc_id, min(1.0, score)) for doc_id, score in ordered[:limit]]


def _dedupe(ranking: Ranking) -> list[tuple[str, float]]:
    seen: set[str] = set()
    out = []
    for doc_id, score in ranking:
        if doc_id not in seen:
            seen.add(doc_id)
            out.append((doc_id, float(score)))
    return out


def _rrf(ranking: list[tuple[str, float]], k: int) -> dict[str, float]:
    # Scaled so that rank 1 gives 1.0: (k + 1) / (k + rank).
    return {doc_id: (k + 1.0) / (k + rank) for rank, (doc_id, _) in enumerate(ranking, start=1)}


def _minmax(ranking: list[tuple[str, float]]) -> dict[str, float]:
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    low, high = min(scores), max(scores)
    if high == low:
        return {doc_id: 1.0 for doc_id, _ in ranking}
    return {doc_id: (score - low) / (high - low) for doc_id, score in ranking}


def _dbsf(ranking: list[tuple[str, float]]) -> dict[str, float]:
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    mean = sum(scores) / len(scores)
    std = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
    if std == 0.0:
        return {doc_id: 1.0 for doc_id, _ in ranking}
    low, high = mean - 3.0 * std, mean + 3.0 * std
    return {
        doc_id: min(1.0, max(0.0, (score - low) / (high - low))) for doc_id, score in ranking
    }
