"""Evidence weighted by age and similarity, and change detection in the skill profiles.

Expected numbers are recomputed from ``decay_factor`` (the replay priority's decay), never typed
in as magic constants.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from langgraph.store.base import BaseStore

from langgraph_episodic.episodic import (
    ChangeDetection,
    Episode,
    EpisodicMemory,
    EvidenceDecay,
    OutcomeStatus,
    PrioritizedResult,
    StrategyEvidence,
    TaskCategory,
    TaskDescription,
    choose_strategy,
    compute_skill_profiles,
    decay_factor,
    select_strategy,
)
from langgraph_episodic.episodic.skills import SkillTally

from .conftest import make_episode

S, P, F = OutcomeStatus.SUCCESS, OutcomeStatus.PARTIAL, OutcomeStatus.FAILURE
DEBUG = TaskCategory.DEBUGGING
SCORE = {S: 1.0, P: 0.5, F: 0.0}


def task(complexity: float = 0.5, category: TaskCategory = DEBUG) -> TaskDescription:
    return TaskDescription("Fix the parser", category, complexity)


def ep(i: int, outcome: OutcomeStatus, strategy: str, t: float) -> Episode:
    return make_episode(f"e{i:03d}", outcome=outcome, strategy=strategy, timestamp=t)


def test_weight_is_the_replay_decay_times_the_similarity_boost() -> None:
    decay = EvidenceDecay(half_life=100.0, floor=0.2, similarity_boost=0.5)
    for t, sim in [(0.0, 0.0), (50.0, 0.8), (-400.0, 1.0), (90.0, 2.0), (10.0, -0.3)]:
        expected = decay_factor(t, 100.0, 100.0, floor=0.2) * (1 + 0.5 * min(1.0, max(0.0, sim)))
        assert decay.weight(t, 100.0, similarity=sim) == expected
    # Before the category's last change the floor does not apply: old evidence fades to zero.
    assert decay.weight(-400.0, 100.0, changed_at=0.0) == decay_factor(-400.0, 100.0, 100.0)
    assert decay.weight(50.0, 100.0, changed_at=0.0) == decay_factor(50.0, 100.0, 100.0,
                                                                      floor=0.2)


def test_thompson_counts_are_the_decayed_sums() -> None:
    rows = [(S, 0.0), (F, 10.0), (P, 20.0), (S, 25.0), (F, 30.0)]
    history = [ep(i, o, "iterative", t) for i, (o, t) in enumerate(rows)]
    profile = compute_skill_profiles(history, change=None)[DEBUG]
    decay = EvidenceDecay(half_life=10.0, floor=0.0, similarity_boost=0.0)
    evidence = StrategyEvidence((), profile, decay, current_time=40.0)
    choice = choose_strategy(task(), evidence, policy="thompson", rng=random.Random(0),
                             pool={"iterative": "Iterate."})
    weights = {f"e{i:03d}": decay_factor(t, 40.0, 10.0) for i, (_, t) in enumerate(rows)}
    assert {w.episode_id: w.weight for w in choice.evidence} == weights
    wins = sum(weights[f"e{i:03d}"] * SCORE[o] for i, (o, _) in enumerate(rows))
    losses = sum(weights[f"e{i:03d}"] * (1 - SCORE[o]) for i, (o, _) in enumerate(rows))
    assert f"weighted {wins:.2f} successes and {losses:.2f} failures" in choice.reason
    heaviest_first = [w.weight for w in choice.evidence]
    assert heaviest_first == sorted(heaviest_first, reverse=True)


def test_default_floor_keeps_a_stable_history_at_full_weight() -> None:
    history = [ep(i, S, "iterative", float(i)) for i in range(4)]
    profile = compute_skill_profiles(history)[DEBUG]
    assert profile.changed_at is None
    evidence = StrategyEvidence((), profile, EvidenceDecay(half_life=1.0), current_time=1e6)
    choice = choose_strategy(task(), evidence, policy="thompson", rng=random.Random(1),
                             pool={"iterative": "Iterate."})
    assert [w.weight for w in choice.evidence] == [1.0] * 4


def test_similar_episodes_weigh_more() -> None:
    history = [ep(i, S, "iterative", 0.0) for i in range(3)]
    profile = compute_skill_profiles(history, change=None)[DEBUG]
    similar = (PrioritizedResult(history[1], 0.6, priority=0.5),)
    decay = EvidenceDecay(half_life=10.0, floor=0.0, similarity_boost=2.0)
    evidence = StrategyEvidence(similar, profile, decay, current_time=5.0)
    choice = choose_strategy(task(), evidence, policy="thompson", rng=random.Random(2),
                             pool={"iterative": "Iterate."})
    base = decay_factor(0.0, 5.0, 10.0)
    got = {w.episode_id: w.weight for w in choice.evidence}
    assert got == {"e000": base, "e001": base * (1 + 2.0 * 0.6), "e002": base}


def test_greedy_counts_recent_evidence_more_and_says_which_episodes() -> None:
    old = [ep(i, S, "example_driven", 0.0) for i in range(4)]
    recent = [ep(10, F, "example_driven", 100.0), ep(11, S, "conservative", 99.0),
              ep(12, S, "conservative", 100.0), ep(13, F, "conservative", 0.0)]
    similar = tuple(PrioritizedResult(e, 0.0, priority=0.5) for e in old + recent)
    seed = choose_strategy(task(), StrategyEvidence(similar), policy="greedy")
    assert seed.name == "example_driven"  # 4/5 against 2/3, counted once each
    decay = EvidenceDecay(half_life=10.0, floor=0.0, similarity_boost=0.0)
    choice = choose_strategy(task(), StrategyEvidence(similar, None, decay, current_time=100.0),
                             policy="greedy")
    assert choice.name == "conservative" and "2/3" in choice.reason
    assert [(w.episode_id, w.weight) for w in choice.evidence] == [
        ("e012", decay_factor(100.0, 100.0, 10.0)), ("e011", decay_factor(99.0, 100.0, 10.0)),
        ("e013", decay_factor(0.0, 100.0, 10.0))]
    assert "e012 1.00" in choice.reason


def test_greedy_weak_category_uses_weighted_rate() -> None:
    # Old failures, recent successes: counted once each the category is weak (2/6), weighted
    # by age it is not.
    history = [ep(i, F, "iterative", 0.0) for i in range(4)]
    history += [ep(10, S, "iterative", 100.0), ep(11, S, "iterative", 100.0)]
    profile = compute_skill_profiles(history, change=None)[DEBUG]
    assert choose_strategy(task(0.9), StrategyEvidence((), profile),
                           policy="greedy").name == "defensive"
    decay = EvidenceDecay(half_life=10.0, floor=0.0)
    weighted = choose_strategy(task(0.9), StrategyEvidence((), profile, decay, 100.0),
                               policy="greedy")
    assert weighted.name == "iterative" and "complexity" in weighted.reason


def test_change_is_flagged_when_recent_success_drops_below_history() -> None:
    rule = ChangeDetection(half_life=5.0, drop=0.25, min_weight=3.0, strategy_drop=None)
    rows = [(S if i % 5 else F) for i in range(40)] + [F] * 15
    history = [ep(i, o, "iterative", float(i)) for i, o in enumerate(rows)]
    profile = compute_skill_profiles(history, change=rule)[DEBUG]
    assert profile.changes >= 1 and profile.changed_at is not None
    first = _first_change([(float(i), SCORE[o] == 1.0) for i, o in enumerate(rows)], rule)
    first_profile = compute_skill_profiles(
        [h for h in history if h.timestamp <= first], change=rule)[DEBUG]
    assert first_profile.changed_at == first and first_profile.changes == 1
    before = compute_skill_profiles([h for h in history if h.timestamp < first],
                                    change=rule)[DEBUG]
    assert before.changed_at is None
    # The recent success rate is the decay-weighted mean at the newest episode's time.
    w = [decay_factor(h.timestamp, first - 1, rule.half_life) for h in history[: int(first)]]
    s = [SCORE[h.outcome] == 1.0 for h in history[: int(first)]]
    expected = sum(wi * si for wi, si in zip(w, s, strict=True)) / sum(w)
    assert before.recent_success_rate == pytest.approx(expected, rel=1e-12)


def _first_change(outcomes: list[tuple[float, bool]], rule: ChangeDetection) -> float:
    for k in range(len(outcomes)):
        now = outcomes[k][0]
        w = [decay_factor(t, now, rule.half_life) for t, _ in outcomes[: k + 1]]
        recent_w, older_w = sum(w), sum(1 - wi for wi in w)
        recent = sum(wi * s for wi, (_, s) in zip(w, outcomes, strict=False)) / recent_w
        if recent_w < rule.min_weight or older_w < rule.min_weight:
            continue
        older = sum((1 - wi) * s for wi, (_, s) in zip(w, outcomes, strict=False)) / older_w
        if older - recent >= rule.drop:
            return now
    raise AssertionError("the reference found no change")


def test_a_steady_mix_is_not_flagged() -> None:
    rows = [S, F] * 50
    history = [ep(i, o, "iterative", float(i)) for i, o in enumerate(rows)]
    profile = compute_skill_profiles(history, change=ChangeDetection(half_life=5.0))[DEBUG]
    assert profile.changes == 0 and profile.changed_at is None


def test_late_episode_is_added_with_its_weight_at_the_newest_time() -> None:
    tally = SkillTally(ChangeDetection(half_life=10.0))
    tally.add(ep(1, S, "iterative", 20.0))
    tally.add(ep(2, F, "iterative", 10.0))  # arrives late
    profile = tally.profiles()[DEBUG]
    late = decay_factor(10.0, 20.0, 10.0)
    assert profile.recent_success_rate == pytest.approx(1.0 / (1.0 + late), rel=1e-12)
    assert [r.episode_id for r in profile.records] == ["e002", "e001"]  # oldest first


def test_after_a_change_thompson_follows_the_new_best_strategy() -> None:
    rule = ChangeDetection(half_life=5.0)
    history = [ep(i, S if i % 10 else F, "iterative", float(i)) for i in range(200)]
    history += [ep(200 + i, F, "iterative", 200.0 + i) for i in range(8)]
    history += [ep(210 + i, S, "defensive", 208.0 + i) for i in range(4)]
    profile = compute_skill_profiles(history, change=rule)[DEBUG]
    assert profile.changed_at is not None
    pool = {"iterative": "I.", "defensive": "D."}
    rng = random.Random(3)
    adaptive = StrategyEvidence((), profile, EvidenceDecay(half_life=5.0), current_time=212.0)
    picks = Counter(choose_strategy(task(), adaptive, policy="thompson", rng=rng, pool=pool).name
                    for _ in range(200))
    seed = StrategyEvidence((), profile)
    seed_picks = Counter(choose_strategy(task(), seed, policy="thompson", rng=rng, pool=pool).name
                         for _ in range(200))
    assert picks["defensive"] > 180
    assert seed_picks["iterative"] > 80  # 180 old successes still outvote the new failures


def test_invalid_settings_name_the_fix() -> None:
    with pytest.raises(ValueError, match="half_life"):
        EvidenceDecay(half_life=0.0)
    with pytest.raises(ValueError, match="floor"):
        EvidenceDecay(floor=1.5)
    with pytest.raises(ValueError, match="similarity_boost"):
        EvidenceDecay(similarity_boost=-1.0)
    with pytest.raises(ValueError, match="drop"):
        ChangeDetection(drop=0.0)
    with pytest.raises(ValueError, match="min_weight"):
        ChangeDetection(min_weight=0.0)
    with pytest.raises(ValueError, match="half_life"):
        ChangeDetection(half_life=float("inf"))


def test_evidence_time_defaults_to_the_newest_episode() -> None:
    history = [ep(0, S, "iterative", 0.0), ep(1, F, "iterative", 10.0)]
    profile = compute_skill_profiles(history, change=None)[DEBUG]
    decay = EvidenceDecay(half_life=10.0, floor=0.0, similarity_boost=0.0)
    choice = choose_strategy(task(), StrategyEvidence((), profile, decay), policy="thompson",
                             rng=random.Random(0), pool={"iterative": "I."})
    assert {w.episode_id: w.weight for w in choice.evidence} == {
        "e000": decay_factor(0.0, 10.0, 10.0), "e001": 1.0}


def test_select_strategy_weighs_at_the_memory_clock(store: BaseStore) -> None:
    memory = EpisodicMemory(store, ("episodes", "alice"), clock=lambda: 7200.0)
    for i in range(3):
        memory.record(ep(i, S, "example_driven", 3600.0 * i))
    assert memory.now() == 7200.0
    decay = EvidenceDecay(half_life=3600.0, floor=0.0, similarity_boost=0.0)
    choice = select_strategy(task(), memory, decay=decay, policy="greedy")
    assert choice.name == "example_driven"
    assert {w.episode_id: w.weight for w in choice.evidence} == {
        f"e{i:03d}": decay_factor(3600.0 * i, 7200.0, 3600.0) for i in range(3)}
    seed = select_strategy(task(), memory, decay=None, policy="greedy")
    assert seed.evidence == () and "3/3" in seed.reason


def test_memory_profiles_flag_a_change_and_detection_can_be_off(store: BaseStore) -> None:
    rows = [(S if i % 5 else F) for i in range(40)] + [F] * 15
    history = [ep(i, o, "iterative", float(i)) for i, o in enumerate(rows)]
    rule = ChangeDetection(half_life=5.0)
    flagged = EpisodicMemory(store, ("episodes", "on"), change_detection=rule)
    silent = EpisodicMemory(store, ("episodes", "off"), change_detection=None)
    for episode in history:
        flagged.record(episode)
        silent.record(episode)
    expected = compute_skill_profiles(history, change=rule)[DEBUG]
    got = flagged.skill_profiles()[DEBUG]
    assert (got.changed_at, got.changes) == (expected.changed_at, expected.changes)
    assert got.changed_at is not None
    assert silent.skill_profiles()[DEBUG].changed_at is None
    # A fresh instance reads the same history from the store and flags the same change.
    reread = EpisodicMemory(store, ("episodes", "on"), change_detection=rule)
    assert reread.skill_profiles()[DEBUG].changed_at == got.changed_at


def test_window_keeps_the_newest_episodes_of_each_strategy() -> None:
    history = [ep(i, S, "iterative", float(i)) for i in range(6)]
    history += [ep(10 + i, F, "defensive", float(i)) for i in range(3)]
    profile = compute_skill_profiles(history, change=None)[DEBUG]
    decay = EvidenceDecay(half_life=10.0, floor=0.0, similarity_boost=0.0, window=4)
    pool = {"iterative": "I."}
    choice = choose_strategy(task(), StrategyEvidence((), profile, decay, 6.0),
                             policy="thompson", rng=random.Random(0), pool=pool)
    newest = {f"e{i:03d}": decay_factor(float(i), 6.0, 10.0) for i in range(2, 6)}
    assert {w.episode_id: w.weight for w in choice.evidence} == newest
    wins = sum(newest.values())
    assert f"weighted {wins:.2f} successes and 0.00 failures" in choice.reason
    with pytest.raises(ValueError, match="window"):
        EvidenceDecay(window=0)
