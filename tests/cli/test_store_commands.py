"""stats, search, forget and sweep on an embedded store, and the errors a user can fix."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from langgraph_episodic import ChromaStore
from langgraph_episodic.graph import list_sessions, open_checkpointer, thread_config

from .conftest import HASH, CliResult, Seeded, open_hash_store

Cli = Callable[..., CliResult]


def test_stats_counts_every_namespace_and_profiles_skills(cli: Cli, seeded_store: Seeded) -> None:
    code, out, err = cli("stats", "--path", str(seeded_store.path), "--json")
    assert code == 0, err
    stats = json.loads(out)
    counts = {tuple(n["namespace"]): n["items"] for n in stats["namespaces"]}
    assert counts == seeded_store.counts
    assert stats["items"] == sum(seeded_store.counts.values())
    debugging = stats["skills"]["alice"]["debugging"]
    assert debugging["attempts"] == 3
    assert debugging["success_rate"] == pytest.approx(2 / 3, abs=1e-3)
    assert debugging["strategies"]["iterative"] == {"attempts": 2, "success_rate": 1.0}

    code, text, _ = cli("stats", "--path", str(seeded_store.path))
    assert code == 0
    assert "memories/alice2" in text and "skills of 'alice'" in text


def test_search_ranks_the_matching_item_first(cli: Cli, seeded_store: Seeded) -> None:
    code, out, err = cli("search", "espresso sugar", "--path", str(seeded_store.path), *HASH, "--json")
    assert code == 0, err
    results = json.loads(out)
    assert (results[0]["namespace"], results[0]["key"]) == (["memories", "alice"], "coffee")


def test_search_for_a_user_sees_only_that_users_namespaces(cli: Cli, seeded_store: Seeded) -> None:
    code, out, err = cli(
        "search", "drinks tea", "--user", "alice", "--path", str(seeded_store.path), *HASH, "--json"
    )
    assert code == 0, err
    namespaces = {tuple(r["namespace"]) for r in json.loads(out)}
    assert namespaces and all("alice" in ns for ns in namespaces), namespaces
    assert ("memories", "alice2") not in namespaces


def test_a_users_search_and_history_read_what_forget_would_delete(
        cli: Cli, tmp_path: Path) -> None:
    """``--user`` selects the namespaces ``forget --user`` deletes: the user's label where
    the user's label goes (an e-mail id as it is stored), never another user's namespace that
    holds it elsewhere (bob's thread named "alice@x.org")."""
    from langgraph_episodic.tools import create_memory_tools

    user, label = "alice@x.org", "alice@x%2Eorg"  # as the store holds it
    path = tmp_path / "store"
    with open_hash_store(path) as store:
        save = {t.name: t for t in create_memory_tools(store=store)}["memory_speichern"]
        for who in (user, "bob"):
            save.invoke({"information": "I drink green tea every morning."},
                        config={"configurable": {"user_id": who}})
        store.put(("working_memory", "bob", label), "note",
                  {"text": "bob's thread drinks tea"})

    code, out, err = cli("search", "drinks tea", "--user", user, "--path", str(path), *HASH,
                         "--json")
    assert code == 0, err
    found = {tuple(r["namespace"]) for r in json.loads(out)}
    assert found == {("memories", label)}, found

    code, out, err = cli("history", "--user", user, "--path", str(path), "--json")
    assert code == 0, err
    assert [(tuple(r["namespace"]), r["text"]) for r in json.loads(out)] == [
        (("memories", label), "I drink green tea every morning.")]


def test_search_leaves_out_the_librarys_bookkeeping(cli: Cli, tmp_path: Path) -> None:
    """A store fills a short page with items put without an index (score None); the deferred
    formation's queue and its leases are such items, and no memory to show."""
    path = tmp_path / "store"
    with open_hash_store(path) as store:
        store.put(("memories", "alice"), "coffee", {"text": "Alice drinks espresso"})
        store.put(("_pending", "alice"), "turn-1", {"text": "queued turn"}, index=False)
        store.put(("notes",), "plain", {"text": "not indexed at all"}, index=False)
    for scope in ((), ("--user", "alice")):
        code, out, err = cli("search", "espresso", "--path", str(path), *scope, *HASH, "--json")
        assert code == 0, err
        found = {(tuple(r["namespace"]), r["key"]) for r in json.loads(out)}
        assert (("memories", "alice"), "coffee") in found
        assert not any(ns[0].startswith("_") for ns, _ in found), found
    code, out, _ = cli("search", "espresso", "--path", str(path), *HASH, "--json")
    assert (("notes",), "plain") in {(tuple(r["namespace"]), r["key"]) for r in json.loads(out)}


def test_search_with_the_wrong_embedder_names_the_fix(cli: Cli, seeded_store: Seeded) -> None:
    # The store was written with 64-dim hash vectors, which no default model makes: by
    # default, and pinned to the packaged model (384 dims), the error names the fix.
    for pinned in ((), ("--embeddings", "model")):
        code, _, err = cli("search", "coffee", "--path", str(seeded_store.path), *pinned)
        assert code == 2
        assert "--embeddings hash" in err and "Traceback" not in err


@pytest.mark.model
def test_a_german_store_is_searched_with_the_multilingual_embedder(
    cli: Cli, tmp_path: Path
) -> None:
    from langgraph_episodic import multilingual_index

    store = ChromaStore.persistent(tmp_path, index=multilingual_index(["text"]))
    store.put(("memories", "anna"), "job", {"text": "Ich arbeite als Krankenpfleger."})
    store.put(("memories", "anna"), "editor", {"text": "Mein Lieblingseditor ist Neovim."})
    store.close()
    # Pinned to MiniLM (384 dims), the error names the embedder it was written with.
    code, _, err = cli("search", "Was ist mein Beruf?", "--path", str(tmp_path), "--embeddings",
                       "model")
    assert code == 2
    assert "--embeddings multilingual" in err and "Traceback" not in err
    for pinned in ((), ("--embeddings", "multilingual")):  # the default follows the vectors
        code, out, err = cli("search", "Was ist mein Beruf?", "--path", str(tmp_path), *pinned,
                             "--json")
        assert code == 0, err
        assert json.loads(out)[0]["key"] == "job"


def test_a_store_written_with_the_default_embedder_is_named_bilingual(
    cli: Cli, tmp_path: Path
) -> None:
    """``ChromaStore``'s default vectors (896 dims): the error names ``--embeddings bilingual``."""
    from langgraph_episodic import HashEmbeddings
    from langgraph_episodic.bilingual import BILINGUAL_DIMS, BilingualEmbeddings

    both = BilingualEmbeddings(HashEmbeddings(384), HashEmbeddings(512))
    with ChromaStore.persistent(tmp_path, index={"dims": BILINGUAL_DIMS, "embed": both}) as store:
        store.put(("memories", "anna"), "job", {"text": "Ich arbeite als Krankenpfleger."})
    code, _, err = cli("search", "Was ist mein Beruf?", "--path", str(tmp_path), *HASH)
    assert code == 2
    assert "--embeddings bilingual" in err and "Traceback" not in err


def _make_thread(checkpoints: Path, user: str, session: str) -> None:
    from langgraph.graph import START, MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda state: {"messages": [("ai", "ok")]})
    builder.add_edge(START, "echo")
    with open_checkpointer(checkpoints) as saver:
        builder.compile(checkpointer=saver).invoke(
            {"messages": [("user", "hi")]}, thread_config(user, session)
        )


