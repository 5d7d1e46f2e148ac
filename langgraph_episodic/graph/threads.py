"""Per-user threads: thread ids, the checkpointer helper, listing, resuming, deleting sessions.

A session of user ``alice`` runs in thread ``"alice:<session_id>"``; :func:`thread_config`
builds the config with both the thread id and the user id, so the memory nodes and the
checkpointer always agree on whose state it is.

User ids may contain any character: ``%`` and ``:`` are percent-encoded in the thread id
(``"alice:x"`` becomes ``"alice%3Ax:<session>"``), so listing ``alice``'s sessions (thread ids
starting with ``"alice:"``) never shows another user's. Session ids are kept verbatim and may
contain ``:``.

The checkpointer helper :func:`open_checkpointer` (and :func:`aopen_checkpointer`) opens SQLite
by default (``./.episodic/checkpoints.sqlite``) and Postgres when given a ``postgresql://`` URL
and ``langgraph-checkpoint-postgres`` is installed (``pip install -e ".[postgres]"`` in the checkout).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver

from .._effects import Plan, call, twins
from .._user_threads import adelete_user_threads as adelete_user_threads
from .._user_threads import check_id, encode_user_id, user_thread_ids
from .._user_threads import delete_user_threads as delete_user_threads
from ..errors import NotFoundError

DEFAULT_CHECKPOINT_PATH = Path(".episodic") / "checkpoints.sqlite"
"""Where :func:`open_checkpointer` keeps the SQLite checkpoints when given no target."""

_POSTGRES_SCHEMES = ("postgres://", "postgresql://", "postgresql+psycopg://")


def decode_user_id(encoded: str) -> str:
    """Inverse of :func:`encode_user_id`."""
    return unquote(encoded)


def thread_id_for(user_id: str, session_id: str) -> str:
    """The thread id of one user's session: ``"<encoded user>:<session>"``."""
    return f"{encode_user_id(user_id)}:{check_id(session_id, 'session_id')}"


def parse_thread_id(thread_id: str) -> tuple[str, str] | None:
    """Split a thread id made by :func:`thread_id_for` into (user_id, session_id), else None."""
    user, sep, session = thread_id.partition(":")
    if not sep or not user or not session:
        return None
    return decode_user_id(user), session


def thread_config(user_id: str, session_id: str, **configurable: Any) -> RunnableConfig:
    """The config for one session of one user; extra keyword arguments go into ``configurable``.

    >>> thread_config("alice", "s1")
    {'configurable': {'thread_id': 'alice:s1', 'user_id': 'alice'}}
    """
    thread_id = thread_id_for(user_id, session_id)
    return {"configurable": {"thread_id": thread_id, "user_id": user_id, **configurable}}


# --- opening a checkpointer ---------------------------------------------------------------


def _saver_class(target: str | Path | None, aio: bool) -> tuple[Any, str]:
    """The saver class ``target`` opens with (sync or ``aio``) and its connection string."""
    if not (isinstance(target, str) and target.startswith(_POSTGRES_SCHEMES)):
        if aio:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            return AsyncSqliteSaver, _sqlite_target(target)
        from langgraph.checkpoint.sqlite import SqliteSaver

        return SqliteSaver, _sqlite_target(target)
    try:
        if aio:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            return AsyncPostgresSaver, target
        from langgraph.checkpoint.postgres import PostgresSaver

        return PostgresSaver, target
    except ImportError as exc:
        raise ImportError(
            "A Postgres URL needs langgraph-checkpoint-postgres: "
            "`pip install -e '.[postgres]'` in the langgraph-episodic checkout (or "
            "`pip install langgraph-checkpoint-postgres 'psycopg[binary]'`), or pass a SQLite "
            "file path instead."
        ) from exc


def _sqlite_target(target: str | Path | None) -> str:
    if target is None:
        target = DEFAULT_CHECKPOINT_PATH
    if str(target) == ":memory:":
        return ":memory:"
    path = Path(target).expanduser()
    if path.is_dir():
        path = path / DEFAULT_CHECKPOINT_PATH.name
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


