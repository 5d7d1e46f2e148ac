"""What the demo prints: the solver banner, learning curves, skill profiles and the plot."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..episodic import SkillProfile, TaskCategory, compute_learning_curve

if TYPE_CHECKING:
    from .demo import Attempt
    from .simulation import World

CURVE_ROWS = 10
"""Rows of the printed learning curve."""
TAIL_SHARE = 0.2
"""The final share of a run the summary line compares."""


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


def window_for(n: int) -> int:
    """Rolling window of the curves: a fifth of the run, between 5 and 25 tasks."""
    return max(5, min(25, n // 5))


def _rate(attempts: Sequence[Attempt]) -> float:
    return sum(a.success for a in attempts) / len(attempts) if attempts else 0.0


def curve_table(
    memory: Sequence[Attempt], baseline: Sequence[Attempt], oracle: Sequence[Attempt]
) -> str:
    """Rolling success with and without memory at ~10 points, and the final-share summary."""
    n = len(memory)
    window = window_for(n)
    with_mem = compute_learning_curve([a.episode("memory") for a in memory], window=window)
    without = compute_learning_curve([a.episode("baseline") for a in baseline], window=window)
    first = memory[0].sim.index + 1 if memory else 1
    lines = [
        f"Learning curve: rolling success over the last {window} tasks",
        f"{'task':>6}  {'with memory':>11}  {'without memory':>14}",
    ]
    step = max(1, n // CURVE_ROWS)
    points = sorted({*range(step - 1, n, step), n - 1}) if n else []
    for i in points:
        lines.append(
            f"{first + i:>6}  {with_mem[i].rolling_success_rate:>11.0%}  "
            f"{without[i].rolling_success_rate:>14.0%}"
        )
    tail = max(1, round(n * TAIL_SHARE))
    lines.append(
        f"Last {tail} tasks: with memory {_rate(memory[-tail:]):.0%}, without memory "
        f"(complexity rule) {_rate(baseline[-tail:]):.0%}, always the hidden best strategy "
        f"{_rate(oracle[-tail:]):.0%}."
    )
    return "\n".join(lines)


def learnt_best(profile: SkillProfile) -> tuple[str, float, int] | None:
    """The strategy memory rates best in a category: (name, success rate, attempts).

    Strategies are ranked by their Laplace-smoothed success rate, so one lucky attempt does
    not beat a long record.
    """
    if not profile.strategies:
        return None
    name, stats = max(
        profile.strategies.items(),
        key=lambda kv: ((kv[1].successes + 1) / (kv[1].attempts + 2), kv[1].attempts),
    )
    return name, stats.success_rate, stats.attempts


def skills_table(profiles: Mapping[TaskCategory, SkillProfile], world: World) -> str:
    """Skill profiles from memory, next to the hidden truth they should reveal."""
    lines = [
        "Skill profiles (from all stored episodes) and the hidden best strategies:",
        f"{'category':<16} {'attempts':>8} {'success':>8}  {'best learnt':<26} hidden best",
    ]
    for category in sorted(profiles, key=lambda c: c.value):
        profile = profiles[category]
        best = learnt_best(profile)
        learnt = f"{best[0]} ({best[1]:.0%} of {best[2]})" if best else "-"
        hidden = world.best(category) if category in world.rates else "-"
        rate = world.rates[category][hidden] if category in world.rates else 0.0
        lines.append(
            f"{category.value:<16} {profile.attempts:>8} {profile.success_rate:>8.0%}  "
            f"{learnt:<26} {hidden} ({rate:.0%})"
        )
    return "\n".join(lines)


def indent(text: str, prefix: str = "  | ") -> str:
    """Indent a block of text for the terminal."""
    return textwrap.indent(text, prefix, lambda _: True)


def save_plot(
    memory: Sequence[Attempt], baseline: Sequence[Attempt], path: Path, *, first: int
) -> str:
    """Save the learning curves as a PNG; return a line saying where (or why not)."""
    from ..episodic import plot_learning_curve

    window = window_for(len(memory))
    curves = {
        "with memory": compute_learning_curve([a.episode("m") for a in memory], window=window),
        "without memory (complexity rule)": compute_learning_curve(
            [a.episode("b") for a in baseline], window=window
        ),
    }
    title = f"Rolling success (window {window}), tasks {first}-{first + len(memory) - 1}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        plot_learning_curve(curves, title=title, path=path)
    except ImportError:
        return "No plot: matplotlib is not installed (pip install 'langgraph-episodic[plot]')."
    return f"Plot of the learning curves: {path}"