def test_forget_deletes_the_users_items_and_threads_only(cli: Cli, seeded_store: Seeded) -> None:
    checkpoints = seeded_store.path / "checkpoints.sqlite"
    _make_thread(checkpoints, "alice", "s1")
    _make_thread(checkpoints, "alice2", "s1")
    code, out, err = cli("forget", "--user", "alice", "--path", str(seeded_store.path), "--json", "--yes")
    assert code == 0, err
    report = json.loads(out)
    assert {tuple(d["namespace"]) for d in report["deleted"]} == {
        ("episodes", "alice"),
        ("memories", "alice"),
    }
    assert report["items_deleted"] == 5
    assert report["thread_ids"] == ["alice:s1"]
    with open_hash_store(seeded_store.path) as store:
        assert store.search(("memories", "alice")) == []
        assert store.search(("episodes", "alice")) == []
        assert [i.key for i in store.search(("memories", "alice2"))] == ["tea"]
    with open_checkpointer(checkpoints) as saver:
        assert list_sessions(saver, "alice") == []
        assert [s.session_id for s in list_sessions(saver, "alice2")] == ["s1"]


def test_forget_without_a_checkpoint_file_does_not_create_one(cli: Cli, seeded_store: Seeded) -> None:
    code, out, _ = cli("forget", "--user", "bob", "--path", str(seeded_store.path), "--yes")
    assert code == 0
    assert "2 items" in out and "no checkpoint database" in out
    assert not (seeded_store.path / "checkpoints.sqlite").exists()


