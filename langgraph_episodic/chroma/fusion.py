"""Rank fusion: merge a dense (embedding) ranking and a lexical (BM25) ranking into one.

Hybrid search takes the top candidates of each side, and then (this matters most) scores every
candidate on *both* sides: the dense similarity of documents found only by BM25 and the BM25
score of documents found only by the embedding (:func:`missing_ids` says which). Without this
completion a document missing from one list is scored as that list's worst, and the weak side's
top hit ties with the strong side's; what it gains on LoCoMo is in ``docs/benchmarks.md``
("Retrieval quality").

Methods (all return ``(doc_id, score)`` best first, scores in ``[0, 1]``, higher is better;
``weight`` is the lexical share, ``0.5`` weighs both sides equally):

- ``"calibrated"`` (the store's hybrid search): both sides' scores are taken as they are,
  because each already means the same for every query: the dense side is the cosine
  similarity (negative counts as 0; with the packaged model measured from the question's
  baseline by the store, :mod:`.baseline`) and the lexical side the *lexical share*, BM25 divided by
  the most any document could score for that query (:func:`lexical_share`: the idf-weighted
  share of the query's terms a memory holds; every term once in a memory of average length
  gives ``1 / (k1 + 1)``, about 0.45, repeated terms and short memories more). The score is
  ``(1 - weight) * cosine + weight * lexical_share`` with ``weight =`` :data:`LEXICAL_WEIGHT`
  (0.65, chosen on three LoCoMo development conversations, checked on the other two).
  So a score says how related a memory is, not how it compares with the other candidates: an
  unrelated memory scores low (typically under 0.1 with MiniLM) even when it is the best there
  is, the same memory scores the same whichever namespaces are searched alongside it (up to the
  BM25 statistics of the searched namespaces), and a floor such as ``min_score=0.2`` means the
  same for every query. On LoCoMo its recall matches min-max fusion's with the same analyzer
  (``docs/benchmarks.md``, "Retrieval quality").

- ``"minmax"`` (``fuse``'s default; the store's earlier hybrid search): each side's scores rescaled to ``[0, 1]`` by the minimum and maximum
  over the candidates, then ``(1 - weight) * dense + weight * lexical``. ``1.0`` means "best
  candidate on both sides". Scores are relative to one query's candidates, so they rank
  results but do not compare across queries.
- ``"dbsf"``: distribution-based score fusion; like ``"minmax"`` but each side is rescaled by
  ``mean ± 3 standard deviations`` and clipped to ``[0, 1]``.
- ``"rrf"``: reciprocal rank fusion (Cormack et al., 2009),
  ``(1 - weight) / (k + rank_dense) + weight / (k + rank_lexical)`` with 1-based ranks and
  ``k = 60``, divided by its largest possible value ``1 / (k + 1)``: ``1.0`` means "ranked first
  by both", ``0.5`` "first on one side, absent from the other" (at ``weight=0.5``). Uses ranks
  only; measured weaker than ``"minmax"`` when one side is much stronger than the other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import itemgetter
from typing import Literal

import numpy as np

FusionMethod = Literal["calibrated", "minmax", "dbsf", "rrf"]
METHODS: tuple[FusionMethod, ...] = ("calibrated", "minmax", "dbsf", "rrf")
RRF_K = 60
"""The standard reciprocal-rank-fusion constant."""
LEXICAL_WEIGHT = 0.65
"""The lexical side's share in the store's calibrated hybrid score (chosen on LoCoMo)."""

Ranking = Sequence[tuple[str, float]]


def missing_ids(dense: Ranking, lexical: Ranking) -> tuple[list[str], list[str]]:
    """Which candidates lack a score on the other side, so the caller can complete both lists.

    Returns ``(need_dense, need_lexical)``: ids found only lexically (look up their dense
    similarity) and ids found only densely (look up their BM25 score, ``0.0`` if they share no
    term with the query). Order follows the input.

    >>> missing_ids([("a", 0.9), ("b", 0.8)], [("b", 7.0), ("c", 3.0)])
    (['c'], ['a'])
    """
    dense_ids = dict.fromkeys(doc_id for doc_id, _ in dense)
    lexical_ids = dict.fromkeys(doc_id for doc_id, _ in lexical)
    need_dense = [doc_id for doc_id in lexical_ids if doc_id not in dense_ids]
    need_lexical = [doc_id for doc_id in dense_ids if doc_id not in lexical_ids]
    return need_dense, need_lexical


def fuse(
    dense: Ranking,
    lexical: Ranking,
    *,
    limit: int,
    method: FusionMethod = "minmax",
    weight: float = 0.5,
    k: int = RRF_K,
) -> list[tuple[str, float]]:
    """Fuse two scored candidate lists (higher score better, any order) into the top ``limit``.

    Each list may be given in any order; it is ranked by score (a duplicate id keeps its best
    score). A document absent from one list gets nothing from that side, so pass completed
    lists (see :func:`missing_ids`). Ties are broken by the best rank the document reached on
    either side, then by id, so the order is deterministic.

    >>> fused = fuse([("a", 0.9), ("b", 0.8), ("c", 0.1)], [("b", 7.0), ("c", 3.0), ("a", 0.0)], limit=3)
    >>> [(doc_id, round(score, 3)) for doc_id, score in fused]
    [('b', 0.938), ('a', 0.5), ('c', 0.214)]

    Args:
        dense: ``(doc_id, similarity)`` from the embedding side.
        lexical: ``(doc_id, bm25_score)`` from the keyword side.
        limit: How many results to return.
        method: ``"minmax"``, ``"dbsf"`` or ``"rrf"`` (see the module docstring).
        weight: The lexical side's share, in ``[0, 1]``.
        k: The RRF rank constant (``"rrf"`` only).
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight is the lexical share and must be in [0, 1], got {weight!r}.")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k!r}.")
    if method not in METHODS:
        raise ValueError(f"Unknown fusion method {method!r}; use one of {', '.join(METHODS)}.")
    if limit <= 0:
        return []
    dense_list, lexical_list = _ranked(dense), _ranked(lexical)
    normalise = {
        "calibrated": _absolute,
        "minmax": _minmax,
        "dbsf": _dbsf,
        "rrf": lambda r: _rrf(r, k),
    }[method]
    dense_part, lexical_part = normalise(dense_list), normalise(lexical_list)

    best_rank = {doc_id: rank for rank, (doc_id, _) in enumerate(dense_list)}
    for rank, (doc_id, _) in enumerate(lexical_list):
        if rank < best_rank.get(doc_id, rank + 1):
            best_rank[doc_id] = rank
    dense_w, lexical_w = 1.0 - weight, weight
    keyed = [
        (
            -(dense_w * dense_part.get(doc_id, 0.0) + lexical_w * lexical_part.get(doc_id, 0.0)),
            rank,
            doc_id,
        )
        for doc_id, rank in best_rank.items()
    ]
    keyed.sort()  # best score first, then best rank on either side, then id
    return [(doc_id, min(1.0, max(0.0, -neg))) for neg, _, doc_id in keyed[:limit]]