@contextmanager
def open_checkpointer(target: str | Path | None = None) -> Iterator[BaseCheckpointSaver[Any]]:
    """Open a checkpointer: SQLite at a path (default :data:`DEFAULT_CHECKPOINT_PATH`, or a
    directory, or ``":memory:"``), or Postgres at a ``postgresql://`` URL.

    The connection closes when the ``with`` block ends; tables are created on first use.

    >>> from langgraph.checkpoint.base import BaseCheckpointSaver
    >>> with open_checkpointer(":memory:") as saver:
    ...     isinstance(saver, BaseCheckpointSaver)
    True
    """
    saver_class, conn_string = _saver_class(target, aio=False)
    with saver_class.from_conn_string(conn_string) as saver:
        saver.setup()
        yield saver


@asynccontextmanager
async def aopen_checkpointer(
    target: str | Path | None = None,
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """Async version of :func:`open_checkpointer` (``AsyncSqliteSaver`` / ``AsyncPostgresSaver``)."""
    saver_class, conn_string = _saver_class(target, aio=True)
    async with saver_class.from_conn_string(conn_string) as saver:
        await saver.setup()
        yield saver


# --- listing, resuming, deleting ----------------------------------------------------------


@dataclass(frozen=True)
class SessionInfo:
    """One session of a user, as the checkpointer knows it."""

    session_id: str
    thread_id: str
    updated_at: str
    """ISO timestamp of the session's latest checkpoint."""
    step: int
    """The graph step of the latest checkpoint."""


def _list_sessions(
    checkpointer: BaseCheckpointSaver[Any], user_id: str
) -> Plan[list[SessionInfo]]:
    """A user's sessions, newest first (only threads made by :func:`thread_id_for`).

    >>> from langgraph.checkpoint.memory import InMemorySaver
    >>> from langgraph.graph import MessagesState, StateGraph
    >>> builder = StateGraph(MessagesState)
    >>> builder.add_node("echo", lambda state: {})
    <langgraph.graph.state.StateGraph object at ...>
    >>> builder.set_entry_point("echo")
    <langgraph.graph.state.StateGraph object at ...>
    >>> saver = InMemorySaver()
    >>> graph = builder.compile(checkpointer=saver)
    >>> _ = graph.invoke({"messages": [("user", "hi")]}, thread_config("alice", "s1"))
    >>> [s.session_id for s in list_sessions(saver, "alice")]
    ['s1']
    >>> resume_config(saver, "alice")["configurable"]["thread_id"]
    'alice:s1'
    >>> delete_user_threads(saver, "alice")
    ['alice:s1']
    """
    sessions = []
    for thread_id in (yield user_thread_ids(checkpointer, user_id)):
        config: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        latest = yield call(checkpointer.get_tuple, checkpointer.aget_tuple, config)
        parsed = parse_thread_id(thread_id)
        if latest is None or parsed is None:
            continue
        sessions.append(SessionInfo(session_id=parsed[1], thread_id=thread_id,
                                    updated_at=str(latest.checkpoint.get("ts", "")),
                                    step=int((latest.metadata or {}).get("step", -1))))
    sessions.sort(key=lambda s: s.updated_at, reverse=True)
    return sessions


list_sessions, alist_sessions = twins(_list_sessions, "list_sessions")


def _resume_config(
    checkpointer: BaseCheckpointSaver[Any], user_id: str, session_id: str | None = None
) -> Plan[RunnableConfig]:
    """The config that continues a user's session (the newest when ``session_id`` is None).

    Raises ``LookupError`` when the session does not exist, listing the ones that do.
    """
    sessions = yield from _list_sessions(checkpointer, user_id)
    if session_id is None:
        if not sessions:
            raise NotFoundError(
                f"User {user_id!r} has no sessions yet; start one with "
                f"thread_config({user_id!r}, 'some-session-id')."
            )
        session_id = sessions[0].session_id
    elif not any(s.session_id == session_id for s in sessions):
        known = [s.session_id for s in sessions]
        raise NotFoundError(
            f"User {user_id!r} has no session {session_id!r}. Known sessions: {known or 'none'}."
        )
    return thread_config(user_id, session_id)


resume_config, aresume_config = twins(_resume_config, "resume_config")
