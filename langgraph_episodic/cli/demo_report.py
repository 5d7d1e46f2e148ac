"""What the demo reports: success early and late in the run with intervals, the learning
curves (printed, plotted and written as CSV), the skill profiles learnt and a replay prompt."""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..episodic import (
    Episode,
    LearningSnapshot,
    OutcomeStatus,
    SkillProfile,
    TaskCategory,
    compute_learning_curve,
    plot_learning_curve,
)

if TYPE_CHECKING:
    from .simulation import World

CURVE_ROWS = 10
"""Rows of the printed learning curve."""
Z95 = 1.959964
"""Normal quantile of a two-sided 95% interval."""


Curves = dict[str, list[LearningSnapshot]]


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a success rate (sensible for small ``n`` and near 0 or 1)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Rate:
    """Successes out of ``n`` tasks, with a 95% Wilson interval."""

    successes: int
    n: int

    @classmethod
    def of(cls, episodes: Sequence[Episode]) -> Rate:
        """The full successes among ``episodes``."""
        return cls(sum(e.outcome is OutcomeStatus.SUCCESS for e in episodes), len(episodes))

    @property
    def value(self) -> float:
        """The success rate (0 for no tasks)."""
        return self.successes / self.n if self.n else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval."""
        return wilson(self.successes, self.n)

    def __str__(self) -> str:
        low, high = self.interval
        return f"{self.value:>4.0%} ({low:.0%}-{high:.0%})"


def rate_difference(later: Rate, earlier: Rate) -> tuple[float, float, float]:
    """``later - earlier`` of two rates on different tasks, with Newcombe's 95% interval (built
    from the two Wilson intervals; sensible for small samples and rates near 0 or 1)."""
    (l1, u1), (l2, u2) = earlier.interval, later.interval
    p1, p2 = earlier.value, later.value
    diff = p2 - p1
    return diff, diff - math.hypot(p2 - l2, u1 - p1), diff + math.hypot(u2 - p2, p1 - l1)


MEMORY, BEST_SINGLE, RANDOM, ORACLE = "memory", "best_single", "random", "oracle"
"""The policies of the demo, by the key of their CSV columns."""
MEMORY_LABEL = "with memory"


def policy_labels(best_single: str) -> dict[str, str]:
    """Each policy's name for people, in the order of the report; ``best_single`` is the
    strategy the hindsight baseline uses."""
    return {MEMORY: MEMORY_LABEL, BEST_SINGLE: f"best single strategy, hindsight ({best_single})",
            RANDOM: "random strategy", ORACLE: "hidden best per category (oracle)"}


@dataclass(frozen=True)
class Stream:
    """Every task of the demo's stream played so far, as each policy played it.

    ``histories`` maps a policy's key (:data:`MEMORY`, :data:`BEST_SINGLE`, :data:`RANDOM`,
    :data:`ORACLE`) to one episode per task, tasks ``first + 1`` to ``first + len`` in order;
    ``labels`` names each policy for people; ``run_starts`` maps the 0-based index of the
    first task of each demo run known to its run number (the CSV's run column and the plot's
    marks).
    """

    first: int
    histories: Mapping[str, Sequence[Episode]]
    labels: Mapping[str, str]
    run_starts: Mapping[int, int] = field(default_factory=dict)

    @property
    def end(self) -> int:
        """The index after the last task played."""
        return self.first + len(self.histories[MEMORY])

    def run_of(self, index: int) -> int | None:
        """The demo run (from 1) that played task ``index`` (0-based), if known."""
        begun = [start for start in self.run_starts if start <= index]
        return self.run_starts[max(begun)] if begun else None

    def rate(self, key: str, start: int, stop: int) -> Rate:
        """Policy ``key``'s success on tasks ``start`` to ``stop - 1`` (0-based)."""
        episodes = self.histories[key]
        return Rate.of(episodes[max(0, start - self.first) : max(0, stop - self.first)])


