"""The demo: runs, says what solves the tasks, continues on a second run, writes its plot."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from langgraph_episodic import EpisodicMemory
from langgraph_episodic.cli.demo import DEMO_USER, PROGRESS_NAMESPACE
from langgraph_episodic.cli.parser import DEFAULT_SEED
from langgraph_episodic.cli.simulation import CATEGORIES, STRATEGIES, World
from langgraph_episodic.graph import list_sessions, open_checkpointer, thread_config

from .conftest import HASH, CliResult, open_hash_store

Cli = Callable[..., CliResult]
SVG_START = "<svg "


@pytest.fixture(autouse=True)
def _work_in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo writes its plot into the working folder: keep it out of the checkout."""
    monkeypatch.chdir(tmp_path)


def test_two_runs_continue_the_same_memory(cli: Cli, tmp_path: Path) -> None:
    path, plot = tmp_path / "demo", tmp_path / "curve.svg"
    code, out, err = cli("demo", "--tasks", "12", "--path", str(path), "--plot", str(plot), *HASH)
    assert code == 0, err
    assert "SIMULATED SOLVER" in out and "no LLM is called" in out
    assert "run 1" in out and "tasks 1-12" in out and "memory holds 0 episodes" in out
    for section in ("Learning curve", "with memory", "random strategy", "best single strategy",
                    "Skill profiles", "Replay prompt", str(plot), str(plot.with_suffix(".csv"))):
        assert section in out, section
    assert plot.read_text(encoding="utf-8").startswith(SVG_START)

    code, out, err = cli("demo", "--tasks", "8", "--path", str(path), *HASH)
    assert code == 0, err
    assert "run 2" in out and "tasks 13-20" in out and "memory holds 12 episodes" in out
    assert (tmp_path / "learning_curve.svg").read_text(encoding="utf-8").startswith(SVG_START)
    assert (tmp_path / "learning_curve.csv").is_file()

    with open_hash_store(path) as store:
        memory = EpisodicMemory.for_user(store, DEMO_USER)
        episodes = memory.episodes()
        assert len(episodes) == 20
        assert {e.strategy_used for e in episodes} <= set(STRATEGIES)
        assert sum(p.attempts for p in memory.skill_profiles().values()) == 20
        progress = store.get(PROGRESS_NAMESPACE, "progress")
        assert progress is not None and progress.value["next_task"] == 20
        assert progress.value["runs"] == 2 and progress.value["run_starts"] == [0, 12]
        # The demo's messages are task descriptions ("Find and fix the crash in the CSV
        # export"): no fact about the user, so the entity node stores nothing.
        entities = store.search(("entities", DEMO_USER), limit=100)
        assert [(e.value["name"], e.value["description"]) for e in entities] == []
    with open_checkpointer(path / "checkpoints.sqlite") as saver:
        sessions = sorted(s.session_id for s in list_sessions(saver, DEMO_USER))
    assert sessions == ["run-1", "run-2"]


def test_the_demo_keeps_one_checkpoint_per_run(cli: Cli, tmp_path: Path) -> None:
    """Each task would add a checkpoint per graph step; the demo keeps only the latest of each
    run's thread, which still resumes: its state holds the run's last task."""
    path = tmp_path / "demo"
    for tasks in ("10", "6"):
        assert cli("demo", "--tasks", tasks, "--path", str(path), *HASH)[0] == 0
    with open_checkpointer(path / "checkpoints.sqlite") as saver:
        for run, last_task in (("run-1", 10), ("run-2", 16)):
            config = thread_config(DEMO_USER, run)
            assert len(list(saver.list(config))) == 1, run
            state = saver.get_tuple(config)
            assert state is not None
            values = state.checkpoint["channel_values"]
            assert values["sim_index"] == last_task - 1
            assert World.from_seed(DEFAULT_SEED).task(last_task - 1).task.description in str(values["messages"])


def test_a_store_keeps_the_seed_of_its_first_run(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "demo"
    assert cli("demo", "--tasks", "2", "--seed", "3", "--path", str(path), *HASH)[0] == 0
    code, out, _ = cli("demo", "--tasks", "2", "--seed", "4", "--path", str(path), *HASH)
    assert code == 0
    assert "started with --seed 3" in out and "(seed 3," in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tasks", "0"], "--tasks must be at least 1"),
        (["--model", "gpt-4o"], "provider:name"),
        (["--model", "no-such-provider:model"], "Cannot create the chat model"),
        (["--plot", "curve.png"], ".svg"),
    ],
)
def test_bad_demo_options_are_reported(
    cli: Cli, tmp_path: Path, argv: list[str], message: str
) -> None:
    code, _, err = cli("demo", "--path", str(tmp_path / "demo"), *HASH, *argv)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_the_simulated_world_is_fixed_by_its_seed() -> None:
    world, again, other = World.from_seed(1), World.from_seed(1), World.from_seed(2)
    assert world.rates == again.rates and world.rates != other.rates
    assert [world.task(i) for i in range(20)] == [again.task(i) for i in range(20)]
    assert {world.task(i).task.category for i in range(200)} == set(CATEGORIES)
    for category in CATEGORIES:
        best = world.best(category)
        assert all(world.rates[category][best] > r for s, r in world.rates[category].items() if s != best)


def test_grading_follows_the_hidden_rate_of_the_strategy_used() -> None:
    world = World.from_seed(5)
    sims = [world.task(i) for i in range(400)]
    for sim in sims[:50]:
        for strategy in STRATEGIES:
            feedback, outcome = world.grade(sim, strategy)
            success = sim.draw < world.success_probability(sim.task, strategy)
            assert (outcome.value == "success") == success
            assert feedback.reward == (1.0 if success else 0.0)
    best = sum(world.grade(s, world.best(s.task.category))[1].value == "success" for s in sims)
    worst = sum(
        world.grade(s, min(world.rates[s.task.category], key=world.rates[s.task.category].get))[1].value
        == "success"
        for s in sims
    )
    assert best > 0.7 * len(sims) and worst < 0.45 * len(sims)


def test_with_a_chat_model_the_model_writes_the_answers(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from itertools import cycle

    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from langgraph_episodic.cli import demo

    answers = cycle(["def solve(): return 42  # from the chat model"])
    monkeypatch.setattr(demo, "_chat_model", lambda name: GenericFakeChatModel(messages=answers))
    path = tmp_path / "demo"
    code, out, err = cli("demo", "--tasks", "3", "--model", "fake:model", "--path", str(path), *HASH)
    assert code == 0, err
    assert "Chat model fake:model writes the answers" in out and "SIMULATED grader" in out
    with open_hash_store(path) as store:
        episodes = EpisodicMemory.for_user(store, DEMO_USER).episodes()
    assert len(episodes) == 3
    assert all("from the chat model" in e.solution for e in episodes)


@pytest.mark.model
def test_the_readme_main_job_command_runs_with_the_packaged_model(tmp_path: Path) -> None:
    """``langgraph-episodic demo`` as installed, in a fresh folder, with the real embedder."""
    script = shutil.which("langgraph-episodic") or str(Path(sys.executable).with_name("langgraph-episodic"))
    result = subprocess.run(
        [script, "demo", "--tasks", "4"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "SIMULATED SOLVER" in result.stdout
    assert "loading the embedding model…" in result.stderr  # said while the model loads
    for noise in ("Loading weights", "Warning", "it/s]"):  # no library bars or warnings
        assert noise not in result.stderr, result.stderr[-3000:]
    assert (tmp_path / ".episodic" / "chroma.sqlite3").is_file()
    assert (tmp_path / "learning_curve.svg").read_text(encoding="utf-8").startswith(SVG_START)
