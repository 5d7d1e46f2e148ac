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
described in :mod:`.evidence`; the policies live in :mod:`.policies`, the change detector in
:mod:`.change`.

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
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from .._effects import Plan, call, twins
from .evidence import DEFAULT_DECAY, EvidenceDecay, EvidenceWeight, StrategyEvidence
from .policies import (
    check_prior,
    complexity_strategy,
    greedy,
    thompson,
    weighted_greedy,
    weighted_thompson,
)
from .priority import PrioritizedResult
from .records import TaskCategory, TaskDescription

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
                task, evidence, pool, rng or evidence_rng(task, evidence, pool),
                check_prior(prior))
    elif policy == "greedy":
        name, reason = greedy(task, evidence, pool)
    else:
        name, reason = thompson(task, evidence, pool, rng or evidence_rng(task, evidence, pool),
                                prior)
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
