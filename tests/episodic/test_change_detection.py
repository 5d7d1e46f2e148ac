"""Change detection on each strategy's own outcomes (CUSUM), and what the policies do after it.

The CUSUM is recomputed here from its definition (a Bernoulli log-likelihood-ratio sum against
the strategy's posterior mean minus ``strategy_drop``), never typed in as magic constants.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from langgraph_episodic.episodic import (
    ChangeDetection,
    Episode,
    EvidenceDecay,
    StrategyEvidence,
    choose_strategy,
    compute_skill_profiles,
    decay_factor,
)
from langgraph_episodic.episodic.skills import SkillTally

from ._support import CUSUM_ONLY, DEBUG, HOUR, F, S, ep, first_flag, reference_cusum, stream, task


@pytest.mark.parametrize("seed", range(5))
def test_the_cusum_is_the_log_likelihood_ratio_sum(seed: int) -> None:
    history = stream(seed, [(40, 0.85), (60, 0.5)])
    reference = reference_cusum([e.outcome is S for e in history], CUSUM_ONLY)
    assert reference is not None
    expected = reference[0]
    assert first_flag(history, CUSUM_ONLY) == expected
    profile = compute_skill_profiles(history[: expected + 1], change=CUSUM_ONLY)[DEBUG]
    assert profile.changed_at == history[expected].timestamp
    assert profile.changed_strategy == "iterative" and profile.changes == 1


def test_a_drop_of_the_incumbent_from_085_to_06_is_flagged_within_100_episodes() -> None:
    # Property over 20 seeds (80 episodes at 0.85, then 0.6): the first flag at or after the
    # drop comes within 100 episodes for at least 18 seeds, at most 40 for half of them; the
    # category's rate test alone catches it that fast for far fewer seeds.
    delays, rate_delays = [], []
    for seed in range(20):
        history = stream(seed, [(80, 0.85), (300, 0.6)])
        delays.append(flag_after(history, 80, ChangeDetection()))
        rate_delays.append(flag_after(history, 80, ChangeDetection(strategy_drop=None)))
    assert sum(d <= 100 for d in delays) >= 18, delays
    assert sorted(delays)[9] <= 40, delays
    assert sum(d <= 100 for d in rate_delays) <= 10, rate_delays


def flag_after(history: list[Episode], start: int, rule: ChangeDetection) -> int:
    """Episodes after ``start`` until the first flag raised at or after it (a large number
    if none)."""
    tally = SkillTally(rule)
    before = 0
    for k, episode in enumerate(history):
        tally.add(episode)
        changes = tally.profiles()[DEBUG].changes
        if k < start:
            before = changes
        elif changes > before:
            return k - start
    return len(history)


@pytest.mark.parametrize("rate", [0.5, 0.7, 0.85])
def test_false_alarms_on_a_stable_stream_are_rare(rate: float) -> None:
    # Property: one strategy at a constant success rate, 20 seeds x 1,000 episodes in one
    # category: fewer than two false flags per 1,000 episodes on average, and most seeds have
    # at most one (the rate of false alarms is discussed in docs/benchmarks.md, "Learning").
    flags = [compute_skill_profiles(stream(1000 + seed, [(1000, rate)]))[DEBUG].changes
             for seed in range(20)]
    assert sum(flags) < 40, flags
    assert sum(f <= 1 for f in flags) >= 10, flags


def test_a_strategy_tried_less_than_min_attempts_is_not_tested() -> None:
    history = [ep(i, S, "iterative", i * HOUR) for i in range(9)]
    history += [ep(9 + i, F, "iterative", (9 + i) * HOUR) for i in range(1)]
    rule = ChangeDetection(drop=1.0, strategy_drop=0.5, threshold=0.1, min_attempts=10)
    assert compute_skill_profiles(history, change=rule)[DEBUG].changes == 0
    history.append(ep(99, F, "iterative", 10 * HOUR))  # the 11th: tested, and it fails
    assert compute_skill_profiles(history, change=rule)[DEBUG].changes == 1


def test_thompson_draws_from_the_sharpened_decayed_sums() -> None:
    history = [ep(0, S, "iterative", 0.0), ep(1, F, "iterative", 10.0),
               ep(2, S, "iterative", 20.0)]
    profile = compute_skill_profiles(history, change=None)[DEBUG]
    decay = EvidenceDecay(half_life=10.0, floor=0.0, similarity_boost=0.0, sharpness=3.0)
    calls: list[tuple[float, float]] = []

    class Recorder(random.Random):
        def betavariate(self, alpha: float, beta: float) -> float:
            calls.append((alpha, beta))
            return 0.5

    choose_strategy(task(), StrategyEvidence((), profile, decay, 20.0), policy="thompson",
                    rng=Recorder(), pool={"iterative": "I."}, prior=(1.0, 2.0))
    wins = decay_factor(0.0, 20.0, 10.0) + 1.0
    losses = decay_factor(10.0, 20.0, 10.0)
    assert calls == [pytest.approx((1.0 + 3.0 * wins, 2.0 + 3.0 * losses), rel=1e-12)]


def test_evidence_before_a_change_keeps_a_little_weight() -> None:
    decay = EvidenceDecay(half_life=10.0, keep=0.1)
    assert decay.weight(-1000.0, 100.0, changed_at=50.0) == 0.1
    assert decay.weight(40.0, 100.0, changed_at=50.0) == decay_factor(40.0, 100.0, 10.0,
                                                                        floor=0.1)
    assert decay.weight(-1000.0, 100.0, changed_at=-2000.0) == 1.0  # since the change: floor 1
    with pytest.raises(ValueError, match="keep"):
        EvidenceDecay(floor=0.5, keep=0.6)
    with pytest.raises(ValueError, match="sharpness"):
        EvidenceDecay(sharpness=0.0)


def test_after_a_flag_greedy_tries_the_next_candidate_and_says_why() -> None:
    history = stream(0, [(60, 0.9)])
    history += [ep(100 + i, F, "iterative", (60 + i) * HOUR) for i in range(12)]
    profile = compute_skill_profiles(history)[DEBUG]
    assert profile.changed_at is not None and profile.changed_strategy == "iterative"
    pool = {"iterative": "I.", "defensive": "D.", "exploratory": "E."}
    now = history[-1].timestamp
    # Evidence from before the change fades with the half-life (an hour here, so that the old
    # successes of "iterative" are gone after the dozen failures).
    decay = EvidenceDecay(half_life=HOUR)
    choice = choose_strategy(task(0.9), StrategyEvidence((), profile, decay, now), pool=pool,
                             policy="greedy")
    assert choice.name == "defensive"  # untried: estimate 0.5, first in the pool's order
    assert "changed at" in choice.reason and "0.50" in choice.reason
    # Once "defensive" failed since the change, the next untried one is chosen.
    failed = [*history, ep(999, F, "defensive", now + HOUR)]
    profile = compute_skill_profiles(failed)[DEBUG]
    again = choose_strategy(task(0.9), StrategyEvidence((), profile, decay, now + HOUR),
                            pool=pool, policy="greedy")
    assert again.name == "exploratory"
    # Without a flag the seed's hierarchy holds (complexity rule here).
    calm = compute_skill_profiles(history, change=None)[DEBUG]
    plain = choose_strategy(task(0.9), StrategyEvidence((), calm, decay, now), pool=pool,
                            policy="greedy")
    assert "changed at" not in plain.reason


def test_thompson_reason_names_the_strategy_whose_drop_was_flagged() -> None:
    history = stream(0, [(60, 0.9)])
    history += [ep(100 + i, F, "iterative", (60 + i) * HOUR) for i in range(12)]
    profile = compute_skill_profiles(history)[DEBUG]
    choice = choose_strategy(task(), StrategyEvidence((), profile, EvidenceDecay(),
                                                      history[-1].timestamp),
                             policy="thompson", rng=random.Random(1), pool={"iterative": "I."})
    assert "iterative's own success rate dropped" in choice.reason
    assert "each counted 2 times" in choice.reason  # the default sharpness
    # The listed evidence is the chosen strategy's, heaviest first, each with the weight the
    # decay gives it: episodes from before the flag fade, later ones keep full weight.
    by_id = {e.episode_id: e for e in history}
    now = history[-1].timestamp
    assert choice.evidence
    assert [w.weight for w in choice.evidence] == sorted(
        (w.weight for w in choice.evidence), reverse=True)
    for w in choice.evidence:
        episode = by_id[w.episode_id]
        assert w.strategy == choice.name == episode.strategy_used
        assert w.weight == EvidenceDecay().weight(episode.timestamp, now,
                                                  changed_at=profile.changed_at)


def test_invalid_detector_settings_name_the_fix() -> None:
    for bad in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="strategy_drop"):
            ChangeDetection(strategy_drop=bad)
    for bad in (0.0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="threshold"):
            ChangeDetection(threshold=bad)
    for bad_attempts in (0, True):
        with pytest.raises(ValueError, match="min_attempts"):
            ChangeDetection(min_attempts=bad_attempts)
    assert ChangeDetection(strategy_drop=None).strategy_drop is None  # the CUSUM off


FROZEN = dataclasses.replace(CUSUM_ONLY, freeze=True)


@pytest.mark.parametrize("seed", range(6))
def test_a_frozen_cusum_tests_against_the_rate_from_before_the_run(seed: int) -> None:
    # freeze: p0 is held where it was when the sum last left 0 (recomputed in _support).
    history = stream(seed, [(40, 0.85), (60, 0.55)])
    outcomes = [e.outcome is S for e in history]
    frozen = reference_cusum(outcomes, FROZEN)
    assert frozen is not None
    assert first_flag(history, FROZEN) == frozen[0]
    profile = compute_skill_profiles(history[: frozen[0] + 1], change=FROZEN)[DEBUG]
    assert profile.change_started == history[frozen[1]].timestamp


def test_freezing_the_rate_catches_a_medium_drop_sooner() -> None:
    # Property over 20 seeds (60 episodes at 0.85, then 0.55): the failures lifting an
    # unfrozen sum also pull its p0 down; frozen, the flag comes sooner for most seeds and
    # never more than a few episodes later.
    sooner = later = 0
    for seed in range(20):
        outcomes = [e.outcome is S for e in stream(seed, [(60, 0.85), (200, 0.55)])]
        frozen, moving = reference_cusum(outcomes, FROZEN), reference_cusum(outcomes, CUSUM_ONLY)
        assert frozen is not None
        moving_at = len(outcomes) if moving is None else moving[0]
        sooner += frozen[0] < moving_at
        later += frozen[0] > moving_at + 5
    assert sooner >= 12 and later == 0, (sooner, later)
