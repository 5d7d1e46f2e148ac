"""Strategy selection: which way of working to try on a new task, learnt from past episodes.

Two policies choose from a pool of named strategies, each with an instruction text for the LLM:

- ``"thompson"`` (the default): Thompson sampling. Each strategy's success probability on the
  task's category gets a Beta posterior from its past outcomes there (a partial success counts
  half); one sample is drawn per strategy and the highest wins, so untried strategies get
  tried and the best one is chosen more and more often; after a detected change it explores
  again.
- ``"greedy"``: the seed's three-level hierarchy. (1) A strategy that succeeded on similar tasks
  (success rate above 0.6 among the recalled similar episodes) is reused; (2) otherwise a weak
  category (success rate below 0.5 over at least 3 attempts) gets ``"defensive"``; (3) otherwise
  the complexity rule (:func:`complexity_strategy`). It can lock in on the first strategy that
  worked. After a flagged change, when no similar task's strategy convinces, it tries the next
  candidate by weighted estimate instead of the complexity rule.

Without an ``rng`` the Thompson draws come from a generator seeded from the task and the
evidence (:func:`evidence_rng`), so the same memory and task give the same choice in every run
and process. Pass ``rng=random.Random(seed)`` for one seeded stream of draws.

"Similar tasks" are those :meth:`EpisodicMemory.recall` returns for the task's description,
restricted to the task's category unless it is ``UNKNOWN``. Evidence weighting (``decay``) is
described in :mod:`.evidence`, the change detector in :mod:`.change`.

>>> import random
>>> from langgraph.store.memory import InMemoryStore
>>> from langgraph_episodic.episodic.memory import EpisodicMemory
>>> from langgraph_episodic.episodic.records import TaskCategory, TaskDescription
>>> memory = EpisodicMemory(InMemoryStore(), ("episodes", "doc"))
>>> task = TaskDescription("Design the plugin API", TaskCategory.ARCHITECTURE, complexity=0.9)
>>> select_strategy(task, memory, policy="greedy").name
'iterative'
>>> choice = select_strategy(task, memory)
>>> choice.policy, choice.name in STRATEGY_POOL, choice == select_strategy(task, memory)
('thompson', True, True)
>>> select_strategy(task, memory, rng=random.Random(7)).name in STRATEGY_POOL
True
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from .._effects import Plan, call, twins
from .evidence import (
    DEFAULT_DECAY,
    EvidenceDecay,
    EvidenceWeight,
    StrategyEvidence,
    change_time,
    heaviest,
    listing,
    weigh_evidence,
)
from .priority import PrioritizedResult
from .records import OutcomeStatus, TaskCategory, TaskDescription, require
from .skills import SkillProfile

if TYPE_CHECKING:
    from .memory import EpisodicMemory

__all__ = [
    "DEFAULT_POLICY",
    "STRATEGY_POOL",
    "EvidenceDecay",
    "EvidenceWeight",
    "Policy",
    "StrategyChoice",
    "StrategyEvidence",
    "aselect_strategy",
    "choose_strategy",
    "complexity_strategy",
    "evidence_rng",
    "select_strategy",
]

Policy = Literal["greedy", "thompson"]

DEFAULT_POLICY: Policy = "thompson"
"""The policy :func:`select_strategy` and the strategy node use unless told otherwise."""
SUCCESS_THRESHOLD = 0.6
"""A strategy above this success rate on similar tasks is reused."""
WEAK_THRESHOLD = 0.5
"""A category below this success rate (over :data:`WEAK_MIN_ATTEMPTS`) is weak."""
WEAK_MIN_ATTEMPTS = 3
COUNT_ONCE = EvidenceDecay(keep=1.0, sharpness=1.0, retry=False)
"""Weighs every episode 1, so the Thompson policy without ``decay`` counts each one once."""


STRATEGY_POOL: Mapping[str, str] = MappingProxyType({
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
})


@dataclass(frozen=True)
class StrategyChoice:
    """The chosen strategy, its instruction text, the policy that chose it and why.

    ``evidence`` lists the weighted past episodes behind the choice, heaviest first (at most
    :data:`~.evidence.EVIDENCE_SHOWN`); it is empty when no evidence was weighted.
    """

    name: str
    instruction: str
    policy: str
    reason: str
    evidence: tuple[EvidenceWeight, ...] = ()

    def __str__(self) -> str:
        return self.name


def choose_strategy(
    task: TaskDescription,
    evidence: StrategyEvidence,
    *,
    policy: Policy = DEFAULT_POLICY,
    rng: random.Random | None = None,
    pool: Mapping[str, str] | None = None,
    prior: tuple[float, float] = (1.0, 1.0),
) -> StrategyChoice:
    """Pick a strategy from ``evidence`` alone (no I/O); :func:`select_strategy` gathers it.

    ``prior`` is the Beta prior ``(alpha, beta)`` of the Thompson policy and ``rng`` its
    generator (default: :func:`evidence_rng`, so the same evidence gives the same choice).
    Strategies outside ``pool`` (e.g. "default") are never chosen.
    """
    pool = STRATEGY_POOL if pool is None else pool
    require(bool(pool), "The strategy pool is empty; pass pool=STRATEGY_POOL or add strategies.")
    require(policy in ("greedy", "thompson"),
            f"Unknown policy {policy!r}; use 'greedy' or 'thompson'.")
    if policy == "thompson":
        rng = rng or evidence_rng(task, evidence, pool)
        name, reason, shown = thompson(task, evidence, pool, rng, check_prior(prior))
    else:
        name, reason, shown = (greedy if evidence.decay is None else weighted_greedy)(
            task, evidence, pool)
    return StrategyChoice(name, pool[name], policy, reason, shown)


def _select(
    task: TaskDescription,
    memory: EpisodicMemory,
    current_time: float | None = None,
    *,
    policy: Policy = DEFAULT_POLICY,
    rng: random.Random | None = None,
    pool: Mapping[str, str] | None = None,
    similar_k: int = 10,
    prior: tuple[float, float] = (1.0, 1.0),
    decay: EvidenceDecay | None = DEFAULT_DECAY,
) -> Plan[StrategyChoice]:
    """Choose a strategy for ``task`` from what ``memory`` holds (see the module docstring).

    ``similar_k`` is how many similar episodes are recalled; ``current_time`` (default: the
    memory's clock) is the "now" of the recall and of the evidence weights. ``pool`` replaces
    :data:`STRATEGY_POOL` (name -> instruction text); ``rng`` and ``prior`` (the Beta prior)
    drive the Thompson policy. ``decay`` weighs evidence by age and similarity
    (:class:`EvidenceDecay`); ``None`` counts every episode once, as the seed's policies did.
    """
    now = memory.now() if current_time is None else current_time
    similar: list[PrioritizedResult] = []
    unknown = task.category is TaskCategory.UNKNOWN
    # Thompson on a known category needs only its counts, unless similar episodes weigh more
    if (decay is not None and decay.similarity_boost > 0) or policy != "thompson" or unknown:
        similar = yield call(memory.recall, memory.arecall, task, top_k=similar_k,
                             current_time=now, category=None if unknown else task.category)
    profiles = yield call(memory.skill_profiles, memory.askill_profiles)
    evidence = StrategyEvidence(tuple(similar), profiles.get(task.category), decay, now)
    return choose_strategy(task, evidence, policy=policy, rng=rng, pool=pool, prior=prior)


select_strategy, aselect_strategy = twins(_select, "select_strategy")


def evidence_rng(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str]
) -> random.Random:
    """The Thompson policy's generator when no ``rng`` is given: seeded from the task, the pool
    and what the evidence holds (the category's counts and the recalled episodes' ids).

    Each recorded episode changes the counts and so the draws. The evidence's clock is left
    out, so a run whose clock is the wall time still repeats its draws.
    """
    profile = evidence.profile
    counts = (profile.attempts, profile.successes, profile.partials) if profile else (0, 0, 0)
    payload = json.dumps([task.to_dict(), list(pool), counts,
                          [r.episode.episode_id for r in evidence.similar]],
                         sort_keys=True, ensure_ascii=False)
    return random.Random(payload)


# --- the policies: pure functions of the evidence ---


def complexity_strategy(task: TaskDescription) -> str:
    """The memory-free rule: complexity > 0.7 "iterative", < 0.3 "exploratory", else "iterative".

    >>> complexity_strategy(TaskDescription("Rename a variable", TaskCategory.REFACTORING, 0.1))
    'exploratory'
    """
    return "exploratory" if task.complexity < 0.3 else "iterative"


def check_prior(prior: tuple[float, float]) -> tuple[float, float]:
    """Return ``prior`` if both Beta parameters are positive, else raise naming the fix."""
    alpha, beta = prior
    require(alpha > 0 and beta > 0,
            f"prior must be two positive numbers (alpha, beta); got {prior!r}.")
    return prior


def greedy(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str]
) -> tuple[str, str, tuple[EvidenceWeight, ...]]:
    """The seed's three-level hierarchy, every recalled episode counted once."""
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
        ), ()
    profile = evidence.profile
    if "defensive" in pool and profile is not None and (
        profile.attempts >= WEAK_MIN_ATTEMPTS and profile.success_rate < WEAK_THRESHOLD
    ):
        return "defensive", (
            f"{profile.category.value} is a weak category "
            f"(success rate {profile.success_rate:.0%} over {profile.attempts} attempts)"
        ), ()
    return _complexity_fallback(task, pool)


