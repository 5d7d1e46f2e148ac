"""The demo's entry point and banner, kept apart from :mod:`.demo` so that the demo says what
it is about to do before importing LangGraph, the memory nodes and the model takes its time.
Its options are in :mod:`.parser`; it imports :mod:`.demo` only when the demo runs, and
:mod:`.demo` never imports it back."""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

__all__ = ["run", "solver_banner"]


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
