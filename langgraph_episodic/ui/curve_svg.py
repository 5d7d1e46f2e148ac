"""The learning curve as SVG, drawn from the data on each request (no matplotlib, no image file).

The same two panels as :func:`~langgraph_episodic.episodic.plot.plot_learning_curve`: the
rolling success rate on top (solid from the first full window; faded over a shaded span while
the window still fills, from its fifth episode on) and the cumulative reward below, against
each snapshot's ``index``. :func:`figure` computes the geometry (a frozen record of pixel
coordinates and tick labels); the template ``curve.svg`` renders it, autoescaped like every
page, so the user's label in the title stays text. A curve of 2,000 episodes renders in a few
milliseconds, where matplotlib took over a second.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..episodic.learning import LearningSnapshot
from ..episodic.plot import filling_window, full_windows

WIDTH = 640
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


@dataclass(frozen=True)
class Tick:
    at: float
    """Pixel coordinate along the axis."""
    text: str


@dataclass(frozen=True)
class Line:
    points: str
    """``"x,y x,y ..."`` for a ``<polyline>``."""
    faded: bool = False


@dataclass(frozen=True)
class Panel:
    top: float
    height: float
    label: str
    y_ticks: tuple[Tick, ...]
    lines: tuple[Line, ...]

    @property
    def bottom(self) -> float:
        return self.top + self.height

    @property
    def middle(self) -> float:
        return self.top + self.height / 2


@dataclass(frozen=True)
class Figure:
    """Everything the template draws, in pixels of a ``WIDTH`` x ``HEIGHT`` view box."""

    title: str
    description: str
    """What the picture shows, in words (the SVG's ``<desc>`` and ``aria-label``)."""
    width: int
    height: int
    left: float
    right: float
    panels: tuple[Panel, ...]
    x_ticks: tuple[Tick, ...]
    filling: tuple[float, float] | None
    """The x span (pixels) where the rolling window still fills, shaded in the top panel."""

    @property
    def plot_width(self) -> float:
        return self.right - self.left


def nice_ticks(low: float, high: float, most: int = 6) -> list[float]:
    """Round tick values covering ``[low, high]``: steps of 1, 2 or 5 times a power of ten,
    at most about ``most`` of them."""
    if not math.isfinite(low) or not math.isfinite(high):
        return []
    if high <= low:
        return [low]
    raw = (high - low) / max(1, most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    count = math.floor((high - first) / step + 1e-9) + 1
    return [round(first + i * step, 10) for i in range(count)]


Scale = Callable[[float], float]
"""A value to its pixel coordinate."""


def _label(value: float) -> str:
    return f"{value:g}"


def figure(curve: Sequence[LearningSnapshot], title: str) -> Figure:
    """The geometry of ``curve`` (oldest first, as :func:`compute_learning_curve` returns it)."""
    if not curve:
        raise ValueError("A learning curve needs at least one snapshot.")
    left, right = float(LEFT), float(WIDTH - RIGHT)
    panel_height = (HEIGHT - TOP - GAP - BOTTOM) / 2
    first, last = curve[0].index, curve[-1].index
    span = max(1, last - first)

    def x(index: int) -> float:
        return left + (index - first) / span * (right - left)

    def scaler(low: float, high: float, top: float) -> tuple[float, float, Scale]:
        if high - low < 1e-12:
            low, high = low - 0.5, high + 0.5
        return low, high, lambda v: top + (high - v) / (high - low) * panel_height

    def points(
        snaps: Sequence[LearningSnapshot], value: Callable[[LearningSnapshot], float], to_y: Scale
    ) -> str:
        return " ".join(f"{x(s.index):.1f},{to_y(value(s)):.1f}" for s in snaps)

    top_y = float(TOP)
    _, _, rate_y = scaler(-0.02, 1.02, top_y)
    full = full_windows(curve)
    filling = filling_window(curve, full)
    rate_lines = [Line(points(full, lambda s: s.rolling_success_rate, rate_y))]
    if filling:
        rate_lines.insert(0, Line(points(filling, lambda s: s.rolling_success_rate, rate_y), True))
    rate = Panel(
        top_y, panel_height, "rolling success rate",
        tuple(Tick(rate_y(v), _label(v)) for v in (0.0, 0.25, 0.5, 0.75, 1.0)),
        tuple(rate_lines),
    )
    rewards = [s.cumulative_reward for s in curve]
    bottom_top = top_y + panel_height + GAP
    low, high, reward_y = scaler(min(0.0, *rewards), max(0.0, *rewards), bottom_top)
    reward = Panel(
        bottom_top, panel_height, "cumulative reward",
        tuple(Tick(reward_y(v), _label(v)) for v in nice_ticks(low, high)),
        (Line(points(curve, lambda s: s.cumulative_reward, reward_y)),),
    )
    ticks = [t for t in nice_ticks(first, last, 8) if t == int(t)] or [float(first)]
    shaded = (x(filling[0].index), x(filling[-1].index)) if filling else None
    final = curve[-1]
    description = (
        f"{len(curve)} episodes (index {first} to {last}); rolling success rate now "
        f"{final.rolling_success_rate:.0%}, cumulative reward {final.cumulative_reward:g}."
    )
    return Figure(
        title, description, WIDTH, HEIGHT, left, right, (rate, reward),
        tuple(Tick(x(int(t)), str(int(t))) for t in ticks), shaded,
    )
