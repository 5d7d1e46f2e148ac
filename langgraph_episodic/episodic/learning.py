"""Learning curves: is the agent getting better over its episodes?

>>> from langgraph_episodic.episodic.records import (
...     Episode, Feedback, OutcomeStatus, TaskDescription)
>>> outcomes = [OutcomeStatus.FAILURE, OutcomeStatus.SUCCESS, OutcomeStatus.SUCCESS]
>>> eps = [Episode(f"e{i}", TaskDescription("t"), "", Feedback(r), o)
...        for i, (r, o) in enumerate(zip([0.0, 1.0, 0.5], outcomes))]
>>> curve = compute_learning_curve(eps, window=2)
>>> [s.rolling_success_rate for s in curve]
[0.0, 0.5, 1.0]
>>> curve[-1].cumulative_reward
1.5
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from .records import Episode, require, success_and_reward


@dataclass(frozen=True)
class LearningSnapshot:
    """The state of learning after one episode.

    ``index`` counts episodes from 1; rolling values are over the last ``window`` episodes
    (fewer at the start); only full successes count as successes."""

    index: int
    episode_id: str
    timestamp: float
    cumulative_reward: float
    rolling_success_rate: float
    rolling_average_reward: float
    window_count: int = 0
    """How many episodes the rolling values cover: the window, or fewer at the start (0 when
    not known)."""

    @property
    def rolling_avg_reward(self) -> float:
        """The seed's name of :attr:`rolling_average_reward`."""
        return self.rolling_average_reward


def window_for(n: int) -> int:
    """Rolling window of the curves of a run of ``n`` episodes: a sixth of the run, between 5
    and 20 episodes."""
    return max(5, min(20, n // 6))


def compute_learning_curve(episodes: Iterable[Episode], window: int = 5) -> list[LearningSnapshot]:
    """Return one :class:`LearningSnapshot` per episode, in the order given.

    Oldest first is the order wanted, as ``EpisodicMemory.episodes()`` returns them."""
    require(window >= 1, f"window must be >= 1; got {window}.")
    recent: deque[Episode] = deque(maxlen=window)
    snapshots: list[LearningSnapshot] = []
    cumulative = 0.0
    for index, episode in enumerate(episodes, start=1):
        recent.append(episode)
        cumulative += episode.feedback.reward
        rate, reward = success_and_reward(recent)
        snapshots.append(LearningSnapshot(index, episode.episode_id, episode.timestamp,
                                          cumulative, rate, reward, len(recent)))
    return snapshots
