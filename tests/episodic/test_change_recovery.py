"""After a detected change: the change's estimated start, forgetting, re-trying, and alerts.

References are recomputed here from the definitions (the CUSUM's log-likelihood-ratio sum, the
decay factor), never typed in as magic constants.
"""

from __future__ import annotations

import random

import pytest

from langgraph_episodic.episodic import (
    ChangeDetection,
    Episode,
    EvidenceDecay,
    StrategyEvidence,
    TaskDescription,
    choose_strategy,
    compute_skill_profiles,
    decay_factor,
)

from ._support import (
    CUSUM_ONLY,
    DEBUG,
    HOUR,
    POOL,
    TESTING,
    F,
    S,
    ep,
    first_flag_time,
    reference_cusum,
    stream,
)


@pytest.mark.parametrize("seed", range(6))
def test_the_change_start_is_where_the_cusum_last_left_zero(seed: int) -> None:
    history = stream(seed, [(40, 0.85), (60, 0.4)])
    expected = reference_cusum([e.outcome is S for e in history], CUSUM_ONLY)
    assert expected is not None
    flag, start = expected
    profile = compute_skill_profiles(history[: flag + 1], change=CUSUM_ONLY)[DEBUG]
    assert profile.changed_at == history[flag].timestamp
    assert profile.change_started == history[start].timestamp
    assert profile.change_started <= profile.changed_at


def test_the_rate_test_dates_the_change_at_its_flag() -> None:
    history = stream(3, [(60, 0.9), (60, 0.1)])
    rule = ChangeDetection(strategy_drop=None)
    profile = compute_skill_profiles(history, change=rule)[DEBUG]
    assert profile.changes >= 1
    assert profile.change_started == profile.changed_at