def test_forget_refuses_a_user_id_that_is_a_namespace_kind(cli: Cli, seeded_store: Seeded) -> None:
    code, _, err = cli("forget", "--user", "memories", "--path", str(seeded_store.path), "--yes",
                       "--shape", "{user_id}/*")
    assert code == 2 and "Refusing" in err
    with open_hash_store(seeded_store.path) as store:
        assert len(store.search(("memories",), limit=100)) == 5


def test_sweep_removes_expired_items(cli: Cli, tmp_path: Path) -> None:
    lines = [
        {"namespace": ["s", "a"], "key": "old", "value": {"t": 1}, "ttl": 5.0,
         "created_at": "2001-01-01T00:00:00+00:00", "updated_at": "2001-01-01T00:00:00+00:00",
         "index": False, "expires_at": "2001-01-01T00:05:00+00:00"},
        {"namespace": ["s", "a"], "key": "live", "value": {"t": 2}, "ttl": None,
         "created_at": "2001-01-01T00:00:00+00:00", "updated_at": "2001-01-01T00:00:00+00:00",
         "index": False, "expires_at": None},
    ]
    dump = tmp_path / "in.jsonl"
    dump.write_text("".join(json.dumps(line) + "\n" for line in lines))
    path = tmp_path / "store"
    assert cli("import", str(dump), "--path", str(path), *HASH, "--keep-expired")[0] == 0
    code, out, _ = cli("sweep", "--path", str(path))
    assert code == 0 and "removed 1 expired" in out
    code, out, _ = cli("sweep", "--path", str(path))
    assert "removed 0 expired" in out
    with open_hash_store(path) as store:
        assert [i.key for i in store.search(("s",))] == ["live"]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "does not exist"),
        ("file", "is a file"),
        ("empty-folder", "not a langgraph-episodic store"),
    ],
)
def test_bad_paths_are_reported_without_a_traceback(
    cli: Cli, tmp_path: Path, setup: str, message: str
) -> None:
    path = tmp_path / "target"
    if setup == "file":
        path.write_text("x")
    elif setup == "empty-folder":
        path.mkdir()
    for command in (["stats"], ["search", "x", *HASH], ["export", str(tmp_path / "o.jsonl")],
                    ["sweep"], ["forget", "--user", "u"]):
        code, _, err = cli(*command, "--path", str(path))
        assert code == 2, command
        assert message in err and "Traceback" not in err, (command, err)
    assert not (path / "chroma.sqlite3").exists()


@pytest.mark.parametrize(
    ("url", "message"),
    [("http://127.0.0.1:9", "Cannot reach"), ("not-a-url", "Bad --url")],
)
def test_bad_servers_are_reported_without_a_traceback(
    cli: Cli, url: str, message: str
) -> None:
    code, _, err = cli("stats", "--url", url)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_path_and_url_exclude_each_other(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("stats", "--path", str(tmp_path), "--url", "http://127.0.0.1:9")
    assert code == 2 and "not allowed with" in err


def test_help_and_unknown_commands(cli: Cli) -> None:
    code, out, _ = cli("--help")
    assert code == 0
    for command in ("stats", "search", "export", "import", "forget", "sweep", "demo"):
        assert command in out
    assert cli("frobnicate")[0] == 2
    assert cli()[0] == 2


def test_python_dash_m_runs_the_same_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "langgraph_episodic", "stats", "--path", "/nonexistent/store"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: No store at")
