"""Helpers shared by the change-detection, change-recovery and benchmark tests.

A plain module (not a fixture file): the tests import what they use by name.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from script_modules import script_module

from langgraph_episodic.episodic import (
    ChangeDetection,
    Episode,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)
from langgraph_episodic.episodic.skills import SkillTally

from .conftest import make_episode

S, F = OutcomeStatus.SUCCESS, OutcomeStatus.FAILURE
DEBUG, TESTING = TaskCategory.DEBUGGING, TaskCategory.TESTING
HOUR = 3600.0
CUSUM_ONLY = ChangeDetection(drop=1.0, strategy_drop=0.2, threshold=4.0, min_attempts=10)
"""Only the strategy test: the category's rate test is switched off by an unreachable drop."""
POOL = {"iterative": "I.", "defensive": "D.", "exploratory": "E.", "conservative": "C."}
LEARNING_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "learning.py"


def task(complexity: float = 0.5, category: TaskCategory = DEBUG) -> TaskDescription:
    return TaskDescription("Fix the parser", category, complexity)


def ep(i: int, outcome: OutcomeStatus, strategy: str, t: float,
       category: TaskCategory = DEBUG) -> Episode:
    return make_episode(f"e{i:05d}", outcome=outcome, strategy=strategy, timestamp=t,
                        category=category)


def stream(seed: int, rates: list[tuple[int, float]], *, strategy: str = "iterative",
           start: int = 0, category: TaskCategory = DEBUG, step: float = HOUR) -> list[Episode]:
    """``rates``: (episodes, success rate) segments of ``strategy``, one episode per ``step``
    from episode ``start`` on, draws from ``seed``."""
    rng = random.Random(seed)
    out: list[Episode] = []
    for count, rate in rates:
        for _ in range(count):
            i = start + len(out)
            out.append(ep(i, S if rng.random() < rate else F, strategy, i * step, category))
    return out


def reference_cusum(outcomes: list[bool], rule: ChangeDetection,
                    threshold: float | None = None, alert_from: int = 0) -> tuple[int, int] | None:
    """The CUSUM recomputed from its definition: (index of the flagging outcome, index of the
    first outcome of the run that lifted the sum from 0), or None. ``threshold`` replaces the
    rule's from outcome ``alert_from`` on. With ``rule.freeze`` the reference rate ``p0`` stays
    what it was when the run began."""
    assert rule.strategy_drop is not None
    successes, total, start, p0 = 0, 0.0, 0, 0.0
    for k, ok in enumerate(outcomes):
        if k >= rule.min_attempts:  # k outcomes before this one
            if not rule.freeze or total == 0.0:
                p0 = (successes + 1) / (k + 2)
            p1 = max(p0 - rule.strategy_drop, 0.01)
            if total == 0.0:
                start = k
            total = max(0.0, total + (math.log(p1 / p0) if ok else math.log((1 - p1) / (1 - p0))))
            limit = rule.threshold if threshold is None or k < alert_from else threshold
            if total >= limit:
                return k, start
        successes += ok
    return None


def first_flag(history: list[Episode], rule: ChangeDetection,
               category: TaskCategory = DEBUG) -> int | None:
    """The index of the episode at which ``category`` is first flagged, counted in order."""
    tally = SkillTally(rule)
    for k, episode in enumerate(history):
        tally.add(episode)
        profile = tally.profiles().get(category)
        if profile is not None and profile.changes:
            return k
    return None


def first_flag_time(history: list[Episode], rule: ChangeDetection) -> float | None:
    """The time of DEBUGGING's first flag when ``history`` is counted in order."""
    k = first_flag(history, rule)
    return None if k is None else history[k].timestamp


@contextmanager
def learning_benchmark(name: str) -> Iterator[ModuleType]:
    """``benchmarks/learning.py`` imported as a fresh module ``name``, removed afterwards."""
    with script_module(name, LEARNING_SCRIPT) as module:
        yield module
