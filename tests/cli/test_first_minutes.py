"""What a new user meets first: commands that start without the model, readable search hits,
``--version``, hand-written import files, and a store on a read-only mount."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from langgraph_episodic import __version__
from langgraph_episodic.cli.main import build_parser

from .conftest import HASH, CliResult, Seeded, open_hash_store

Cli = Callable[..., CliResult]

PROBE = """
import json, sys
from langgraph_episodic.cli.main import main
code = main(sys.argv[1:])
heavy = [m for m in ("torch", "transformers", "sentence_transformers", "langchain.agents",
                    "langgraph_episodic.facts") if m in sys.modules]
print(json.dumps({"code": code, "heavy": heavy}))
"""

STARTUP_PROBE = """
import argparse, os, sys
quiet = open(os.devnull, "w")
out, sys.stdout = sys.stdout, quiet
floor = argparse.ArgumentParser(prog="floor")  # what argparse imports to print help or version
floor.add_argument("--version", action="version", version="floor 1")
for argv in (["--help"], ["--version"], ["--bogus"]):
    sys.stderr, stderr = quiet, sys.stderr
    try:
        floor.parse_args(argv)
    except SystemExit:
        pass
    sys.stderr = stderr
before = set(sys.modules)
from langgraph_episodic.cli.main import main
code = main(sys.argv[1:])
sys.stdout = out
print(code, *sorted(set(sys.modules) - before))
"""

PLAIN_RECORDS = [
    {"namespace": ["notes", "alice"], "key": "n1", "value": {"text": "no vector"}, "index": False},
]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _argv_for(command: str, store: Path, work: Path) -> list[str]:
    """A working command line for each command that needs no embedding."""
    plain = work / "plain.jsonl"
    plain.write_text("\n".join(json.dumps(r) for r in PLAIN_RECORDS) + "\n", encoding="utf-8")
    known = {
        "--help": ["--help"],
        "--version": ["--version"],
        "stats": ["stats", "--path", str(store)],
        "export": ["export", str(work / "out.jsonl"), "--path", str(store)],
        "import": ["import", str(plain), "--path", str(work / "fresh")],
        "forget": ["forget", "--user", "bob", "--path", str(store)],
        "history": ["history", "--user", "alice", "--path", str(store)],
        "sweep": ["sweep", "--path", str(store)],
    }
    argv = known.get(command, [command, "--path", str(store)])
    options = _subparsers().get(command)
    if options is not None and "--yes" in options._option_string_actions:
        argv.append("--yes")  # a command that asks for confirmation runs without asking
    return argv


def _commands_without_embedding() -> list[str]:
    # mcp and ui serve until stopped (tests/mcp_server, tests/ui); both embed what they save
    return [
        "--help", "--version",
        *(c for c in _subparsers() if c not in {"search", "demo", "mcp", "ui"}),
    ]


@pytest.mark.parametrize("command", _commands_without_embedding())
def test_commands_without_embedding_never_import_torch(
    command: str, seeded_store: Seeded, tmp_path: Path
) -> None:
    """Each command runs to its end (exit code 0) without importing torch or the model, nor
    (but ``history``, which reads facts) the facts package and LangChain's agent stack, which
    cost a store command about a second of its start."""
    argv = _argv_for(command, seeded_store.path, tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    allowed = {"langchain.agents", "langgraph_episodic.facts"} if command == "history" else set()
    assert set(report["heavy"]) <= allowed, f"{command} imported {report['heavy']}"


@pytest.mark.parametrize(
    "argv", [["--help"], ["--version"], ["stats", "--help"], ["demo", "--help"]], ids=" ".join
)
def test_help_and_version_import_only_the_parser(argv: list[str]) -> None:
    """``--help`` and ``--version`` import argparse and the parser, nothing else of ours or
    anyone's (a fresh process; the modules argparse itself needs to print are the baseline)."""
    done = subprocess.run(
        [sys.executable, "-c", STARTUP_PROBE, *argv], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    code, *imported = done.stdout.split()
    assert code == "0"
    assert imported == [
        "langgraph_episodic",
        "langgraph_episodic.cli",
        "langgraph_episodic.cli.main",
        "langgraph_episodic.cli.parser",
    ]


def test_version(cli: Cli) -> None:
    code, out, _ = cli("--version")
    assert code == 0 and out.strip() == f"langgraph-episodic {__version__}"


def test_search_shows_readable_hits_and_json_keeps_the_raw_form(
    cli: Cli, seeded_store: Seeded
) -> None:
    long_text = "Alice keeps a travel diary: " + " ".join(f"day {i} in Lisbon" for i in range(40))
    with open_hash_store(seeded_store.path) as store:
        store.put(("memories", "alice"), "diary", {"kind": "diary", "text": long_text})
        store.put(("memories", "alice"), "nested", {"n": 1, "note": {"body": "Alice diary nested"}})
    code, out, err = cli("search", "Alice diary Lisbon", "--path", str(seeded_store.path), *HASH)
    assert code == 0, err
    first, text = out.splitlines()[:2]
    assert first.startswith(" 1. memories/alice/diary  (score ") and first.endswith(")")
    width = len(text.strip())
    assert text.strip().startswith("Alice keeps a travel diary: day 0 in Lisbon day 1")
    assert text.strip().endswith("…") and width < len(long_text)
    assert "Alice diary nested" in out  # the first text field of a nested value
    assert "{" not in out  # no raw JSON in the readable form

    code, out, _ = cli("search", "Alice diary Lisbon", "--path", str(seeded_store.path), *HASH,
                       "--json")
    hits = json.loads(out)
    diary = next(h for h in hits if h["key"] == "diary")
    assert diary["value"] == {"kind": "diary", "text": long_text}
    assert diary["namespace"] == ["memories", "alice"] and isinstance(diary["score"], float)


def test_import_accepts_minimal_hand_written_records(cli: Cli, tmp_path: Path) -> None:
    lines = [
        {"namespace": ["memories", "carol"], "key": "jazz", "value": {"text": "Carol likes jazz"}},
        {"namespace": ["memories", "carol"], "key": "old", "value": {"text": "Carol moved"},
         "created_at": "2020-01-02T03:04:05+00:00"},
    ]
    file = tmp_path / "hand.jsonl"
    file.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    before = datetime.now(timezone.utc)
    code, _, err = cli("import", str(file), "--path", str(tmp_path / "store"), *HASH)
    after = datetime.now(timezone.utc)
    assert code == 0, err
    with open_hash_store(tmp_path / "store") as store:
        jazz = store.get(("memories", "carol"), "jazz")
        old = store.get(("memories", "carol"), "old")
        assert jazz is not None and old is not None
        assert before <= jazz.created_at <= after and jazz.updated_at == jazz.created_at
        assert old.created_at == old.updated_at == datetime(2020, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
        assert [h.key for h in store.search(("memories",), query="jazz", limit=1)] == ["jazz"]


@pytest.fixture
def read_only_store(seeded_store: Seeded, tmp_path: Path) -> Iterator[Path]:
    """The seeded store bind-mounted read-only (needs the right to mount: root in a container)."""
    mount = tmp_path / "ro"
    mount.mkdir()
    done = subprocess.run(["mount", "--bind", str(seeded_store.path), str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount here ({done.stderr.strip()}); read-only test not run")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(mount)], check=True)
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_store_on_a_read_only_mount_can_be_read(
    cli: Cli, read_only_store: Path, seeded_store: Seeded, tmp_path: Path
) -> None:
    path = str(read_only_store)
    code, out, err = cli("stats", "--path", path)
    assert code == 0, err
    assert f"{sum(seeded_store.counts.values())} items" in out and "read-only" in err
    code, out, err = cli("search", "espresso", "--path", path, *HASH)
    assert code == 0 and "memories/alice/coffee" in out, err
    code, out, err = cli("export", "-", "--path", path)
    assert code == 0 and len(out.splitlines()) == sum(seeded_store.counts.values()), err
    for argv in (["sweep"], ["forget", "--user", "bob"], ["purge"]):
        code, _, err = cli(*argv, "--path", path)
        assert code == 2 and "cannot be written" in err and "--path <copy>" in err
    with open_hash_store(seeded_store.path) as store:  # nothing changed underneath
        assert len(store.search(("memories", "bob"))) == seeded_store.counts[("memories", "bob")]


@pytest.mark.model
def test_search_says_it_loads_the_model_and_nothing_else_leaks(tmp_path: Path) -> None:
    """With the packaged model: one line on stderr while it loads; no library bars or
    warnings; a readable hit on stdout."""
    file = tmp_path / "one.jsonl"
    file.write_text(json.dumps({"namespace": ["notes"], "key": "tea",
                                "value": {"text": "Alice drinks green tea"}}) + "\n")
    run = [sys.executable, "-m", "langgraph_episodic"]
    store = str(tmp_path / "store")
    subprocess.run([*run, "import", str(file), "--path", store], check=True, capture_output=True)
    done = subprocess.run([*run, "search", "what does alice drink", "--path", store],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "loading the embedding model…\n"
    assert done.stdout.splitlines()[0].startswith(" 1. notes/tea  (score ")
    assert done.stdout.splitlines()[1].strip() == "Alice drinks green tea"