def fuse_calibrated(
    dense_ids: Sequence[str],
    dense: np.ndarray,
    lexical_ids: Sequence[str],
    lexical: np.ndarray,
    *,
    limit: int,
    weight: float = LEXICAL_WEIGHT,
) -> list[tuple[str, float]]:
    """``fuse(zip(dense_ids, dense), zip(lexical_ids, lexical), method="calibrated")`` over
    float64 arrays: the same result (order, and scores bit for bit), computed in numpy.

    >>> fuse_calibrated(["a", "b"], np.array([0.9, 0.2]), ["b"], np.array([0.5]), limit=2)
    [('b', 0.395), ('a', 0.315)]
    """
    slot: dict[str, int] = {}
    ids: list[str] = []
    at: tuple[list[int], list[int]] = ([], [])
    for side, side_ids in zip(at, (dense_ids, lexical_ids), strict=True):
        for doc_id in side_ids:
            n = slot.get(doc_id)
            if n is None:
                n = slot[doc_id] = len(ids)
                ids.append(doc_id)
            side.append(n)
    dense_at, lexical_at = at
    if len(set(dense_at)) != len(dense_at) or len(set(lexical_at)) != len(lexical_at):
        return fuse(  # an id repeated within a side: fuse keeps its best score
            list(zip(dense_ids, dense.tolist(), strict=True)),
            list(zip(lexical_ids, lexical.tolist(), strict=True)),
            limit=limit,
            method="calibrated",
            weight=weight,
        )
    return fuse_aligned(
        ids,
        (np.asarray(dense_at, dtype=np.intp), dense),
        (np.asarray(lexical_at, dtype=np.intp), lexical),
        limit=limit,
        weight=weight,
    )


def fuse_aligned(
    ids: Sequence[str],
    dense: tuple[np.ndarray, np.ndarray],
    lexical: tuple[np.ndarray, np.ndarray],
    *,
    limit: int,
    weight: float = LEXICAL_WEIGHT,
) -> list[tuple[str, float]]:
    """:func:`fuse_calibrated` over candidates already gathered: ``ids`` are the distinct
    candidates, and each side is ``(at, scores)``: its entries' candidates (distinct indexes
    into ``ids``, in the side's input order) and their scores (float64).

    The store's hybrid search fuses some 50 candidates per question; here no Python work is
    done per candidate but reading out the result. The ranks on either side (:func:`fuse`'s
    first tie-breaker) are computed only when two candidates' scores are equal; a NaN, and ties
    of both score and best rank (broken by id) are handed to :func:`fuse` itself.
    """
    (dense_at, dense_scores), (lexical_at, lexical_scores) = dense, lexical
    if not 0.0 <= weight <= 1.0 or limit <= 0:
        return _as_lists(ids, dense, lexical, limit, weight)
    total = np.zeros(len(ids))
    total[dense_at] = (1.0 - weight) * np.minimum(np.maximum(dense_scores, 0.0), 1.0)
    total[lexical_at] += weight * np.minimum(np.maximum(lexical_scores, 0.0), 1.0)
    order = np.argsort(-total)
    ordered = total[order]
    high, low = (float(ordered[0]), float(ordered[-1])) if len(ordered) else (0.0, 0.0)
    if math.isnan(low):  # a NaN sorts last; fuse names it
        return _as_lists(ids, dense, lexical, limit, weight)
    if (ordered[1:] == ordered[:-1]).any():  # equal scores: by best rank, then id
        by_rank = _by_rank(total, dense, lexical)
        if by_rank is None:
            return _as_lists(ids, dense, lexical, limit, weight)
        order = by_rank
    top = order[:limit]
    scores = total[top]
    if high > 1.0 or low < 0.0:
        scores = np.minimum(np.maximum(scores, 0.0), 1.0)
    return list(zip([ids[n] for n in top.tolist()], scores.tolist(), strict=True))


