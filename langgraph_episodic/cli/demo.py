"""``langgraph-episodic demo``: watch an agent learn from its own episodes.

A graph with every memory node, a persistent ``ChromaStore`` and the SQLite checkpointer works
through a stream of coding tasks, answered by a SIMULATED solver (:mod:`.simulation`) or, with
``--model provider:name``, a chat model (success is still decided by the simulated grader).
Memory starts empty; the same tasks and draws are also scored for a random strategy, the best
single strategy in hindsight and the oracle. The report (:mod:`.demo_report`) gives early and
late success with 95% intervals, the curves (PNG, CSV), the skills learnt and a replay prompt.
A second run on the same ``--path`` continues the task stream.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from ..admin.errors import CliError
from ..episodic import Episode
from ..episodic.learning import window_for
from ..graph.state import EpisodicState
from . import demo_report
from .parser import DEFAULT_SEED, PLOT_FILE_NAME
from .simulation import Attempt, SimTask, World, simulated_answer
from .target import DEFAULT_PATH, Target, open_store

logger = logging.getLogger(__name__)

DEMO_USER = "demo"
PROGRESS_NAMESPACE = ("demo_runs", DEMO_USER)
"""Where the demo remembers its seed and how far the task stream got."""

EMBED_THREADS = 1
"""Torch threads of the demo's model: its texts are single short sentences, which one thread
encodes as fast as two, and one thread does not stall when other processes share the CPU."""

SYSTEM_PROMPT = "You are a careful software engineer. Solve the coding task briefly."

KEEP_CHECKPOINTS = 1
"""Checkpoints kept of each run's thread. The demo continues from the store, not from a
checkpoint; the latest one keeps the run's session listed and resumable. Older ones would make
the checkpoint file grow with every task (each holds the whole state)."""


class DemoState(EpisodicState, total=False):
    """The memory state plus the index of the simulated task being worked on."""

    sim_index: int


def _chat_model(name: str | None) -> Any:
    if not name:
        return None
    if ":" not in name:
        raise CliError(
            f"--model must look like provider:name (e.g. openai:gpt-4o-mini), got {name!r}."
        )
    try:
        from langchain.chat_models import init_chat_model

        return init_chat_model(name)
    except Exception as exc:  # provider packages raise many kinds (ImportError, ValueError, auth)
        raise CliError(
            f"Cannot create the chat model {name!r}: {exc}. Install the provider's package "
            "(e.g. `pip install langchain-openai`) and set its API key, or leave --model out "
            "to use the simulated solver."
        ) from exc


def _solver(
    world: World, sims: dict[int, SimTask], model: Any, attempts: list[Attempt]
) -> Callable[[dict[str, Any], RunnableConfig], dict[str, Any]]:
    """The agent node: answer the task (simulated or with ``model``), then grade the answer."""

    def solve(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        from ..graph.wiring import memory_system_prompt

        sim = sims[int(state["sim_index"])]
        strategy = str(state.get("strategy") or "default")
        if model is None:
            reply: BaseMessage = AIMessage(
                simulated_answer(sim, strategy, str(state.get("strategy_instruction") or ""))
            )
        else:
            prompt = memory_system_prompt(state, base=SYSTEM_PROMPT)
            try:
                reply = model.invoke([SystemMessage(prompt), *state["messages"]], config)
            except Exception as exc:  # network, quota, auth: all end the demo the same way
                raise CliError(f"The chat model failed: {exc}") from exc
        attempt = world.attempt(sim, strategy)
        attempts.append(attempt)
        return {"messages": [reply], "feedback": attempt.feedback.to_dict(),
                "outcome": attempt.outcome.value}

    return solve


def build_graph(
    *, store: Any, checkpointer: Any, solve: Any, model: Any, policy: str, rng: random.Random
) -> Any:
    """The demo graph: all seven nodes in the usual order, compiled with store and checkpointer."""
    from langgraph.graph import END, START, StateGraph

    from ..graph import (
        EpisodeMemories,
        entity_extract_node,
        recall_node,
        record_episode_node,
        select_strategy_node,
        sliding_window_node,
        summarize_node,
    )

    memories = EpisodeMemories(store)
    try:
        entities = entity_extract_node(model=model, store=store)
    except TypeError as exc:  # a model without structured output: the rules still work
        logger.warning("%s Using the rule-based entity extractor.", exc)
        entities = entity_extract_node(model=None, store=store)
    nodes: list[tuple[str, Any]] = [
        ("sliding_window", sliding_window_node(max_tokens=2000)),
        ("recall", recall_node(memories=memories)),
        ("select_strategy", select_strategy_node(memories=memories, policy=policy, rng=rng)),
        ("agent", solve),
        ("record_episode", record_episode_node(memories=memories)),
        ("summarize", summarize_node(model=model)),
        ("entity_extract", entities),
    ]
    builder: Any = StateGraph(DemoState).add_sequence(nodes)
    builder.add_edge(START, "sliding_window")
    builder.add_edge("entity_extract", END)
    return builder.compile(checkpointer=checkpointer, store=store)


@dataclass(frozen=True)
class Progress:
    """How far earlier runs on this store got: the seed, the next task's index, the runs so far
    and the index of each run's first task (empty for a store of an older demo)."""

    seed: int
    next_task: int = 0
    runs: int = 0
    run_starts: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """As stored in the progress item."""
        return {"seed": self.seed, "next_task": self.next_task, "runs": self.runs,
                "run_starts": list(self.run_starts)}