def weighted_greedy(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str]
) -> tuple[str, str, tuple[EvidenceWeight, ...]]:
    """The greedy hierarchy over weighted evidence: weighted success rates, not counts."""
    similar = weigh_evidence(task, evidence, pool, similar_only=True)
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
        shown = heaviest(similar, name)
        return name, (
            f"it succeeded on {successes:g}/{attempts:g} similar past tasks, weighted rate "
            f"{rate:.0%} ({rate * total:.2f} of weight {total:.2f}; heaviest: {listing(shown)})"
        ), shown
    profile = evidence.profile
    if profile is not None and profile.changed_at is not None:
        return _next_candidate(task, evidence, pool, profile)
    if "defensive" in pool and profile is not None and profile.attempts >= WEAK_MIN_ATTEMPTS:
        everything = weigh_evidence(task, evidence, {n: "" for n in profile.strategies},
                               similar_only=False)
        total = sum(w.weight for w in everything)
        rate = sum(w.weight for w in everything if w.score == 1.0) / total if total else 0.0
        if total > 0 and rate < WEAK_THRESHOLD:
            return "defensive", (
                f"{profile.category.value} is a weak category (weighted success rate "
                f"{rate:.0%} over {profile.attempts} attempts)"
            ), heaviest(everything)
    return _complexity_fallback(task, pool)