def _by_rank(
    total: np.ndarray, dense: tuple[np.ndarray, np.ndarray], lexical: tuple[np.ndarray, np.ndarray]
) -> np.ndarray | None:
    """The candidates by score, then by the best rank they reached on either side (each side
    ranked by its score, input order among equals, as :func:`_ranked`); None if two candidates
    also share their best rank (only their ids can order them)."""
    rank = np.full(len(total), len(dense[0]) + len(lexical[0]), dtype=np.intp)
    for at, scores in (dense, lexical):
        side = np.empty(len(at), dtype=np.intp)
        side[np.argsort(-scores, kind="stable")] = np.arange(len(at))
        rank[at] = np.minimum(rank[at], side)
    order = np.lexsort((rank, -total))
    ordered_total, ordered_rank = total[order], rank[order]
    if ((ordered_total[1:] == ordered_total[:-1]) & (ordered_rank[1:] == ordered_rank[:-1])).any():
        return None
    return order


def _as_lists(
    ids: Sequence[str],
    dense: tuple[np.ndarray, np.ndarray],
    lexical: tuple[np.ndarray, np.ndarray],
    limit: int,
    weight: float,
) -> list[tuple[str, float]]:
    return fuse(
        [(ids[n], score) for n, score in zip(dense[0].tolist(), dense[1].tolist(), strict=True)],
        [(ids[n], score) for n, score in zip(lexical[0].tolist(), lexical[1].tolist(), strict=True)],
        limit=limit,
        method="calibrated",
        weight=weight,
    )


def _ranked(ranking: Ranking) -> list[tuple[str, float]]:
    best: dict[str, float] = {}
    for doc_id, score in ranking:
        value = float(score)
        if math.isnan(value):
            raise ValueError(f"Score of {doc_id!r} is NaN; scores must be numbers.")
        if doc_id not in best or value > best[doc_id]:
            best[doc_id] = value
    return sorted(best.items(), key=itemgetter(1), reverse=True)  # stable, as a key of -score


def lexical_share(bm25: float, max_bm25: float) -> float:
    """A BM25 score as the idf-weighted share of the query matched, in ``[0, 1]``.

    ``max_bm25`` is :meth:`.lexical.LexicalIndex.max_score` for the same query and namespaces.

    >>> lexical_share(3.0, 12.0), lexical_share(1.0, 0.0)
    (0.25, 0.0)
    """
    if max_bm25 <= 0.0:
        return 0.0
    return min(1.0, max(0.0, bm25 / max_bm25))


def lexical_shares(bm25: Sequence[float] | np.ndarray, top: float) -> np.ndarray:
    """:func:`lexical_share` of each score, over an array (``top``: the question's best BM25)."""
    if top <= 0.0:
        return np.zeros(len(bm25))
    return np.minimum(np.maximum(np.asarray(bm25, dtype=np.float64) / top, 0.0), 1.0)


def _absolute(ranking: list[tuple[str, float]]) -> dict[str, float]:
    # Scores that already mean something on their own (a cosine, a lexical share): kept,
    # clipped to [0, 1] (a negative cosine says "unrelated" as much as 0 does).
    return {doc_id: min(1.0, max(0.0, score)) for doc_id, score in ranking}


def _rrf(ranking: list[tuple[str, float]], k: int) -> dict[str, float]:
    # Scaled so that rank 1 gives 1.0: (k + 1) / (k + rank).
    return {doc_id: (k + 1.0) / (k + rank) for rank, (doc_id, _) in enumerate(ranking, start=1)}


def _flat(ranking: list[tuple[str, float]]) -> dict[str, float]:
    # Every candidate scored the same: all best if the score says "relevant", else all zero.
    return {doc_id: 1.0 if score > 0 else 0.0 for doc_id, score in ranking}


def _minmax(ranking: list[tuple[str, float]]) -> dict[str, float]:
    if not ranking:
        return {}
    high, low = ranking[0][1], ranking[-1][1]
    if high == low:
        return _flat(ranking)
    return {doc_id: (score - low) / (high - low) for doc_id, score in ranking}


def _dbsf(ranking: list[tuple[str, float]]) -> dict[str, float]:
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    mean = sum(scores) / len(scores)
    std = math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))
    if std == 0.0:
        return _flat(ranking)
    low, high = mean - 3.0 * std, mean + 3.0 * std
    return {doc_id: min(1.0, max(0.0, (score - low) / (high - low))) for doc_id, score in ranking}
