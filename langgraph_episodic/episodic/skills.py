"""Skill profiles: how well the agent does per task category, and per strategy within it.

>>> from langgraph_episodic.episodic.records import (
...     Episode, Feedback, OutcomeStatus, TaskCategory, TaskDescription)
>>> def ep(i, outcome, strategy):
...     task = TaskDescription(f"task {i}", TaskCategory.DEBUGGING)
...     return Episode(f"e{i}", task, "", Feedback(0.5), outcome, strategy_used=strategy)
>>> profiles = compute_skill_profiles([
...     ep(1, OutcomeStatus.SUCCESS, "iterative"), ep(2, OutcomeStatus.FAILURE, "iterative"),
...     ep(3, OutcomeStatus.FAILURE, "exploratory")])
>>> profiles[TaskCategory.DEBUGGING].success_rate
0.3333333333333333
>>> profiles[TaskCategory.DEBUGGING].strategies["iterative"].success_rate
0.5
>>> identify_weak_skills(profiles)
[<TaskCategory.DEBUGGING: 'debugging'>]

Change detection (:mod:`.change`) flags a category whose world changed: its profile gets
``changed_at`` and ``changed_strategy``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from types import MappingProxyType

from .change import DEFAULT_CHANGE_DETECTION, CategoryDrift, ChangeDetection
from .records import Episode, OutcomeStatus, TaskCategory, outcome_score


@dataclass(frozen=True)
class OutcomeRecord:
    """One episode as the strategy policies weigh it: when, which strategy, how it went.

    ``score`` is 1.0 for success, 0.5 for partial, 0.0 for failure."""

    episode_id: str
    timestamp: float
    strategy: str
    score: float

    @classmethod
    def of(cls, episode: Episode) -> OutcomeRecord:
        return cls(episode.episode_id, episode.timestamp, episode.strategy_used,
                   outcome_score(episode.outcome))


class _Tally:
    """Rates derived from outcome counts (shared by the per-strategy and per-category stats);
    each rate is 0.0 with no attempts."""

    attempts: int
    successes: int
    partials: int
    total_reward: float

    @property
    def failures(self) -> int:
        return self.attempts - self.successes - self.partials

    @property
    def success_rate(self) -> float:
        return self.successes / self.attempts if self.attempts else 0.0

    @property
    def average_reward(self) -> float:
        return self.total_reward / self.attempts if self.attempts else 0.0


@dataclass(frozen=True)
class StrategyStats(_Tally):
    """Outcomes of one strategy (within one category). Only full successes count as successes."""

    strategy: str
    attempts: int = 0
    successes: int = 0
    partials: int = 0
    total_reward: float = 0.0

    def add(self, episode: Episode) -> StrategyStats:
        """Return these stats with one more episode counted."""
        return StrategyStats(
            strategy=self.strategy,
            attempts=self.attempts + 1,
            successes=self.successes + (episode.outcome is OutcomeStatus.SUCCESS),
            partials=self.partials + (episode.outcome is OutcomeStatus.PARTIAL),
            total_reward=self.total_reward + episode.feedback.reward,
        )


@dataclass(frozen=True)
class SkillProfile(_Tally):
    """The agent's record on one task category, with a per-strategy breakdown.

    ``success_rate`` counts only full successes. ``strategies`` maps a strategy name to its
    :class:`StrategyStats` on this category.
    """

    category: TaskCategory
    attempts: int = 0
    successes: int = 0
    partials: int = 0
    total_reward: float = 0.0
    strategies: Mapping[str, StrategyStats] = field(default_factory=lambda: MappingProxyType({}))
    recent_success_rate: float = 0.0
    """Success rate with each episode weighted by its decay factor at the newest episode's time
    (the change detector's half-life); full successes only."""
    changed_at: float | None = None
    """Time of the newest episode when a change was last detected, or None."""
    change_started: float | None = None
    """Estimated start of the last detected change: the first outcome of the run that lifted
    the flagging strategy's CUSUM from 0, or ``changed_at`` when the category's rate test
    flagged."""
    changes: int = 0
    """How many times a change was detected in this category."""
    changed_strategy: str | None = None
    """The strategy whose own drop raised the last flag, or None (the category's rate did, or
    no change was detected)."""
    records: tuple[OutcomeRecord, ...] = field(default=(), repr=False)
    """Every episode of the category, oldest first, for the strategy policies."""


_TIME = attrgetter("timestamp")


class SkillTally:
    """A running count of outcomes per category and strategy (mutable; not thread-safe).

    ``EpisodicMemory`` keeps one so that skill profiles need no store scan. ``change`` sets the
    change detector; ``None`` turns it off.
    """

    def __init__(self, change: ChangeDetection | None = DEFAULT_CHANGE_DETECTION) -> None:
        self._by_category: dict[TaskCategory, dict[str, StrategyStats]] = {}
        self._records: dict[TaskCategory, list[OutcomeRecord]] = {}
        self._drift: dict[TaskCategory, CategoryDrift] = {}
        self._change = change
        self._alert: tuple[TaskCategory, float] | None = None  # the newest flag: where, when

    def add(self, episode: Episode) -> None:
        """Count one episode."""
        category = episode.task.category
        per_strategy = self._by_category.setdefault(category, {})
        name = episode.strategy_used
        per_strategy[name] = per_strategy.get(name, StrategyStats(name)).add(episode)
        bisect.insort(self._records.setdefault(category, []), OutcomeRecord.of(episode),
                      key=_TIME)
        rule = self._change
        if rule is None:
            return
        drift = self._drift.setdefault(category, CategoryDrift())
        threshold = rule.threshold
        if rule.alert is not None and self._alert is not None:
            where, when = self._alert
            fresh = 0.0 <= episode.timestamp - when <= rule.half_life
            if where is not category and fresh and (drift.changed_at or -math.inf) < when:
                threshold = rule.alert_threshold
        before = drift.changes
        success = float(episode.outcome is OutcomeStatus.SUCCESS)
        drift.add(episode.timestamp, episode.strategy_used, success, rule, threshold=threshold)
        if drift.changes > before:
            self._alert = (category, episode.timestamp)

    def profiles(self) -> dict[TaskCategory, SkillProfile]:
        """Return an immutable profile for every category seen so far."""
        out: dict[TaskCategory, SkillProfile] = {}
        for category, per_strategy in self._by_category.items():
            stats = per_strategy.values()
            drift = self._drift.get(category, CategoryDrift())
            out[category] = SkillProfile(
                category=category,
                attempts=sum(s.attempts for s in stats),
                successes=sum(s.successes for s in stats),
                partials=sum(s.partials for s in stats),
                total_reward=sum(s.total_reward for s in stats),
                strategies=MappingProxyType(dict(per_strategy)),
                recent_success_rate=drift.recent_rate,
                changed_at=drift.changed_at,
                change_started=drift.change_started,
                changes=drift.changes,
                changed_strategy=drift.changed_strategy,
                records=tuple(self._records[category]),
            )
        return out


def compute_skill_profiles(
    episodes: Iterable[Episode], *, change: ChangeDetection | None = DEFAULT_CHANGE_DETECTION
) -> dict[TaskCategory, SkillProfile]:
    """Return a :class:`SkillProfile` for each category present in ``episodes``.

    Change detection sees them in timestamp order."""
    tally = SkillTally(change)
    for episode in sorted(episodes, key=lambda e: e.timestamp):
        tally.add(episode)
    return tally.profiles()


def identify_weak_skills(
    profiles: Mapping[TaskCategory, SkillProfile],
    threshold: float = 0.5,
    *,
    min_attempts: int = 1,
) -> list[TaskCategory]:
    """Return categories whose success rate is below ``threshold``, weakest first.

    Ties go by category name; fewer than ``min_attempts`` attempts are not judged."""
    weak = [
        p for p in profiles.values()
        if p.attempts >= max(1, min_attempts) and p.success_rate < threshold
    ]
    weak.sort(key=lambda p: (p.success_rate, p.category.value))
    return [p.category for p in weak]

