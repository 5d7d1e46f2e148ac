"""The strategy policies themselves: the seed's greedy hierarchy and Thompson sampling, each
over every episode counted once or over weighted evidence (:mod:`.evidence`).

All are pure functions of a :class:`StrategyEvidence`; :mod:`.strategy` gathers the evidence
and wraps their answer in a :class:`~.strategy.StrategyChoice`.

>>> from .records import TaskCategory, TaskDescription
>>> complexity_strategy(TaskDescription("Rename a variable", TaskCategory.REFACTORING, 0.1))
'exploratory'
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from .evidence import (
    EvidenceWeight,
    StrategyEvidence,
    change_time,
    heaviest,
    listing,
    weigh_evidence,
)
from .records import OutcomeStatus, TaskCategory, TaskDescription, outcome_score
from .skills import SkillProfile

SUCCESS_THRESHOLD = 0.6
"""A strategy above this success rate on similar tasks is reused."""
WEAK_THRESHOLD = 0.5
"""A category below this success rate (over :data:`WEAK_MIN_ATTEMPTS`) is weak."""
WEAK_MIN_ATTEMPTS = 3


def complexity_strategy(task: TaskDescription) -> str:
    """The memory-free rule: complexity > 0.7 "iterative", < 0.3 "exploratory", else "iterative"."""
    return "exploratory" if task.complexity < 0.3 else "iterative"


def check_prior(prior: tuple[float, float]) -> tuple[float, float]:
    """Return ``prior`` if both Beta parameters are positive, else raise naming the fix."""
    alpha, beta = prior
    if not (alpha > 0 and beta > 0):
        raise ValueError(f"prior must be two positive numbers (alpha, beta); got {prior!r}.")
    return prior


def greedy(
    task: TaskDescription, evidence: StrategyEvidence, pool: Mapping[str, str]
) -> tuple[str, str]:
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
        )
    profile = evidence.profile
    if "defensive" in pool and profile is not None and (
        profile.attempts >= WEAK_MIN_ATTEMPTS and profile.success_rate < WEAK_THRESHOLD
    ):
        return "defensive", (
            f"{profile.category.value} is a weak category "
            f"(success rate {profile.success_rate:.0%} over {profile.attempts} attempts)"
        )
    return _complexity_fallback(task, pool)


def thompson(
    task: TaskDescription,
    evidence: StrategyEvidence,
    pool: Mapping[str, str],
    rng: random.Random,
    prior: tuple[float, float],
) -> tuple[str, str]:
    """The seed's Thompson sampling, every episode of the category counted once."""
    check_prior(prior)
    counted: list[tuple[str, float, float]]  # strategy, successes, attempts
    if task.category is not TaskCategory.UNKNOWN and evidence.profile is not None:
        counted = [(name, stats.successes + 0.5 * stats.partials, stats.attempts)
                   for name, stats in evidence.profile.strategies.items()]
    else:
        counted = [(r.episode.strategy_used, outcome_score(r.episode.outcome), 1.0)
                   for r in evidence.similar]
    wins, losses = _sums(pool, ((name, won, attempts - won) for name, won, attempts in counted))
    samples = _draw(pool, rng, prior, wins, losses)
    best = max(pool, key=lambda name: samples[name])
    return best, (
        f"Thompson sample {samples[best]:.2f} from {wins[best]:g} successes and "
        f"{losses[best]:g} failures on similar tasks"
    )


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
    return (*_complexity_fallback(task, pool), ())


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


def weighted_thompson(
    task: TaskDescription,
    evidence: StrategyEvidence,
    pool: Mapping[str, str],
    rng: random.Random,
    prior: tuple[float, float],
) -> tuple[str, str, tuple[EvidenceWeight, ...]]:
    """Thompson sampling from weighted successes (``weight * score``) and failures."""
    weights = weigh_evidence(task, evidence, pool, similar_only=False)
    wins, losses = _sums(pool, ((w.strategy, w.weight * w.score, w.weight * (1.0 - w.score))
                                for w in weights))
    k = evidence.decay.sharpness if evidence.decay is not None else 1.0
    samples = _draw(pool, rng, prior, wins, losses, k)
    profile = evidence.profile
    untried = _untried_since_change(task, evidence, pool)
    best = max(untried or pool, key=lambda name: samples[name])
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


def _draw(
    pool: Mapping[str, str], rng: random.Random, prior: tuple[float, float],
    wins: dict[str, float], losses: dict[str, float], k: float = 1.0,
) -> dict[str, float]:
    """One Thompson sample per strategy from its Beta posterior (counts times ``k``)."""
    alpha, beta = prior
    return {name: rng.betavariate(alpha + k * wins[name], beta + k * losses[name])
            for name in pool}


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


def _complexity_fallback(task: TaskDescription, pool: Mapping[str, str]) -> tuple[str, str]:
    """The seed's last rule, when no past evidence convinces: a strategy by complexity."""
    name = complexity_strategy(task)
    if name not in pool:
        name = next(iter(pool))
    return name, f"no convincing past evidence; complexity {task.complexity:.2f} rule"
