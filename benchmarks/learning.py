"""Does episodic memory make an agent better? A simulated learning benchmark.

The task stream is SIMULATED, not real LLM runs: each task has a category and a complexity drawn
at random; every category has a hidden best strategy; an attempt succeeds with the hidden
success rate of the strategy used (lowered a little for complex tasks). One episode per hour.
Every policy faces the same stream (same tasks, same random draws):

- ``no-memory``: the complexity rule alone (``complexity_strategy``);
- ``greedy`` / ``thompson``: the seed's policies, every episode counted once
  (``select_strategy(..., decay=None)``);
- ``greedy-decay`` / ``thompson-decay``: the same policies with the defaults
  (``EvidenceDecay()``: age with a two-day half-life and floor 1.0 since the category's last
  detected change, no similarity boost, Thompson posteriors of sharpness 2, after a flag
  every strategy not tried since it tried once (``retry``); and
  ``ChangeDetection()``: the category's rate test and a CUSUM on each strategy's outcomes);
- ``thompson-v2``: the second pass's default (a similarity boost of 0.5, no retry:
  ``EvidenceDecay(similarity_boost=0.5, retry=False)``);
- ``thompson-v1``: the first weighted policy: the newest 20 episodes
  of each strategy, sharpness 1, and only the category's rate test
  (``EvidenceDecay(window=20, sharpness=1.0, similarity_boost=0.5, retry=False)``,
  ``ChangeDetection(strategy_drop=None)``);
- ``thompson-disc``: plain discounted Thompson sampling
  (``EvidenceDecay(floor=0.0, sharpness=1.0)``);
- ``oracle``: always the hidden best strategy of the moment.

Worlds (``--world``): ``stable``; ``abrupt`` (the best strategy of every category re-drawn
halfway); ``abrupt3`` (re-drawn at 25%, 50% and 75%); ``gradual`` (success rates slide linearly
from one world to another between 30% and 70% of the stream); ``partial`` (halfway, one or two
categories get a new best strategy, the others keep theirs). For each it prints success over
the last 20% of episodes as a share of the oracle's, and how many episodes after each change
(for ``gradual``: after the drift ends) a policy needs to get back to 90% of the oracle: the
first episode from which its success over the next ``--window`` episodes, averaged over the
seeds, is at least 90% of the oracle's over the same episodes ("-" never, before the next
change); in brackets the same counted in the affected categories' own episodes (those whose
best strategy changed; a window of ``--window / 5`` of their episodes, averaged over the
seeds and affected categories); and how many changes the skill profiles flagged per seed (on ``stable`` every flag is
a false alarm). Default store: ``InMemoryStore`` with ``HashEmbeddings(64)`` (fast; ``--store
chroma`` uses ``ChromaStore.ephemeral`` instead; ``--store none`` skips the store and the
recall, for tuning: the policies see only the skill counts).

    python benchmarks/learning.py                       # 5 worlds x 1000 episodes x 10 seeds
    python benchmarks/learning.py --world abrupt --episodes 300 --seeds 2 --plot curves.svg
    python benchmarks/learning.py --world abrupt --policies thompson-decay --draws evidence

``--draws`` picks the Thompson policies' random draws: one seeded generator per seed (default),
another one (``--draws NAME``), or none (``evidence``: each choice seeded from the task and the
evidence, what ``select_strategy`` does without an ``rng``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from langgraph.store.base import BaseStore, IndexConfig
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.episodic import (
    STRATEGY_POOL,
    ChangeDetection,
    Episode,
    EpisodicMemory,
    EvidenceDecay,
    Feedback,
    LearningSnapshot,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
    complexity_strategy,
    compute_learning_curve,
    select_strategy,
)
from langgraph_episodic.episodic.skills import SkillTally
from langgraph_episodic.episodic.strategy import Policy, StrategyEvidence, choose_strategy

CATEGORIES = [c for c in TaskCategory if c is not TaskCategory.UNKNOWN]
STRATEGIES = list(STRATEGY_POOL)
DECAY: dict[str, EvidenceDecay | None] = {
    "greedy": None,
    "thompson": None,
    "greedy-decay": EvidenceDecay(),
    "thompson-decay": EvidenceDecay(),
    "thompson-v2": EvidenceDecay(similarity_boost=0.5, retry=False),
    "thompson-v1": EvidenceDecay(window=20, sharpness=1.0, similarity_boost=0.5, retry=False),
    "thompson-disc": EvidenceDecay(floor=0.0, sharpness=1.0, similarity_boost=0.5, retry=False),
}
CHANGE: dict[str, ChangeDetection | None] = {
    "thompson-v1": ChangeDetection(strategy_drop=None),
}
"""Change detection per policy (default: ``ChangeDetection()``)."""
POLICIES = ("no-memory", *DECAY, "oracle")
WORLDS = ("stable", "abrupt", "abrupt3", "gradual", "partial")
HOUR = 3600.0

_SUBJECTS = ["parser", "cache", "login flow", "billing job", "CSV export", "scheduler",
             "search index", "upload handler", "config loader", "rate limiter"]
_TEMPLATES = {
    TaskCategory.CODE_GENERATION: "Write a new {s} module with its public API",
    TaskCategory.DEBUGGING: "Find and fix the crash in the {s}",
    TaskCategory.REFACTORING: "Refactor the {s} into smaller functions without changing behaviour",
    TaskCategory.TESTING: "Add unit tests covering the edge cases of the {s}",
    TaskCategory.ARCHITECTURE: "Design how the {s} should be split into services",
}

Rates = dict[TaskCategory, dict[str, float]]


@dataclass(frozen=True)
class World:
    """The hidden truth of one seed: each category's strategy success rates at each episode.

    ``phases`` are rate tables; ``changes`` the episodes where the next one takes over (abrupt),
    or with ``gradual`` the (start, end) of a linear slide from the first table to the second.
    """

    phases: tuple[Rates, ...]
    changes: tuple[int, ...] = ()
    gradual: bool = False

    def rates(self, i: int, category: TaskCategory) -> dict[str, float]:
        if self.gradual:
            start, end = self.changes
            a = min(1.0, max(0.0, (i - start) / (end - start)))
            old, new = self.phases[0][category], self.phases[1][category]
            return {s: (1 - a) * old[s] + a * new[s] for s in STRATEGIES}
        phase = sum(i >= c for c in self.changes)
        return self.phases[phase][category]

    def best(self, i: int, category: TaskCategory) -> str:
        rates = self.rates(i, category)
        return max(rates, key=lambda s: rates[s])

    def success_probability(self, i: int, task: TaskDescription, strategy: str) -> float:
        base = self.rates(i, task.category)[strategy]
        return min(0.98, max(0.02, base - 0.2 * (task.complexity - 0.5)))

    def recovery_points(self) -> tuple[int, ...]:
        """Where recovery is measured from: each change (the end of a gradual drift)."""
        return (self.changes[1],) if self.gradual else self.changes

    def affected(self, k: int) -> tuple[TaskCategory, ...]:
        """The categories whose best strategy differs after the ``k``-th recovery point."""
        before = self.phases[k] if not self.gradual else self.phases[0]
        after = self.phases[k + 1] if not self.gradual else self.phases[1]
        return tuple(c for c in CATEGORIES
                     if max(before[c], key=lambda s: before[c][s])
                     != max(after[c], key=lambda s: after[c][s]))


@dataclass(frozen=True)
class SimTask:
    task: TaskDescription
    draw: float  # uniform in [0, 1): success when draw < success probability


def make_rates(rng: random.Random) -> Rates:
    """A hidden best strategy per category (rate 0.75-0.90); the others 0.20-0.60."""
    rates: Rates = {}
    for category in CATEGORIES:
        best = rng.choice(STRATEGIES)
        rates[category] = {
            s: rng.uniform(0.75, 0.90) if s == best else rng.uniform(0.20, 0.60)
            for s in STRATEGIES
        }
    return rates


def make_world(kind: str, seed: int, n: int) -> World:
    first = make_rates(random.Random(f"world-{seed}"))
    if kind == "stable":
        return World((first,))
    if kind == "partial":  # one or two categories get a new best strategy halfway
        rng = random.Random(f"world-{seed}-partial")
        later = dict(first)
        for category in rng.sample(CATEGORIES, rng.choice((1, 2))):
            old = max(first[category], key=lambda s: first[category][s])
            best = rng.choice([s for s in STRATEGIES if s != old])
            later[category] = {s: rng.uniform(0.75, 0.90) if s == best
                               else rng.uniform(0.20, 0.60) for s in STRATEGIES}
        return World((first, later), (n // 2,))
    if kind == "gradual":
        later = make_rates(random.Random(f"world-{seed}-1"))
        return World((first, later), (int(n * 0.3), int(n * 0.7)), gradual=True)
    points = (n // 2,) if kind == "abrupt" else (n // 4, n // 2, 3 * n // 4)
    later_phases = tuple(make_rates(random.Random(f"world-{seed}-{k}"))
                         for k in range(1, len(points) + 1))
    return World((first, *later_phases), points)


def make_stream(rng: random.Random, n: int) -> list[SimTask]:
    stream = []
    for _ in range(n):
        category = rng.choice(CATEGORIES)
        text = _TEMPLATES[category].format(s=rng.choice(_SUBJECTS))
        stream.append(SimTask(TaskDescription(text, category, rng.random()), rng.random()))
    return stream


def make_store(kind: str) -> BaseStore:
    index = IndexConfig(dims=64, embed=HashEmbeddings(64))
    if kind == "chroma":
        from langgraph_episodic import ChromaStore

        return ChromaStore.ephemeral(index=index)
    return InMemoryStore(index=index)


def run_policy(
    policy: str, world: World, stream: Sequence[SimTask], *, seed: int, store_kind: str,
    draws: str = "policy",
) -> tuple[list[Episode], int]:
    """Play ``stream`` with ``policy``; return the episodes in order and how many changes the
    skill profiles flagged. ``draws`` names the Thompson policies' generator:
    ``random.Random(f"{draws}-{seed}")``, or ``"evidence"`` for none (each choice seeded from
    the task and the evidence, as without ``rng``)."""
    memory = None
    tally = None
    change = CHANGE.get(policy, ChangeDetection())
    if policy in DECAY and store_kind == "none":
        tally = SkillTally(change)
    elif policy in DECAY:
        memory = EpisodicMemory(make_store(store_kind), ("episodes", f"{policy}-{seed}"),
                                change_detection=change)
    rng = None if draws == "evidence" else random.Random(f"{draws}-{seed}")
    choose: Callable[[int, TaskDescription, float], str]
    if policy == "no-memory":
        def choose(i: int, task: TaskDescription, now: float) -> str:
            return complexity_strategy(task)
    elif policy == "oracle":
        def choose(i: int, task: TaskDescription, now: float) -> str:
            return world.best(i, task.category)
    elif tally is not None:  # --store none: the category's counts only, no recall
        base = cast(Policy, policy.split("-")[0])

        def choose(i: int, task: TaskDescription, now: float) -> str:
            assert tally is not None
            evidence = StrategyEvidence((), tally.profiles().get(task.category), DECAY[policy],
                                        now)
            return choose_strategy(task, evidence, policy=base, rng=rng).name
    else:
        assert memory is not None
        base = cast(Policy, policy.split("-")[0])

        def choose(i: int, task: TaskDescription, now: float) -> str:
            assert memory is not None
            return select_strategy(task, memory, current_time=now, policy=base, rng=rng,
                                   decay=DECAY[policy]).name

    episodes = []
    for i, sim in enumerate(stream):
        now = i * HOUR
        strategy = choose(i, sim.task, now)
        success = sim.draw < world.success_probability(i, sim.task, strategy)
        episode = Episode(
            episode_id=f"{policy}-{seed}-{i:05d}",
            task=sim.task,
            solution=f"(simulated solution using {strategy})",
            feedback=Feedback(1.0 if success else 0.0, "tests pass" if success else "tests fail"),
            outcome=OutcomeStatus.SUCCESS if success else OutcomeStatus.FAILURE,
            timestamp=now,
            strategy_used=strategy,
        )
        if memory is not None:
            memory.record(episode)
        if tally is not None:
            tally.add(episode)
        episodes.append(episode)
    profiles = (memory.skill_profiles() if memory is not None
                else tally.profiles() if tally is not None else {})
    return episodes, sum(p.changes for p in profiles.values())


def tail_success(episodes: Sequence[Episode], share: float = 0.2) -> float:
    tail = episodes[int(len(episodes) * (1 - share)):]
    return sum(e.outcome is OutcomeStatus.SUCCESS for e in tail) / max(1, len(tail))


def recovery(
    policy: Sequence[float], oracle: Sequence[float], start: int, stop: int, window: int,
    target: float = 0.9,
) -> int | None:
    """Episodes after ``start`` until the policy's success over the next ``window`` episodes
    is at least ``target`` of the oracle's over the same ones; None if not before ``stop``.

    ``policy`` and ``oracle`` are per-episode success rates (averaged over seeds).
    """
    for t in range(start, max(start, stop - window) + 1):
        mine = sum(policy[t:t + window])
        best = sum(oracle[t:t + window])
        if mine >= target * best:
            return t - start
    return None


def own_hits(
    episodes: Sequence[Episode], world: World, start: int, stop: int, k: int
) -> list[list[float]]:
    """For each category affected by the ``k``-th change: its own episodes' successes (1/0)
    from ``start`` to ``stop``, in order."""
    return [[float(e.outcome is OutcomeStatus.SUCCESS) for e in episodes[start:stop]
             if e.task.category is category] for category in world.affected(k)]


def own_recovery(
    policy: Sequence[Sequence[float]], oracle: Sequence[Sequence[float]], window: int,
    target: float = 0.9,
) -> int | None:
    """Recovery in the affected categories' own episodes: ``policy[j]`` and ``oracle[j]`` are
    the successes of one (seed, affected category) pair after a change, own episode by own
    episode; they are averaged over the pairs (up to the shortest) and passed to
    :func:`recovery` with ``window`` own episodes."""
    if not policy:
        return None
    length = min(len(row) for row in (*policy, *oracle))
    mean = [statistics.fmean(row[i] for row in policy) for i in range(length)]
    best = [statistics.fmean(row[i] for row in oracle) for i in range(length)]
    return recovery(mean, best, 0, length, window, target)


@dataclass
class WorldResult:
    tails: dict[str, list[float]]
    recoveries: dict[str, list[int | None]]
    flags: dict[str, list[int]]
    curves: dict[str, list[list[LearningSnapshot]]]
    own: dict[str, list[int | None]]


def run_world(kind: str, args: argparse.Namespace) -> WorldResult:
    policies = _selected(args)
    tails: dict[str, list[float]] = {p: [] for p in policies}
    hits: dict[str, list[list[float]]] = {p: [] for p in policies}
    curves: dict[str, list[list[LearningSnapshot]]] = {p: [] for p in policies}
    flags: dict[str, list[int]] = {p: [] for p in policies}
    # policy -> change k -> one row of own-episode successes per (seed, affected category)
    own_rows: dict[str, dict[int, list[list[float]]]] = {p: {} for p in policies}
    points: tuple[int, ...] = ()
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        world = make_world(kind, seed, args.episodes)
        points = world.recovery_points()
        stops = (*points[1:], args.episodes)
        stream = make_stream(random.Random(f"stream-{seed}"), args.episodes)
        for policy in policies:
            episodes, flagged = run_policy(policy, world, stream, seed=seed,
                                           store_kind=args.store, draws=args.draws)
            flags[policy].append(flagged)
            tails[policy].append(tail_success(episodes))
            hits[policy].append([float(e.outcome is OutcomeStatus.SUCCESS) for e in episodes])
            curves[policy].append(compute_learning_curve(episodes, window=args.window))
            for k, (a, b) in enumerate(zip(points, stops, strict=False)):
                own_rows[policy].setdefault(k, []).extend(own_hits(episodes, world, a, b, k))
    mean_hits = {p: [statistics.fmean(col) for col in zip(*hits[p], strict=True)]
                 for p in policies}
    stops = (*points[1:], args.episodes) if points else ()
    recoveries = {
        p: [recovery(mean_hits[p], mean_hits["oracle"], a, b, args.window)
            for a, b in zip(points, stops, strict=True)]
        for p in policies
    }
    own_window = max(1, args.window // len(CATEGORIES))
    own = {p: [own_recovery(own_rows[p][k], own_rows["oracle"][k], own_window)
               for k in range(len(points))] for p in policies}
    return WorldResult(tails, recoveries, flags, curves, own)


def print_world(kind: str, result: WorldResult, args: argparse.Namespace) -> None:
    first = int(args.episodes * 0.8) + 1
    oracle = statistics.fmean(result.tails["oracle"])
    print(f"World {kind!r}: success over the last 20% (episodes {first}-{args.episodes}), "
          f"mean over {args.seeds} seeds; changes flagged per seed (all categories); episodes "
          "to get back to 90% of the oracle:")
    print(f"{'policy':>15} {'success':>8} {'sd':>6} {'% of oracle':>12} {'flags':>6}  recovery"
          f"  (own episodes)")
    for policy in result.tails:
        tails = result.tails[policy]
        mean = statistics.fmean(tails)
        sd = statistics.stdev(tails) if len(tails) > 1 else 0.0
        rec = " / ".join("-" if r is None else str(r) for r in result.recoveries[policy])
        own = " / ".join("-" if r is None else str(r) for r in result.own[policy])
        flags = f"{statistics.fmean(result.flags[policy]):.1f}" if policy in DECAY else "-"
        print(f"{policy:>15} {mean:>8.3f} {sd:>6.3f} {100 * mean / oracle:>11.1f}% {flags:>6}  "
              f"{rec or 'n/a'}{f'  ({own})' if own else ''}")
    print()


def main(argv: Sequence[str] | None = None) -> dict[str, dict[str, list[float]]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="seeds first-seed .. first-seed + seeds - 1 (tune on other seeds "
                        "than the reported 0-9)")
    parser.add_argument("--world", choices=(*WORLDS, "all"), default="all")
    parser.add_argument("--window", type=int, default=50,
                        help="episodes per window of the recovery measure and the curves")
    parser.add_argument("--store", choices=("memory", "chroma", "none"), default="memory",
                        help="none: no store and no recall, the policies see only the skill "
                        "counts (about 10x faster, for tuning; similar tasks get no boost)")
    parser.add_argument("--policies", default=None,
                        help="comma-separated policies to run (the oracle always runs)")
    parser.add_argument("--draws", default="policy",
                        help="the Thompson draws: random.Random(f'{draws}-{seed}') per seed "
                        "(default 'policy'), or 'evidence': no rng, each choice seeded from "
                        "the task and the evidence (the default of select_strategy)")
    parser.add_argument("--plot", type=Path, default=None,
                        help="save each world's mean curves to this .svg path, suffixed by world")
    args = parser.parse_args(argv)
    if args.episodes < 20 or args.seeds < 1 or args.window < 1:
        parser.error("need --episodes >= 20, --seeds >= 1 and --window >= 1")
    if args.plot is not None and args.plot.suffix.lower() != ".svg":
        parser.error(f"--plot draws SVG: name a .svg file, not {args.plot}")

    started = time.perf_counter()
    store_name = {"chroma": "ChromaStore.ephemeral (hybrid search)", "memory": "InMemoryStore",
                  "none": "none (skill counts only, no recall)"}[args.store]
    print("Learning benchmark on a SIMULATED task stream (not real LLM runs).")
    speed = " (for speed; --store chroma uses ChromaStore)" if args.store == "memory" else ""
    embedder = " with HashEmbeddings(64)" if args.store != "none" else ""
    print(f"Store: {store_name}{embedder}{speed}.")
    print(f"{args.episodes} episodes (one an hour) x {args.seeds} seeds; {len(CATEGORIES)} "
          f"categories x {len(STRATEGIES)} strategies;")
    print("hidden best strategy per category succeeds 75-90%, the others 20-60%.")
    print("Thompson draws: " + ("no rng, each choice seeded from the task and the evidence.\n"
                                if args.draws == "evidence" else
                                f"random.Random('{args.draws}-<seed>') per seed.\n"))

    worlds = WORLDS if args.world == "all" else (args.world,)
    out: dict[str, dict[str, list[float]]] = {}
    for kind in worlds:
        result = run_world(kind, args)
        print_world(kind, result, args)
        out[kind] = result.tails
        if args.plot is not None:
            from langgraph_episodic.episodic import plot_learning_curve

            path = args.plot.with_name(f"{args.plot.stem}-{kind}{args.plot.suffix}")
            mean_curves = {p: _mean_curve(result.curves[p]) for p in result.curves}
            plot_learning_curve(mean_curves, title=f"Simulated task stream, {kind}", path=path)
            print(f"curves saved to {path}\n")
    print(f"(ran in {time.perf_counter() - started:.1f} s)")
    return out


def _selected(args: argparse.Namespace) -> tuple[str, ...]:
    if not getattr(args, "policies", None):
        return POLICIES
    names = [p.strip() for p in args.policies.split(",") if p.strip()]
    unknown = [p for p in names if p not in POLICIES]
    if unknown:
        raise SystemExit(f"unknown policies {unknown}; choose from {', '.join(POLICIES)}")
    return (*[p for p in POLICIES if p in names and p != "oracle"], "oracle")


def _mean_curve(runs: list[list[LearningSnapshot]]) -> list[LearningSnapshot]:
    out = []
    for snaps in zip(*runs, strict=True):
        out.append(LearningSnapshot(
            index=snaps[0].index, episode_id="", timestamp=snaps[0].timestamp,
            cumulative_reward=statistics.fmean(s.cumulative_reward for s in snaps),
            rolling_success_rate=statistics.fmean(s.rolling_success_rate for s in snaps),
            rolling_average_reward=statistics.fmean(s.rolling_average_reward for s in snaps),
        ))
    return out


if __name__ == "__main__":
    main()
