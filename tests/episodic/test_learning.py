"""Learning curves and the plotting helper."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from langgraph_episodic.episodic import (
    LearningSnapshot,
    OutcomeStatus,
    compute_learning_curve,
    plot_learning_curve,
)

from .conftest import make_episode

S, P, F = OutcomeStatus.SUCCESS, OutcomeStatus.PARTIAL, OutcomeStatus.FAILURE


def test_curve_values_by_hand() -> None:
    rows = [(S, 1.0), (F, 0.0), (P, 0.5), (S, 0.9)]
    eps = [make_episode(f"e{i}", outcome=o, reward=r, timestamp=float(i))
           for i, (o, r) in enumerate(rows)]
    curve = compute_learning_curve(eps, window=2)
    assert [s.index for s in curve] == [1, 2, 3, 4]
    assert [s.episode_id for s in curve] == ["e0", "e1", "e2", "e3"]
    # cumulative: 1.0, 1.0, 1.5, 2.4
    assert [s.cumulative_reward for s in curve] == pytest.approx([1.0, 1.0, 1.5, 2.4])
    # windows of 2: [S], [S,F], [F,P], [P,S] -> successes 1/1, 1/2, 0/2, 1/2 (partial is no success)
    assert [s.rolling_success_rate for s in curve] == [1.0, 0.5, 0.0, 0.5]
    # rewards: 1.0, (1+0)/2, (0+0.5)/2, (0.5+0.9)/2
    assert [s.rolling_average_reward for s in curve] == pytest.approx([1.0, 0.5, 0.25, 0.7])


def test_window_must_be_positive_and_empty_input_gives_empty_curve() -> None:
    with pytest.raises(ValueError, match="window"):
        compute_learning_curve([], window=0)
    assert compute_learning_curve([]) == []


def _curve(n: int, rate: float) -> list[LearningSnapshot]:
    return [LearningSnapshot(i, f"e{i}", float(i), i * rate, rate, rate) for i in range(1, n + 1)]


SVG = "{http://www.w3.org/2000/svg}"


def _lines(svg: str) -> list[list[dict[str, str]]]:
    """The attributes of each panel's polylines (rate, then reward), in drawing order."""
    return [[dict(line.attrib) for line in panel.iter(f"{SVG}polyline")]
            for panel in ET.fromstring(svg).iter(f"{SVG}g") if panel.get("class") == "panel"]


def _ys(line: dict[str, str]) -> list[float]:
    return [float(point.split(",")[1]) for point in line["points"].split()]


def test_plot_draws_both_panels_every_label_and_mark_and_saves(tmp_path: Path) -> None:
    path = tmp_path / "curve.svg"
    plot = plot_learning_curve({"greedy": _curve(5, 0.5), "thompson <b>": _curve(5, 0.8)},
                               title="policies & co", path=path, xlabel="task",
                               marks={3: "run 2"})
    assert path.read_text(encoding="utf-8") == plot.svg == plot._repr_svg_()
    root = ET.fromstring(plot.svg)  # well-formed: every text escaped
    texts = [t.text for t in root.iter(f"{SVG}text")]
    for text in ("policies & co", "rolling success rate", "cumulative reward", "task",
                 "greedy", "thompson <b>", "run 2"):
        assert text in texts, text
    rate, reward = _lines(plot.svg)
    assert [line["data-label"] for line in rate] == ["greedy", "thompson <b>"]
    assert len(set(_ys(rate[1]))) == 1 and _ys(rate[1])[0] < _ys(rate[0])[0]  # 0.8 above 0.5
    assert _ys(reward[0]) == sorted(_ys(reward[0]), reverse=True)  # reward grows: y falls
    marks = [m for m in root.iter(f"{SVG}line") if m.get("class") == "mark"]
    assert len(marks) == 2 and len({m.get("x1") for m in marks}) == 1  # one line in each panel


def test_plot_writes_svg_only_and_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.svg.*convert"):
        plot_learning_curve(_curve(2, 0.5), path=tmp_path / "curve.png")
    assert not (tmp_path / "curve.png").exists()
    with pytest.raises(ValueError, match=r"\.svg"):
        plot_learning_curve(_curve(2, 0.5)).savefig(tmp_path / "curve")


def test_importing_the_package_and_the_demo_report_never_imports_matplotlib(
    tmp_path: Path,
) -> None:
    import subprocess

    code = (
        "import sys, pathlib, langgraph_episodic.episodic as e\n"
        "from langgraph_episodic.cli import demo_report\n"
        "from langgraph_episodic.episodic.learning import LearningSnapshot as S\n"
        "curve = [S(i, str(i), 0.0, i * 0.5, 0.5, 0.5) for i in range(1, 9)]\n"
        f"print(demo_report.save_plot({{'with memory': curve}}, pathlib.Path({str(tmp_path)!r}) "
        "/ 'c.svg', window=5, solver='simulated solver'))\n"
        "print('matplotlib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "False"
    assert (tmp_path / "c.svg").read_text(encoding="utf-8").startswith("<svg")


def test_plot_accepts_episodes_and_computes_their_curve() -> None:
    eps = [make_episode(f"e{i}", outcome=S if i % 2 else F, reward=float(i % 2)) for i in range(6)]
    by_episodes = plot_learning_curve(eps, window=2).svg
    assert by_episodes == plot_learning_curve(compute_learning_curve(eps, window=2)).svg
    (line,) = _lines(by_episodes)[0]
    # the first point's window holds one episode, not two: the plot starts at the first full one
    assert len(line["points"].split()) == len(eps) - 1