def _next_candidate(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str],
    profile: SkillProfile,
) -> tuple[str, str, tuple[EvidenceWeight, ...]]:
    """After a detected change: the strategy with the best weighted success estimate
    ``(successes + 1) / (weight + 2)`` on the category, so a strategy without recent evidence
    (estimate 0.5) is tried before one that failed since the change."""
    weights = weigh_evidence(task, evidence, pool, similar_only=False)
    won, total = _sums(pool, ((w.strategy, w.weight * w.score, w.weight) for w in weights))
    estimate = {name: (won[name] + 1.0) / (total[name] + 2.0) for name in pool}
    name = max(pool, key=lambda n: estimate[n])  # ties: the pool's order
    shown = heaviest(weights, name)
    return name, (
        f"{_change_note(profile)}; next candidate by "
        f"weighted estimate {estimate[name]:.2f} ({won[name]:.2f} successes of weight "
        f"{total[name]:.2f}{'; heaviest: ' + listing(shown) if shown else ''})"
    ), shown


def _change_note(profile: SkillProfile) -> str:
    why = (f"{profile.changed_strategy}'s own success rate dropped"
           if profile.changed_strategy is not None else "its success rate dropped")
    return f"{profile.category.value} changed at t={profile.changed_at:g} ({why})"


def thompson(
    task: TaskDescription,
    evidence: StrategyEvidence,
    pool: Mapping[str, str],
    rng: random.Random,
    prior: tuple[float, float],
) -> tuple[str, str, tuple[EvidenceWeight, ...]]:
    """Thompson sampling from weighted successes (``weight * score``) and failures; without
    ``decay`` every episode counts once (weight 1), as in the seed."""
    decay = evidence.decay or COUNT_ONCE
    weights = weigh_evidence(task, replace(evidence, decay=decay), pool, similar_only=False)
    wins, losses = _sums(pool, ((w.strategy, w.weight * w.score, w.weight * (1.0 - w.score))
                                for w in weights))
    k = decay.sharpness
    alpha, beta = prior
    samples = {name: rng.betavariate(alpha + k * wins[name], beta + k * losses[name])
               for name in pool}
    untried = _untried_since_change(task, evidence, pool)
    best = max(untried or pool, key=lambda name: samples[name])
    if evidence.decay is None:
        return best, (
            f"Thompson sample {samples[best]:.2f} from {wins[best]:g} successes and "
            f"{losses[best]:g} failures on similar tasks"
        ), ()
    profile = evidence.profile
    changed = ""
    if profile is not None and profile.changed_at is not None:
        changed = f"; {_change_note(profile)}, older evidence fades"
        if untried:
            changed += f"; {len(untried)} strategies not tried since then are tried first"
    return best, (
        f"Thompson sample {samples[best]:.2f} from weighted {wins[best]:.2f} successes and "
        f"{losses[best]:.2f} failures{'' if k == 1 else f', each counted {k:g} times'}{changed}"
    ), heaviest(weights, best)


def _sums(
    pool: Mapping[str, str], rows: Iterable[tuple[str, float, float]]
) -> tuple[dict[str, float], dict[str, float]]:
    """Per strategy of ``pool``, the sums of the two numbers of its ``(strategy, a, b)`` rows
    (0.0 without any; rows of other strategies left out)."""
    first, second = dict.fromkeys(pool, 0.0), dict.fromkeys(pool, 0.0)
    for name, a, b in rows:
        if name in pool:
            first[name] += a
            second[name] += b
    return first, second


def _untried_since_change(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str]
) -> list[str]:
    """With ``retry``: the pool's strategies without an episode of the category since its
    last change (the flagged strategy counts as tried); else, or without a change, []."""
    decay, profile = evidence.decay, evidence.profile
    if decay is None or not decay.retry or profile is None or task.category is TaskCategory.UNKNOWN:
        return []
    start = change_time(profile, decay)
    if start is None:
        return []
    tried = {r.strategy for r in profile.records if r.timestamp >= start}
    tried.add(profile.changed_strategy or "")
    return [name for name in pool if name not in tried]


def _complexity_fallback(
    task: TaskDescription, pool: Mapping[str, str]
) -> tuple[str, str, tuple[EvidenceWeight, ...]]:
    """The seed's last rule, when no past evidence convinces: a strategy by complexity."""
    name = complexity_strategy(task)
    if name not in pool:
        name = next(iter(pool))
    return name, f"no convincing past evidence; complexity {task.complexity:.2f} rule", ()