def _progress(store: Any, seed: int | None) -> tuple[Progress, str | None]:
    """What earlier runs stored (or a fresh start) and a note if ``seed`` is not the store's."""
    item = store.get(PROGRESS_NAMESPACE, "progress")
    if item is None:
        return Progress(DEFAULT_SEED if seed is None else seed), None
    value = item.value
    stored = Progress(int(value["seed"]), int(value["next_task"]), int(value["runs"]),
                      tuple(int(i) for i in value.get("run_starts", ())))
    note = None
    if seed is not None and seed != stored.seed:
        note = (
            f"note: this store was started with --seed {stored.seed}; continuing with it "
            "(use a fresh --path for another seed)."
        )
    return stored, note


def run(args: argparse.Namespace) -> int:
    """Run the demo; print the learning curves, skill profiles and a replay prompt."""
    from tqdm import tqdm

    from ..graph import (
        EpisodeMemories,
        list_sessions,
        open_checkpointer,
        prune_threads,
        thread_config,
    )

    if args.tasks < 1:
        raise CliError(f"--tasks must be at least 1, got {args.tasks}.")
    started = time.perf_counter()
    plot_path = Path(args.plot or PLOT_FILE_NAME)
    if plot_path.suffix.lower() != ".svg":
        raise CliError(f"--plot must name a .svg file, got {plot_path}.")
    model = _chat_model(args.model)
    target = Target(Path(args.path) if args.path else DEFAULT_PATH, embeddings=args.embeddings)
    with open_store(target, semantic=True, create=True, threads=EMBED_THREADS) as store:
        progress, note = _progress(store, args.seed)
        if note:
            print(note)
        seed, start, runs = progress.seed, progress.next_task, progress.runs
        world = World.from_seed(seed)
        sims = {i: world.task(i) for i in range(start, start + args.tasks)}
        config = thread_config(DEMO_USER, f"run-{runs + 1}")
        thread_id = str(config["configurable"]["thread_id"])
        memory = EpisodeMemories(store).for_config(config)
        print(
            f"run {runs + 1} on {target.describe()}: tasks {start + 1}-{start + args.tasks} "
            f"(seed {seed}, policy {args.policy}); memory holds {memory.count()} episodes."
        )
        attempts: list[Attempt] = []
        try:
            with open_checkpointer(target.checkpoints()) as saver:
                earlier = [s.thread_id for s in list_sessions(saver, DEMO_USER)]
                prune_threads(saver, earlier, keep=KEEP_CHECKPOINTS)  # a file from an older demo
                graph = build_graph(store=store, checkpointer=saver, model=model,
                                    policy=args.policy, solve=_solver(world, sims, model, attempts),
                                    rng=random.Random(f"policy:{seed}:{start}"))
                for sim in tqdm(sims.values(), total=len(sims), desc="tasks", unit="task",
                                file=sys.stderr, disable=None):
                    graph.invoke({"messages": [HumanMessage(sim.task.description)],
                                  "task": sim.task.to_dict(), "sim_index": sim.index},
                                 config, durability="exit")  # one checkpoint per task, not per node
                    prune_threads(saver, [thread_id], keep=KEEP_CHECKPOINTS)
        finally:  # also after Ctrl-C: the next run continues after the last task played
            done = Progress(seed, start + len(attempts), runs + 1, (*progress.run_starts, start))
            store.put(PROGRESS_NAMESPACE, "progress", {**done.to_dict(), "policy": args.policy})

        memory.refresh()
        _report(args, target, world, memory, start, attempts, done, plot_path, started)
    return 0