@pytest.mark.parametrize("seed", range(5))
def test_forget_gives_evidence_before_the_change_keep_at_once(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        changed, now = rng.uniform(0, 100 * HOUR), rng.uniform(100 * HOUR, 200 * HOUR)
        t = rng.uniform(0, now)
        keep = rng.choice([0.0, 0.1, 0.5])
        soft = EvidenceDecay(half_life=5 * HOUR, keep=keep)
        hard = EvidenceDecay(half_life=5 * HOUR, keep=keep, forget=True)
        if t < changed:
            assert hard.weight(t, now, changed_at=changed) == keep
            assert soft.weight(t, now, changed_at=changed) == decay_factor(
                t, now, 5 * HOUR, floor=keep)
        else:  # since the change both keep the whole weight (floor 1.0)
            assert hard.weight(t, now, changed_at=changed) == 1.0
            assert soft.weight(t, now, changed_at=changed) == 1.0
        assert hard.weight(t, now) == 1.0  # no change flagged: nothing is forgotten


def changed_profile(seed: int = 0) -> tuple[list[Episode], float]:
    """"iterative" exploited at 0.9 for 80 episodes, then failing until the CUSUM flags."""
    history = stream(seed, [(80, 0.9)])
    k = len(history)
    while not compute_skill_profiles(history, change=CUSUM_ONLY)[DEBUG].changes:
        history.append(ep(k, F, "iterative", k * HOUR))
        k += 1
    return history, k * HOUR


def test_backdate_counts_the_failures_that_revealed_the_change() -> None:
    history, now = changed_profile()
    profile = compute_skill_profiles(history, change=CUSUM_ONLY)[DEBUG]
    assert profile.change_started is not None and profile.changed_at is not None
    assert profile.change_started < profile.changed_at
    seen: list[tuple[float, float]] = []

    class Recorder(random.Random):
        def betavariate(self, alpha: float, beta: float) -> float:
            seen.append((alpha, beta))
            return 0.5

    for backdate in (False, True):
        decay = EvidenceDecay(forget=True, backdate=backdate)
        seen.clear()
        evidence = StrategyEvidence((), profile, decay, now)
        choose_strategy(TaskDescription("x", DEBUG), evidence, policy="thompson",
                        rng=Recorder(), pool={"iterative": "I."})
        start = profile.change_started if backdate else profile.changed_at
        after = [e for e in history if e.timestamp >= start]
        wins = sum(e.outcome is S for e in after)
        assert seen == [pytest.approx((1 + 2 * wins, 1 + 2 * (len(after) - wins)))]


@pytest.mark.parametrize("seed", range(10))
def test_retry_tries_each_strategy_not_tried_since_the_change_once_flagged_last(
    seed: int,
) -> None:
    history, now = changed_profile(seed)
    decay = EvidenceDecay(retry=True)
    rng = random.Random(seed)
    tried: list[str] = []
    for step in range(len(POOL) - 1):
        profile = compute_skill_profiles(history, change=CUSUM_ONLY)[DEBUG]
        choice = choose_strategy(TaskDescription("x", DEBUG),
                                 StrategyEvidence((), profile, decay, now), policy="thompson",
                                 rng=rng, pool=POOL)
        assert choice.name != "iterative" and choice.name not in tried
        assert "not tried since then are tried first" in choice.reason
        tried.append(choice.name)
        now += HOUR
        history.append(ep(10_000 + step, F, choice.name, now))
    assert sorted(tried) == sorted(set(POOL) - {"iterative"})
    profile = compute_skill_profiles(history, change=CUSUM_ONLY)[DEBUG]
    after = choose_strategy(TaskDescription("x", DEBUG), StrategyEvidence((), profile, decay, now),
                            policy="thompson", rng=rng, pool=POOL)
    assert "tried first" not in after.reason  # every one tried: Thompson sampling again
    # Without retry the same profile leaves the choice to the samples alone.
    plain = choose_strategy(TaskDescription("x", DEBUG),
                            StrategyEvidence((), profile, EvidenceDecay(), now),
                            policy="thompson", rng=random.Random(seed), pool=POOL)
    assert "tried first" not in plain.reason


def alert_history(seed: int, gap: float) -> tuple[list[Episode], list[Episode]]:
    """TESTING's strategy collapses and is flagged; DEBUGGING's drops a little, ``gap``
    seconds after that flag."""
    testing = stream(seed, [(40, 0.9), (40, 0.0)], category=TESTING)
    flag = reference_cusum([e.outcome is S for e in testing], CUSUM_ONLY)
    assert flag is not None
    flagged_at = testing[flag[0]].timestamp
    rng = random.Random(1000 + seed)
    debugging = []
    for i in range(40):  # before the flag: interleaved in time, at 0.85
        debugging.append(ep(20_000 + i, S if rng.random() < 0.85 else F, "iterative",
                            flagged_at - (40 - i) * 60.0))
    for i in range(60):  # after it (and the gap): at 0.55
        debugging.append(ep(21_000 + i, S if rng.random() < 0.55 else F, "iterative",
                            flagged_at + gap + i * 60.0))
    return testing[: flag[0] + 1], debugging


@pytest.mark.parametrize("seed", range(8))
def test_an_alert_lowers_the_others_threshold_for_one_half_life(seed: int) -> None:
    rule = ChangeDetection(drop=1.0, strategy_drop=0.2, threshold=4.0, min_attempts=10,
                           alert=0.5, half_life=10 * HOUR)
    testing, debugging = alert_history(seed, gap=60.0)
    outcomes = [e.outcome is S for e in debugging]
    with_alert = reference_cusum(outcomes, rule, rule.alert_threshold, alert_from=40)
    without = reference_cusum(outcomes, rule)
    # Flagged exactly where the CUSUM reaches threshold * alert (the alert is fresh for the
    # whole of DEBUGGING's hour after the flag), and without the other category only where
    # it reaches the full threshold.
    both = sorted([*testing, *debugging], key=lambda e: e.timestamp)
    assert first_flag_time(both, rule) == (
        None if with_alert is None else debugging[with_alert[0]].timestamp)
    assert first_flag_time(debugging, rule) == (
        None if without is None else debugging[without[0]].timestamp)
    assert without is None or (with_alert is not None and with_alert[0] <= without[0])


def test_alerts_catch_a_small_drop_sooner_over_seeds() -> None:
    # Property over 20 seeds: a drop from 0.85 to 0.55 right after another category's flag
    # is caught in more seeds, and never later, with the alert than without it.
    rule = ChangeDetection(drop=1.0, strategy_drop=0.2, threshold=4.0, min_attempts=10,
                           alert=0.5, half_life=10 * HOUR)
    sooner = caught_alone = 0
    for seed in range(20):
        testing, debugging = alert_history(seed, gap=60.0)
        both = sorted([*testing, *debugging], key=lambda e: e.timestamp)
        alerted, alone = first_flag_time(both, rule), first_flag_time(debugging, rule)
        assert alone is None or (alerted is not None and alerted <= alone)
        sooner += alerted is not None and (alone is None or alerted < alone)
        caught_alone += alone is not None
    assert sooner >= 5, sooner
    assert caught_alone < 20
    assert rule.alert_threshold == 2.0


def test_an_alert_expires_after_a_half_life() -> None:
    rule = ChangeDetection(drop=1.0, strategy_drop=0.2, threshold=4.0, min_attempts=10,
                           alert=0.25, half_life=HOUR)
    for seed in range(8):
        testing, debugging = alert_history(seed, gap=2 * HOUR)
        both = sorted([*testing, *debugging], key=lambda e: e.timestamp)
        assert first_flag_time(both, rule) == first_flag_time(debugging, rule)


def test_invalid_alert_names_the_fix() -> None:
    for bad in (0.0, 1.5, -0.5):
        with pytest.raises(ValueError, match="alert"):
            ChangeDetection(alert=bad)
    assert ChangeDetection().alert_threshold == ChangeDetection().threshold


def test_the_defaults_retry_after_a_flag_and_give_similar_tasks_no_boost() -> None:
    # The third pass's defaults (docs/benchmarks.md, "Learning"): retry on, no similarity
    # boost, evidence before a flag fading (not forgotten at once), the flag's time kept.
    decay = EvidenceDecay()
    assert decay.retry and decay.similarity_boost == 0.0
    assert not decay.forget and not decay.backdate
    assert ChangeDetection().alert is None
    history, now = changed_profile(4)
    profile = compute_skill_profiles(history)[DEBUG]
    assert profile.changed_strategy == "iterative"
    choice = choose_strategy(TaskDescription("x", DEBUG), StrategyEvidence((), profile, decay, now),
                             policy="thompson", rng=random.Random(0), pool=POOL)
    assert choice.name != "iterative" and "tried first" in choice.reason


@pytest.mark.parametrize("seed", range(3))
def test_fade_half_life_applies_to_evidence_before_the_change_only(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        changed, now = rng.uniform(0, 100 * HOUR), rng.uniform(100 * HOUR, 200 * HOUR)
        t = rng.uniform(0, now)
        decay = EvidenceDecay(half_life=48 * HOUR, fade_half_life=6 * HOUR)
        if t < changed:
            assert decay.weight(t, now, changed_at=changed) == decay_factor(
                t, now, 6 * HOUR, floor=0.0)
        else:
            assert decay.weight(t, now, changed_at=changed) == 1.0
        assert decay.weight(t, now) == 1.0  # no change flagged: full weight
    for bad in (0.0, -HOUR, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="fade_half_life"):
            EvidenceDecay(fade_half_life=bad)
