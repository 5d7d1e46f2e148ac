"""The array paths of hybrid search (issue 16, fourth speed pass) against the code they replaced,
kept here as the reference: calibrated fusion over arrays equals ``fuse``; and a hybrid search's first ranking (both the
aligned path of one namespace with one vector per item and the general one) equals the
pipeline before the pass (``missing_ids``, the per-id lookups, ``fuse``), order and scores."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma.ranking import hybrid as hybrid_ranking
from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT
from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.chroma.ranking.vectors import NamespaceVectors, QueryCosines
from langgraph_episodic.language.baseline import above_baseline

from ._references import fusion as reference

IDS = [f"d{i}" for i in range(14)]
# Few distinct values, so that exact ties (score, rank, id) happen often.
values = st.one_of(
    st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0, -0.2, 1.3]),
    st.floats(min_value=-1.0, max_value=2.0, allow_nan=False),
)
side = st.lists(st.tuples(st.sampled_from(IDS), values), max_size=14)


@settings(max_examples=400, deadline=None)
@given(
    dense=side,
    lexical=side,
    limit=st.integers(0, 30),
    weight=st.sampled_from([0.0, 0.35, LEXICAL_WEIGHT, 1.0]),
)
def test_calibrated_fusion_over_arrays_equals_fuse(
    dense: list[tuple[str, float]],
    lexical: list[tuple[str, float]],
    limit: int,
    weight: float,
) -> None:
    expected = reference.fuse(dense, lexical, limit=limit, method="calibrated", weight=weight)
    got = reference.fuse_calibrated(
        [d for d, _ in dense],
        np.array([v for _, v in dense], dtype=np.float64),
        [d for d, _ in lexical],
        np.array([v for _, v in lexical], dtype=np.float64),
        limit=limit,
        weight=weight,
    )
    assert got == expected  # order and scores, bit for bit (repeated ids included)


def test_calibrated_fusion_over_arrays_rejects_what_fuse_rejects() -> None:
    with pytest.raises(ValueError, match="NaN"):
        reference.fuse_calibrated(["a"], np.array([np.nan]), [], np.zeros(0), limit=3)
    with pytest.raises(ValueError, match="weight"):
        reference.fuse_calibrated(["a"], np.array([0.5]), [], np.zeros(0), limit=3, weight=1.5)


# --- a hybrid search's first ranking against the pipeline before the pass -----------------


def reference_first_ranking(
    cosines: QueryCosines, question: Any, terms: Counter[str], baseline: float, depth: int
) -> list[tuple[str, float]]:
    """The first ranking of ``search.hybrid`` before the fourth speed pass, verbatim."""
    dense_ranked = cosines.rank(depth)
    lexical_ranked = question.top(depth) if terms else []
    need_dense, need_lexical = reference.missing_ids(dense_ranked, lexical_ranked)
    extra_dense = cosines.of(need_dense)
    extra_lexical = question.of(need_lexical)
    top = question.max_score
    return reference.fuse(
        [
            (doc_id, above_baseline(cosine, baseline))
            for doc_id, cosine in [*dense_ranked, *extra_dense.items()]
        ],
        [
            (doc_id, reference.lexical_share(score, top))
            for doc_id, score in [*lexical_ranked, *extra_lexical.items()]
        ],
        limit=2 * depth,
        method="calibrated",
        weight=LEXICAL_WEIGHT,
    )


WORDS = ["alpha", "beta", "gamma", "delta", "eps"]
docs = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=0, max_size=4).map(" ".join),  # text
        st.integers(0, 3),  # which of 4 base vectors (equal vectors: exact cosine ties)
        st.booleans(),  # has a vector
        st.booleans(),  # is indexed lexically
    ),
    min_size=1,
    max_size=24,
)


@settings(max_examples=150, deadline=None)
@given(
    corpus=docs,
    query=st.lists(st.sampled_from([*WORDS, "zzz"]), max_size=4),
    seed=st.integers(0, 2**16),
    depth=st.integers(1, 12),
    baseline=st.sampled_from([0.0, 0.3, 1.0]),
    multi=st.booleans(),
)
def test_first_ranking_equals_the_pipeline_before(
    corpus: list[tuple[str, int, bool, bool]],
    query: list[str],
    seed: int,
    depth: int,
    baseline: float,
    multi: bool,
) -> None:
    """``multi``: every third item has two vectors (as with two indexed fields)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(4, 6))
    ns = ("u",)
    index = LexicalIndex(tokenizer=str.split)
    block = NamespaceVectors("v1")
    for n, (text, vec, has_vector, lexical) in enumerate(corpus):
        key = f"k{n}"
        rows = 2 if multi and n % 3 == 0 else 1
        if lexical:
            index.upsert(ns, key, text)
        if has_vector:
            vectors = [base[vec] + r * base[(vec + 1) % 4] for r in range(rows)]
            rows_of_key = [(f"{key}#r{r}", v.tolist()) for r, v in enumerate(vectors)]
            block.replace_item_rows(key, rows_of_key)
    cosines = QueryCosines([block.current_view()], rng.normal(size=6))
    terms = Counter(query)
    question = index.score_terms(terms, [ns])
    expected = reference_first_ranking(cosines, question, terms, baseline, depth)

    analysed = hybrid_ranking.Question(terms, question)
    aligned = hybrid_ranking.aligned(cosines, analysed, baseline, depth)
    if cosines.single() is not None and question.single() is not None:
        # one namespace (one view, one shard): the aligned path serves
        assert aligned is not None
        assert aligned.ranking == expected
        assert aligned.more_dense == (len(cosines.rank(depth)) >= depth)
        assert aligned.n_lexical == len(question.top(depth) if terms else [])
    else:
        assert aligned is None
    dense_ranked = cosines.top(depth)
    lexical_ranked = question.top(depth) if terms else []
    gathered = hybrid_ranking.candidates(dense_ranked, lexical_ranked, False)
    general = hybrid_ranking.complete(
        gathered, cosines.at(gathered.need_cosine), analysed, baseline, 2 * depth
    )
    assert general.ranking == expected


@settings(max_examples=100, deadline=None)
@given(
    bm25=st.lists(st.floats(-5.0, 50.0, allow_nan=False), max_size=30),
    top=st.floats(-1.0, 40.0, allow_nan=False),
)
def test_lexical_shares_are_lexical_share_of_each_score(bm25: list[float], top: float) -> None:
    from langgraph_episodic.chroma.ranking.fusion import lexical_shares

    assert lexical_shares(bm25, top).tolist() == [reference.lexical_share(s, top) for s in bm25]
