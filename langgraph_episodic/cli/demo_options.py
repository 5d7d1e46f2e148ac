"""The demo's command-line options, kept apart from :mod:`.demo` so that building the parser
(``--help``, every other command) does not import LangGraph, the memory nodes or the model."""

from __future__ import annotations

import argparse
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
