"""Draw learning curves as SVG: the rolling success rate on top, the cumulative reward below.

:func:`plot_learning_curve` returns a :class:`LearningCurvePlot` holding the SVG text; Jupyter
shows it inline and :meth:`~LearningCurvePlot.savefig` writes it (for a PNG, convert the file
with any SVG converter). The rolling success rate is drawn solid from the first point whose
window is full. Before it, while the window still fills, each curve is drawn faded over a
shaded span, from its fifth episode on (the rate over the first few swings between 0 and 1 and
means little). The x-axis shows each snapshot's own ``index``; with several curves a legend sits
below the panels, where it covers no line. Every text is escaped, so a label stays text.

>>> from langgraph_episodic.episodic.learning import LearningSnapshot
>>> snaps = [LearningSnapshot(i, f"e{i}", 0.0, i * 0.5, 0.5, 0.5) for i in range(1, 4)]
>>> plot = plot_learning_curve(snaps, title="demo")
>>> plot.svg.startswith("<svg") and "<title>demo</title>" in plot.svg
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from ..errors import InvalidValueError
from .learning import LearningSnapshot, compute_learning_curve
from .records import Episode, require

Curve = Sequence[LearningSnapshot] | Sequence[Episode]

WIDTH = 640
"""Of the picture in pixels; its height is ``HEIGHT`` plus a row per line of the legend."""
HEIGHT = 400
LEFT = 64
"""Room for the y tick labels and the axis name."""
RIGHT = 16
TOP = 30
"""Room for the title."""
GAP = 34
"""Between the panels (the top panel's x axis carries no labels: they are shared)."""
BOTTOM = 42
"""Room for the x tick labels and the axis name."""
PANEL_HEIGHT = (HEIGHT - TOP - GAP - BOTTOM) / 2
LEGEND_ROW = 18
CHAR_WIDTH = 7
"""About the width of a character of the 12-pixel text, to fit the legend's columns."""
COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
"""The curves' colours, in their order (matplotlib's "tab10")."""
DASHES = {"-": "", "--": "6 3", ":": "1.5 2.5", "-.": "6 3 1.5 3"}
"""The ``stroke-dasharray`` of each line style ``styles`` may name."""
FILLING_ALPHA = 0.45
"""Opacity of a curve while its rolling window still fills."""
FILLING_FROM = 5
"""The first episode of a curve drawn while its window fills."""


@dataclass(frozen=True)
class LearningCurvePlot:
    """A drawn learning curve: ``svg`` is the picture, shown inline by Jupyter."""

    svg: str

    def _repr_svg_(self) -> str:
        return self.svg

    def savefig(self, path: str | Path) -> None:
        """Write the SVG to ``path``, a file name ending in ``.svg``."""
        _svg_path(path).write_text(self.svg, encoding="utf-8")


def plot_learning_curve(
    snapshots: Curve | Mapping[str, Curve],
    *,
    window: int = 5,
    title: str | None = None,
    path: str | Path | None = None,
    xlabel: str = "episode",
    marks: Mapping[int, str] | None = None,
    styles: Mapping[str, str] | None = None,
) -> LearningCurvePlot:
    """Draw rolling success rate (top) and cumulative reward (bottom) as SVG.

    Pass one curve, or a mapping ``label -> curve`` to compare several. A curve is a list of
    :class:`LearningSnapshot`, or of episodes (oldest first), whose curve is then computed with
    ``window``. With ``path`` (a ``.svg`` file) the picture is also written there.
    ``marks`` draws a labelled vertical line at each given x (e.g. ``{121: "run 2"}``);
    ``styles`` gives a curve's line style by label, ``"-"``, ``"--"``, ``":"`` or ``"-."``
    (default: dashed for a label naming an oracle or the best, solid otherwise).
    """
    target = None if path is None else _svg_path(path)
    given = snapshots if isinstance(snapshots, Mapping) else {"agent": snapshots}
    curves = {label: _snapshots(curve, window) for label, curve in given.items()}
    chosen = {label: (styles or {}).get(label, "--" if "oracle" in label or "best" in label
                                        else "-") for label in curves}
    for label, style in chosen.items():
        require(style in DASHES, f"Line style {style!r} of {label!r} is not one of {list(DASHES)}.")
    plot = LearningCurvePlot(_draw(curves, chosen, title, xlabel, marks or {}))
    if target is not None:
        plot.savefig(target)
    return plot


def _svg_path(path: str | Path) -> Path:
    path = Path(path)
    require(path.suffix.lower() == ".svg",
            f"A learning curve is drawn as SVG: name the file with .svg, not {path.name!r} "
            "(for a PNG, convert the SVG with any SVG converter).")
    return path


def split_windows(
    curve: Sequence[LearningSnapshot],
) -> tuple[Sequence[LearningSnapshot], list[LearningSnapshot]]:
    """A non-empty curve's rolling rate drawn solid and faded: solid from the first snapshot
    whose window is full (all, if none is); faded the snapshots before it, from the
    ``FILLING_FROM``-th on, and that first full one, so the two lines join (empty when every
    window is full)."""
    size = max(s.window_count for s in curve)
    full = [s for s in curve if s.window_count >= size] if size else curve
    start = full[0]
    before = [s for s in curve if s.index < start.index and s.window_count >= FILLING_FROM]
    return full, [*before, start] if before and start is not curve[0] else []


def nice_ticks(low: float, high: float, most: int = 6) -> list[float]:
    """Round tick values covering ``[low, high]``: steps of 1, 2 or 5 times a power of ten,
    at most about ``most`` of them."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high <= low:
        return [low]
    raw = (high - low) / max(1, most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    count = math.floor((high - first) / step + 1e-9) + 1
    return [round(first + i * step, 10) for i in range(count)]


@dataclass(frozen=True)
class _Panel:
    label: str
    top: float
    low: float
    high: float
    ticks: Sequence[float]
    value: Callable[[LearningSnapshot], float]

    def y(self, value: float) -> float:
        return self.top + (self.high - value) / (self.high - self.low) * PANEL_HEIGHT


def _draw(
    curves: Mapping[str, Sequence[LearningSnapshot]], styles: Mapping[str, str],
    title: str | None, xlabel: str, marks: Mapping[int, str],
) -> str:
    shown = {label: curve for label, curve in curves.items() if curve}
    if not shown:
        raise InvalidValueError("A learning curve needs at least one snapshot.")
    colors = {label: COLORS[i % len(COLORS)] for i, label in enumerate(curves)}
    indices = sorted({s.index for curve in shown.values() for s in curve})
    first, last = indices[0], indices[-1]

    def x(index: float) -> float:
        return LEFT + (index - first) / max(1, last - first) * (WIDTH - RIGHT - LEFT)

    rewards = [s.cumulative_reward for curve in shown.values() for s in curve]
    low, high = min(0.0, *rewards), max(0.0, *rewards)
    if high - low < 1e-12:
        low, high = low - 0.5, high + 0.5
    rate = _Panel("rolling success rate", TOP, -0.02, 1.02, [0.0, 0.25, 0.5, 0.75, 1.0],
                  lambda s: s.rolling_success_rate)
    reward = _Panel("cumulative reward", TOP + PANEL_HEIGHT + GAP, low, high,
                    nice_ticks(low, high), lambda s: s.cumulative_reward)
    x_ticks = [int(t) for t in nice_ticks(first, last, 8) if t == int(t)] or [first]
    columns = max(1, min(3, len(curves), int(WIDTH // _legend_width(curves))))
    rows = math.ceil(len(curves) / columns) if len(curves) > 1 else 0
    height = HEIGHT + rows * LEGEND_ROW + (4 if rows else 0)
    name = escape(title or "learning curve")
    description = escape(_description(shown, xlabel, indices))
    out = [
        f'<svg class="curve" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}" role="img" aria-label="{name}: {description}" '
        'font-family="system-ui, sans-serif" font-size="12">',
        f"<title>{name}</title>",
        f"<desc>{description}</desc>",
        '<rect width="100%" height="100%" fill="#fff"/>',
    ]
    if title:
        out.append(f'<text x="{WIDTH / 2:g}" y="18" text-anchor="middle" font-size="14">'
                   f"{name}</text>")
    split = {label: split_windows(curve) for label, curve in shown.items()}
    full = {label: solid for label, (solid, _) in split.items()}
    faded = {label: filling for label, (_, filling) in split.items()}
    spans = [(f[0].index, f[-1].index) for f in faded.values() if f]
    order = sorted(shown, key=lambda label: styles[label] == "-")  # solid curves on top
    looks = {label: f'data-label="{escape(label)}" fill="none" stroke="{colors[label]}"'
                    f"{_dash(styles[label])}" for label in shown}
    for panel, solid, filling in ((rate, full, faded), (reward, shown, {})):
        out.append('<g class="panel">')
        if panel is rate and spans:
            start, end = x(min(s for s, _ in spans)), x(max(e for _, e in spans))
            out.append(f'<rect class="filling" x="{start:.1f}" y="{panel.top:.1f}" '
                       f'width="{end - start:.1f}" height="{PANEL_HEIGHT:.1f}" fill="#ebebeb"/>')
            out.append(f'<text x="{start + 3:.1f}" y="{panel.top + PANEL_HEIGHT - 4:.1f}" '
                       'font-size="11" fill="#666">window filling</text>')
        out += _frame(panel, x, x_ticks, panel is reward, marks)
        for label in order:
            if filling.get(label):
                out.append(f'<polyline class="filling-line" '
                           f'points="{_points(filling[label], x, panel)}" {looks[label]} '
                           f'stroke-width="1" stroke-opacity="{FILLING_ALPHA}"/>')
            out.append(f'<polyline class="line" points="{_points(solid[label], x, panel)}" '
                       f'{looks[label]} stroke-width="1.6"/>')
        out.append("</g>")
    for at, text in marks.items():
        out.append(f'<text class="mark-label" x="{x(at) + 3:.1f}" y="{TOP + 12}" '
                   'font-size="11" fill="#4d4d4d" stroke="#fff" stroke-width="3" '
                   f'paint-order="stroke">{escape(text)}</text>')
    out.append(f'<text x="{(WIDTH + LEFT - RIGHT) / 2:.1f}" y="{HEIGHT - 6}" '
               f'text-anchor="middle" fill="#222">{escape(xlabel)}</text>')
    if rows:
        out += _legend_svg(list(curves), columns, colors, styles)
    return "\n".join([*out, "</svg>", ""])


def _frame(
    panel: _Panel, x: Callable[[float], float], x_ticks: Sequence[int], labelled: bool,
    marks: Mapping[int, str],
) -> list[str]:
    """The panel's grid, ticks (the x ticks ``labelled`` or not), box, marks and axis name."""
    left, right, bottom = float(LEFT), float(WIDTH - RIGHT), panel.top + PANEL_HEIGHT
    out = []
    for tick in panel.ticks:
        y = panel.y(tick)
        out.append(f'<line x1="{left:.1f}" x2="{right:.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                   'stroke="#eef0f4"/>')
        out.append(f'<text x="{left - 6:.1f}" y="{y + 4:.1f}" text-anchor="end" fill="#444">'
                   f"{tick:g}</text>")
    for index in x_ticks:
        out.append(f'<line x1="{x(index):.1f}" x2="{x(index):.1f}" y1="{bottom:.1f}" '
                   f'y2="{bottom + 4:.1f}" stroke="#444"/>')
        if labelled:
            out.append(f'<text x="{x(index):.1f}" y="{bottom + 17:.1f}" text-anchor="middle" '
                       f'fill="#444">{index}</text>')
    out.append(f'<rect x="{left:.1f}" y="{panel.top:.1f}" width="{right - left:.1f}" '
               f'height="{PANEL_HEIGHT:.1f}" fill="none" stroke="#444"/>')
    for at in marks:
        out.append(f'<line class="mark" x1="{x(at):.1f}" x2="{x(at):.1f}" y1="{panel.top:.1f}" '
                   f'y2="{bottom:.1f}" stroke="#808080"{_dash(":")}/>')
    out.append(f'<text transform="translate(14 {panel.top + PANEL_HEIGHT / 2:.1f}) rotate(-90)" '
               f'text-anchor="middle" fill="#222">{panel.label}</text>')
    return out


def _legend_svg(
    labels: Sequence[str], columns: int, colors: Mapping[str, str], styles: Mapping[str, str]
) -> list[str]:
    """A sample of each curve's line and its label, in ``columns`` centred below the panels."""
    width = _legend_width(labels)
    start = (WIDTH - min(columns, len(labels)) * width) / 2
    out = ['<g class="legend">']
    for i, label in enumerate(labels):
        row, column = divmod(i, columns)
        at, y = start + column * width, HEIGHT + 8 + row * LEGEND_ROW
        out.append(f'<line x1="{at:.1f}" x2="{at + 24:.1f}" y1="{y}" y2="{y}" '
                   f'stroke="{colors[label]}" stroke-width="1.6"{_dash(styles[label])}/>')
        out.append(f'<text x="{at + 30:.1f}" y="{y + 4}" fill="#222">{escape(label)}</text>')
    return [*out, "</g>"]


def _dash(style: str) -> str:
    return f' stroke-dasharray="{DASHES[style]}"' if DASHES[style] else ""


def _points(curve: Sequence[LearningSnapshot], x: Callable[[float], float], panel: _Panel) -> str:
    return " ".join(f"{x(s.index):.1f},{panel.y(panel.value(s)):.1f}" for s in curve)


def _legend_width(labels: Iterable[str]) -> float:
    """Of a column of the legend: a line's sample and the longest label."""
    return 48 + CHAR_WIDTH * max(map(len, labels), default=0)


def _description(
    curves: Mapping[str, Sequence[LearningSnapshot]], xlabel: str, indices: Sequence[int]
) -> str:
    """What the picture shows, in words (the SVG's ``<desc>`` and ``aria-label``), given the
    curves' distinct x values in order."""
    now = [
        ("" if len(curves) == 1 else f"{label}: ")
        + f"rolling success rate now {curve[-1].rolling_success_rate:.0%}, "
        f"cumulative reward {curve[-1].cumulative_reward:g}"
        for label, curve in curves.items()
    ]
    return (f"{len(indices)} {xlabel}s (index {indices[0]} to {indices[-1]}); "
            + "; ".join(now) + ".")


def _snapshots(curve: Curve, window: int) -> list[LearningSnapshot]:
    items = list(curve)
    if items and isinstance(items[0], Episode):
        return compute_learning_curve([e for e in items if isinstance(e, Episode)], window)
    return [s for s in items if isinstance(s, LearningSnapshot)]
