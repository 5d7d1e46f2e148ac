"""The first ranking of a hybrid search as pure stages over a snapshot of the scope.

1. :func:`analyse`: the question's terms and every document's BM25 for them (one pass).
2. :func:`candidates`: the dense side's best entries and the lexical side's, gathered.
3. :func:`complete`: every candidate scored on both sides (a document found by one side only
   is not the other side's worst), the cosine measured from the question's baseline
   and BM25 as the lexical share, then fused (:func:`.fusion.fuse_aligned`).

:func:`aligned` is stages 2 and 3 for the usual scope (one namespace, vectors cached), matching
candidates by position instead of by id: the same ranking. Nothing here does I/O (the search
reads uncached cosines between :func:`candidates` and :func:`complete`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...language.baseline import Calibration, as_calibration
from .fusion import fuse_aligned, lexical_shares
from .lexical import LexicalIndex, Namespace, TermScores
from .vectors import QueryCosines


@dataclass(frozen=True)
class Question:
    """The question as the lexical side sees it: its analyzed terms and their BM25 scores."""

    terms: Counter[str]
    scores: TermScores


def analyse(query: str, lexical: LexicalIndex, namespaces: Sequence[Namespace]) -> Question:
    """Stage 1: the question analyzed and scored once for every lexical step."""
    terms = Counter(lexical.tokenizer(query))
    return Question(terms, lexical.score_terms(terms, namespaces))


@dataclass(frozen=True)
class Fused:
    """Stage 3's result: the fused ranking and what each candidate's score is made of."""

    ranking: list[tuple[str, float]]
    """``(entry key, score)`` best first, at most the limit asked."""
    ids: Sequence[str]
    """Every candidate's entry key."""
    dense: tuple[np.ndarray, np.ndarray]
    """``(candidate index, raw cosine)`` of the candidates with a vector."""
    lexical: tuple[np.ndarray, np.ndarray]
    """``(candidate index, lexical share)`` of the candidates with a BM25 score."""
    more_dense: bool
    """Whether the dense side filled its depth (a deeper ranking could add more)."""
    n_lexical: int
    """How many candidates the lexical side gave (a full depth: a deeper one could add more)."""
    second: tuple[np.ndarray, np.ndarray] | None = None
    """``(candidate index, raw cosine)`` of the candidates the question's second reading
    applies to (:class:`.baseline.SecondReading`); None without one."""

    def parts(self) -> dict[str, tuple[float | None, float | None]]:
        """Each candidate's ``(raw cosine, lexical share)``; None where it has no such score."""
        cosine = dict(zip(self.dense[0].tolist(), self.dense[1].tolist(), strict=True))
        share = dict(zip(self.lexical[0].tolist(), self.lexical[1].tolist(), strict=True))
        return {key: (cosine.get(n), share.get(n)) for n, key in enumerate(self.ids)}


def _fuse(
    ids: Sequence[str],
    dense: tuple[list[int], np.ndarray],
    bm25: tuple[list[int], np.ndarray],
    question: Question,
    baseline: float | Calibration,
    limit: int,
    more: tuple[bool, int],
    second: tuple[list[int], np.ndarray] | None = None,
) -> Fused:
    """Calibrate both sides (BM25 as the lexical share) and fuse them (the end of stage 3); a
    candidate the question's second reading applies to scores the larger of that and its
    reading's dense score."""
    calibration = as_calibration(baseline)
    dense_at = np.asarray(dense[0], dtype=np.intp)
    lexical_at = np.asarray(bm25[0], dtype=np.intp)
    lexical = lexical_at, lexical_shares(bm25[1], question.scores.max_score)
    alone = read = None
    if second is not None and calibration.second is not None:
        read = np.asarray(second[0], dtype=np.intp), second[1]
        own = calibration.second.calibration.dense(read[1])
        raises = own > 0.0  # (a score of 0 or less raises nothing, and breaks no tie)
        alone = read[0][raises], own[raises]
    ranking = fuse_aligned(
        ids,
        (dense_at, calibration.dense(dense[1])),
        lexical,
        limit=limit,
        weight=calibration.lexical_weight,
        alone=alone,
    )
    return Fused(ranking, ids, (dense_at, dense[1]), lexical, *more, read)


