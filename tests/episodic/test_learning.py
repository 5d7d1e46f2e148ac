"""Learning curves and the plotting helper."""

from __future__ import annotations

import sys
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


def test_plot_draws_one_line_per_curve_and_saves(tmp_path: Path) -> None:
    path = tmp_path / "curve.png"
    fig = plot_learning_curve({"greedy": _curve(5, 0.5), "thompson": _curve(5, 0.8)},
                              title="policies", path=path)
    top, bottom = fig.axes
    assert [line.get_label() for line in top.get_lines()] == ["greedy", "thompson"]
    assert list(top.get_lines()[1].get_ydata()) == [0.8] * 5
    assert list(bottom.get_lines()[0].get_ydata()) == pytest.approx([0.5 * i for i in range(1, 6)])
    assert top.get_title() == "policies"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install matplotlib"):
        plot_learning_curve(_curve(2, 0.5))


def test_importing_the_package_does_not_import_matplotlib() -> None:
    import subprocess

    code = ("import sys, langgraph_episodic.episodic as e; e.EpisodicMemory; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_plot_accepts_episodes_and_computes_their_curve() -> None:
    eps = [make_episode(f"e{i}", outcome=S if i % 2 else F, reward=float(i % 2)) for i in range(6)]
    fig = plot_learning_curve(eps, window=2)
    (line,) = fig.axes[0].get_lines()
    curve = compute_learning_curve(eps, window=2)
    # the first point's window holds one episode, not two: the plot starts at the first full one
    assert list(line.get_xdata()) == [s.index for s in curve[1:]]
    assert list(line.get_ydata()) == [s.rolling_success_rate for s in curve[1:]]
