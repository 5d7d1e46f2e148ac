"""What a new user trips over: checks that fail fast run before the model loads, reports that
say what happened (skipped items, a user with no data), counts in words, and only the options a
command uses."""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.cli.main import build_parser
from langgraph_episodic.cli.parser import COMMANDS
from langgraph_episodic.graph import open_checkpointer, thread_config

from .conftest import HASH, CliResult, Seeded, open_hash_store

Cli = Callable[..., CliResult]

MODEL_DIMS = 384
"""The packaged model's dimensions: a store written with them passes the CLI's dims check."""


class WatchedModel(HashEmbeddings):
    """Stands in for the packaged model: 384-dim vectors, and a ``load`` that is recorded."""

    def __init__(self) -> None:
        super().__init__(MODEL_DIMS)
        self.loads = 0

    @property
    def loaded(self) -> bool:
        return self.loads > 0

    def load(self) -> WatchedModel:
        self.loads += 1
        return self


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> WatchedModel:
    """The embedder factory the CLI uses for ``--embeddings model`` (the default), watched."""
    import langgraph_episodic.embeddings as embeddings

    watched = WatchedModel()
    monkeypatch.setattr(embeddings, "default_embeddings", lambda: watched)
    return watched


@pytest.fixture
def model_store(tmp_path: Path) -> Path:
    """A store written with 384-dim vectors holding two memories of alice."""
    path = tmp_path / "model-store"
    with ChromaStore.persistent(path, index={"dims": MODEL_DIMS, "embed": HashEmbeddings(MODEL_DIMS)}) as s:
        s.put(("memories", "alice"), "coffee", {"text": "Alice drinks espresso"})
        s.put(("memories", "alice"), "tea", {"text": "Alice likes green tea"})
    return path


HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.pwrite(fd, f"{os.getpid()} held-by-a-test".encode(), 0)
print("ready", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def locked(model_store: Path) -> Iterator[Path]:
    """``model_store`` with its write lock held by another process (as a running app holds it)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(model_store / "langgraph-episodic.lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        yield model_store
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def _records_file(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# --- what can fail is checked before the model loads --------------------------------------


def test_search_loads_the_model_once_on_a_usable_store(
    cli: Cli, model: WatchedModel, model_store: Path
) -> None:
    """The control for the tests below: the watched factory does see the load."""
    code, out, err = cli("search", "espresso", "--path", str(model_store))
    assert code == 0, err
    assert model.loads == 1 and "loading the embedding model" in err
    assert "memories/alice/coffee" in out


def test_search_of_a_locked_folder_fails_before_loading_the_model(
    cli: Cli, model: WatchedModel, locked: Path
) -> None:
    code, _, err = cli("search", "espresso", "--path", str(locked))
    assert code == 2
    assert "being written by another process" in err and "--url" in err
    assert model.loads == 0 and "loading the embedding model" not in err


@pytest.mark.parametrize("on_conflict", ["error", "skip", "overwrite"])
def test_import_into_a_locked_folder_fails_before_loading_the_model(
    cli: Cli, model: WatchedModel, locked: Path, tmp_path: Path, on_conflict: str
) -> None:
    file = _records_file(tmp_path / "new.jsonl", [
        {"namespace": ["memories", "bob"], "key": "pet", "value": {"text": "Bob has a cat"}},
    ])  # fmt: skip
    code, _, err = cli("import", str(file), "--path", str(locked), "--on-conflict", on_conflict)
    assert code == 2
    assert "being written by another process" in err
    assert model.loads == 0 and "loading the embedding model" not in err


def test_an_import_conflict_is_reported_before_loading_the_model(
    cli: Cli, model: WatchedModel, model_store: Path, tmp_path: Path
) -> None:
    file = _records_file(tmp_path / "clash.jsonl", [
        {"namespace": ["memories", "alice"], "key": "coffee", "value": {"text": "Alice: flat white"}},
        {"namespace": ["memories", "bob"], "key": "pet", "value": {"text": "Bob has a cat"}},
    ])  # fmt: skip
    code, _, err = cli("import", str(file), "--path", str(model_store))
    assert code == 2
    assert "1 item exists already" in err and "--on-conflict skip" in err
    assert model.loads == 0 and "loading the embedding model" not in err


# --- reports say what happened ------------------------------------------------------------


def test_import_skip_says_how_many_it_skipped(
    cli: Cli, model: WatchedModel, model_store: Path, tmp_path: Path
) -> None:
    existing = [
        {"namespace": ["memories", "alice"], "key": key, "value": {"text": f"other {key}"}}
        for key in ("coffee", "tea")
    ]
    file = _records_file(tmp_path / "again.jsonl", existing)
    code, _, err = cli("import", str(file), "--path", str(model_store), "--on-conflict", "skip")
    assert code == 0, err
    assert "imported 0 items" in err and "skipped 2 items that exist already" in err
    assert model.loads == 0  # nothing left to embed: no model

    file = _records_file(tmp_path / "more.jsonl", [
        *existing, {"namespace": ["memories", "bob"], "key": "pet", "value": {"text": "a cat"}},
    ])  # fmt: skip
    code, _, err = cli("import", str(file), "--path", str(model_store), "--on-conflict", "skip")
    assert code == 0, err
    assert "imported 1 item " in err and "skipped 2 items that exist already" in err
    assert model.loads == 1
    with ChromaStore.persistent(model_store, index=None) as store:
        coffee = store.get(("memories", "alice"), "coffee")
        assert coffee is not None and coffee.value == {"text": "Alice drinks espresso"}


def _digests(*roots: Path) -> dict[str, str]:
    """Every file under ``roots`` (the lock file aside) with a digest of its bytes."""
    found = {}
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for f in files:
            if f.name != "langgraph-episodic.lock":
                found[str(f)] = hashlib.sha256(f.read_bytes()).hexdigest()
    return found


def test_forget_of_a_user_without_data_says_so_and_leaves_the_files_alone(
    cli: Cli, seeded_store: Seeded
) -> None:
    checkpoints = seeded_store.path / "checkpoints.sqlite"
    with open_checkpointer(checkpoints) as saver:
        from langgraph.graph import START, MessagesState, StateGraph

        builder = StateGraph(MessagesState)
        builder.add_node("echo", lambda state: {"messages": [("ai", "ok")]})
        builder.add_edge(START, "echo")
        builder.compile(checkpointer=saver).invoke(
            {"messages": [("user", "hi")]}, thread_config("bob", "s1")
        )
    with open_hash_store(seeded_store.path) as store:  # leaves deleted rows a purge would drop
        store.put(("memories", "bob"), "gone", {"text": "soon deleted"})
        store.delete(("memories", "bob"), "gone")
    before = _digests(seeded_store.path)
    code, out, err = cli("forget", "--user", "nobody", "--path", str(seeded_store.path), "--yes")
    assert code == 0, err
    assert "no data of user 'nobody'" in out and "left untouched" in out
    assert _digests(seeded_store.path) == before

    code, out, err = cli("forget", "--user", "nobody", "--path", str(seeded_store.path), "--yes",
                         "--json")  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    assert report["items_deleted"] == 0 and report["purges"] == [] and report["untouched"]
    assert _digests(seeded_store.path) == before


def test_forget_still_finds_a_user_whose_only_data_is_a_crashs_leftovers(
    cli: Cli, tmp_path: Path
) -> None:
    """A namespace the registry lost and a vector whose item is gone are the user's data too:
    not "no data"."""
    from langgraph_episodic.chroma.testing import lose_namespace_record, plant_orphan_vector

    path = tmp_path / "store"
    with open_hash_store(path) as store:
        store.put(("memories", "bob"), "pet", {"text": "Bob has a cat"})
        store.put(("notes", "carol"), "n1", {"text": "zqxlostmarker in a lost namespace"})
        plant_orphan_vector(
            store, ("memories", "dave"), "ghost", "zqxorphanmarker of a write that never finished"
        )
        lose_namespace_record(store, ("notes", "carol"))
    for user, marker in (("carol", b"zqxlostmarker"), ("dave", b"zqxorphanmarker")):
        code, out, err = cli("forget", "--user", user, "--path", str(path), "--yes", "--json")
        assert code == 0, err
        report = json.loads(out)
        assert not report.get("untouched"), user
        assert report["purged"], user
        assert not any(marker in f.read_bytes() for f in path.rglob("*") if f.is_file()), user


# --- counts in words ----------------------------------------------------------------------


def test_counts_of_one_are_singular(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "one"
    with open_hash_store(path) as store:
        store.put(("memories", "erin"), "k", {"text": "Erin rows"})
    code, out, err = cli("stats", "--path", str(path))
    assert code == 0, err
    assert ": 1 item in 1 namespace" in out.splitlines()[0]
    code, _, err = cli("export", str(tmp_path / "one.jsonl"), "--path", str(path))
    assert code == 0 and "exported 1 item from" in err, err
    code, _, err = cli("import", str(tmp_path / "one.jsonl"), "--path", str(tmp_path / "copy"),
                       *HASH)  # fmt: skip
    assert code == 0 and "imported 1 item into" in err, err
    code, out, err = cli("verify", "--path", str(path))
    assert code == 0 and ": 1 item, 1 vector record" in out, err
    code, out, err = cli("forget", "--user", "erin", "--path", str(path), "--yes")
    assert code == 0, err
    assert "forgot user 'erin': 1 item in 1 namespace, 0 threads" in out
    assert "memories/erin: 1 item\n" in out + "\n"
    for text in (out, err):
        assert " 1 items" not in text and " 1 namespaces" not in text


def test_sweep_counts_in_words(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "ttl"
    with open_hash_store(path) as store:
        store.put(("memories", "erin"), "k", {"text": "Erin rows"}, ttl=0.0001)
    import time

    time.sleep(0.05)
    code, out, err = cli("sweep", "--path", str(path))
    assert code == 0, err
    assert "removed 1 expired item from" in out


# --- only the options a command uses ------------------------------------------------------


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


EMBEDDING_COMMANDS = {"search", "import", "demo", "mcp", "ui"}
"""The commands that embed text (an import embeds what it writes, mcp what its tools save, the
inspector its edits)."""


@pytest.mark.parametrize("command", list(COMMANDS))
def test_embeddings_is_offered_only_where_text_is_embedded(command: str) -> None:
    options = _subparsers()[command]._option_string_actions
    assert ("--embeddings" in options) == (command in EMBEDDING_COMMANDS)


def test_a_command_that_never_embeds_refuses_embeddings(cli: Cli, seeded_store: Seeded) -> None:
    code, _, err = cli("stats", "--path", str(seeded_store.path), *HASH)
    assert code == 2 and "unrecognized arguments: --embeddings" in err


@pytest.mark.parametrize("user", ["nobody", None])
def test_search_with_nothing_to_search_answers_without_loading_the_model(
    cli: Cli, model: WatchedModel, tmp_path: Path, model_store: Path, user: str | None
) -> None:
    empty = tmp_path / "empty"
    ChromaStore.persistent(empty, index={"dims": MODEL_DIMS, "embed": HashEmbeddings(MODEL_DIMS)}).close()
    path, who = (model_store, ["--user", user]) if user else (empty, [])
    code, out, err = cli("search", "espresso", "--path", str(path), *who)
    assert code == 0, err
    assert out.strip() == "no results"
    assert "holds no items" in err and (user is None or f"of user {user!r}" in err)
    assert model.loads == 0 and "loading the embedding model" not in err
