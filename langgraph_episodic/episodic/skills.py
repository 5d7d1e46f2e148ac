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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .records import Episode, OutcomeStatus, TaskCategory


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



class SkillTally:
    """A running count of outcomes per category and strategy (mutable; not thread-safe).

    ``EpisodicMemory`` keeps one so that skill profiles need no store scan.
    """

    def __init__(self) -> None:
        self._by_category: dict[TaskCategory, dict[str, StrategyStats]] = {}

    def add(self, episode: Episode) -> None:
        """Count one episode."""
        per_strategy = self._by_category.setdefault(episode.task.category, {})
        name = episode.strategy_used
        per_strategy[name] = per_strategy.get(name, StrategyStats(name)).add(episode)

    def profiles(self) -> dict[TaskCategory, SkillProfile]:
        """Return an immutable profile for every category seen so far."""
        out: dict[TaskCategory, SkillProfile] = {}
        for category, per_strategy in self._by_category.items():
            stats = list(per_strategy.values())
            out[category] = SkillProfile(
                category=category,
                attempts=sum(s.attempts for s in stats),
                successes=sum(s.successes for s in stats),
                partials=sum(s.partials for s in stats),
                total_reward=sum(s.total_reward for s in stats),
                strategies=MappingProxyType(dict(per_strategy)),
            )
        return out


def compute_skill_profiles(episodes: Iterable[Episode]) -> dict[TaskCategory, SkillProfile]:
    """Return a :class:`SkillProfile` for each category present in ``episodes``."""
    tally = SkillTally()
    for episode in episodes:
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
