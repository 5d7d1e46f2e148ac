"""Per-user threads: ids, the checkpointer helper, listing, resuming, deleting, isolation."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_episodic.graph.threads import (
    adelete_user_threads,
    alist_sessions,
    aopen_checkpointer,
    aresume_config,
    decode_user_id,
    delete_user_threads,
    encode_user_id,
    list_sessions,
    open_checkpointer,
    parse_thread_id,
    resume_config,
    thread_config,
    thread_id_for,
)

from .fakes import echo_graph


def test_thread_config_shape() -> None:
    assert thread_config("alice", "s1", locale="de") == {
        "configurable": {"thread_id": "alice:s1", "user_id": "alice", "locale": "de"}}
    with pytest.raises(ValueError, match="user_id"):
        thread_config("", "s1")
    with pytest.raises(ValueError, match="session_id"):
        thread_config("alice", "")


@pytest.mark.parametrize("user", ["alice", "alice:x", "a%3Ab", "%", ":", "bob:alice:1", "ü ñ"])
def test_user_ids_round_trip_and_never_collide(user: str) -> None:
    tid = thread_id_for(user, "sess:with:colons")
    assert parse_thread_id(tid) == (user, "sess:with:colons")
    assert decode_user_id(encode_user_id(user)) == user
    if user != "alice":
        assert not tid.startswith("alice:")


def test_sqlite_sessions_listed_resumed_and_isolated(tmp_path: Path) -> None:
    with open_checkpointer(tmp_path / "cp.sqlite") as saver:
        graph = echo_graph(saver)
        for user, sessions in {"alice": ["s1", "s2"], "alice:x": ["s9"], "bob": ["s1"]}.items():
            for session in sessions:
                graph.invoke({"messages": [("user", f"hi from {user}")]}, thread_config(user, session))
        graph.invoke({"messages": [("user", "again")]}, thread_config("alice", "s1"))
        alice = list_sessions(saver, "alice")
        assert [s.session_id for s in alice] == ["s1", "s2"]  # s1 was used last
        assert alice[0].thread_id == "alice:s1" and alice[0].updated_at >= alice[1].updated_at
        assert [s.session_id for s in list_sessions(saver, "alice:x")] == ["s9"]
        assert list_sessions(saver, "carol") == []
        config = resume_config(saver, "alice")
        assert config == thread_config("alice", "s1")
        values = graph.get_state(config).values
        assert [m.content for m in values["messages"]] == ["hi from alice", "seen 1", "again", "seen 3"]
        bob = graph.get_state(resume_config(saver, "bob", "s1")).values
        assert "alice" not in " ".join(str(m.content) for m in bob["messages"])
        with pytest.raises(LookupError, match="Known sessions"):
            resume_config(saver, "alice", "nope")
        with pytest.raises(LookupError, match="no sessions"):
            resume_config(saver, "carol")
        deleted = delete_user_threads(saver, "alice")
        assert sorted(deleted) == ["alice:s1", "alice:s2"]
        assert list_sessions(saver, "alice") == []
        assert [s.session_id for s in list_sessions(saver, "alice:x")] == ["s9"]
        assert [s.session_id for s in list_sessions(saver, "bob")] == ["s1"]
    # the file persists: reopen and the remaining sessions are there
    with open_checkpointer(tmp_path / "cp.sqlite") as saver:
        assert [s.session_id for s in list_sessions(saver, "bob")] == ["s1"]


async def test_async_sqlite_helpers(tmp_path: Path) -> None:
    async with aopen_checkpointer(tmp_path) as saver:  # a directory: default file name inside
        graph = echo_graph(saver)
        for session in ("a", "b"):
            await graph.ainvoke({"messages": [("user", "hi")]}, thread_config("alice", session))
        await graph.ainvoke({"messages": [("user", "hi")]}, thread_config("bob", "a"))
        sessions = await alist_sessions(saver, "alice")
        assert sorted(s.session_id for s in sessions) == ["a", "b"]
        config = await aresume_config(saver, "alice", "a")
        assert config["configurable"]["thread_id"] == "alice:a"
        assert await adelete_user_threads(saver, "alice") == ["alice:a", "alice:b"]
        assert await alist_sessions(saver, "alice") == []
        assert len(await alist_sessions(saver, "bob")) == 1
    assert (tmp_path / "checkpoints.sqlite").exists()


def test_generic_checkpointer_path() -> None:
    saver = InMemorySaver()
    graph = echo_graph(saver)
    graph.invoke({"messages": [("user", "hi")]}, thread_config("alice", "one"))
    graph.invoke({"messages": [("user", "hi")]}, thread_config("alicex", "two"))
    assert [s.session_id for s in list_sessions(saver, "alice")] == ["one"]
    assert delete_user_threads(saver, "alice") == ["alice:one"]
    assert [s.session_id for s in list_sessions(saver, "alicex")] == ["two"]


def test_default_path_is_under_dot_episodic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with open_checkpointer() as saver:
        echo_graph(saver).invoke({"messages": [("user", "hi")]}, thread_config("a", "b"))
    assert (tmp_path / ".episodic" / "checkpoints.sqlite").exists()


@pytest.fixture
def without_postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    """Imports of the Postgres saver fail, as where ``langgraph-checkpoint-postgres`` is not
    installed (a ``None`` in ``sys.modules`` makes ``import`` raise ``ImportError``)."""
    for name in ("langgraph.checkpoint.postgres", "langgraph.checkpoint.postgres.aio"):
        monkeypatch.setitem(sys.modules, name, None)


_NAMES_THE_FIX = r"needs langgraph-checkpoint-postgres: `pip install -e '\.\[postgres\]'`"


@pytest.mark.usefixtures("without_postgres")
def test_postgres_url_without_the_package_names_the_fix() -> None:
    with pytest.raises(ImportError, match=_NAMES_THE_FIX), \
            open_checkpointer("postgresql://user@127.0.0.1/db"):
        pass


@pytest.mark.usefixtures("without_postgres")
async def test_async_postgres_url_without_the_package_names_the_fix() -> None:
    with pytest.raises(ImportError, match=_NAMES_THE_FIX):
        async with aopen_checkpointer("postgres://user@127.0.0.1/db"):
            pass
