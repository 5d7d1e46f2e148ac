"""Skill profiles per category and strategy, and weak-skill detection."""

from __future__ import annotations

import pytest

from langgraph_episodic.episodic import (
    Episode,
    OutcomeStatus,
    TaskCategory,
    compute_skill_profiles,
    identify_weak_skills,
)

from .conftest import make_episode

S, P, F = OutcomeStatus.SUCCESS, OutcomeStatus.PARTIAL, OutcomeStatus.FAILURE
D, T, A = TaskCategory.DEBUGGING, TaskCategory.TESTING, TaskCategory.ARCHITECTURE


def episodes(spec: list[tuple[TaskCategory, OutcomeStatus, str, float]]) -> list[Episode]:
    return [make_episode(f"e{i}", category=c, outcome=o, strategy=s, reward=r)
            for i, (c, o, s, r) in enumerate(spec)]


def test_profiles_count_only_full_successes() -> None:
    profiles = compute_skill_profiles(episodes([
        (D, S, "iterative", 1.0), (D, P, "iterative", 0.5), (D, F, "defensive", 0.0),
        (D, S, "defensive", 0.9), (T, F, "iterative", 0.1),
    ]))
    debug = profiles[D]
    assert (debug.attempts, debug.successes, debug.partials, debug.failures) == (4, 2, 1, 1)
    assert debug.success_rate == 0.5
    assert debug.average_reward == pytest.approx(2.4 / 4)
    assert debug.strategies["iterative"].success_rate == 0.5
    assert debug.strategies["defensive"].average_reward == pytest.approx(0.45)
    assert profiles[T].success_rate == 0.0
    assert set(profiles) == {D, T}
    assert compute_skill_profiles([]) == {}


def test_weak_skills_are_below_threshold_weakest_first() -> None:
    profiles = compute_skill_profiles(episodes([
        (D, S, "x", 1.0), (D, F, "x", 0.0), (D, F, "x", 0.0),  # 1/3
        (T, F, "x", 0.0),  # 0/1
        (A, S, "x", 1.0), (A, S, "x", 1.0), (A, F, "x", 0.0), (A, F, "x", 0.0),  # 2/4 = 0.5
    ]))
    assert identify_weak_skills(profiles) == [T, D]
    assert identify_weak_skills(profiles, threshold=0.51) == [T, D, A]
    assert identify_weak_skills(profiles, min_attempts=2) == [D]
    assert identify_weak_skills(profiles, threshold=0.0) == []
