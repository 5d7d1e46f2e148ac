"""What the demo prints: the solver banner, learning curves, skill profiles and the plot."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..episodic import (
    Episode,
    LearningSnapshot,
    SkillProfile,
    TaskCategory,
    compute_learning_curve,
)

if TYPE_CHECKING:
    from .simulation import Attempt, World

CURVE_ROWS = 10
"""Rows of the printed learning curve."""
Z95 = 1.959964
"""Normal quantile of a two-sided 95% interval."""


def window_for(n: int) -> int:
    """Rolling window of the curves: a fifth of the run, between 5 and 25 tasks."""
    return max(5, min(25, n // 5))


Curves = dict[str, list[LearningSnapshot]]


def run_curves(
    histories: Mapping[str, Sequence[Episode]], run_length: int, window: int, *, first: int = 0
) -> Curves:
    """Each policy's learning curve over this run's tasks, with rolling windows filled from the
    tasks before it. ``histories`` hold the tasks played so far from task ``first + 1`` on, so
    the snapshots are numbered by task (121-240 on a second run)."""
    return {
        label: [
            replace(s, index=s.index + first)
            for s in compute_learning_curve(history, window=window)[-run_length:]
        ]
        for label, history in histories.items()
    }


def _rate(attempts: Sequence[Attempt]) -> float:
    return sum(a.success for a in attempts) / len(attempts) if attempts else 0.0


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a success rate (sensible for small ``n`` and near 0 or 1)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_difference(a: Sequence[Attempt], b: Sequence[Attempt], z: float = Z95) -> tuple[float, float, float]:
    """Mean success difference a - b on the same tasks, with a 95% normal interval."""
    diffs = [int(x.success) - int(y.success) for x, y in zip(a, b, strict=True)]
    n = len(diffs)
    mean = sum(diffs) / n if n else 0.0
    if n < 2:
        return mean, -1.0, 1.0
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    half = z * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def summary(memory: Sequence[Attempt], baseline: Sequence[Attempt], oracle: Sequence[Attempt]) -> str:
    """Success over the whole run with 95% intervals, and one line saying what it means."""
    n = len(memory)
    first = memory[0].sim.index + 1 if memory else 1
    lines = [
        f"Success over this whole run, tasks {first}-{first + n - 1} ({n} tasks; the same "
        "tasks and random draws for all three), with 95% intervals:"
    ]
    for label, attempts in (
        ("with memory", memory),
        ("without memory (complexity rule)", baseline),
        ("hidden best strategy (oracle)", oracle),
    ):
        k = sum(a.success for a in attempts)
        low, high = wilson(k, n)
        lines.append(f"  {label:<34} {k / n if n else 0:>4.0%}  ({low:.0%}-{high:.0%})")
    diff, low, high = paired_difference(memory, baseline)
    share = _rate(memory) / _rate(oracle) if _rate(oracle) else 0.0
    lines.append(
        f"  memory minus no memory, same tasks {diff * 100:>+5.0f} points ({low * 100:+.0f} to "
        f"{high * 100:+.0f})"
    )
    lines.append(
        f"In words: on these {n} tasks the agent with memory succeeded {abs(diff) * 100:.0f} "
        f"points {'more' if diff >= 0 else 'less'} often than without it, and reached "
        f"{share:.0%} of the success of always choosing the hidden best strategy (which no "
        "real agent knows)."
    )
    return "\n".join(lines)


def curve_table(curves: Curves, window: int) -> str:
    """Rolling success of each policy at about ten points of this run (full windows only)."""
    widths = {label: max(14, len(label)) for label in curves}
    lines = [
        f"Learning curve: rolling success over the last {window} tasks",
        f"{'task':>6}  " + "  ".join(f"{label:>{w}}" for label, w in widths.items()),
    ]
    first = next(iter(curves.values()), [])
    full = [i for i, s in enumerate(first) if s.window_count >= window] or list(range(len(first)))
    step = max(1, len(full) // CURVE_ROWS)
    rows = sorted({*full[step - 1 :: step], full[-1]}) if full else []
    for i in rows:
        values = "  ".join(
            f"{curves[label][i].rolling_success_rate:>{w}.0%}" for label, w in widths.items()
        )
        lines.append(f"{first[i].index:>6}  {values}")
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
        f"{'category':<16} {'attempts':>8} {'success':>8}  {'best learnt':<26} "
        f"{'hidden best':<24} found",
    ]
    found = 0
    for category in sorted(profiles, key=lambda c: c.value):
        profile = profiles[category]
        best = learnt_best(profile)
        learnt = f"{best[0]} ({best[1]:.0%} of {best[2]})" if best else "-"
        hidden = world.best(category) if category in world.rates else "-"
        rate = world.rates[category][hidden] if category in world.rates else 0.0
        same = best is not None and best[0] == hidden
        found += same
        lines.append(
            f"{category.value:<16} {profile.attempts:>8} {profile.success_rate:>8.0%}  "
            f"{learnt:<26} {f'{hidden} ({rate:.0%})':<24} {'yes' if same else 'not yet'}"
        )
    lines.append(
        f"Memory has found the hidden best strategy in {found} of {len(profiles)} categories."
    )
    return "\n".join(lines)


def indent(text: str, prefix: str = "  | ") -> str:
    """Indent a block of text for the terminal."""
    return textwrap.indent(text, prefix, lambda _: True)


def save_plot(curves: Curves, path: Path, *, window: int, solver: str) -> str:
    """Save this run's learning curves as a PNG, titled with ``solver`` (what answered the
    tasks, e.g. "simulated solver"); return a line saying where."""
    from ..episodic import plot_learning_curve

    first = next(iter(curves.values()), [])
    span = f"tasks {first[0].index}-{first[-1].index}" if first else "no tasks"
    title = f"Rolling success (window {window}), {span}, {solver}"
    path.parent.mkdir(parents=True, exist_ok=True)
    plot_learning_curve(curves, title=title, path=path, xlabel="task")
    return f"Plot of the learning curves: {path.resolve()}"


def solver_label(model: str | None) -> str:
    """What answers and what grades, in a few words (the plot's title)."""
    return "simulated solver" if model is None else f"{model} answers, simulated grader"
