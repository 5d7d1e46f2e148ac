"""The demo's command-line options and banner, kept apart from :mod:`.demo` so that building the
parser (``--help``, every other command) does not import LangGraph, the memory nodes or the
model, and so that the demo says what it is about to do before those imports take their time."""

from __future__ import annotations

import argparse
import sys
from importlib import import_module
from pathlib import Path

from .target import DEFAULT_PATH

DEFAULT_TASKS = 120
"""Tasks per run; about a minute on 2 cores with the model load (see the report)."""

DEFAULT_SEED = 7

PLOT_FILE = Path("learning_curve.png")
"""Where the plot goes unless ``--plot`` says otherwise (the working folder)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's options."""
    parser.add_argument(
        "--tasks", type=int, default=DEFAULT_TASKS, help=f"tasks in this run (default: {DEFAULT_TASKS})"
    )
    parser.add_argument(
        "--path", help=f"folder of the store and checkpoints (default: ./{DEFAULT_PATH})"
    )
    parser.add_argument(
        "--model",
        help="a chat model as provider:name (e.g. openai:gpt-4o-mini) for the answers; "
        "default: the simulated solver",
    )
    parser.add_argument(
        "--seed",
        type=int,
        help=f"seed of the hidden success rates and the task stream (default: {DEFAULT_SEED}; "
        "a store keeps the seed of its first run)",
    )
    parser.add_argument(
        "--plot", help=f"PNG file for the learning curve (default: ./{PLOT_FILE})"
    )
    parser.add_argument(
        "--policy",
        choices=["thompson", "greedy"],
        default="thompson",
        help="strategy policy: thompson (explores and exploits, default) or greedy",
    )
    parser.add_argument(
        "--embeddings",
        choices=["model", "hash"],
        default="model",
        help="the packaged all-MiniLM-L6-v2 (model, default) or the instant hashing embedder",
    )


def run(args: argparse.Namespace) -> int:
    """Say what solves the tasks, then import and run the demo."""
    print(solver_banner(args.model), flush=True)
    print("starting (LangGraph, the store and the memory nodes)…", file=sys.stderr, flush=True)
    demo = import_module(".demo", __package__)
    code: int = demo.run(args)
    return code


def solver_banner(model: str | None) -> str:
    """Say plainly what answers the tasks and what decides success."""
    if model is None:
        return (
            "SIMULATED SOLVER (no --model given): no LLM is called. Whether a task succeeds "
            "depends on the strategy chosen and on hidden per-category success rates, so "
            "memory has something to learn. Pass --model provider:name for a real chat model."
        )
    return (
        f"Chat model {model} writes the answers; success is still judged by the SIMULATED "
        "grader (hidden per-category success rates of the strategy used), as the demo has no "
        "real test suite."
    )
