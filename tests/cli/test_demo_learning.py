"""The demo shows learning: a fresh memory starts cold and gains from its first fifth of tasks to
its last, a second run continues from where the first ended, the curve's data is written as CSV
beside the plot, and the memory's column is what the store recorded (the strategies chosen from
the store by the strategy node, not a scripted curve).

One short seeded run (30 tasks, then 15) with the test embedder; seed 0 is one where both
properties show on so few tasks (docs/cli.md gives how often they hold on the default run length).
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

from langgraph_episodic import EpisodicMemory
from langgraph_episodic.cli.demo import DEMO_USER, PROGRESS_NAMESPACE
from langgraph_episodic.cli.simulation import STRATEGIES, World

from .conftest import HASH, CliResult, open_hash_store

Cli = Callable[..., CliResult]
SEED, FIRST_RUN, SECOND_RUN = 0, 30, 15


@pytest.fixture(autouse=True)
def _work_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _rate(rows: list[dict[str, str]], key: str) -> float:
    return sum(int(r[f"{key}_success"]) for r in rows) / len(rows)


def test_memory_learns_from_a_cold_start_and_the_second_run_continues(
    cli: Cli, tmp_path: Path
) -> None:
    path, plot = tmp_path / "demo", tmp_path / "curve.svg"
    outputs = []
    for tasks in (FIRST_RUN, SECOND_RUN):
        code, out, err = cli("demo", "--tasks", str(tasks), "--seed", str(SEED), "--path",
                             str(path), "--plot", str(plot), *HASH)
        assert code == 0, err
        outputs.append(out)
    with (tmp_path / "curve.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["task"]) for r in rows] == list(range(1, FIRST_RUN + SECOND_RUN + 1))
    assert [r["run"] for r in rows] == ["1"] * FIRST_RUN + ["2"] * SECOND_RUN

    run1, run2 = rows[:FIRST_RUN], rows[FIRST_RUN:]
    fifth = FIRST_RUN // 5
    early, late = _rate(run1[:fifth], "memory"), _rate(run1[-fifth:], "memory")
    assert late - early >= 0.15, (early, late)
    gain = f"With memory, last fifth minus first fifth: {(late - early) * 100:+.0f} points"
    assert gain in outputs[0]
    assert _rate(run2, "memory") >= late  # the second run starts from what the first learnt
    assert _rate(run2[: SECOND_RUN // 5], "memory") > early

    # the memory's column is what the store recorded, task by task
    with open_hash_store(path) as store:
        episodes = EpisodicMemory.for_user(store, DEMO_USER).episodes()
    assert [(e.strategy_used, int(e.outcome.value == "success")) for e in episodes] == [
        (r["memory_strategy"], int(r["memory_success"])) for r in rows
    ]


def test_the_baselines_are_random_the_best_single_strategy_and_the_oracle(
    cli: Cli, tmp_path: Path
) -> None:
    code, _, err = cli("demo", "--tasks", "20", "--seed", str(SEED), "--path",
                       str(tmp_path / "demo"), *HASH)
    assert code == 0, err
    with (tmp_path / "learning_curve.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    world = World.from_seed(SEED)
    sims = [world.task(i) for i in range(20)]
    assert [r["random_strategy"] for r in rows] == [world.random_strategy(i) for i in range(20)]
    assert [r["oracle_strategy"] for r in rows] == [world.best(s.task.category) for s in sims]
    single = {r["best_single_strategy"] for r in rows}
    assert len(single) == 1
    # chosen with hindsight: no other single strategy succeeds more often on these tasks
    wins = {s: sum(world.grade(sim, s)[1].value == "success" for sim in sims) for s in STRATEGIES}
    assert sum(int(r["best_single_success"]) for r in rows) == max(wins.values())
    for key in ("memory", "best_single", "random", "oracle"):
        window = [int(r[f"{key}_success"]) for r in rows][-int(rows[-1]["window_tasks"]):]
        assert float(rows[-1][f"{key}_rolling"]) == pytest.approx(sum(window) / len(window))


def test_a_store_of_an_older_demo_continues_with_the_right_run_number(
    cli: Cli, tmp_path: Path
) -> None:
    """An older demo stored no run starts: the new run is numbered after the runs it counted."""
    path = tmp_path / "demo"
    with open_hash_store(path) as store:
        store.put(PROGRESS_NAMESPACE, "progress", {"seed": SEED, "next_task": 10, "runs": 2})
    code, out, err = cli("demo", "--tasks", "5", "--path", str(path), *HASH)
    assert code == 0, err
    assert "run 3 on" in out and "tasks 11-15" in out
    with (tmp_path / "learning_curve.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["task"], r["run"]) for r in rows] == [(str(t), "3") for t in range(11, 16)]
    assert cli("demo", "--tasks", "3", "--path", str(path), *HASH)[0] == 0
    with (tmp_path / "learning_curve.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["task"], r["run"]) for r in rows] == [(str(t), "4") for t in range(16, 19)]
    with open_hash_store(path) as store:
        progress = store.get(PROGRESS_NAMESPACE, "progress")
    assert progress is not None and progress.value["run_starts"] == [10, 15]
