"""The command line cannot be turned against its user: forget asks first, a wrong
--checkpoints is refused untouched, export never follows a planted symlink, import never
silently overwrites or resurrects, and broken input or a closed pipe ends without a traceback."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp

from langgraph_episodic.graph import list_sessions, open_checkpointer

from .conftest import HASH, CliResult, Seeded, open_hash_store
from .test_store_commands import _make_thread

Cli = Callable[..., CliResult]


class Terminal(io.StringIO):
    """A stdin that is a terminal and answers ``answer``."""

    def __init__(self, answer: str) -> None:
        super().__init__(answer)

    def isatty(self) -> bool:
        return True


def alice_count(path: Path) -> int:
    with open_hash_store(path) as store:
        return len(store.search(("memories", "alice"), limit=100))


# --- forget ---------------------------------------------------------------------------------


def test_forget_without_a_terminal_and_without_yes_deletes_nothing(
    cli: Cli, seeded_store: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))  # piped "y" is not a confirmation
    code, out, err = cli("forget", "--user", "alice", "--path", str(seeded_store.path))
    assert code == 2 and "--yes" in err and "Traceback" not in err and out == ""
    assert alice_count(seeded_store.path) == 2


@pytest.mark.parametrize("answer", ["n\n", "\n", "maybe\n", ""])
def test_forget_asks_and_anything_but_yes_keeps_the_data(
    cli: Cli, seeded_store: Seeded, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    monkeypatch.setattr(sys, "stdin", Terminal(answer))
    code, _, err = cli("forget", "--user", "alice", "--path", str(seeded_store.path))
    assert code == 2 and "Not confirmed" in err
    assert "memories/alice: 2 items" in err and "episodes/alice: 3 items" in err  # the preview
    assert alice_count(seeded_store.path) == 2


def test_forget_confirmed_on_the_terminal_reports_deletion_purge_and_check(
    cli: Cli, seeded_store: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoints = seeded_store.path / "checkpoints.sqlite"
    _make_thread(checkpoints, "alice", "s1")
    monkeypatch.setattr(sys, "stdin", Terminal("y\n"))
    code, out, err = cli("forget", "--user", "alice", "--path", str(seeded_store.path))
    assert code == 0, err
    assert "forgot user 'alice': 5 items in 2 namespaces, 1 thread" in out
    assert f"files: Chroma folder {seeded_store.path}: purged" in out
    assert f"files: SQLite checkpoints {checkpoints}: purged" in out
    assert "a second pass found nothing left" in out
    assert alice_count(seeded_store.path) == 0
    data = b"".join(p.read_bytes() for p in seeded_store.path.rglob("*") if p.is_file())
    assert b"espresso" not in data and b"Neovim" not in data  # alice's texts
    assert b"Miso" in data  # bob's stay

    code, out, _ = cli("forget", "--user", "alice", "--path", str(seeded_store.path), "--json")
    report = json.loads(out)  # nothing to delete: no question asked, the files left alone
    assert code == 0 and report["items_deleted"] == 0 and report["untouched"]
    assert report["purges"] == []
    assert report["left_after"] == {"items": 0, "thread_ids": []}


def test_forget_with_shapes_reaches_namespaces_of_your_own(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "store"
    with open_hash_store(path) as store:
        store.put(("alice", "notes"), "n", {"text": "alice's own note"})
        store.put(("working_memory", "bob", "alice"), "t", {"text": "bob's session 'alice'"})
    code, out, _ = cli("forget", "--user", "alice", "--path", str(path), "--yes", "--json",
                       "--shape", "*/{user_id}", "--shape", "{user_id}/notes")  # fmt: skip
    assert code == 0
    assert [d["namespace"] for d in json.loads(out)["deleted"]] == [["alice", "notes"]]
    with open_hash_store(path) as store:
        assert store.get(("working_memory", "bob", "alice"), "t") is not None


@pytest.mark.parametrize("content", [b"just some notes\n", b"\x00\x01binary"])
def test_forget_refuses_a_checkpoints_file_that_is_not_sqlite(
    cli: Cli, seeded_store: Seeded, tmp_path: Path, content: bytes
) -> None:
    other = tmp_path / "notes.txt"
    other.write_bytes(content)
    code, _, err = cli("forget", "--user", "alice", "--path", str(seeded_store.path), "--yes",
                       "--checkpoints", str(other))  # fmt: skip
    assert code == 2 and "not a SQLite database" in err
    assert other.read_bytes() == content
    assert alice_count(seeded_store.path) == 2


def test_forget_refuses_a_foreign_sqlite_database_and_creates_no_tables(
    cli: Cli, seeded_store: Seeded, tmp_path: Path
) -> None:
    foreign = tmp_path / "app.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    con.commit()
    con.close()
    chroma_file = seeded_store.path / "chroma.sqlite3"  # the classic slip
    tables_before = {p: _tables(p) for p in (foreign, chroma_file)}
    for target in (foreign, chroma_file):
        code, _, err = cli("forget", "--user", "alice", "--path", str(seeded_store.path),
                           "--yes", "--checkpoints", str(target))  # fmt: skip
        assert code == 2 and "not LangGraph checkpoints" in err, err
    assert {p: _tables(p) for p in (foreign, chroma_file)} == tables_before
    assert alice_count(seeded_store.path) == 2


def _tables(path: Path) -> set[str]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
    finally:
        con.close()


def test_forget_with_an_empty_checkpoints_file_creates_no_tables(
    cli: Cli, seeded_store: Seeded, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    code, _, _ = cli("forget", "--user", "alice", "--path", str(seeded_store.path), "--yes",
                     "--checkpoints", str(empty))  # fmt: skip
    assert code == 0 and empty.read_bytes() == b""
    with open_checkpointer(seeded_store.path / "unused.sqlite") as saver:
        assert list_sessions(saver, "alice") == []


# --- export -----------------------------------------------------------------------------------


def test_export_never_follows_a_planted_symlink(
    cli: Cli, seeded_store: Seeded, tmp_path: Path
) -> None:
    decoy = tmp_path / "decoy.txt"
    decoy.write_text("precious")
    out = tmp_path / "dump.jsonl"
    for planted in (tmp_path / "dump.jsonl.partial", tmp_path / ".dump.jsonl.partial"):
        planted.symlink_to(decoy)
    code, _, err = cli("export", str(out), "--path", str(seeded_store.path))
    assert code == 0, err
    assert decoy.read_text() == "precious"
    assert len(out.read_text().splitlines()) == 9
    assert out.stat().st_mode & 0o077 == 0  # the export is readable by its owner only
    # A symlink at the destination itself is replaced, its target never written.
    out.unlink()
    out.symlink_to(decoy)
    code, _, _ = cli("export", str(out), "--path", str(seeded_store.path))
    assert code == 0 and not out.is_symlink() and decoy.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir() if "partial" in p.name) == [
        ".dump.jsonl.partial", "dump.jsonl.partial"]  # fmt: skip  # only the planted ones


def test_export_piped_into_head_ends_quietly(seeded_store: Seeded) -> None:
    with open_hash_store(seeded_store.path) as store:
        store.batch([PutOp(("bulk",), f"k{i}", {"text": "x" * 200}, index=False)
                     for i in range(3000)])  # fmt: skip
    cmd = [sys.executable, "-m", "langgraph_episodic.cli.main", "export", "-",
           "--path", str(seeded_store.path)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.read(100)  # what `head -c 100` would read, then it goes away
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert first.startswith(b"{")
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert code == 141


# --- import -----------------------------------------------------------------------------------


def _record(**changes: Any) -> dict[str, Any]:
    return {"namespace": ["memories", "carol"], "key": "k", "value": {"text": "imported"},
            "created_at": "2024-05-01T10:00:00+00:00",
            "updated_at": "2024-05-01T10:00:00+00:00", **changes}  # fmt: skip


def _write(path: Path, *records: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_deeply_nested_line_is_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    for depth in (100, 100_000):
        dump = tmp_path / f"deep{depth}.jsonl"
        nested = "[" * depth + "]" * depth
        dump.write_text(json.dumps(_record())[:-1] + f', "value": {{"x": {nested}}}}}\n')
        code, _, err = cli("import", str(dump), "--path", str(tmp_path / "s"), *HASH)
        assert code == 2 and "nested more than 64 levels" in err, err[-500:]
        assert "RecursionError" not in err and "Traceback" not in err


def coffee_text(store: Any) -> str:
    item = store.get(("memories", "alice"), "coffee")
    assert item is not None
    return str(item.value["text"])


def test_import_refuses_existing_keys_by_default_and_lists_them(
    cli: Cli, seeded_store: Seeded, tmp_path: Path
) -> None:
    dump = _write(tmp_path / "d.jsonl",
                  _record(namespace=["memories", "alice"], key="coffee"),
                  _record(namespace=["memories", "bob"], key="pet"),
                  _record(key="new"))  # fmt: skip
    path = str(seeded_store.path)
    code, _, err = cli("import", str(dump), "--path", path, *HASH)
    assert code == 2 and "2 items exist already" in err
    assert "memories/alice 'coffee'" in err and "memories/bob 'pet'" in err
    with open_hash_store(seeded_store.path) as store:
        assert store.get(("memories", "carol"), "new") is None
        assert "espresso" in coffee_text(store)

    code, _, _ = cli("import", str(dump), "--path", path, *HASH, "--on-conflict", "skip")
    with open_hash_store(seeded_store.path) as store:
        assert code == 0 and store.get(("memories", "carol"), "new") is not None
        assert "espresso" in coffee_text(store)

    code, _, _ = cli("import", str(dump), "--path", path, *HASH, "--on-conflict", "overwrite")
    with open_hash_store(seeded_store.path) as store:
        assert code == 0 and coffee_text(store) == "imported"


def test_import_refuses_expired_items_unless_asked(cli: Cli, tmp_path: Path) -> None:
    dump = _write(tmp_path / "d.jsonl",
                  _record(index=["text"], ttl=60.0, expires_at="2024-05-01T11:00:00+00:00"),
                  _record(key="live"))  # fmt: skip
    code, _, err = cli("import", str(dump), "--path", str(tmp_path / "s"), *HASH)
    assert code == 2 and "expired at 2024-05-01T11:00:00+00:00" in err and "--keep-expired" in err
    assert not (tmp_path / "s").exists()
    code, _, err = cli("import", str(dump), "--path", str(tmp_path / "s"), *HASH, "--keep-expired")
    assert code == 0, err
    with open_hash_store(tmp_path / "s") as store:
        assert store.get(("memories", "carol"), "k") is None  # expired: never returned
        assert store.get(("memories", "carol"), "live") is not None


@pytest.mark.parametrize("changes", [
    {"index": ["text"], "ttl": 1e300, "expires_at": None},
    {"index": ["text"], "ttl": 60.0, "expires_at": "9999-01-01T00:00:00+00:00"},
])  # fmt: skip
def test_import_refuses_a_huge_ttl(cli: Cli, tmp_path: Path, changes: dict[str, Any]) -> None:
    dump = _write(tmp_path / "d.jsonl", _record(**changes))
    code, _, err = cli("import", str(dump), "--path", str(tmp_path / "s"), *HASH)
    assert code == 2 and "100 years" in err and "Traceback" not in err
    assert not (tmp_path / "s").exists()
