"""Does episodic memory make an agent better? A simulated learning benchmark.

The task stream is SIMULATED, not real LLM runs: each task has a category and a complexity drawn
at random; every category has a hidden best strategy; an attempt succeeds with the hidden
success rate of the strategy used (lowered a little for complex tasks). Four policies face the
same stream (same tasks, same random draws):

- ``no-memory``: the complexity rule alone (``complexity_strategy``);
- ``greedy``: ``select_strategy(..., policy="greedy")`` over an ``EpisodicMemory``;
- ``thompson``: ``select_strategy(..., policy="thompson")`` over an ``EpisodicMemory``;
- ``oracle``: always the hidden best strategy.

It prints rolling success curves and, for the last 20% of episodes, each policy's success as a
share of the oracle's. Default store: ``InMemoryStore`` with ``HashEmbeddings(64)`` (fast;
``--store chroma`` uses ``ChromaStore.ephemeral`` instead).

    python benchmarks/learning.py                       # 1000 episodes x 5 seeds
    python benchmarks/learning.py --episodes 300 --seeds 2 --plot curves.png
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from langgraph.store.base import BaseStore, IndexConfig
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.episodic import (
    STRATEGY_POOL,
    Episode,
    EpisodicMemory,
    Feedback,
    LearningSnapshot,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
    complexity_strategy,
    compute_learning_curve,
    select_strategy,
)
from langgraph_episodic.episodic.strategy import Policy

CATEGORIES = [c for c in TaskCategory if c is not TaskCategory.UNKNOWN]
STRATEGIES = list(STRATEGY_POOL)
POLICIES = ("no-memory", "greedy", "thompson", "oracle")
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


@dataclass(frozen=True)
class World:
    """The hidden truth of one seed: each category's strategy success rates."""

    rates: dict[TaskCategory, dict[str, float]]

    def best(self, category: TaskCategory) -> str:
        return max(self.rates[category], key=lambda s: self.rates[category][s])

    def success_probability(self, task: TaskDescription, strategy: str) -> float:
        base = self.rates[task.category][strategy]
        return min(0.98, max(0.02, base - 0.2 * (task.complexity - 0.5)))


@dataclass(frozen=True)
class SimTask:
    task: TaskDescription
    draw: float  # uniform in [0, 1): success when draw < success probability


def make_world(rng: random.Random) -> World:
    """A hidden best strategy per category (rate 0.75-0.90); the others 0.20-0.60."""
    rates: dict[TaskCategory, dict[str, float]] = {}
    for category in CATEGORIES:
        best = rng.choice(STRATEGIES)
        rates[category] = {
            s: rng.uniform(0.75, 0.90) if s == best else rng.uniform(0.20, 0.60)
            for s in STRATEGIES
        }
    return World(rates)


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
    policy: str, world: World, stream: Sequence[SimTask], *, seed: int, store_kind: str
) -> list[Episode]:
    """Play ``stream`` with ``policy``; return the episodes in order."""
    memory = None
    if policy in ("greedy", "thompson"):
        memory = EpisodicMemory(make_store(store_kind), ("episodes", f"{policy}-{seed}"))
    rng = random.Random(f"policy-{seed}")

    def choose(task: TaskDescription, now: float) -> str:
        if policy == "no-memory":
            return complexity_strategy(task)
        if policy == "oracle":
            return world.best(task.category)
        assert memory is not None
        return select_strategy(
            task, memory, current_time=now, policy=cast(Policy, policy), rng=rng
        ).name

    episodes = []
    for i, sim in enumerate(stream):
        now = i * HOUR
        strategy = choose(sim.task, now)
        success = sim.draw < world.success_probability(sim.task, strategy)
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
        episodes.append(episode)
    return episodes


def tail_success(episodes: Sequence[Episode], share: float = 0.2) -> float:
    tail = episodes[int(len(episodes) * (1 - share)):]
    return sum(e.outcome is OutcomeStatus.SUCCESS for e in tail) / max(1, len(tail))


def main(argv: Sequence[str] | None = None) -> dict[str, list[float]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--window", type=int, default=100, help="rolling window of the curves")
    parser.add_argument("--store", choices=("memory", "chroma"), default="memory")
    parser.add_argument("--plot", type=Path, default=None, help="save the curves to this image")
    args = parser.parse_args(argv)
    if args.episodes < 10 or args.seeds < 1:
        parser.error("need --episodes >= 10 and --seeds >= 1")

    started = time.perf_counter()
    store_name = (
        "ChromaStore.ephemeral (hybrid search)" if args.store == "chroma" else "InMemoryStore"
    )
    print("Learning benchmark on a SIMULATED task stream (not real LLM runs).")
    speed = " (for speed; --store chroma uses ChromaStore)" if args.store == "memory" else ""
    print(f"Store: {store_name} with HashEmbeddings(64){speed}.")
    print(f"{args.episodes} episodes x {args.seeds} seeds; {len(CATEGORIES)} categories x "
          f"{len(STRATEGIES)} strategies;")
    print("hidden best strategy per category succeeds 75-90%, the others 20-60%.\n")

    tails: dict[str, list[float]] = {p: [] for p in POLICIES}
    curves: dict[str, list[list[LearningSnapshot]]] = {p: [] for p in POLICIES}
    for seed in range(args.seeds):
        world = make_world(random.Random(f"world-{seed}"))
        stream = make_stream(random.Random(f"stream-{seed}"), args.episodes)
        for policy in POLICIES:
            episodes = run_policy(policy, world, stream, seed=seed, store_kind=args.store)
            tails[policy].append(tail_success(episodes))
            curves[policy].append(compute_learning_curve(episodes, window=args.window))

    step = max(1, args.episodes // 10)
    print(f"Rolling success rate (window {args.window}), mean over seeds:")
    print(f"{'episode':>8} " + " ".join(f"{p:>10}" for p in POLICIES))
    for index in range(step, args.episodes + 1, step):
        row = [statistics.fmean(c[index - 1].rolling_success_rate for c in curves[p])
               for p in POLICIES]
        print(f"{index:>8} " + " ".join(f"{v:>10.3f}" for v in row))

    first = int(args.episodes * 0.8) + 1
    oracle = statistics.fmean(tails["oracle"])
    print(f"\nSuccess over the last 20% (episodes {first}-{args.episodes}):")
    print(f"{'policy':>10} {'success':>8} {'sd':>6} {'% of oracle':>12}")
    for policy in POLICIES:
        mean = statistics.fmean(tails[policy])
        sd = statistics.stdev(tails[policy]) if len(tails[policy]) > 1 else 0.0
        print(f"{policy:>10} {mean:>8.3f} {sd:>6.3f} {100 * mean / oracle:>11.1f}%")
    print(f"\n(ran in {time.perf_counter() - started:.1f} s)")

    if args.plot is not None:
        from langgraph_episodic.episodic import plot_learning_curve

        mean_curves = {p: _mean_curve(curves[p]) for p in POLICIES}
        plot_learning_curve(mean_curves, title="Simulated task stream", path=args.plot)
        print(f"curves saved to {args.plot}")
    return tails


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
