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

import random
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from .priority import PrioritizedResult
from .records import OutcomeStatus, TaskCategory, TaskDescription
from .skills import SkillProfile

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


@dataclass(frozen=True)
class StrategyChoice:
    """The chosen strategy, its instruction text, the policy that chose it and why."""

    name: str
    instruction: str
    policy: str
    reason: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class StrategyEvidence:
    """What a policy looks at: recalled similar episodes and the task category's profile."""

    similar: tuple[PrioritizedResult, ...] = ()
    profile: SkillProfile | None = None


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
    if policy == "greedy":
        name, reason = _greedy(task, evidence, pool)
    elif policy == "thompson":
        name, reason = _thompson(task, evidence, pool, rng or random.Random(), prior)
    else:
        raise ValueError(f"Unknown policy {policy!r}; use 'greedy' or 'thompson'.")
    return StrategyChoice(name=name, instruction=pool[name], policy=policy, reason=reason)


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
) -> StrategyChoice:
    """Choose a strategy for ``task`` from what ``memory`` holds (see the module docstring).

    ``similar_k`` is how many similar episodes the greedy policy recalls; ``current_time``
    is passed to the recall. ``rng`` drives the Thompson policy (default: a fresh
    ``random.Random()``) and ``prior`` is its Beta prior. ``pool`` replaces
    :data:`STRATEGY_POOL` (name -> instruction text).
    """
    similar: list[PrioritizedResult] = []
    if _needs_recall(task, policy):
        similar = memory.recall(
            task, top_k=similar_k, current_time=current_time, category=_category(task)
        )
    profile = memory.skill_profiles().get(task.category)
    evidence = StrategyEvidence(tuple(similar), profile)
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
) -> StrategyChoice:
    """Async version of :func:`select_strategy`."""
    similar: list[PrioritizedResult] = []
    if _needs_recall(task, policy):
        similar = await memory.arecall(
            task, top_k=similar_k, current_time=current_time, category=_category(task)
        )
    profile = (await memory.askill_profiles()).get(task.category)
    evidence = StrategyEvidence(tuple(similar), profile)
    return choose_strategy(task, evidence, policy=policy, rng=rng, pool=pool, prior=prior)


def _needs_recall(task: TaskDescription, policy: str) -> bool:
    # Thompson on a known category only needs the category's counts.
    return policy != "thompson" or task.category is TaskCategory.UNKNOWN


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
    name = complexity_strategy(task)
    if name not in pool:
        name = next(iter(pool))
    return name, f"no convincing past evidence; complexity {task.complexity:.2f} rule"


def _thompson(
    task: TaskDescription,
    evidence: StrategyEvidence,
    pool: Mapping[str, str],
    rng: random.Random,
    prior: tuple[float, float],
) -> tuple[str, str]:
    alpha, beta = prior
    if not (alpha > 0 and beta > 0):
        raise ValueError(f"prior must be two positive numbers (alpha, beta); got {prior!r}.")
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
