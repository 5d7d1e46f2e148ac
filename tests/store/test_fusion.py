"""Rank fusion: order, score range and meaning, limits, weights, completion helper."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ._references import fusion as reference

DENSE = [("a", 0.91), ("b", 0.80), ("c", 0.55), ("d", 0.40)]
LEXICAL = [("a", 12.0), ("e", 9.5), ("c", 4.0), ("b", 0.0)]

ranking = st.dictionaries(
    st.sampled_from([f"doc{i}" for i in range(12)]),
    st.floats(min_value=-1.0, max_value=50.0, allow_nan=False),
    max_size=12,
).map(lambda scores: sorted(scores.items(), key=lambda kv: -kv[1]))


@pytest.mark.parametrize("method", reference.METHODS)
def test_an_item_first_in_both_lists_ends_first(method: str) -> None:
    fused = reference.fuse(DENSE, LEXICAL, limit=5, method=method)
    assert fused[0][0] == "a"
    assert fused[0][1] == max(score for _, score in fused)


@pytest.mark.parametrize("method", ["minmax", "rrf"])
def test_first_on_both_sides_scores_exactly_one(method: str) -> None:
    assert reference.fuse(DENSE, LEXICAL, limit=1, method=method)[0] == ("a", 1.0)


@settings(max_examples=150, deadline=None)
@given(
    dense=ranking,
    lexical=ranking,
    limit=st.integers(min_value=0, max_value=15),
    method=st.sampled_from(reference.METHODS),
    weight=st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
)
def test_scores_are_in_unit_range_non_increasing_and_limited(
    dense: list[tuple[str, float]],
    lexical: list[tuple[str, float]],
    limit: int,
    method: str,
    weight: float,
) -> None:
    fused = reference.fuse(dense, lexical, limit=limit, method=method, weight=weight)
    candidates = {d for d, _ in dense} | {d for d, _ in lexical}
    assert len(fused) == min(limit, len(candidates))
    assert len({d for d, _ in fused}) == len(fused)
    assert {d for d, _ in fused} <= candidates
    scores = [s for _, s in fused]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)


@settings(max_examples=150, deadline=None)
@given(dense=ranking, lexical=ranking, method=st.sampled_from(reference.METHODS))
def test_an_item_better_on_both_sides_never_ranks_below(
    dense: list[tuple[str, float]], lexical: list[tuple[str, float]], method: str
) -> None:
    # Complete both lists (every candidate scored on both sides), as hybrid search does.
    ids = sorted({d for d, _ in dense} | {d for d, _ in lexical})
    d_scores, l_scores = dict(dense), dict(lexical)
    full_dense = [(d, d_scores.get(d, -1.0)) for d in ids]
    full_lexical = [(d, l_scores.get(d, -1.0)) for d in ids]
    order = [d for d, _ in reference.fuse(full_dense, full_lexical, limit=len(ids), method=method)]
    position = {d: i for i, d in enumerate(order)}
    for x in ids:
        for y in ids:
            strictly_better = d_scores.get(x, -1.0) > d_scores.get(y, -1.0) and l_scores.get(
                x, -1.0
            ) > l_scores.get(y, -1.0)
            if strictly_better:
                assert position[x] < position[y]


def test_rrf_score_is_normalised_reciprocal_rank_fusion() -> None:
    fused = dict(reference.fuse(DENSE, LEXICAL, limit=10, method="rrf"))
    dense_rank = {d: r for r, (d, _) in enumerate(DENSE, start=1)}
    lexical_rank = {d: r for r, (d, _) in enumerate(LEXICAL, start=1)}
    for doc, score in fused.items():
        raw = sum(
            0.5 / (reference.RRF_K + ranks[doc]) for ranks in (dense_rank, lexical_rank) if doc in ranks
        )
        assert score == pytest.approx(raw * (reference.RRF_K + 1))
    assert fused["d"] < fused["e"]  # both on one side only, "e" higher up its list


def test_minmax_score_is_the_convex_combination_of_rescaled_scores() -> None:
    fused = dict(reference.fuse(DENSE, LEXICAL, limit=10, method="minmax", weight=0.25))
    d_low, d_high = 0.40, 0.91
    l_low, l_high = 0.0, 12.0
    for doc in ("a", "b", "c"):
        d = (dict(DENSE)[doc] - d_low) / (d_high - d_low)
        lex = (dict(LEXICAL)[doc] - l_low) / (l_high - l_low)
        assert fused[doc] == pytest.approx(0.75 * d + 0.25 * lex)


@pytest.mark.parametrize("method", reference.METHODS)
def test_weight_zero_or_one_follows_one_side(method: str) -> None:
    ids = ["a", "b", "c", "d", "e"]
    dense = [(d, s) for d, s in zip(ids, [0.9, 0.8, 0.7, 0.6, 0.5], strict=True)]
    # Shares in [0, 1], as "calibrated" expects; the rescaling methods take any scale.
    lexical = [(d, s) for d, s in zip(reversed(ids), [0.9, 0.7, 0.5, 0.3, 0.1], strict=True)]
    only_dense = reference.fuse(dense, lexical, limit=5, method=method, weight=0.0)
    only_lexical = reference.fuse(dense, lexical, limit=5, method=method, weight=1.0)
    assert [d for d, _ in only_dense] == ids
    assert [d for d, _ in only_lexical] == list(reversed(ids))


def test_input_order_does_not_matter_and_duplicates_keep_their_best_score() -> None:
    shuffled = [DENSE[2], DENSE[0], DENSE[3], DENSE[1], ("c", 0.1)]
    assert reference.fuse(shuffled, LEXICAL, limit=5) == reference.fuse(DENSE, LEXICAL, limit=5)


def test_empty_sides() -> None:
    assert reference.fuse([], [], limit=5) == []
    assert [d for d, _ in reference.fuse(DENSE, [], limit=5)] == ["a", "b", "c", "d"]
    assert [d for d, _ in reference.fuse([], LEXICAL, limit=5)] == ["a", "e", "c", "b"]
    assert reference.fuse(DENSE, LEXICAL, limit=0) == []


def test_equal_scores_on_one_side_count_as_match_or_no_match() -> None:
    # All BM25 scores equal and positive: every candidate matches equally; all zero: none does.
    dense = [("a", 0.9), ("b", 0.5)]
    matched = dict(reference.fuse(dense, [("a", 3.0), ("b", 3.0)], limit=2))
    unmatched = dict(reference.fuse(dense, [("a", 0.0), ("b", 0.0)], limit=2))
    assert matched["a"] == pytest.approx(unmatched["a"] + 0.5)
    assert matched["b"] == pytest.approx(unmatched["b"] + 0.5)


def test_ties_are_deterministic() -> None:
    once = reference.fuse([("x", 0.5), ("y", 0.5)], [("y", 1.0), ("x", 1.0)], limit=2)
    again = reference.fuse([("y", 0.5), ("x", 0.5)], [("x", 1.0), ("y", 1.0)], limit=2)
    assert once == again


def test_missing_ids_lists_what_each_side_must_still_score() -> None:
    need_dense, need_lexical = reference.missing_ids(DENSE, LEXICAL)
    assert need_dense == ["e"]
    assert need_lexical == ["d"]
    assert reference.missing_ids(DENSE, DENSE) == ([], [])


def test_bad_arguments_name_the_fix() -> None:
    with pytest.raises(ValueError, match="lexical share"):
        reference.fuse(DENSE, LEXICAL, limit=3, weight=1.5)
    with pytest.raises(ValueError, match="minmax"):
        unknown: Any = "borda"
        reference.fuse(DENSE, LEXICAL, limit=3, method=unknown)
    with pytest.raises(ValueError, match="NaN"):
        reference.fuse([("a", float("nan"))], LEXICAL, limit=3)
    with pytest.raises(ValueError, match="k must be"):
        reference.fuse(DENSE, LEXICAL, limit=3, k=-1)


def test_docstring_examples_run() -> None:
    import doctest

    result = doctest.testmod(reference, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_calibrated_scores_are_absolute_not_relative_to_the_candidates() -> None:
    """The same (cosine, share) pair scores the same whatever else is among the candidates,
    and a lone weak candidate is not lifted to 1.0 as min-max fusion would."""
    weak = reference.fuse([("a", 0.1)], [("a", 0.0)], limit=1, method="calibrated", weight=0.65)
    assert weak[0][1] == pytest.approx(0.35 * 0.1)
    crowd = reference.fuse(
        [("a", 0.1), ("b", 0.8), ("c", -0.3)],
        [("a", 0.0), ("b", 0.9), ("c", 0.2)],
        limit=3,
        method="calibrated",
        weight=0.65,
    )
    scores = dict(crowd)
    assert scores["a"] == pytest.approx(weak[0][1])
    assert scores["b"] == pytest.approx(0.35 * 0.8 + 0.65 * 0.9)
    assert scores["c"] == pytest.approx(0.65 * 0.2)  # a negative cosine counts as 0
    relative = reference.fuse([("a", 0.1)], [("a", 0.0)], limit=1, method="minmax")
    assert relative[0][1] > 0.4  # what the calibrated method avoids


@given(
    cos=st.floats(-1, 1), share=st.floats(0, 1), more_cos=st.floats(0, 0.5), more=st.floats(0, 0.5)
)
def test_calibrated_is_monotone_in_both_sides(
    cos: float, share: float, more_cos: float, more: float
) -> None:
    base = dict(reference.fuse([("a", cos)], [("a", share)], limit=1, method="calibrated"))["a"]
    up = dict(reference.fuse([("a", cos + more_cos)], [("a", min(1.0, share + more))], limit=1, method="calibrated"))["a"]
    assert up >= base
