"""Strategy selection: which way of working to try on a new task, learnt from past episodes.

Two policies choose from a pool of named strategies, each with an instruction text for the LLM:

- ``"greedy"``: the three-level hierarchy. (1) A strategy that succeeded on similar tasks
  (success rate above 0.6 among the recalled similar episodes) is reused; (2) otherwise a weak
  category (success rate below 0.5 over at least 3 attempts) gets ``"defensive"``; (3) otherwise
  the complexity rule: above 0.7 ``"iterative"``, below 0.3 ``"exploratory"``, else
  ``"iterative"``. It can lock in on the first strategy that worked.
- ``"thompson"``: Thompson sampling. Each strategy's success probability on the task's category
  gets a Beta posterior from its past outcomes there (a partial success counts half); one
  sample is drawn per strategy and the highest wins. Untried strategies get tried, and the
  best one is chosen more and more often. Pass a seeded ``random.Random`` as ``rng`` for
  reproducible runs.

"Similar tasks" are those :meth:`EpisodicMemory.recall` returns for the task's description,
restricted to the task's category unless it is ``UNKNOWN``.

Evidence weighting (``decay``, an :class:`EvidenceDecay`; on by default in
:func:`select_strategy`): each past episode counts with the weight

    decay_factor(its timestamp, now, half_life, floor=f) * (1 + similarity_boost * similarity)

where ``decay_factor`` is the replay priority's decay, ``similarity`` (clipped to [0, 1]) is
the recall score of an episode recalled as similar to the task (0 for the others), and ``f`` is
``floor`` for evidence since the category's last detected change (see :mod:`.skills`) and
``keep`` before it. With the defaults (``floor=1.0``, ``keep=0.0``) a stable world is learnt
from its whole history at full weight; when the skill profile flags a change (the category's
success rate, or the strategy being exploited, dropped), what came before fades with the
half-life, the Thompson posteriors there widen back towards the prior and the policy explores
again. The Thompson posterior of a strategy is ``Beta(alpha + sharpness * weighted successes,
beta + sharpness * weighted failures)``: ``sharpness`` 2 (the default) explores less than 1,
which after a change finds the new best strategy sooner and on a stable stream wastes fewer
tries. ``floor=0.0`` is plain discounted Thompson sampling; ``window`` keeps only the newest
episodes of each strategy. ``decay=None`` counts every episode once (the seed's policies).

After a flagged change the greedy policy, when no similar task's strategy convinces, tries the
next candidate (the best weighted estimate ``(successes + 1) / (weight + 2)``, so a strategy
without recent evidence comes before one that failed since the change) instead of the
complexity rule.

>>> import random
>>> from langgraph.store.memory import InMemoryStore
>>> from langgraph_episodic.episodic.memory import EpisodicMemory
>>> from langgraph_episodic.episodic.records import TaskCategory, TaskDescription
>>> memory = EpisodicMemory(InMemoryStore(), ("episodes", "doc"))
>>> task = TaskDescription("Design the plugin API", TaskCategory.ARCHITECTURE, complexity=0.9)
>>> select_strategy(task, memory).name
'iterative'
>>> choice = select_strategy(task, memory, policy="thompson", rng=random.Random(7))
>>> choice.name in STRATEGY_POOL
True
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from .priority import PrioritizedResult
from .records import OutcomeStatus, TaskCategory, TaskDescription, outcome_score
from .similarity import decay_factor
from .skills import STRATEGY_HALF_LIFE, SkillProfile

if TYPE_CHECKING:
    from .memory import EpisodicMemory

Policy = Literal["greedy", "thompson"]

STRATEGY_POOL: Mapping[str, str] = MappingProxyType(
    {
        "conservative": "Make the smallest change that solves the task. Reuse existing code and "
        "patterns; avoid new dependencies and broad rewrites.",
        "exploratory": "Sketch two or three different approaches quickly, compare their "
        "trade-offs, then develop the most promising one.",
        "defensive": "Check inputs and edge cases explicitly, handle errors, and add tests for "
        "the failure paths before calling the task done.",
        "iterative": "Work in small steps: write a minimal version, run the tests, read the "
        "failures and refine until everything passes.",
        "example_driven": "Start from concrete input/output examples (or the solutions of similar "
        "past tasks) and generalise from them.",
    }
)
"""Default strategies: name -> instruction text. Extend with ``pool={**STRATEGY_POOL, ...}``."""

SUCCESS_THRESHOLD = 0.6
WEAK_THRESHOLD = 0.5
WEAK_MIN_ATTEMPTS = 3


EVIDENCE_SHOWN = 10
"""How many weighted episodes a :class:`StrategyChoice` lists (the heaviest)."""


@dataclass(frozen=True)
class EvidenceDecay:
    """How past episodes are weighted by age and similarity (see the module docstring).

    ``half_life`` in seconds (default two days); ``floor`` in [0, 1] is the lowest weight of
    evidence since the category's last detected change (1.0: it never fades; 0.0: plain
    discounting) and ``keep`` in [0, floor] that of evidence before it (0.0: it fades away);
    ``similarity_boost`` >= 0 adds weight to episodes recalled as similar; ``window`` keeps
    only the newest ``window`` episodes of each strategy (sliding-window Thompson sampling per
    strategy; ``None``, the default: all of them); ``sharpness`` > 0 multiplies the weighted
    counts in the Thompson posteriors (2.0: each outcome counts twice, so the policy explores
    less). docs/benchmarks.md, "Learning", says why these defaults.
    """

    half_life: float = STRATEGY_HALF_LIFE
    floor: float = 1.0
    similarity_boost: float = 0.5
    window: int | None = None
    sharpness: float = 2.0
    keep: float = 0.0

    def __post_init__(self) -> None:
        if self.window is not None and (isinstance(self.window, bool) or self.window < 1):
            raise ValueError(
                f"EvidenceDecay.window must be a positive number of episodes or None; got "
                f"{self.window!r}."
            )
        if not (self.half_life > 0 and math.isfinite(self.half_life)):
            raise ValueError(
                f"EvidenceDecay.half_life must be a positive number of seconds; got "
                f"{self.half_life!r}."
            )
        if not 0.0 <= self.floor <= 1.0:
            raise ValueError(f"EvidenceDecay.floor must be in [0, 1]; got {self.floor!r}.")
        if not 0.0 <= self.keep <= self.floor:
            raise ValueError(
                f"EvidenceDecay.keep must be in [0, floor]; got {self.keep!r} (floor "
                f"{self.floor!r})."
            )
        if not (self.sharpness > 0 and math.isfinite(self.sharpness)):
            raise ValueError(
                f"EvidenceDecay.sharpness must be a positive number; got {self.sharpness!r}."
            )
        if not (self.similarity_boost >= 0 and math.isfinite(self.similarity_boost)):
            raise ValueError(
                f"EvidenceDecay.similarity_boost must be >= 0; got {self.similarity_boost!r}."
            )

    def weight(
        self,
        timestamp: float,
        now: float,
        *,
        changed_at: float | None = None,
        similarity: float = 0.0,
    ) -> float:
        """The weight of one episode at ``now`` (see the module docstring)."""
        since_change = changed_at is None or timestamp >= changed_at
        age_weight = decay_factor(
            timestamp, now, self.half_life, floor=self.floor if since_change else self.keep
        )
        sim = min(1.0, max(0.0, similarity)) if math.isfinite(similarity) else 0.0
        return age_weight * (1.0 + self.similarity_boost * sim)


DEFAULT_DECAY = EvidenceDecay()


@dataclass(frozen=True)
class EvidenceWeight:
    """One past episode as a policy counted it: its strategy, score (1 / 0.5 / 0) and weight."""

    episode_id: str
    strategy: str
    score: float
    weight: float


@dataclass(frozen=True)
class StrategyChoice:
    """The chosen strategy, its instruction text, the policy that chose it and why.

    ``evidence`` lists the weighted past episodes behind the choice, heaviest first (at most
    :data:`EVIDENCE_SHOWN`); it is empty when no evidence was weighted.
    """

    name: str
    instruction: str
    policy: str
    reason: str
    evidence: tuple[EvidenceWeight, ...] = ()

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class StrategyEvidence:
    """What a policy looks at: recalled similar episodes and the task category's profile.

    With ``decay`` set, episodes are weighted at ``current_time`` (default: the newest
    evidence's time); without it every episode counts once.
    """

    similar: tuple[PrioritizedResult, ...] = ()
    profile: SkillProfile | None = None
    decay: EvidenceDecay | None = None
    current_time: float | None = None


def complexity_strategy(task: TaskDescription) -> str:
    """The memory-free rule: complexity > 0.7 "iterative", < 0.3 "exploratory", else "iterative"."""
    if task.complexity > 0.7:
        return "iterative"
    if task.complexity < 0.3:
        return "exploratory"
    return "iterative"


def choose_strategy(
    task: TaskDescription,
    evidence: StrategyEvidence,
    *,
    policy: Policy = "greedy",
    rng: random.Random | None = None,
    pool: Mapping[str, str] | None = None,
    prior: tuple[float, float] = (1.0, 1.0),
) -> StrategyChoice:
    """Pick a strategy from ``evidence`` alone (no I/O); :func:`select_strategy` gathers it.

    ``prior`` is the Beta prior ``(alpha, beta)`` of the Thompson policy. Strategies outside
    ``pool`` (e.g. "default") are never chosen.
    """
    pool = STRATEGY_POOL if pool is None else pool
    if not pool:
        raise ValueError("The strategy pool is empty; pass pool=STRATEGY_POOL or add strategies.")
    if policy not in ("greedy", "thompson"):
        raise ValueError(f"Unknown policy {policy!r}; use 'greedy' or 'thompson'.")
    shown: tuple[EvidenceWeight, ...] = ()
    if evidence.decay is not None:
        if policy == "greedy":
            name, reason, shown = weighted_greedy(task, evidence, pool)
        else:
            name, reason, shown = weighted_thompson(
                task, evidence, pool, rng or random.Random(), _check_prior(prior))
    elif policy == "greedy":
        name, reason = _greedy(task, evidence, pool)
    else:
        name, reason = _thompson(task, evidence, pool, rng or random.Random(), prior)
    return StrategyChoice(
        name=name, instruction=pool[name], policy=policy, reason=reason, evidence=shown
    )


def select_strategy(
    task: TaskDescription,
    memory: EpisodicMemory,
    current_time: float | None = None,
    *,
    policy: Policy = "greedy",
    rng: random.Random | None = None,
    pool: Mapping[str, str] | None = None,
    similar_k: int = 10,
    prior: tuple[float, float] = (1.0, 1.0),
    decay: EvidenceDecay | None = DEFAULT_DECAY,
) -> StrategyChoice:
    """Choose a strategy for ``task`` from what ``memory`` holds (see the module docstring).

    ``similar_k`` is how many similar episodes are recalled; ``current_time`` (default: the
    memory's clock) is passed to the recall and is the "now" of the evidence weights. ``rng``
    drives the Thompson policy (default: a fresh ``random.Random()``) and ``prior`` is its Beta
    prior. ``pool`` replaces :data:`STRATEGY_POOL` (name -> instruction text). ``decay``
    weighs evidence by age and similarity (:class:`EvidenceDecay`); ``None`` counts every
    episode once, as the seed's policies did.
    """
    now = memory.now() if current_time is None else current_time
    similar: list[PrioritizedResult] = []
    if _needs_recall(task, policy, decay):
        similar = memory.recall(task, top_k=similar_k, current_time=now, category=_category(task))
    profile = memory.skill_profiles().get(task.category)
    evidence = StrategyEvidence(tuple(similar), profile, decay, now)
    return choose_strategy(task, evidence, policy=policy, rng=rng, pool=pool, prior=prior)


async def aselect_strategy(
    task: TaskDescription,
    memory: EpisodicMemory,
    current_time: float | None = None,
    *,
    policy: Policy = "greedy",
    rng: random.Random | None = None,
    pool: Mapping[str, str] | None = None,
    similar_k: int = 10,
    prior: tuple[float, float] = (1.0, 1.0),
    decay: EvidenceDecay | None = DEFAULT_DECAY,
) -> StrategyChoice:
    """Async version of :func:`select_strategy`."""
    now = memory.now() if current_time is None else current_time
    similar: list[PrioritizedResult] = []
    if _needs_recall(task, policy, decay):
        similar = await memory.arecall(
            task, top_k=similar_k, current_time=now, category=_category(task)
        )
    profile = (await memory.askill_profiles()).get(task.category)
    evidence = StrategyEvidence(tuple(similar), profile, decay, now)
    return choose_strategy(task, evidence, policy=policy, rng=rng, pool=pool, prior=prior)


def _needs_recall(task: TaskDescription, policy: str, decay: EvidenceDecay | None) -> bool:
    # Thompson on a known category only needs the category's counts, unless similar
    # episodes weigh more.
    if decay is not None and decay.similarity_boost > 0:
        return True
    return policy != "thompson" or task.category is TaskCategory.UNKNOWN


def _check_prior(prior: tuple[float, float]) -> tuple[float, float]:
    alpha, beta = prior
    if not (alpha > 0 and beta > 0):
        raise ValueError(f"prior must be two positive numbers (alpha, beta); got {prior!r}.")
    return prior


def _category(task: TaskDescription) -> TaskCategory | None:
    return None if task.category is TaskCategory.UNKNOWN else task.category


def _greedy(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str]
) -> tuple[str, str]:
    tallies: dict[str, list[float]] = {}  # name -> [attempts, successes, summed priority]
    for result in evidence.similar:
        name = result.episode.strategy_used
        if name in pool:
            t = tallies.setdefault(name, [0, 0, 0.0])
            t[0] += 1
            t[1] += result.episode.outcome is OutcomeStatus.SUCCESS
            t[2] += result.priority
    good = [(s / a, a, p, n) for n, (a, s, p) in tallies.items() if s / a > SUCCESS_THRESHOLD]
    if good:
        rate, attempts, _, name = max(good, key=lambda g: (g[0], g[1], g[2]))
        return name, (
            f"it succeeded on {round(rate * attempts)}/{int(attempts)} similar past tasks"
        )
    profile = evidence.profile
    if (
        "defensive" in pool
        and profile is not None
        and profile.attempts >= WEAK_MIN_ATTEMPTS
        and profile.success_rate < WEAK_THRESHOLD
    ):
        return "defensive", (
            f"{profile.category.value} is a weak category "
            f"(success rate {profile.success_rate:.0%} over {profile.attempts} attempts)"
        )
    return _complexity_fallback(task, pool)


def _thompson(
    task: TaskDescription,
    evidence: StrategyEvidence,
    pool: Mapping[str, str],
    rng: random.Random,
    prior: tuple[float, float],
) -> tuple[str, str]:
    alpha, beta = _check_prior(prior)
    wins = dict.fromkeys(pool, 0.0)
    losses = dict.fromkeys(pool, 0.0)
    if task.category is not TaskCategory.UNKNOWN and evidence.profile is not None:
        for name, stats in evidence.profile.strategies.items():
            if name in pool:
                won = stats.successes + 0.5 * stats.partials
                wins[name] += won
                losses[name] += stats.attempts - won
    else:
        for result in evidence.similar:
            name = result.episode.strategy_used
            if name in pool:
                won = {"success": 1.0, "partial": 0.5}.get(result.episode.outcome.value, 0.0)
                wins[name] += won
                losses[name] += 1.0 - won
    samples = {name: rng.betavariate(alpha + wins[name], beta + losses[name]) for name in pool}
    best = max(pool, key=lambda name: samples[name])
    return best, (
        f"Thompson sample {samples[best]:.2f} from {wins[best]:g} successes and "
        f"{losses[best]:g} failures on similar tasks"
    )


# --- weighted evidence (EvidenceDecay) ---


def _weighted(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str], *,
    similar_only: bool,
) -> list[EvidenceWeight]:
    """Weigh the evidence: the category's episodes (or, for an unknown category or when
    ``similar_only``, the recalled similar ones), each with :meth:`EvidenceDecay.weight`."""
    decay = evidence.decay
    assert decay is not None
    profile = evidence.profile
    changed_at = profile.changed_at if profile is not None else None
    sims = {r.episode.episode_id: r.similarity for r in evidence.similar}
    rows: list[tuple[str, float, str, float]] = []  # id, timestamp, strategy, score
    if similar_only or task.category is TaskCategory.UNKNOWN or profile is None:
        rows = [(r.episode.episode_id, r.episode.timestamp, r.episode.strategy_used,
                 outcome_score(r.episode.outcome)) for r in evidence.similar]
    else:
        rows = [(r.episode_id, r.timestamp, r.strategy, r.score) for r in profile.records]
    if not rows:
        return []
    if decay.window is not None:
        kept: Counter[str] = Counter()
        newest_first = sorted(rows, key=lambda row: row[1], reverse=True)
        rows = []
        for row in newest_first:
            kept[row[2]] += 1
            if kept[row[2]] <= decay.window:
                rows.append(row)
    now = evidence.current_time
    if now is None:
        now = max(row[1] for row in rows)
    return [
        EvidenceWeight(episode_id, strategy, score, decay.weight(
            timestamp, now, changed_at=changed_at, similarity=sims.get(episode_id, 0.0)))
        for episode_id, timestamp, strategy, score in rows
        if strategy in pool
    ]


def _heaviest(weights: list[EvidenceWeight], strategy: str) -> tuple[EvidenceWeight, ...]:
    mine = sorted((w for w in weights if w.strategy == strategy),
                  key=lambda w: (-w.weight, w.episode_id))
    return tuple(mine[:EVIDENCE_SHOWN])


def _listing(shown: tuple[EvidenceWeight, ...]) -> str:
    return ", ".join(f"{w.episode_id} {w.weight:.2f}" for w in shown[:5])


def weighted_greedy(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str]
) -> tuple[str, str, tuple[EvidenceWeight, ...]]:
    """The greedy hierarchy over weighted evidence: weighted success rates, not counts."""
    similar = _weighted(task, evidence, pool, similar_only=True)
    # name -> [weight, weighted successes, attempts, successes]
    totals: dict[str, list[float]] = {}
    for w in similar:
        t = totals.setdefault(w.strategy, [0.0, 0.0, 0, 0])
        t[0] += w.weight
        t[1] += w.weight * (w.score == 1.0)
        t[2] += 1
        t[3] += w.score == 1.0
    good = [(won / total, total, name) for name, (total, won, _, _) in totals.items()
            if total > 0 and won / total > SUCCESS_THRESHOLD]
    if good:
        rate, total, name = max(good)
        _, _, attempts, successes = totals[name]
        shown = _heaviest(similar, name)
        return name, (
            f"it succeeded on {successes:g}/{attempts:g} similar past tasks, weighted rate "
            f"{rate:.0%} ({rate * total:.2f} of weight {total:.2f}; heaviest: {_listing(shown)})"
        ), shown
    profile = evidence.profile
    if profile is not None and profile.changed_at is not None:
        return _next_candidate(task, evidence, pool, profile)
    if "defensive" in pool and profile is not None and profile.attempts >= WEAK_MIN_ATTEMPTS:
        everything = _weighted(task, evidence, {n: "" for n in profile.strategies},
                               similar_only=False)
        total = sum(w.weight for w in everything)
        rate = sum(w.weight for w in everything if w.score == 1.0) / total if total else 0.0
        if total > 0 and rate < WEAK_THRESHOLD:
            shown = tuple(sorted(everything, key=lambda w: (-w.weight, w.episode_id)))
            return "defensive", (
                f"{profile.category.value} is a weak category (weighted success rate "
                f"{rate:.0%} over {profile.attempts} attempts)"
            ), shown[:EVIDENCE_SHOWN]
    return (*_complexity_fallback(task, pool), ())


def _next_candidate(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str],
    profile: SkillProfile,
) -> tuple[str, str, tuple[EvidenceWeight, ...]]:
    """After a detected change: the strategy with the best weighted success estimate
    ``(successes + 1) / (weight + 2)`` on the category, so a strategy without recent evidence
    (estimate 0.5) is tried before one that failed since the change."""
    weights = _weighted(task, evidence, pool, similar_only=False)
    won = dict.fromkeys(pool, 0.0)
    total = dict.fromkeys(pool, 0.0)
    for w in weights:
        won[w.strategy] += w.weight * w.score
        total[w.strategy] += w.weight
    estimate = {name: (won[name] + 1.0) / (total[name] + 2.0) for name in pool}
    name = max(pool, key=lambda n: estimate[n])  # ties: the pool's order
    shown = _heaviest(weights, name)
    return name, (
        f"{_change_note(profile)}; next candidate by "
        f"weighted estimate {estimate[name]:.2f} ({won[name]:.2f} successes of weight "
        f"{total[name]:.2f}{'; heaviest: ' + _listing(shown) if shown else ''})"
    ), shown


def _change_note(profile: SkillProfile) -> str:
    why = (f"{profile.changed_strategy}'s own success rate dropped"
           if profile.changed_strategy is not None else "its success rate dropped")
    return f"{profile.category.value} changed at t={profile.changed_at:g} ({why})"


def weighted_thompson(
    task: TaskDescription,
    evidence: StrategyEvidence,
    pool: Mapping[str, str],
    rng: random.Random,
    prior: tuple[float, float],
) -> tuple[str, str, tuple[EvidenceWeight, ...]]:
    """Thompson sampling from weighted successes (``weight * score``) and failures."""
    alpha, beta = prior
    weights = _weighted(task, evidence, pool, similar_only=False)
    wins = dict.fromkeys(pool, 0.0)
    losses = dict.fromkeys(pool, 0.0)
    for w in weights:
        wins[w.strategy] += w.weight * w.score
        losses[w.strategy] += w.weight * (1.0 - w.score)
    k = evidence.decay.sharpness if evidence.decay is not None else 1.0
    samples = {name: rng.betavariate(alpha + k * wins[name], beta + k * losses[name])
               for name in pool}
    best = max(pool, key=lambda name: samples[name])
    profile = evidence.profile
    changed = ""
    if profile is not None and profile.changed_at is not None:
        changed = f"; {_change_note(profile)}, older evidence fades"
    return best, (
        f"Thompson sample {samples[best]:.2f} from weighted {wins[best]:.2f} successes and "
        f"{losses[best]:.2f} failures{'' if k == 1 else f', each counted {k:g} times'}{changed}"
    ), _heaviest(weights, best)


def _complexity_fallback(task: TaskDescription, pool: Mapping[str, str]) -> tuple[str, str]:
    """The seed's last rule, when no past evidence convinces: a strategy by complexity."""
    name = complexity_strategy(task)
    if name not in pool:
        name = next(iter(pool))
    return name, f"no convincing past evidence; complexity {task.complexity:.2f} rule"
