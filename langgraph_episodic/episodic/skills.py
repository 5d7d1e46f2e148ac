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

Change detection, two tests per category (either one flags it):

- the category's rate: a recent success rate, each episode weighted by
  ``decay_factor(its time, the newest episode's time, half_life)``, against the rate of its
  older history (weights ``1 - decay``); a fall of ``drop`` or more (with at least
  ``min_weight`` of evidence on both sides) flags the category;
- each strategy's own outcomes: a Bernoulli CUSUM of the strategy's outcomes since the last
  change against its own rate minus ``strategy_drop``, so that a smaller drop of the strategy
  being exploited is caught within a few dozen of its episodes.

A flagged category's profile gets ``changed_at`` (and ``changed_strategy`` when a strategy's
test fired) and its history restarts from the recent evidence. The strategy policies then let
evidence from before ``changed_at`` fade (see :mod:`.strategy`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .records import Episode, OutcomeStatus, TaskCategory, outcome_score
from .similarity import DEFAULT_HALF_LIFE, decay_factor

STRATEGY_HALF_LIFE = 2 * DEFAULT_HALF_LIFE
"""Two days: the default half-life of change detection and of strategy evidence (see
docs/benchmarks.md, "Learning", for why)."""


@dataclass(frozen=True)
class ChangeDetection:
    """When a category counts as changed. Two tests; either one flags the category.

    - **The category's rate**: its recent success rate (each episode weighted by its decay
      factor with ``half_life`` seconds) fell ``drop`` or more below the older history's, with
      at least ``min_weight`` of evidence on each side.
    - **Each strategy's own outcomes** (a Bernoulli CUSUM, the default way to catch a small
      drop of the strategy being exploited): for every strategy of the category, its rate since
      the last change ``p0`` (a Beta(1, 1) posterior mean, once it has ``min_attempts``
      attempts) is tested against ``p0 - strategy_drop``; every outcome adds its log-likelihood
      ratio to a sum kept at or above 0, and the sum reaching ``threshold`` flags the category.
      ``strategy_drop=None`` turns this test off.
    """

    half_life: float = STRATEGY_HALF_LIFE
    drop: float = 0.25
    min_weight: float = 3.0
    strategy_drop: float | None = 0.2
    threshold: float = 4.0
    min_attempts: int = 10

    def __post_init__(self) -> None:
        if not (self.half_life > 0 and math.isfinite(self.half_life)):
            raise ValueError(
                f"ChangeDetection.half_life must be a positive number of seconds; got "
                f"{self.half_life!r}."
            )
        if not 0.0 < self.drop <= 1.0:
            raise ValueError(f"ChangeDetection.drop must be in (0, 1]; got {self.drop!r}.")
        if not self.min_weight > 0:
            raise ValueError(
                f"ChangeDetection.min_weight must be positive; got {self.min_weight!r}."
            )
        if self.strategy_drop is not None and not 0.0 < self.strategy_drop < 1.0:
            raise ValueError(
                f"ChangeDetection.strategy_drop must be in (0, 1) or None; got "
                f"{self.strategy_drop!r}."
            )
        if not (self.threshold > 0 and math.isfinite(self.threshold)):
            raise ValueError(
                f"ChangeDetection.threshold must be a positive number; got {self.threshold!r}."
            )
        if isinstance(self.min_attempts, bool) or self.min_attempts < 1:
            raise ValueError(
                f"ChangeDetection.min_attempts must be a positive number of episodes; got "
                f"{self.min_attempts!r}."
            )


DEFAULT_CHANGE_DETECTION = ChangeDetection()


@dataclass(frozen=True)
class OutcomeRecord:
    """One episode as the strategy policies weigh it: when, which strategy, how it went.

    ``score`` is 1.0 for success, 0.5 for partial, 0.0 for failure.
    """

    episode_id: str
    timestamp: float
    strategy: str
    score: float


class _Tally:
    """Rates derived from outcome counts (shared by the per-strategy and per-category stats)."""

    attempts: int
    successes: int
    partials: int
    total_reward: float

    @property
    def failures(self) -> int:
        """Attempts that were neither a success nor a partial success."""
        return self.attempts - self.successes - self.partials

    @property
    def success_rate(self) -> float:
        """``successes / attempts``, or 0.0 with no attempts."""
        return self.successes / self.attempts if self.attempts else 0.0

    @property
    def average_reward(self) -> float:
        """Mean reward, or 0.0 with no attempts."""
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
    strategies: Mapping[str, StrategyStats] = field(
        default_factory=lambda: MappingProxyType({})
    )
    recent_success_rate: float = 0.0
    """Success rate with each episode weighted by its decay factor at the newest episode's time
    (the change detector's half-life); full successes only."""
    changed_at: float | None = None
    """Time of the newest episode when a change was last detected, or None."""
    changes: int = 0
    """How many times a change was detected in this category."""
    changed_strategy: str | None = None
    """The strategy whose own drop raised the last flag, or None (the category's rate did, or
    no change was detected)."""
    records: tuple[OutcomeRecord, ...] = field(default=(), repr=False)
    """Every episode of the category, oldest first, for the strategy policies."""



@dataclass
class _Cusum:
    """One strategy's change test within a category: attempts, successes, CUSUM sum."""

    attempts: float = 0.0
    successes: float = 0.0
    statistic: float = 0.0

    def add(self, success: float, rule: ChangeDetection) -> bool:
        """Count one outcome; True when the strategy's rate has dropped (the sum crossed)."""
        flagged = False
        if rule.strategy_drop is not None and self.attempts >= rule.min_attempts:
            p0 = (self.successes + 1.0) / (self.attempts + 2.0)
            p1 = max(p0 - rule.strategy_drop, 0.01)
            if p1 < p0:
                llr = success * math.log(p1 / p0) + (1.0 - success) * math.log(
                    (1.0 - p1) / (1.0 - p0))
                self.statistic = max(0.0, self.statistic + llr)
                flagged = self.statistic >= rule.threshold
        self.attempts += 1.0
        self.successes += success
        return flagged


@dataclass
class _Drift:
    """Running sums of the change detector for one category (O(1) per episode).

    ``recent_*`` are sums weighted by ``decay_factor(t, last, half_life)``; ``total_*`` are
    unweighted sums since the last detected change, so the older history is ``total - recent``
    (weights ``1 - decay``). ``strategies`` holds each strategy's CUSUM since the last change.
    """

    recent_successes: float = 0.0
    recent_weight: float = 0.0
    total_successes: float = 0.0
    total_weight: float = 0.0
    last: float | None = None
    changed_at: float | None = None
    changes: int = 0
    changed_strategy: str | None = None
    strategies: dict[str, _Cusum] = field(default_factory=dict)

    def add(self, timestamp: float, strategy: str, success: float, rule: ChangeDetection) -> None:
        if self.last is None or timestamp >= self.last:
            if self.last is not None:
                fade = decay_factor(self.last, timestamp, rule.half_life)
                self.recent_successes *= fade
                self.recent_weight *= fade
            self.last = timestamp
            weight = 1.0
        else:  # an older episode arriving late: add it with its weight at the newest time
            weight = decay_factor(timestamp, self.last, rule.half_life)
        self.recent_successes += weight * success
        self.recent_weight += weight
        self.total_successes += success
        self.total_weight += 1.0
        if self.strategies.setdefault(strategy, _Cusum()).add(success, rule):
            self._flag(strategy)
            return
        older_weight = self.total_weight - self.recent_weight
        if self.recent_weight < rule.min_weight or older_weight < rule.min_weight:
            return
        older_rate = (self.total_successes - self.recent_successes) / older_weight
        if older_rate - self.recent_rate >= rule.drop:
            self._flag(None)

    def _flag(self, strategy: str | None) -> None:
        self.changed_at = self.last
        self.changes += 1
        self.changed_strategy = strategy
        self.total_successes = self.recent_successes
        self.total_weight = self.recent_weight
        self.strategies.clear()

    @property
    def recent_rate(self) -> float:
        return self.recent_successes / self.recent_weight if self.recent_weight else 0.0


class SkillTally:
    """A running count of outcomes per category and strategy (mutable; not thread-safe).

    ``EpisodicMemory`` keeps one so that skill profiles need no store scan. ``change`` sets the
    change detector; ``None`` turns it off.
    """

    def __init__(self, change: ChangeDetection | None = DEFAULT_CHANGE_DETECTION) -> None:
        self._by_category: dict[TaskCategory, dict[str, StrategyStats]] = {}
        self._records: dict[TaskCategory, list[OutcomeRecord]] = {}
        self._drift: dict[TaskCategory, _Drift] = {}
        self._change = change

    def add(self, episode: Episode) -> None:
        """Count one episode."""
        category = episode.task.category
        per_strategy = self._by_category.setdefault(category, {})
        name = episode.strategy_used
        per_strategy[name] = per_strategy.get(name, StrategyStats(name)).add(episode)
        record = OutcomeRecord(
            episode.episode_id, episode.timestamp, name, outcome_score(episode.outcome))
        bisect.insort(self._records.setdefault(category, []), record, key=_time)
        if self._change is not None:
            success = float(episode.outcome is OutcomeStatus.SUCCESS)
            self._drift.setdefault(category, _Drift()).add(
                episode.timestamp, name, success, self._change)

    def profiles(self) -> dict[TaskCategory, SkillProfile]:
        """Return an immutable profile for every category seen so far."""
        out: dict[TaskCategory, SkillProfile] = {}
        for category, per_strategy in self._by_category.items():
            stats = list(per_strategy.values())
            drift = self._drift.get(category, _Drift())
            out[category] = SkillProfile(
                category=category,
                attempts=sum(s.attempts for s in stats),
                successes=sum(s.successes for s in stats),
                partials=sum(s.partials for s in stats),
                total_reward=sum(s.total_reward for s in stats),
                strategies=MappingProxyType(dict(per_strategy)),
                recent_success_rate=drift.recent_rate,
                changed_at=drift.changed_at,
                changes=drift.changes,
                changed_strategy=drift.changed_strategy,
                records=tuple(self._records[category]),
            )
        return out


def compute_skill_profiles(
    episodes: Iterable[Episode], *, change: ChangeDetection | None = DEFAULT_CHANGE_DETECTION
) -> dict[TaskCategory, SkillProfile]:
    """Return a :class:`SkillProfile` for each category present in ``episodes``.

    Give the episodes oldest first (as ``EpisodicMemory.episodes()`` does) for change
    detection to see them in the order they happened.
    """
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

    Categories with fewer than ``min_attempts`` attempts are not judged. Ties are ordered by
    category name.
    """
    weak = [
        p for p in profiles.values()
        if p.attempts >= max(1, min_attempts) and p.success_rate < threshold
    ]
    weak.sort(key=lambda p: (p.success_rate, p.category.value))
    return [p.category for p in weak]


def _time(record: OutcomeRecord) -> float:
    return record.timestamp
