"""What the demo reports: the whole run with 95% intervals on the same tasks, a second run that
continues the task numbers with full rolling windows, the strategies learnt against the hidden
best, and a plot whose legend covers no line."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from langgraph_episodic.cli import demo_report
from langgraph_episodic.cli.simulation import Attempt, SimTask, World
from langgraph_episodic.episodic import LearningSnapshot, plot_learning_curve

from .conftest import HASH, CliResult

Cli = Callable[..., CliResult]
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True)
def _work_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


CELL = r"(\d+)%\s+\((\d+)%-(\d+)%\)"


def _rows(out: str) -> dict[str, list[tuple[int, int, int]]]:
    """Each policy's (rate, low, high) in the first fifth, the last fifth and the whole run."""
    rows = {}
    for label in ("with memory", r"best single strategy, hindsight \(\w+\)", "random strategy",
                  r"hidden best per category \(oracle\)"):
        found = re.search(rf"^  {label}\s+{CELL}\s+{CELL}\s+{CELL}$", out, re.M)
        assert found, (label, out)
        values = [int(v) for v in found.groups()]
        rows[label] = [tuple(values[i : i + 3]) for i in (0, 3, 6)]
    return rows


def test_a_second_run_reports_its_fifths_and_continues_the_task_numbers(
    cli: Cli, tmp_path: Path
) -> None:
    path = str(tmp_path / "demo")
    assert cli("demo", "--tasks", "30", "--path", path, *HASH, "--plot", "one.svg")[0] == 0
    code, out, err = cli("demo", "--tasks", "30", "--path", path, *HASH, "--plot", "two.svg")
    assert code == 0, err
    assert "Success on tasks 31-60, with 95% intervals" in out
    assert re.search(r"first fifth 31-36\s+last fifth 55-60\s+whole run 31-60", out)
    for cells in _rows(out).values():
        for value, low, high in cells:
            assert low <= value <= high
    assert re.search(r"With memory, last fifth minus first fifth: [+-]\d+ points \(95% interval "
                     r"[+-]\d+ to [+-]\d+\)", out)
    assert re.search(r"This run began where the stream stood: with memory \d+% in its first fifth "
                     r"against \d+% \(\d+%-\d+%\) on the 6 tasks before it", out)

    table = out[out.index("Learning curve"):out.index("Skill profiles")]
    tasks = [int(line.split()[0]) for line in table.splitlines()[2:] if line.strip()]
    assert tasks[0] > 30 and tasks[-1] == 60 and tasks == sorted(tasks)

    skills = out[out.index("Skill profiles"):out.index("Replay prompt")]
    assert "hidden best" in skills and re.search(r"found the hidden best strategy in \d of \d", skills)
    assert f"Plot of the learning curves: {tmp_path / 'two.svg'}" in out
    assert f"Data of the curves (CSV): {tmp_path / 'two.csv'}" in out
    assert "Memory now holds 60 episodes" in out
    svg = ET.fromstring((tmp_path / "two.svg").read_text(encoding="utf-8"))
    assert "run 2" in [t.text for t in svg.iter(f"{SVG}text")]  # where this run began


