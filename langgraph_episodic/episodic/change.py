"""Change detection: has a task category's world changed under the agent?

Two tests per category, either one flags it (:class:`ChangeDetection`): the category's recent
success rate against its older history, and a CUSUM of each strategy's own outcomes. A flagged
category's profile gets ``changed_at`` (and ``changed_strategy`` when a strategy's test fired)
and its history restarts from the recent evidence; the strategy policies then let evidence
from before ``changed_at`` fade (see :mod:`.strategy`).

>>> rule = ChangeDetection()
>>> drift = CategoryDrift()
>>> for hour in range(40):  # "iterative" worked every time, then failed 12 times in a row
...     drift.add(hour * 3600.0, "iterative", float(hour < 28), rule)
>>> drift.changes, drift.changed_strategy
(1, 'iterative')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .records import require
from .similarity import DEFAULT_HALF_LIFE, decay_factor

STRATEGY_HALF_LIFE = 2 * DEFAULT_HALF_LIFE
"""Two days: the default half-life of change detection and of strategy evidence
(docs/benchmarks.md, "Learning", says why)."""


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
      ``strategy_drop=None`` turns this test off. With ``freeze`` ``p0`` is held where it was
      when the sum last left 0 (the textbook CUSUM's fixed pre-change rate), so the failures
      that are lifting the sum do not lower the rate they are tested against.
    - **Alert** (``alert``, off by default): a change flagged in one category multiplies the
      CUSUM threshold of the others by ``alert`` for ``half_life`` seconds, since a change in
      the world often hits several categories at once.
    """

    half_life: float = STRATEGY_HALF_LIFE
    drop: float = 0.25
    min_weight: float = 3.0
    strategy_drop: float | None = 0.2
    threshold: float = 4.0
    min_attempts: int = 10
    alert: float | None = None
    freeze: bool = False

    @property
    def alert_threshold(self) -> float:
        """The CUSUM threshold while another category's change is fresh."""
        return self.threshold * (1.0 if self.alert is None else self.alert)

    def __post_init__(self) -> None:
        name = "ChangeDetection."
        require(self.half_life > 0 and math.isfinite(self.half_life),
                f"{name}half_life must be a positive number of seconds; got {self.half_life!r}.")
        require(0.0 < self.drop <= 1.0, f"{name}drop must be in (0, 1]; got {self.drop!r}.")
        require(self.min_weight > 0, f"{name}min_weight must be positive; got {self.min_weight!r}.")
        require(self.strategy_drop is None or 0.0 < self.strategy_drop < 1.0,
                f"{name}strategy_drop must be in (0, 1) or None; got {self.strategy_drop!r}.")
        require(self.threshold > 0 and math.isfinite(self.threshold),
                f"{name}threshold must be a positive number; got {self.threshold!r}.")
        require(self.alert is None or 0.0 < self.alert <= 1.0,
                f"{name}alert must be in (0, 1] or None; got {self.alert!r}.")
        require(not isinstance(self.min_attempts, bool) and self.min_attempts >= 1,
                f"{name}min_attempts must be a positive number of episodes; got "
                f"{self.min_attempts!r}.")


DEFAULT_CHANGE_DETECTION = ChangeDetection()


@dataclass
class _Cusum:
    """One strategy's change test within a category: attempts, successes, CUSUM sum."""

    attempts: float = 0.0
    successes: float = 0.0
    statistic: float = 0.0
    reference: float = 0.0
    """``p0``: with :attr:`ChangeDetection.freeze`, fixed while the sum is above 0."""
    rising_since: float | None = None
    """Time of the first outcome of the run that lifted the sum from 0 (the change's start)."""

    def add(self, timestamp: float, success: float, rule: ChangeDetection,
            threshold: float) -> bool:
        """Count one outcome; True when the strategy's rate has dropped (the sum crossed)."""
        flagged = False
        if rule.strategy_drop is not None and self.attempts >= rule.min_attempts:
            if not rule.freeze or self.statistic == 0.0:
                self.reference = (self.successes + 1.0) / (self.attempts + 2.0)
            p0 = self.reference
            p1 = max(p0 - rule.strategy_drop, 0.01)
            if p1 < p0:
                llr = success * math.log(p1 / p0) + (1.0 - success) * math.log(
                    (1.0 - p1) / (1.0 - p0))
                if self.statistic == 0.0:
                    self.rising_since = timestamp
                self.statistic = max(0.0, self.statistic + llr)
                flagged = self.statistic >= threshold
        self.attempts += 1.0
        self.successes += success
        return flagged


@dataclass
class CategoryDrift:
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
    change_started: float | None = None
    changes: int = 0
    changed_strategy: str | None = None
    strategies: dict[str, _Cusum] = field(default_factory=dict)

    def add(
        self, timestamp: float, strategy: str, success: float, rule: ChangeDetection,
        *, threshold: float | None = None,
    ) -> None:
        """Count one outcome; ``threshold`` replaces ``rule.threshold`` for the CUSUM (the
        lowered threshold of an alert, see :attr:`ChangeDetection.alert`)."""
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
        cusum = self.strategies.setdefault(strategy, _Cusum())
        if cusum.add(timestamp, success, rule, rule.threshold if threshold is None else threshold):
            self._flag(strategy, cusum.rising_since)
            return
        older_weight = self.total_weight - self.recent_weight
        if self.recent_weight < rule.min_weight or older_weight < rule.min_weight:
            return
        older_rate = (self.total_successes - self.recent_successes) / older_weight
        if older_rate - self.recent_rate >= rule.drop:
            self._flag(None, self.last)

    def _flag(self, strategy: str | None, started: float | None) -> None:
        self.changed_at = self.last
        self.change_started = started if started is not None else self.last
        self.changes += 1
        self.changed_strategy = strategy
        self.total_successes = self.recent_successes
        self.total_weight = self.recent_weight
        self.strategies.clear()

    @property
    def recent_rate(self) -> float:
        return self.recent_successes / self.recent_weight if self.recent_weight else 0.0
