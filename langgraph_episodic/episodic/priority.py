"""Replay priority: which past episodes matter most for the task at hand.

An episode's priority is a weighted sum of four components, each in [0, 1]:

- ``similarity``: ``max(0, cosine similarity)`` of its task to the query,
- ``recency``: ``decay_factor(timestamp, now, half_life)``, i.e. ``0.5 ** (age / half_life)``,
- ``reward``: the feedback's reward,
- ``outcome``: 1.0 for success, 0.5 for partial, 0.0 for failure.

Weights shift with the size of the memory (:func:`weights_for_size`): a young memory leans on
similarity, a mature one on recency, because with many episodes the recent ones say most about
the agent's current skill.

>>> from langgraph_episodic.episodic.records import (
...     Episode, Feedback, OutcomeStatus, TaskDescription)
>>> ep = Episode("e1", TaskDescription("sort a list"), "sorted(xs)", Feedback(0.9),
...              OutcomeStatus.SUCCESS, timestamp=0.0)
>>> r = compute_priority(PrioritizedResult(ep, similarity=0.8), current_time=43_200.0)
>>> round(r.priority, 2)  # 0.4*0.8 + 0.3*2**-0.5 + 0.2*0.9 + 0.1*1.0
0.81
>>> r.components.recency == 2 ** -0.5
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..errors import InvalidTypeError, InvalidValueError
from .records import Episode, outcome_score, require
from .similarity import DEFAULT_HALF_LIFE, clipped, decay_factor

EARLY_PHASE_MAX = 20
"""A memory with fewer episodes than this uses :data:`EARLY_WEIGHTS`."""
NORMAL_PHASE_MAX = 200
"""From this many episodes on a memory uses :data:`LATE_WEIGHTS`, before :data:`NORMAL_WEIGHTS`."""


@dataclass(frozen=True)
class ReplayWeights:
    """Weights of the four priority components. Non-negative and finite, not all zero.

    The presets sum to 1, so their priorities lie in [0, 1]; custom weights are not
    normalised (a priority then lies in [0, sum of weights]).
    """

    similarity: float = 0.4
    recency: float = 0.3
    reward: float = 0.2
    outcome_bonus: float = 0.1

    def __post_init__(self) -> None:
        named = vars(self)
        for name, value in named.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InvalidTypeError(f"ReplayWeights.{name} must be a number; got {value!r}.")
            if not math.isfinite(value) or value < 0:
                raise InvalidValueError(
                    f"ReplayWeights.{name} must be finite and non-negative; got {value!r}."
                )
        require(sum(named.values()) != 0,
                "ReplayWeights cannot all be zero; use e.g. NORMAL_WEIGHTS.")

    @classmethod
    def early(cls) -> ReplayWeights:
        """Preset for a young memory: 0.6 similarity, 0.1 recency, 0.2 reward, 0.1 outcome."""
        return cls(0.6, 0.1, 0.2, 0.1)

    @classmethod
    def normal(cls) -> ReplayWeights:
        """Preset for a growing memory: 0.4, 0.3, 0.2, 0.1 (the defaults)."""
        return cls(0.4, 0.3, 0.2, 0.1)

    @classmethod
    def late(cls) -> ReplayWeights:
        """Preset for a mature memory: 0.3 similarity, 0.4 recency, 0.2 reward, 0.1 outcome."""
        return cls(0.3, 0.4, 0.2, 0.1)


EARLY_WEIGHTS = ReplayWeights.early()
NORMAL_WEIGHTS = ReplayWeights.normal()
LATE_WEIGHTS = ReplayWeights.late()


def weights_for_size(
    episode_count: int,
    *,
    early_max: int = EARLY_PHASE_MAX,
    normal_max: int = NORMAL_PHASE_MAX,
) -> ReplayWeights:
    """Pick the phase preset for a memory holding ``episode_count`` episodes.

    Early below ``early_max``, normal below ``normal_max``, late from there on.

    >>> weights_for_size(0) == EARLY_WEIGHTS, weights_for_size(20) == NORMAL_WEIGHTS
    (True, True)
    >>> weights_for_size(200) == LATE_WEIGHTS
    True
    """
    require(episode_count >= 0, f"episode_count must be >= 0; got {episode_count}.")
    require(0 <= early_max <= normal_max,
            f"Need 0 <= early_max <= normal_max; got {early_max}, {normal_max}.")
    if episode_count < early_max:
        return EARLY_WEIGHTS
    if episode_count < normal_max:
        return NORMAL_WEIGHTS
    return LATE_WEIGHTS


@dataclass(frozen=True)
class PriorityComponents:
    """The four unweighted components of a priority, each in [0, 1], and the weights used."""

    similarity: float
    recency: float
    reward: float
    outcome: float
    weights: ReplayWeights

    def contributions(self) -> dict[str, float]:
        """Return each component times its weight; they sum to the priority."""
        w = self.weights
        return {
            "similarity": w.similarity * self.similarity,
            "recency": w.recency * self.recency,
            "reward": w.reward * self.reward,
            "outcome": w.outcome_bonus * self.outcome,
        }

    def explain(self) -> str:
        """One line saying why the episode ranked where it did."""
        parts = self.contributions()
        listed = ", ".join(f"{k} {v:.2f}" for k, v in parts.items())
        return f"priority {sum(parts.values()):.2f} = {listed}"


@dataclass(frozen=True)
class PrioritizedResult:
    """A recalled episode, its raw similarity to the query and, once computed, its priority.

    Build one with just ``(episode, similarity)`` and pass it to :func:`compute_priority`;
    ``EpisodicMemory.recall`` returns them with ``priority`` and ``components`` filled.
    ``similarity`` is the raw score (it may be negative); the component is clipped at 0.
    """

    episode: Episode
    similarity: float
    priority: float = 0.0
    components: PriorityComponents | None = None


SearchResult = PrioritizedResult
"""The seed's name: ``SearchResult(episode, similarity)`` is a :class:`PrioritizedResult`."""


