"""The first ranking of a hybrid search: dense and BM25 candidates, each scored on both sides,
fused into one calibrated score (see :mod:`.fusion`), over arrays.

:func:`aligned_ranking` is the usual case (one namespace, its vectors cached: candidates matched
by position); :func:`first_ranking` the general one (candidates matched by id). Both give the
order and scores of :func:`.fusion.fuse` with ``method="calibrated"`` (pinned by
``tests/store/test_fusion_arrays.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import layout
from .backend import Backend
from .fusion import LEXICAL_WEIGHT, fuse_aligned, lexical_shares
from .lexical import TermScores
from .vector_cache import BlockView, NamespaceVectors, QueryCosines, similarities


def dense_scores(
    b: Backend, qvec: np.ndarray, item_ids: Sequence[str], views: list[BlockView] | None
) -> dict[str, float]:
    """Best cosine similarity of each given item (those without vectors are left out)."""
    if not item_ids:
        return {}
    if views is not None:
        return similarities(views, qvec, item_ids)
    iids = list(dict.fromkeys(layout.split_entry_key(k)[0] for k in item_ids))
    block = NamespaceVectors("")
    for vid, emb in b.gateway.vectors_of_items(iids):
        iid = layout.split_entry_key(layout.split_vector_id(vid)[0])[0]
        block.replace_item_rows(iid, [(vid, emb)])
    return similarities([block.current_view()], qvec, item_ids)


def aligned_ranking(
    cosines: QueryCosines | None,
    question: TermScores,
    has_terms: bool,
    baseline: float,
    depth: int,
) -> tuple[list[tuple[str, float]], bool, int] | None:
    """:func:`first_ranking` of the usual scope, one namespace with its vectors cached: the
    two sides' candidates matched by document position (:meth:`.lexical._Arrays.aligned`)
    instead of by id; the same ranking, with whether the dense side could go deeper and how
    many lexical candidates there were. None for any other scope."""
    dense_side = cosines.single() if cosines is not None else None
    lexical_side = question.single()
    if cosines is None or dense_side is None or lexical_side is None:
        return None
    (view, flat), (arrays, scores) = dense_side, lexical_side
    position_of, row_of = arrays.aligned(view.owners)
    rows, cosine = cosines.top_rows(depth)  # each key's best row, as :meth:`QueryCosines.rank`
    dense_rows = rows.tolist()
    n_dense = len(dense_rows)
    dense_positions = position_of[rows].tolist()
    positions = question.top_positions(depth) if has_terms else []
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
    if baseline < 1.0:  # as :func:`.baseline.above_baseline`
        cosine = (cosine - baseline) / (1.0 - baseline)
    # The dense-only candidates' BM25, in dense order (as :meth:`TermScores.of`).
    in_lexical = set(lexical_at)
    dense_only = [(n, j) for n, j in enumerate(dense_positions) if j >= 0 and n not in in_lexical]
    bm25 = scores[positions + [j for _, j in dense_only]]
    share = lexical_shares(bm25, question.max_score)
    dense_at = list(range(n_dense))
    dense_at.extend(n for _, n in only)
    lexical_at.extend(n for n, _ in dense_only)
    fused = fuse_aligned(
        ids,
        (np.asarray(dense_at, dtype=np.intp), cosine),
        (np.asarray(lexical_at, dtype=np.intp), share),
        limit=2 * depth,
        weight=LEXICAL_WEIGHT,
    )
    return fused, n_dense >= depth, len(positions)


def first_ranking(
    b: Backend,
    question_vector: tuple[np.ndarray, float],
    cosines: QueryCosines | None,
    dense_ranked: tuple[list[str], np.ndarray],
    question: TermScores,
    lexical_ranked: list[tuple[str, float]],
    limit: int,
) -> list[tuple[str, float]]:
    """Both rankings fused. Every candidate is scored on both sides (a document found by one
    side only is not the other side's worst; see :mod:`.fusion` and ``docs/benchmarks.md``,
    "Retrieval quality"), the cosine measured from the question's baseline and BM25 as the
    lexical share, and fused as :func:`.fusion.fuse` with ``method="calibrated"`` would
    (:func:`.fusion.fuse_aligned`: the same order and scores, over arrays).
    ``dense_ranked``: the dense side's entry keys and cosines, best first."""
    qvec, baseline = question_vector
    ids, cosine = dense_ranked
    n_dense = len(ids)
    ids = list(ids)
    slot = dict(zip(ids, range(n_dense), strict=True))
    lexical_at = []
    for doc_id, _ in lexical_ranked:
        n = slot.get(doc_id)
        if n is None:
            n = slot[doc_id] = len(ids)
            ids.append(doc_id)
        lexical_at.append(n)
    # As :func:`.fusion.missing_ids`: the lexical-only candidates need a cosine, the dense-only
    # ones a BM25 score (each in its side's order).
    matched = set(lexical_at)
    need_lexical = [ids[n] for n in range(n_dense) if n not in matched]
    if cosines is not None:
        found, extra_cosine = cosines.at(ids[n_dense:])
    else:
        extra = dense_scores(b, qvec, ids[n_dense:], None)
        found, extra_cosine = list(extra), np.fromiter(extra.values(), np.float64, len(extra))
    dense_at = list(range(n_dense))
    dense_at.extend(slot[key] for key in found)
    cosine = np.concatenate([cosine, extra_cosine])
    if baseline < 1.0:  # as :func:`.baseline.above_baseline`
        cosine = (cosine - baseline) / (1.0 - baseline)
    found, extra_bm25 = question.at(need_lexical)
    lexical_at.extend(slot[key] for key in found)
    bm25 = np.concatenate([[score for _, score in lexical_ranked], extra_bm25])
    share = lexical_shares(bm25, question.max_score)
    return fuse_aligned(
        ids,
        (np.asarray(dense_at, dtype=np.intp), cosine),
        (np.asarray(lexical_at, dtype=np.intp), share),
        limit=limit,
        weight=LEXICAL_WEIGHT,
    )