def test_the_demo_plot_title_says_the_solver_is_simulated(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    titles: list[str] = []
    real = demo_report.plot_learning_curve

    def spy(*args: object, title: str | None = None, **kwargs: object) -> object:
        titles.append(str(title))
        return real(*args, title=title, **kwargs)

    monkeypatch.setattr(demo_report, "plot_learning_curve", spy)
    assert cli("demo", "--tasks", "12", "--path", "demo", *HASH)[0] == 0
    assert len(titles) == 1 and "simulated solver" in titles[0].lower(), titles


def _attempts(world: World, indices: range, pick: Callable[[World, SimTask], str]) -> list[Attempt]:
    out = []
    for i in indices:
        sim = world.task(i)
        feedback, outcome = world.grade(sim, pick(world, sim))
        out.append(Attempt(sim, pick(world, sim), feedback, outcome))
    return out


def _stream(world: World, n: int, first: int = 0) -> demo_report.Stream:
    sims = [world.task(i) for i in range(first, first + n)]
    picks = {
        demo_report.MEMORY: lambda s: world.random_strategy(s.index),
        demo_report.BEST_SINGLE: lambda s: "iterative",
        demo_report.RANDOM: lambda s: world.random_strategy(s.index),
        demo_report.ORACLE: lambda s: world.best(s.task.category),
    }
    histories = {}
    for key, pick in picks.items():
        histories[key] = [
            Attempt(s, pick(s), *world.grade(s, pick(s))).episode(key) for s in sims
        ]
    return demo_report.Stream(first, histories, demo_report.policy_labels("iterative"), {first: 1})


def test_curves_fill_the_window_from_the_first_task_and_keep_task_numbers() -> None:
    world = World.from_seed(3)
    stream = _stream(world, 60)
    curves = demo_report.stream_curves(stream, window=10)
    snaps = curves["hidden best per category (oracle)"]
    assert [s.index for s in snaps] == list(range(1, 61))
    assert [s.window_count for s in snaps[:12]] == [*range(1, 11), 10, 10]
    oracle = stream.histories[demo_report.ORACLE]
    expected = sum(e.outcome.value == "success" for e in oracle[31:41]) / 10
    assert snaps[40].rolling_success_rate == expected
    shifted = demo_report.stream_curves(_stream(world, 20, first=40), window=10)
    assert [s.index for s in shifted["with memory"]] == list(range(41, 61))


def test_the_rates_of_a_stream_count_the_tasks_asked_for() -> None:
    stream = _stream(World.from_seed(3), 20, first=40)
    oracle = stream.histories[demo_report.ORACLE]
    rate = stream.rate(demo_report.ORACLE, 45, 50)
    assert rate.n == 5 and rate.successes == sum(e.outcome.value == "success" for e in oracle[5:10])
    assert stream.rate(demo_report.ORACLE, 0, 45).n == 5  # tasks before the stream are not there
    assert stream.run_of(39) is None and stream.run_of(40) == 1


def test_the_difference_of_two_rates_has_an_interval_around_it() -> None:
    late, early = demo_report.Rate(20, 24), demo_report.Rate(10, 24)
    diff, low, high = demo_report.rate_difference(late, early)
    assert diff == pytest.approx(10 / 24)
    assert 0 < low < diff < high < 1
    same = demo_report.rate_difference(early, early)
    assert same[0] == 0 and same[1] < 0 < same[2]


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


def _polylines(svg: ET.Element) -> list[list[ET.Element]]:
    """Each panel's polylines (rate, then reward)."""
    return [list(g.iter(f"{SVG}polyline"))
            for g in svg.iter(f"{SVG}g") if g.get("class") == "panel"]


def _xs(line: ET.Element) -> list[float]:
    return [float(point.split(",")[0]) for point in str(line.get("points")).split()]


def test_the_plot_shows_the_filling_window_and_its_legend_covers_no_line() -> None:
    curves = {"top line": _curve(40, 10, 0.98), "middle": _curve(40, 10, 0.5),
              "bottom line": _curve(40, 10, 0.02)}
    curves["top line"] = [LearningSnapshot(s.index, s.episode_id, 0, s.cumulative_reward, 1.0, 1.0,
                                           s.window_count) for s in curves["top line"]]
    svg = ET.fromstring(plot_learning_curve(curves, title="t").svg)
    rate, reward = _polylines(svg)
    solid = [line for line in rate if line.get("class") == "line"]
    faded = [line for line in rate if line.get("class") == "filling-line"]
    # tasks 101-109 had a window of fewer than 10: drawn faded, from the fifth task, joined up
    assert [len(_xs(line)) for line in solid] == [31] * 3  # tasks 110-140: full windows only
    assert [len(_xs(line)) for line in faded] == [6] * 3  # tasks 105-110
    assert all(f.get("stroke") == s.get("stroke") and float(str(f.get("stroke-opacity"))) < 1
               and _xs(f)[-1] == _xs(s)[0] for f, s in zip(faded, solid, strict=True))
    assert len({line.get("stroke") for line in solid}) == 3
    assert [len(_xs(line)) for line in reward] == [40] * 3  # the reward from the first task
    (shade,) = [r for r in svg.iter(f"{SVG}rect") if r.get("class") == "filling"]
    assert float(str(shade.get("x"))) == min(_xs(faded[0]))
    (legend,) = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "legend"]
    assert [t.text for t in legend.iter(f"{SVG}text")] == list(curves)
    lowest = max(float(str(r.get("y"))) + float(str(r.get("height")))
                 for r in svg.iter(f"{SVG}rect") if r.get("fill") == "none")  # the panels' boxes
    assert min(float(str(t.get("y1"))) for t in legend.iter(f"{SVG}line")) > lowest + 20
    bottom = max(float(str(t.get("y"))) for t in legend.iter(f"{SVG}text"))
    assert float(str(svg.get("height"))) > bottom  # the legend is inside the picture


def test_the_plot_marks_where_a_run_begins_and_takes_line_styles() -> None:
    curves = {"with memory": _curve(40, 10, 0.8), "oracle": _curve(40, 10, 0.9),
              "random strategy": _curve(40, 10, 0.3)}
    svg = ET.fromstring(plot_learning_curve(curves, marks={121: "run 2"},
                                            styles={"random strategy": ":"}).svg)
    marks = [line for line in svg.iter(f"{SVG}line") if line.get("class") == "mark"]
    assert len(marks) == 2 and len({(m.get("x1"), m.get("x2")) for m in marks}) == 1
    assert [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "mark-label"] == ["run 2"]
    rate, _ = _polylines(svg)
    dashes = {line.get("data-label"): line.get("stroke-dasharray") for line in rate
              if line.get("class") == "line"}
    assert dashes == {"with memory": None, "oracle": "6 3", "random strategy": "1.5 2.5"}
    assert rate[-1].get("data-label") == "with memory"  # the solid curve is drawn on top
    with pytest.raises(ValueError, match="Line style"):
        plot_learning_curve(curves, styles={"oracle": "dashed"})
