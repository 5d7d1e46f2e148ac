"""Plot learning curves with matplotlib (optional extra: ``pip install "langgraph-episodic[plot]"``).

matplotlib is imported only when a plot is drawn, and no pyplot window or backend is touched:
the helpers return a ``matplotlib.figure.Figure`` you can save or show.

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
            "Plotting needs matplotlib. Install it with `pip install \"langgraph-episodic[plot]\"`."
        ) from exc
    return Figure


def plot_learning_curve(
    snapshots: Curve | Mapping[str, Curve],
    *,
    window: int = 5,
    title: str | None = None,
    path: str | Path | None = None,
) -> Any:
    """Draw rolling success rate (top) and cumulative reward (bottom); return the Figure.

    Pass one curve, or a mapping ``label -> curve`` to compare several (e.g. policies). A curve
    is a list of :class:`LearningSnapshot`, or of episodes (oldest first), whose curve is then
    computed with ``window``. With ``path`` the figure is also saved there (the format follows
    the file extension).
    """
    given = dict(snapshots) if isinstance(snapshots, Mapping) else {"agent": snapshots}
    curves = {label: _snapshots(curve, window) for label, curve in given.items()}
    figure = _figure_class()(figsize=(8, 6))
    top, bottom = figure.subplots(2, 1, sharex=True)
    for label, curve in curves.items():
        xs = [s.index for s in curve]
        top.plot(xs, [s.rolling_success_rate for s in curve], label=label)
        bottom.plot(xs, [s.cumulative_reward for s in curve], label=label)
    top.set_ylabel("rolling success rate")
    top.set_ylim(-0.02, 1.02)
    bottom.set_ylabel("cumulative reward")
    bottom.set_xlabel("episode")
    if title:
        top.set_title(title)
    if len(curves) > 1:
        top.legend(loc="lower right")
    figure.tight_layout()
    if path is not None:
        figure.savefig(str(path))
    return figure


def _snapshots(curve: Curve, window: int) -> list[LearningSnapshot]:
    items = list(curve)
    if items and isinstance(items[0], Episode):
        return compute_learning_curve([e for e in items if isinstance(e, Episode)], window)
    return [s for s in items if isinstance(s, LearningSnapshot)]
