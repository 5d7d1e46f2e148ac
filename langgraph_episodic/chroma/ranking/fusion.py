"""Calibrated rank fusion: a dense (embedding) ranking and a lexical (BM25) one merged into one
score, over arrays (:func:`fuse_aligned`).

Every candidate is scored on *both* sides first (:func:`.hybrid.complete`), so a document
missing from one list is not scored as that list's worst. Both sides mean the same for every
query: the dense side is the cosine (negative counts as 0; measured from the question's
baseline, :mod:`langgraph_episodic.language.baseline`), the lexical side BM25 over the most
any document could score (:func:`lexical_shares`). The score is ``(1 - weight) * cosine +
weight * lexical_share`` (:data:`LEXICAL_WEIGHT`, chosen on LoCoMo development conversations),
so it says how related a memory is, not how it ranks, and a floor such as ``min_score=0.2``
means the same for every query. The reference implementation (with min-max, DBSF and RRF) is
``benchmarks/_fusion_reference.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...errors import InvalidValueError
from ...language.baseline import LEXICAL_WEIGHT


def fuse_aligned(
    ids: Sequence[str],
    dense: tuple[np.ndarray, np.ndarray],
    lexical: tuple[np.ndarray, np.ndarray],
    *,
    limit: int,
    weight: float = LEXICAL_WEIGHT,
    alone: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[tuple[str, float]]:
    """The fused ranking of candidates already gathered: ``ids`` are the distinct candidates,
    and each side is ``(at, scores)``: its entries' candidates (distinct indexes into ``ids``,
    in the side's input order) and their scores (float64).

    The score is ``(1 - weight) * clip(dense) + weight * clip(lexical)``, or the candidate's
    ``alone`` score (``(at, scores)`` as a side's) when that is larger: a side that scores on its
    own (:class:`.baseline.SecondReading`). Ties are broken by the best rank the candidate
    reached on any side (each side ranked by its score, input order among equals), then by id,
    so the order is deterministic.

    No Python work is done per candidate but reading out the result; ranks are computed only
    for equal scores, ids compared only for equal best ranks.
    """
    (dense_at, dense_scores), (lexical_at, lexical_scores) = dense, lexical
    if not 0.0 <= weight <= 1.0:
        raise InvalidValueError(
            f"weight is the lexical share and must be in [0, 1], got {weight!r}."
        )
    if limit <= 0:
        return []
    total = np.zeros(len(ids))
    total[dense_at] = (1.0 - weight) * _clip(dense_scores)
    total[lexical_at] += weight * _clip(lexical_scores)
    sides = [dense, lexical]
    if alone is not None:
        alone_at, alone_scores = alone
        total[alone_at] = np.maximum(total[alone_at], _clip(alone_scores))
        if np.isnan(alone_scores).any():
            _refuse_nan(ids, alone)
        sides.append(alone)
    order = np.argsort(-total)
    ordered = total[order]
    high, low = (float(ordered[0]), float(ordered[-1])) if len(ordered) else (0.0, 0.0)
    if math.isnan(low):  # a NaN sorts last
        _refuse_nan(ids, dense, lexical)
    if (ordered[1:] == ordered[:-1]).any():  # equal scores: by best rank, then id
        order = _by_rank(ids, total, sides)
    top = order[:limit]
    scores = total[top]
    if high > 1.0 or low < 0.0:
        scores = _clip(scores)
    return list(zip([ids[n] for n in top.tolist()], scores.tolist(), strict=True))


def _clip(scores: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(scores, 0.0), 1.0)


def _refuse_nan(ids: Sequence[str], *sides: tuple[np.ndarray, np.ndarray]) -> None:
    for at, scores in sides:
        for n, score in zip(at.tolist(), scores.tolist(), strict=True):
            if math.isnan(score):
                raise InvalidValueError(f"Score of {ids[n]!r} is NaN; scores must be numbers.")


def _by_rank(
    ids: Sequence[str], total: np.ndarray, sides: Sequence[tuple[np.ndarray, np.ndarray]]
) -> np.ndarray:
    """The candidates by score, then by the best rank they reached on any side (each side
    ranked by its score, input order among equals), then by id."""
    rank = np.full(len(total), sum(len(at) for at, _ in sides), dtype=np.intp)
    for at, scores in sides:
        side = np.empty(len(at), dtype=np.intp)
        side[np.argsort(-scores, kind="stable")] = np.arange(len(at))
        rank[at] = np.minimum(rank[at], side)
    order = np.lexsort((rank, -total))
    ordered_total, ordered_rank = total[order], rank[order]
    if ((ordered_total[1:] == ordered_total[:-1]) & (ordered_rank[1:] == ordered_rank[:-1])).any():
        by_id = sorted(range(len(total)), key=lambda n: (-total[n], rank[n], ids[n]))
        return np.asarray(by_id, dtype=np.intp)
    return order


def lexical_shares(bm25: Sequence[float] | np.ndarray, top: float) -> np.ndarray:
    """Each BM25 score over ``top`` (the most any document could score), clipped to ``[0, 1]``."""
    if top <= 0.0:
        return np.zeros(len(bm25))
    return _clip(np.asarray(bm25, dtype=np.float64) / top)
