"""Replay priority: worked examples from the formula, presets, the automatic phase choice."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_episodic.episodic import (
    EARLY_WEIGHTS,
    LATE_WEIGHTS,
    NORMAL_WEIGHTS,
    OutcomeStatus,
    PrioritizedResult,
    ReplayWeights,
    compute_priority,
    weights_for_size,
)
from langgraph_episodic.episodic.priority import rank

from .conftest import DAY, HOUR, make_episode

NOW = 1_700_000_000.0

# Worked examples. priority = w_sim*max(0, sim) + w_rec*0.5**(age/day) + w_rew*reward + w_out*score
# with outcome scores success 1.0, partial 0.5, failure 0.0.
EXAMPLES = [
    # normal 0.4/0.3/0.2/0.1; success, reward 0.9, sim 0.8, 12 h old:
    # 0.4*0.8 + 0.3*2**-0.5 + 0.2*0.9 + 0.1*1.0 = 0.32 + 0.2121 + 0.18 + 0.1 = 0.8121
    (NORMAL_WEIGHTS, OutcomeStatus.SUCCESS, 0.9, 0.8, 12 * HOUR, 0.81),
    # early 0.6/0.1/0.2/0.1; failure, reward 0.2, negative sim -0.3 (counts 0), 1 day old:
    # 0 + 0.1*0.5 + 0.2*0.2 + 0 = 0.09
    (EARLY_WEIGHTS, OutcomeStatus.FAILURE, 0.2, -0.3, DAY, 0.09),
    # late 0.3/0.4/0.2/0.1; partial, reward 0.5, sim 0.5, 1 week old:
    # 0.3*0.5 + 0.4*2**-7 + 0.2*0.5 + 0.1*0.5 = 0.15 + 0.0031 + 0.1 + 0.05 = 0.3031
    (LATE_WEIGHTS, OutcomeStatus.PARTIAL, 0.5, 0.5, 7 * DAY, 0.30),
    # normal; success, reward 1.0, sim 1.0, brand new: every component is 1, weights sum to 1
    (NORMAL_WEIGHTS, OutcomeStatus.SUCCESS, 1.0, 1.0, 0.0, 1.00),
]


@pytest.mark.parametrize(("weights", "outcome", "reward", "sim", "age", "expected"), EXAMPLES)
def test_worked_examples_to_two_decimals(
    weights: ReplayWeights, outcome: OutcomeStatus, reward: float, sim: float, age: float,
    expected: float,
) -> None:
    ep = make_episode("e", outcome=outcome, reward=reward, timestamp=NOW - age)
    result = compute_priority(PrioritizedResult(ep, sim), NOW, weights)
    assert abs(result.priority - expected) < 0.005


def test_components_explain_the_priority() -> None:
    ep = make_episode("e", outcome=OutcomeStatus.PARTIAL, reward=0.4, timestamp=NOW - DAY)
    result = compute_priority(PrioritizedResult(ep, -0.2), NOW)
    c = result.components
    assert c is not None
    assert (c.similarity, c.recency, c.reward, c.outcome) == (0.0, pytest.approx(0.5), 0.4, 0.5)
    assert c.weights == NORMAL_WEIGHTS
    assert result.similarity == -0.2  # the raw score is kept
    assert sum(c.contributions().values()) == pytest.approx(result.priority)
    assert c.explain().startswith(f"priority {result.priority:.2f} = similarity 0.00")


def test_recency_floor_and_half_life_are_applied() -> None:
    ep = make_episode("e", timestamp=NOW - 30 * DAY)
    floored = compute_priority(PrioritizedResult(ep, 0.0), NOW, recency_floor=0.25)
    assert floored.components is not None and floored.components.recency == 0.25
    slow = compute_priority(PrioritizedResult(ep, 0.0), NOW, half_life=30 * DAY)
    assert slow.components is not None and slow.components.recency == pytest.approx(0.5)


def test_presets_match_the_issue() -> None:
    def as_tuple(w: ReplayWeights) -> tuple[float, ...]:
        return (w.similarity, w.recency, w.reward, w.outcome_bonus)

    assert as_tuple(EARLY_WEIGHTS) == (0.6, 0.1, 0.2, 0.1)
    assert as_tuple(NORMAL_WEIGHTS) == (0.4, 0.3, 0.2, 0.1)
    assert as_tuple(LATE_WEIGHTS) == (0.3, 0.4, 0.2, 0.1)
    assert ReplayWeights() == NORMAL_WEIGHTS


@pytest.mark.parametrize(
    ("count", "expected"),
    [(0, EARLY_WEIGHTS), (19, EARLY_WEIGHTS), (20, NORMAL_WEIGHTS), (199, NORMAL_WEIGHTS),
     (200, LATE_WEIGHTS), (10_000, LATE_WEIGHTS)],
)
def test_phase_thresholds(count: int, expected: ReplayWeights) -> None:
    assert weights_for_size(count) == expected


def test_phase_thresholds_are_configurable() -> None:
    assert weights_for_size(5, early_max=5, normal_max=10) == NORMAL_WEIGHTS
    with pytest.raises(ValueError):
        weights_for_size(-1)


@pytest.mark.parametrize(
    "kwargs",
    [{"similarity": -0.1}, {"recency": math.nan}, {"reward": math.inf},
     {"similarity": 0, "recency": 0, "reward": 0, "outcome_bonus": 0}],
)
def test_weights_are_validated(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        ReplayWeights(**kwargs)


def test_rank_orders_by_priority_then_similarity() -> None:
    old_fail = make_episode("a", outcome=OutcomeStatus.FAILURE, reward=0.0, timestamp=NOW - 9 * DAY)
    new_win = make_episode("b", outcome=OutcomeStatus.SUCCESS, reward=1.0, timestamp=NOW)
    twin = make_episode("c", outcome=OutcomeStatus.SUCCESS, reward=1.0, timestamp=NOW)
    ranked = rank(
        [PrioritizedResult(old_fail, 0.99), PrioritizedResult(twin, 0.3),
         PrioritizedResult(new_win, 0.5)],
        NOW,
    )
    assert [r.episode.episode_id for r in ranked] == ["b", "c", "a"]
    assert ranked[0].priority > ranked[1].priority > ranked[2].priority


@given(
    st.floats(-1, 1), st.floats(0, 1), st.floats(0, 1e7),
    st.sampled_from(OutcomeStatus),
    st.tuples(*[st.floats(0, 5)] * 4).filter(lambda w: sum(w) > 0),
)
def test_priority_is_bounded_by_the_weight_sum(
    sim: float, reward: float, age: float, outcome: OutcomeStatus,
    w: tuple[float, float, float, float],
) -> None:
    weights = ReplayWeights(*w)
    ep = make_episode("e", outcome=outcome, reward=reward, timestamp=NOW - age)
    p = compute_priority(PrioritizedResult(ep, sim), NOW, weights).priority
    assert 0.0 <= p <= sum(w) + 1e-9
    higher = compute_priority(PrioritizedResult(ep, min(1.0, max(0.0, sim) + 0.1)), NOW, weights)
    assert higher.priority >= p