def progress_report(stream: Stream, start: int) -> str:
    """This run's success in its first fifth, its last fifth and overall, for each policy, with
    95% intervals; how much memory gained from the first fifth to the last; and, when the
    stream holds tasks before this run, how this run began against the tasks just before it."""
    end = stream.end
    n = end - start
    k = max(1, n // 5)
    spans = [("first fifth", start, start + k), ("last fifth", end - k, end),
             ("whole run", start, end)]
    width = max(len(label) for label in stream.labels.values())
    heads = [f"{name} {a + 1}-{b}" for name, a, b in spans]
    lines = [
        f"Success on tasks {start + 1}-{end}, with 95% intervals (every policy on the same "
        "tasks and the same random draws):",
        f"  {'':<{width}}  " + "  ".join(f"{head:<22}" for head in heads).rstrip(),
    ]
    for key, label in stream.labels.items():
        cells = [f"{stream.rate(key, a, b)!s:<22}" for _, a, b in spans]
        lines.append(f"  {label:<{width}}  " + "  ".join(cells).rstrip())
    early = stream.rate(MEMORY, start, start + k)
    late = stream.rate(MEMORY, end - k, end)
    diff, low, high = rate_difference(late, early)
    lines.append(
        f"With memory, last fifth minus first fifth: {diff * 100:+.0f} points (95% interval "
        f"{low * 100:+.0f} to {high * 100:+.0f})."
    )
    if start - k >= stream.first:
        before = stream.rate(MEMORY, start - k, start)
        lines.append(
            f"This run began where the stream stood: with memory {early.value:.0%} in its first "
            f"fifth against {before.value:.0%} ({before.interval[0]:.0%}-"
            f"{before.interval[1]:.0%}) on the {k} tasks before it."
        )
    random_early = stream.rate(RANDOM, start, start + k).value
    lines.append(
        f"In words: with memory the agent solved {early.value:.0%} of the first fifth "
        f"(a random strategy: {random_early:.0%}) and {late.value:.0%} of the last fifth "
        f"(best single strategy chosen with hindsight: "
        f"{stream.rate(BEST_SINGLE, end - k, end).value:.0%}; the oracle that knows the "
        f"hidden best strategy: {stream.rate(ORACLE, end - k, end).value:.0%})."
    )
    return "\n".join(lines)


def stream_curves(stream: Stream, window: int) -> Curves:
    """Each policy's rolling learning curve over the whole stream, numbered by task."""
    return {stream.labels[key]: [replace(s, index=s.index + stream.first)
                                 for s in compute_learning_curve(history, window=window)]
            for key, history in stream.histories.items()}


def curve_table(curves: Curves, window: int, *, since: int = 0) -> str:
    """Rolling success of each policy at about ten points of the tasks after task ``since``
    (full windows only)."""
    widths = {label: max(14, len(label)) for label in curves}
    lines = [
        f"Learning curve: rolling success over the last {window} tasks",
        f"{'task':>6}  " + "  ".join(f"{label:>{w}}" for label, w in widths.items()),
    ]
    first = next(iter(curves.values()), [])
    shown = [i for i, s in enumerate(first) if s.index > since]
    full = [i for i in shown if first[i].window_count >= window] or shown
    step = max(1, len(full) // CURVE_ROWS)
    rows = sorted({*full[step - 1 :: step], full[-1]}) if full else []
    for i in rows:
        values = "  ".join(f"{curves[label][i].rolling_success_rate:>{w}.0%}"
                           for label, w in widths.items())
        lines.append(f"{first[i].index:>6}  {values}")
    return "\n".join(lines)


def write_csv(stream: Stream, curves: Curves, path: Path) -> str:
    """Write the curves' data, one row per task: its run and category, and for each policy the
    strategy used, the outcome (1 for success) and the rolling success; return a line saying
    where."""
    keys = list(stream.histories)
    rolling = {key: curves[stream.labels[key]] for key in keys}
    memory = stream.histories[MEMORY]
    columns = ["task", "run", "category", "window_tasks"]
    for key in keys:
        columns += [f"{key}_strategy", f"{key}_success", f"{key}_rolling"]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for i, episode in enumerate(memory):
            index = stream.first + i
            run = stream.run_of(index)
            row: list[object] = [index + 1, "" if run is None else run,
                                 episode.task.category.value, rolling[MEMORY][i].window_count]
            for key in keys:
                played = stream.histories[key][i]
                row += [played.strategy_used, int(played.outcome is OutcomeStatus.SUCCESS),
                        f"{rolling[key][i].rolling_success_rate:.4f}"]
            writer.writerow(row)
    return f"Data of the curves (CSV): {path.resolve()}"


def learnt_best(profile: SkillProfile) -> tuple[str, float, int] | None:
    """The strategy memory rates best in a category: (name, success rate, attempts).

    Strategies are ranked by their Laplace-smoothed success rate, so one lucky attempt does
    not beat a long record.
    """
    if not profile.strategies:
        return None
    name, stats = max(profile.strategies.items(),
                      key=lambda kv: ((kv[1].successes + 1) / (kv[1].attempts + 2), kv[1].attempts))
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
    lines.append(f"Memory has found the hidden best strategy in {found} of {len(profiles)} "
                 "categories.")
    return "\n".join(lines)


def save_plot(
    curves: Curves, path: Path, *, window: int, solver: str,
    run_starts: Mapping[int, int] | None = None,
) -> str:
    """Save the learning curves as SVG, titled with ``solver`` (what answered the tasks, e.g.
    "simulated solver"), with a mark where each run after the first shown began
    (``run_starts``: 0-based task index -> run number); return a line saying where."""
    first = next(iter(curves.values()), [])
    span = f"tasks {first[0].index}-{first[-1].index}" if first else "no tasks"
    title = f"Rolling success (window {window}), {span}, {solver}"
    shown = {s.index for s in first}
    marks = {start + 1: f"run {run}" for start, run in (run_starts or {}).items()
             if start + 1 in shown and start + 1 != min(shown)}
    styles = {label: ("--" if "oracle" in label else ":" if label != MEMORY_LABEL else "-")
              for label in curves}
    path.parent.mkdir(parents=True, exist_ok=True)
    plot_learning_curve(curves, title=title, path=path, xlabel="task", marks=marks,
                        styles=styles)
    return f"Plot of the learning curves: {path.resolve()}"