def compute_priority(
    result: PrioritizedResult,
    current_time: float,
    weights: ReplayWeights | None = None,
    half_life: float = DEFAULT_HALF_LIFE,
    *,
    recency_floor: float = 0.0,
) -> PrioritizedResult:
    """Return ``result`` with its priority and components computed.

    ``priority = w.similarity * max(0, similarity) + w.recency * recency
    + w.reward * reward + w.outcome_bonus * outcome`` where ``recency`` is
    ``decay_factor(episode.timestamp, current_time, half_life, floor=recency_floor)``.
    ``weights`` defaults to :data:`NORMAL_WEIGHTS`. A NaN similarity counts as 0.
    """
    episode = result.episode
    components = PriorityComponents(
        similarity=clipped(result.similarity),
        recency=decay_factor(episode.timestamp, current_time, half_life, floor=recency_floor),
        reward=episode.feedback.reward,
        outcome=outcome_score(episode.outcome),
        weights=weights or NORMAL_WEIGHTS,
    )
    priority = sum(components.contributions().values())
    return replace(result, priority=priority, components=components)


def rank(
    results: list[PrioritizedResult],
    current_time: float,
    weights: ReplayWeights | None = None,
    half_life: float = DEFAULT_HALF_LIFE,
    *,
    recency_floor: float = 0.0,
) -> list[PrioritizedResult]:
    """Prioritise every result and sort them best first; ties go to the higher similarity, then
    the newer episode, then the smaller episode id."""
    scored = [
        compute_priority(r, current_time, weights, half_life, recency_floor=recency_floor)
        for r in results
    ]
    return sorted(scored, key=lambda r: (
        -r.priority, -(r.similarity if math.isfinite(r.similarity) else 0.0),
        -r.episode.timestamp, r.episode.episode_id))
