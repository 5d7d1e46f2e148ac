"""Evidence weighting: how much each past episode counts when a policy picks a strategy.

Each past episode counts with the weight

    decay_factor(its timestamp, now, half_life, floor=f) * (1 + similarity_boost * similarity)

where ``decay_factor`` is the replay priority's decay, ``similarity`` (clipped to [0, 1]) is
the recall score of an episode recalled as similar to the task (0 for the others), and ``f`` is
``floor`` for evidence since the category's last detected change (see :mod:`.change`) and
``keep`` before it. With the defaults (``floor=1.0``, ``keep=0.0``) a stable world is learnt
from its whole history at full weight; when the skill profile flags a change, what came before
fades with the half-life (or, with ``forget=True``, counts ``keep`` at once), the Thompson
posteriors there widen back towards the prior and the policy explores again.

>>> decay = EvidenceDecay()
>>> decay.weight(0.0, 3600.0)  # no change flagged: full weight at any age
1.0
>>> round(decay.weight(0.0, 2 * 86400.0, changed_at=3600.0), 3)  # before a change: fades
0.5
>>> EvidenceDecay(forget=True).weight(0.0, 2 * 86400.0, changed_at=3600.0)
0.0
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .change import STRATEGY_HALF_LIFE
from .priority import PrioritizedResult
from .records import TaskCategory, TaskDescription, require
from .similarity import clipped, decay_factor
from .skills import OutcomeRecord, SkillProfile

EVIDENCE_SHOWN = 10
"""How many weighted episodes a :class:`StrategyChoice` lists (the heaviest)."""


@dataclass(frozen=True)
class EvidenceDecay:
    """How past episodes are weighted by age and similarity (see the module docstring).

    ``half_life`` in seconds; ``floor`` in [0, 1] is the lowest weight of evidence since the
    category's last detected change (1.0: it never fades; 0.0: plain discounting) and ``keep``
    in [0, floor] that of evidence before it; ``similarity_boost`` >= 0 adds weight to episodes
    recalled as similar (0 by default: in the benchmark the boosted episodes favoured whichever
    strategy was in favour); ``window`` keeps only the newest ``window`` episodes of each
    strategy (``None``: all); ``sharpness`` > 0 multiplies the weighted counts in the Thompson
    posteriors (2.0: the policy explores less). After a detected change: ``forget`` gives the
    evidence before it the weight ``keep`` at once; ``backdate`` moves the change back to its
    estimated start (:attr:`SkillProfile.change_started`); ``retry`` has Thompson sampling
    first try every strategy not tried since the change; ``fade_half_life`` (``None``:
    ``half_life``) is the half-life with which the evidence before the change fades.
    docs/benchmarks.md, "Learning", says why these defaults.
    """

    half_life: float = STRATEGY_HALF_LIFE
    floor: float = 1.0
    similarity_boost: float = 0.0
    window: int | None = None
    sharpness: float = 2.0
    keep: float = 0.0
    forget: bool = False
    backdate: bool = False
    retry: bool = True
    fade_half_life: float | None = None

    def __post_init__(self) -> None:
        name = "EvidenceDecay."
        require(self.window is None or (not isinstance(self.window, bool) and self.window >= 1),
                f"{name}window must be a positive number of episodes or None; got "
                f"{self.window!r}.")
        require(self.half_life > 0 and math.isfinite(self.half_life),
                f"{name}half_life must be a positive number of seconds; got {self.half_life!r}.")
        require(self.fade_half_life is None
                or (self.fade_half_life > 0 and math.isfinite(self.fade_half_life)),
                f"{name}fade_half_life must be a positive number of seconds or None; got "
                f"{self.fade_half_life!r}.")
        require(0.0 <= self.floor <= 1.0, f"{name}floor must be in [0, 1]; got {self.floor!r}.")
        require(0.0 <= self.keep <= self.floor,
                f"{name}keep must be in [0, floor]; got {self.keep!r} (floor {self.floor!r}).")
        require(self.sharpness > 0 and math.isfinite(self.sharpness),
                f"{name}sharpness must be a positive number; got {self.sharpness!r}.")
        require(self.similarity_boost >= 0 and math.isfinite(self.similarity_boost),
                f"{name}similarity_boost must be >= 0; got {self.similarity_boost!r}.")

    def weight(
        self,
        timestamp: float,
        now: float,
        *,
        changed_at: float | None = None,
        similarity: float = 0.0,
    ) -> float:
        """The weight of one episode at ``now`` (see the module docstring)."""
        if changed_at is None or timestamp >= changed_at:
            age_weight = decay_factor(timestamp, now, self.half_life, floor=self.floor)
        elif self.forget:
            age_weight = self.keep
        else:  # before the change: fades to ``keep``
            age_weight = decay_factor(timestamp, now, self.fade_half_life or self.half_life,
                                      floor=self.keep)
        return age_weight * (1.0 + self.similarity_boost * clipped(similarity))


DEFAULT_DECAY = EvidenceDecay()


@dataclass(frozen=True)
class EvidenceWeight:
    """One past episode as a policy counted it: its strategy, score (1 / 0.5 / 0) and weight."""

    episode_id: str
    strategy: str
    score: float
    weight: float


@dataclass(frozen=True)
class StrategyEvidence:
    """What a policy looks at: recalled similar episodes and the task category's profile.

    With ``decay`` set, episodes are weighted at ``current_time`` (default: the newest
    evidence's time); without it every episode counts once."""

    similar: tuple[PrioritizedResult, ...] = ()
    profile: SkillProfile | None = None
    decay: EvidenceDecay | None = None
    current_time: float | None = None


def change_time(profile: SkillProfile | None, decay: EvidenceDecay) -> float | None:
    """Where evidence after the category's last detected change begins, or None."""
    if profile is None or profile.changed_at is None:
        return None
    if decay.backdate and profile.change_started is not None:
        return profile.change_started
    return profile.changed_at


def weigh_evidence(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str], *,
    similar_only: bool,
) -> list[EvidenceWeight]:
    """Weigh the evidence: the category's episodes (or, for an unknown category or when
    ``similar_only``, the recalled similar ones), each with :meth:`EvidenceDecay.weight`."""
    decay = evidence.decay
    assert decay is not None
    profile = evidence.profile
    changed_at = change_time(profile, decay)
    sims = {r.episode.episode_id: r.similarity for r in evidence.similar}
    if similar_only or task.category is TaskCategory.UNKNOWN or profile is None:
        rows: Sequence[OutcomeRecord] = [OutcomeRecord.of(r.episode) for r in evidence.similar]
    else:
        rows = profile.records
    if not rows:
        return []
    if decay.window is not None:
        kept: Counter[str] = Counter()
        windowed = []
        for row in sorted(rows, key=lambda row: row.timestamp, reverse=True):
            kept[row.strategy] += 1
            if kept[row.strategy] <= decay.window:
                windowed.append(row)
        rows = windowed
    now = evidence.current_time
    if now is None:
        now = max(row.timestamp for row in rows)
    return [
        EvidenceWeight(row.episode_id, row.strategy, row.score, decay.weight(
            row.timestamp, now, changed_at=changed_at, similarity=sims.get(row.episode_id, 0.0)))
        for row in rows
        if row.strategy in pool
    ]


def heaviest(
    weights: list[EvidenceWeight], strategy: str | None = None
) -> tuple[EvidenceWeight, ...]:
    """The heaviest of ``weights`` (those of ``strategy``, or all), ties by episode id."""
    mine = sorted((w for w in weights if strategy is None or w.strategy == strategy),
                  key=lambda w: (-w.weight, w.episode_id))
    return tuple(mine[:EVIDENCE_SHOWN])


def listing(shown: tuple[EvidenceWeight, ...]) -> str:
    return ", ".join(f"{w.episode_id} {w.weight:.2f}" for w in shown[:5])
