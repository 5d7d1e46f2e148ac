"""What the demo reports: the whole run with 95% intervals on the same tasks, a second run that
continues the task numbers with full rolling windows, the strategies learnt against the hidden
best, and a plot whose legend covers no line."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from langgraph_episodic.cli import demo_report
from langgraph_episodic.cli.simulation import Attempt, SimTask, World
from langgraph_episodic.episodic import LearningSnapshot, plot_learning_curve

from .conftest import HASH, CliResult

Cli = Callable[..., CliResult]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _work_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _percent_rows(out: str) -> dict[str, tuple[int, int, int]]:
    rows = {}
    for label in ("with memory", "without memory (complexity rule)", "hidden best strategy (oracle)"):
        found = re.search(rf"^  {re.escape(label)}\s+(\d+)%\s+\((\d+)%-(\d+)%\)$", out, re.M)
        assert found, (label, out)
        rows[label] = (int(found[1]), int(found[2]), int(found[3]))
    return rows


def test_a_second_run_reports_the_whole_run_and_continues_the_task_numbers(
    cli: Cli, tmp_path: Path
) -> None:
    path = str(tmp_path / "demo")
    assert cli("demo", "--tasks", "30", "--path", path, *HASH, "--plot", "one.png")[0] == 0
    code, out, err = cli("demo", "--tasks", "30", "--path", path, *HASH, "--plot", "two.png")
    assert code == 0, err
    assert "Success over this whole run, tasks 31-60 (30 tasks" in out
    for value, low, high in _percent_rows(out).values():
        assert low <= value <= high
    assert re.search(r"memory minus no memory, same tasks\s+[+-]\d+ points \([+-]\d+ to [+-]\d+\)", out)
    assert re.search(r"^In words: on these 30 tasks the agent with memory succeeded \d+ points", out, re.M)

    table = out[out.index("Learning curve"):out.index("Skill profiles")]
    tasks = [int(line.split()[0]) for line in table.splitlines()[2:] if line.strip()]
    assert tasks[0] > 30 and tasks[-1] == 60 and tasks == sorted(tasks)

    skills = out[out.index("Skill profiles"):out.index("Replay prompt")]
    assert "hidden best" in skills and re.search(r"found the hidden best strategy in \d of \d", skills)
    assert f"Plot of the learning curves: {tmp_path / 'two.png'}" in out
    assert "Memory now holds 60 episodes" in out
    assert (tmp_path / "two.png").read_bytes().startswith(PNG_MAGIC)


def test_the_demo_plot_title_says_the_solver_is_simulated(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langgraph_episodic.episodic as episodic

    titles: list[str] = []
    real = episodic.plot_learning_curve

    def spy(*args: object, title: str | None = None, **kwargs: object) -> object:
        titles.append(str(title))
        return real(*args, title=title, **kwargs)

    monkeypatch.setattr(episodic, "plot_learning_curve", spy)
    assert cli("demo", "--tasks", "12", "--path", "demo", *HASH)[0] == 0
    assert len(titles) == 1 and "simulated solver" in titles[0].lower(), titles


def _attempts(world: World, indices: range, pick: Callable[[World, SimTask], str]) -> list[Attempt]:
    out = []
    for i in indices:
        sim = world.task(i)
        feedback, outcome = world.grade(sim, pick(world, sim))
        out.append(Attempt(sim, pick(world, sim), feedback, outcome))
    return out


def test_run_curves_fill_the_window_from_earlier_tasks_and_keep_task_numbers() -> None:
    world = World.from_seed(3)
    history = _attempts(world, range(0, 60), lambda w, s: w.best(s.task.category))
    episodes = {"oracle": [a.episode("o") for a in history]}
    curves = demo_report.run_curves(episodes, 20, window=10)
    snaps = curves["oracle"]
    assert [s.index for s in snaps] == list(range(41, 61))
    assert all(s.window_count == 10 for s in snaps)
    expected = sum(a.success for a in history[31:41]) / 10
    assert snaps[0].rolling_success_rate == expected
    shifted = demo_report.run_curves({"x": episodes["oracle"][40:]}, 20, window=10, first=40)
    assert [s.index for s in shifted["x"]] == list(range(41, 61))


def test_intervals_cover_the_rate_and_shrink_with_more_tasks() -> None:
    low, high = demo_report.wilson(30, 60)
    assert low < 0.5 < high
    wide, narrow = demo_report.wilson(6, 12), demo_report.wilson(600, 1200)
    assert wide[1] - wide[0] > narrow[1] - narrow[0]
    assert demo_report.wilson(0, 10)[0] == pytest.approx(0.0, abs=1e-12)
    assert demo_report.wilson(10, 10)[1] == pytest.approx(1.0)


def _curve(n: int, window: int, level: float) -> list[LearningSnapshot]:
    return [
        LearningSnapshot(i, f"e{i}", 0.0, i * level, level, level, min(i - 100, window))
        for i in range(101, 101 + n)
    ]


def test_the_plot_shows_the_filling_window_and_its_legend_covers_no_line(tmp_path: Path) -> None:
    curves = {"top line": _curve(40, 10, 0.98), "middle": _curve(40, 10, 0.5),
              "bottom line": _curve(40, 10, 0.02)}
    curves["top line"] = [LearningSnapshot(s.index, s.episode_id, 0, s.cumulative_reward, 1.0, 1.0,
                                           s.window_count) for s in curves["top line"]]
    figure = plot_learning_curve(curves, title="t", path=tmp_path / "c.png")
    top = figure.axes[0]
    solid = [line for line in top.get_lines() if not line.get_label().startswith("_")]
    faded = [line for line in top.get_lines() if line.get_label().startswith("_")]
    assert [min(line.get_xdata()) for line in solid] == [110, 110, 110]  # full windows only
    # tasks 101-109 had a window of fewer than 10: drawn faded, from the fifth task, joined up
    assert [(min(line.get_xdata()), max(line.get_xdata())) for line in faded] == [(105, 110)] * 3
    assert all(f.get_color() == s.get_color() and (f.get_alpha() or 1) < 1
               for f, s in zip(faded, solid, strict=True))
    assert top.get_legend() is None and len(figure.legends) == 1
    figure.draw_without_rendering()
    legend_box = figure.legends[0].get_window_extent()
    for axes in figure.axes:
        assert not legend_box.overlaps(axes.get_window_extent())