def aligned(
    cosines: QueryCosines | None,
    question: Question,
    baseline: float | Calibration,
    depth: int,
) -> Fused | None:
    """Stages 2 and 3 for one namespace with its vectors cached, candidates matched by document
    position (:meth:`.lexical._Arrays.aligned`): the ranking :func:`candidates` then
    :func:`complete` give. None for any other scope, and for a question with a second reading."""
    if as_calibration(baseline).second is not None:
        return None
    dense_side = cosines.single() if cosines is not None else None
    lexical_side = question.scores.single()
    if cosines is None or dense_side is None or lexical_side is None:
        return None
    (view, flat), (arrays, scores) = dense_side, lexical_side
    position_of, row_of = arrays.aligned(view.owners)
    rows, cosine = cosines.top_rows(depth)  # each key's best row, as :meth:`QueryCosines.rank`
    dense_rows = rows.tolist()
    n_dense = len(dense_rows)
    dense_positions = position_of[rows].tolist()
    top = question.scores.top(depth) if question.terms else []
    positions = [arrays.position[doc_id] for doc_id, _ in top]
    slot = {j: n for n, j in enumerate(dense_positions) if j >= 0}
    owners, doc_ids = view.owners, arrays.ids
    ids = [owners[row] for row in dense_rows]
    lexical_at = []
    only: list[tuple[int, int]] = []  # (first row, candidate) of lexical-only ones with vectors
    for j, row in zip(positions, row_of[positions].tolist(), strict=True):
        n = slot.get(j)
        if n is None:
            n = len(ids)
            ids.append(doc_ids[j])
            if row >= 0:
                only.append((row, n))
        lexical_at.append(n)
    only.sort()  # as :meth:`QueryCosines.of`: in the order of their first rows
    if view.one_per_item:
        extra_cosine = flat[[row for row, _ in only]].astype(np.float64)
    else:  # a key's best row
        keys = [ids[n] for _, n in only]
        found, extra_cosine = cosines.at(keys)
        if found != keys:  # (not expected: every one has a row, in first-row order)
            return None
    cosine = np.concatenate([cosine, extra_cosine])
    # The dense-only candidates' BM25, in dense order (as :meth:`TermScores.of`).
    in_lexical = set(lexical_at)
    dense_only = [(n, j) for n, j in enumerate(dense_positions) if j >= 0 and n not in in_lexical]
    bm25 = scores[positions + [j for _, j in dense_only]]
    dense_at = list(range(n_dense))
    dense_at.extend(n for _, n in only)
    lexical_at.extend(n for n, _ in dense_only)
    return _fuse(
        ids, (dense_at, cosine), (lexical_at, bm25), question, baseline, 2 * depth,
        (n_dense >= depth, len(positions)),
    )  # fmt: skip


@dataclass(frozen=True)
class Candidates:
    """Stage 2's result: both sides' candidates gathered by id."""

    ids: list[str]
    """Every candidate: the dense side's in its order, then the lexical-only ones."""
    dense_cosine: np.ndarray
    """The dense side's cosines (its candidates are ``ids[:len(dense_cosine)]``)."""
    lexical_at: list[int]
    """The lexical side's candidates (indexes into ``ids``), in its order."""
    bm25: list[float]
    """The lexical side's BM25 scores."""
    more_dense: bool

    @property
    def need_cosine(self) -> list[str]:
        """The candidates the dense side did not give, which need a cosine."""
        return self.ids[len(self.dense_cosine) :]


def candidates(
    dense_ranked: tuple[list[str], np.ndarray],
    lexical_ranked: list[tuple[str, float]],
    more_dense: bool,
    second_ranked: Sequence[str] = (),
) -> Candidates:
    """Stage 2: the dense side's entry keys and cosines (best first) and the lexical side's
    ``(entry key, BM25)``, gathered into one candidate list; then the second reading's best
    entry keys (:class:`.baseline.SecondReading`) not already in it."""
    ids = list(dense_ranked[0])
    slot = dict(zip(ids, range(len(ids)), strict=True))
    lexical_at = []
    for doc_id, _ in lexical_ranked:
        n = slot.get(doc_id)
        if n is None:
            n = slot[doc_id] = len(ids)
            ids.append(doc_id)
        lexical_at.append(n)
    for doc_id in second_ranked:
        if doc_id not in slot:
            slot[doc_id] = len(ids)
            ids.append(doc_id)
    return Candidates(
        ids, dense_ranked[1], lexical_at, [score for _, score in lexical_ranked], more_dense
    )


def complete(
    found: Candidates,
    cosines: tuple[list[str], np.ndarray],
    question: Question,
    baseline: float | Calibration,
    limit: int,
    second: tuple[list[str], np.ndarray] | None = None,
) -> Fused:
    """Stage 3: ``cosines`` are :attr:`Candidates.need_cosine`'s ``(keys with a vector,
    cosines)`` (from the snapshot, or read from Chroma); the candidates the lexical side did
    not give get their BM25 here; then both sides are calibrated and fused. ``second``: every
    candidate's ``(keys, raw cosines)`` of the question's second reading, where it applies."""
    ids, n_dense = found.ids, len(found.dense_cosine)
    slot = {key: n for n, key in enumerate(ids)}
    matched = set(found.lexical_at)
    need_lexical = [ids[n] for n in range(len(ids)) if n not in matched]
    with_vector, extra_cosine = cosines
    dense_at = list(range(n_dense))
    dense_at.extend(slot[key] for key in with_vector)
    cosine = np.concatenate([found.dense_cosine, extra_cosine])
    with_terms, extra_bm25 = question.scores.at(need_lexical)
    lexical_at = list(found.lexical_at)
    lexical_at.extend(slot[key] for key in with_terms)
    bm25 = np.concatenate([found.bm25, extra_bm25])
    read = None if second is None else ([slot[key] for key in second[0]], second[1])
    return _fuse(
        ids, (dense_at, cosine), (lexical_at, bm25), question, baseline, limit,
        (found.more_dense, len(found.bm25)), read,
    )  # fmt: skip
