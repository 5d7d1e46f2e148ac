"""Plot learning curves with matplotlib (imported only when a plot is drawn; no pyplot window
or backend is touched: :func:`plot_learning_curve` returns a ``matplotlib.figure.Figure``).

The rolling success rate is drawn solid from the first point whose window is full. Before it,
while the window still fills, each curve is drawn faded over a shaded span, from its fifth
episode on (the rate over the first few swings between 0 and 1 and means little). The x-axis
shows each snapshot's own ``index``, and the legend sits below the axes, where it covers no
line.

>>> from langgraph_episodic.episodic.learning import LearningSnapshot
>>> snaps = [LearningSnapshot(i, f"e{i}", 0.0, i * 0.5, 0.5, 0.5) for i in range(1, 4)]
>>> fig = plot_learning_curve(snaps, title="demo")
>>> [ax.get_title() for ax in fig.axes]
['demo', '']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .learning import LearningSnapshot, compute_learning_curve
from .records import Episode

Curve = Sequence[LearningSnapshot] | Sequence[Episode]


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(
            "Plotting needs matplotlib, a dependency of langgraph-episodic: "
            "`pip install matplotlib`."
        ) from exc
    return Figure


def plot_learning_curve(
    snapshots: Curve | Mapping[str, Curve],
    *,
    window: int = 5,
    title: str | None = None,
    path: str | Path | None = None,
    xlabel: str = "episode",
    marks: Mapping[int, str] | None = None,
    styles: Mapping[str, str] | None = None,
) -> Any:
    """Draw rolling success rate (top) and cumulative reward (bottom); return the Figure.

    Pass one curve, or a mapping ``label -> curve`` to compare several. A curve is a list of
    :class:`LearningSnapshot`, or of episodes (oldest first), whose curve is then computed with
    ``window``. With ``path`` the figure is also saved there (in the extension's format).
    ``marks`` draws a labelled vertical line at each given x (e.g. ``{121: "run 2"}``);
    ``styles`` gives a curve's line style by label (default: dashed for a label naming an
    oracle or the best, solid otherwise).
    """
    given = dict(snapshots) if isinstance(snapshots, Mapping) else {"agent": snapshots}
    curves = {label: _snapshots(curve, window) for label, curve in given.items()}
    figure = _figure_class()(figsize=(8, 6.5), layout="constrained")
    top, bottom = figure.subplots(2, 1, sharex=True)
    filling_span: list[int] = []
    for label, curve in curves.items():
        style = (styles or {}).get(label, "--" if "oracle" in label or "best" in label else "-")
        full = full_windows(curve)
        zorder = 3 if style == "-" else 2  # solid curves (the agents) over reference lines
        (line,) = top.plot([s.index for s in full], [s.rolling_success_rate for s in full], style,
                           label=label, zorder=zorder)
        filling = filling_window(curve, full)
        if filling:
            top.plot([s.index for s in filling], [s.rolling_success_rate for s in filling], style,
                     color=line.get_color(), alpha=FILLING_ALPHA, linewidth=1)
            filling_span = [filling[0].index, filling[-1].index]
        bottom.plot([s.index for s in curve], [s.cumulative_reward for s in curve], style)
    for x, text in (marks or {}).items():
        for axes in (top, bottom):
            axes.axvline(x, color="0.5", linestyle=":", linewidth=1)
        top.text(x, 1.0, f" {text}", fontsize="small", color="0.3", va="top")
    if filling_span:
        top.axvspan(*filling_span, color="0.92", zorder=0)
        top.text(filling_span[0], 0.0, " window filling", fontsize="small", color="0.4",
                 va="bottom")
    top.set_ylabel("rolling success rate")
    top.set_ylim(-0.02, 1.02)
    bottom.set_ylabel("cumulative reward")
    bottom.set_xlabel(xlabel)
    if title:
        top.set_title(title)
    if len(curves) > 1:
        columns = min(3 if max(map(len, curves)) <= LEGEND_LABEL_CHARS else 2, len(curves))
        figure.legend(loc="outside lower center", ncols=columns, frameon=False)
    if path is not None:
        figure.savefig(str(path))
    return figure


LEGEND_LABEL_CHARS = 28
"""The longest label that still fits three legend columns across the figure."""
FILLING_ALPHA = 0.45
"""Opacity of a curve while its rolling window still fills."""
FILLING_FROM = 5
"""The first episode of a curve drawn while its window fills."""


def filling_window(
    curve: Sequence[LearningSnapshot], full: Sequence[LearningSnapshot]
) -> list[LearningSnapshot]:
    """The snapshots before the first full window, from the ``FILLING_FROM``-th on, and that
    full one (so the faded line joins the solid one); empty when every window is full."""
    if not full or full[0] is curve[0]:
        return []
    start = full[0]
    before = [s for s in curve if s.index < start.index and s.window_count >= FILLING_FROM]
    return [*before, start] if before else []


def full_windows(curve: Sequence[LearningSnapshot]) -> Sequence[LearningSnapshot]:
    """The snapshots from the first one whose rolling window is full (all, if none is)."""
    size = max((s.window_count for s in curve), default=0)
    full = [s for s in curve if s.window_count >= size]
    return full if size and full else curve


def _snapshots(curve: Curve, window: int) -> list[LearningSnapshot]:
    items = list(curve)
    if items and isinstance(items[0], Episode):
        return compute_learning_curve([e for e in items if isinstance(e, Episode)], window)
    return [s for s in items if isinstance(s, LearningSnapshot)]