def _report(args: argparse.Namespace, target: Target, world: World, memory: Any, start: int,
            attempts: list[Attempt], done: Progress, plot_path: Path, started: float) -> None:
    """Print the learning curves, skill profiles and the next task's replay prompt of the run
    that played ``attempts`` from task ``start`` (``done``: the progress after it); save the
    plot and the CSV."""
    from ..episodic import build_replay_context, format_replay_prompt

    # the stored starts are those of the latest runs (an older demo stored none)
    known = done.run_starts
    run_numbers = {index: done.runs - len(known) + n for n, index in enumerate(known, start=1)}
    stream = _stream(world, memory.episodes(), attempts, start, run_numbers)
    window = window_for(len(attempts))
    curves = demo_report.stream_curves(stream, window)
    print()
    print(demo_report.progress_report(stream, start))
    print()
    print(demo_report.curve_table(curves, window, since=start))
    print()
    print(demo_report.skills_table(memory.skill_profiles(), world))
    nxt = world.task(start + args.tasks)
    prompt = format_replay_prompt(build_replay_context(memory.recall(nxt.task, 3)), nxt.task)
    print()
    print(f"Replay prompt for the next task ({nxt.task.description!r}):")
    print(textwrap.indent(prompt, "  | ", lambda _: True))
    print()
    solver = "simulated solver" if args.model is None else f"{args.model} answers, simulated grader"
    print(demo_report.save_plot(curves, plot_path, window=window, solver=solver,
                                run_starts=stream.run_starts))
    print(demo_report.write_csv(stream, curves, plot_path.with_suffix(".csv")))
    print(
        f"Memory now holds {memory.count()} episodes in {target.path}; run the demo again to "
        f"continue, or inspect it with `langgraph-episodic stats --path {target.path}`. "
        f"({time.perf_counter() - started:.0f} s)"
    )


def _stream(world: World, stored: list[Episode], attempts: list[Attempt], start: int,
            run_starts: dict[int, int]) -> demo_report.Stream:
    """Every task played so far by each policy, task 1 first: the stored episodes for "with
    memory" (only this run's attempts, from task ``start``, if the store does not hold exactly
    the episodes of the task stream), the baselines replayed on the same tasks and draws."""
    end = start + len(attempts)
    first = 0 if len(stored) == end else start
    played = stored if first == 0 else [a.episode("memory") for a in attempts]
    sims = [world.task(i) for i in range(first, end)]
    single = world.best_single_strategy(sims)
    picks: dict[str, Callable[[SimTask], str]] = {
        demo_report.BEST_SINGLE: lambda _: single,
        demo_report.RANDOM: lambda s: world.random_strategy(s.index),
        demo_report.ORACLE: lambda s: world.best(s.task.category),
    }
    histories = {demo_report.MEMORY: played}
    for key, pick in picks.items():
        histories[key] = [world.attempt(s, pick(s)).episode(key) for s in sims]
    return demo_report.Stream(first, histories, demo_report.policy_labels(single), run_starts)
