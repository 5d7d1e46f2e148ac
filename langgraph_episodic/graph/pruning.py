"""Pruning a thread's old checkpoints: keep what resuming needs, drop the history.

A compiled graph saves a checkpoint after every step (LangGraph's default durability
``"async"``), and each SQLite checkpoint holds the whole state, so a long-lived thread grows by
the size of its state times the steps it has run. Resuming a thread needs only its latest
checkpoint and that checkpoint's pending writes; older ones serve time travel
(``graph.get_state_history``, replaying or forking from a past step).

:func:`prune_threads` keeps the latest ``keep`` checkpoints of each namespace of each thread
given, with their pending writes, and deletes the rest:

- SQLite (``SqliteSaver`` and ``AsyncSqliteSaver``, what :func:`~.threads.open_checkpointer`
  opens by default) is pruned here, one transaction per thread (``BEGIN IMMEDIATE``, so another
  connection writing the same file waits for it, and the saver's own lock keeps its other
  callers out). A checkpoint saved while the prune waits is newer than every checkpoint it
  deletes, so a run appending to the thread loses nothing. A kept checkpoint whose parent is
  deleted is left with no parent. A subgraph call's namespace (``"node:<task id>"``) goes with
  the root checkpoint its call started from, once that one is deleted.
- Any other saver with its own ``prune`` (``PostgresSaver``) is handed the call when
  ``keep=1`` (its ``strategy="keep_latest"``).

Threads whose graphs use LangGraph's ``DeltaChannel`` (beta) rebuild a value from older
checkpoints, so pruning them is refused with ``NotImplementedError`` before anything is
deleted. SQLite reuses the freed pages, so a file pruned as it grows stays small; to shrink a
file that has already grown, prune it and then run
:func:`~langgraph_episodic.privacy.purge_checkpoints` (``VACUUM``).

>>> from langgraph.graph import MessagesState, StateGraph
>>> from langgraph_episodic.graph import open_checkpointer, prune_threads, thread_config
>>> builder = StateGraph(MessagesState)
>>> _ = builder.add_node("echo", lambda state: {})
>>> _ = builder.set_entry_point("echo")
>>> with open_checkpointer(":memory:") as saver:
...     graph = builder.compile(checkpointer=saver)
...     config = thread_config("alice", "s1")
...     for text in ("hi", "again"):
...         _ = graph.invoke({"messages": [("user", text)]}, config)
...     before = len(list(saver.list(config)))
...     prune_threads(saver, [config["configurable"]["thread_id"]])
...     after = list(saver.list(config))
...     before, len(after), len(graph.get_state(config).values["messages"])
(6, 1, 2)
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from .._effects import Plan, arun, call, run
from ..errors import InvalidTypeError, InvalidValueError, UnsupportedError

__all__ = ["aprune_threads", "prune_threads"]

logger = logging.getLogger(__name__)

_ROWS_SQL = (
    "SELECT checkpoint_ns, checkpoint_id FROM checkpoints WHERE thread_id = ? "
    "ORDER BY checkpoint_ns, checkpoint_id DESC"
)
_METADATA_SQL = (
    "SELECT metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
    "AND checkpoint_id = ?"
)
# A DeltaChannel leaves its update counters in the metadata of every checkpoint that needs
# older ones to rebuild its value (LangGraph.js marks its threads with delta_writes_versioned).
_DELTA_SQL = (
    "SELECT 1 FROM checkpoints WHERE thread_id = ? AND ("
    "json_type(CAST(metadata AS TEXT), '$.counters_since_delta_snapshot') IS NOT NULL OR "
    "json_type(CAST(metadata AS TEXT), '$.delta_writes_versioned') IS NOT NULL) LIMIT 1"
)
_DROP_NAMESPACE_SQL = (
    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
    "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ?",
)
_DROP_OLDER_SQL = (
    "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?",
    "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?",
    "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ? "
    "AND checkpoint_ns = ? AND parent_checkpoint_id < ?",
)


@dataclass(frozen=True)
class _Pruned:
    """What pruning one thread deleted."""

    checkpoints: int
    namespaces: int


def _check(thread_ids: Sequence[str], keep: int) -> list[str]:
    if isinstance(thread_ids, str):
        raise InvalidTypeError(
            f"thread_ids must be a list of thread ids, not one string: pass [{thread_ids!r}]."
        )
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise InvalidValueError(
            f"keep must be a whole number >= 1 (the latest checkpoints kept per thread), got "
            f"{keep!r}; to delete a thread altogether use checkpointer.delete_thread(thread_id)."
        )
    return [str(t) for t in thread_ids]


def _root_of(metadata: Any) -> str | None:
    """The root graph's checkpoint a subgraph call started from (``metadata["parents"][""]``)."""
    if metadata is None:
        return None
    text = metadata.decode("utf-8") if isinstance(metadata, bytes) else str(metadata)
    parents = json.loads(text).get("parents") or {}
    root = parents.get("")
    return str(root) if root else None


def _thread_plan(thread_id: str, keep: int, execute: Any) -> Plan[_Pruned]:
    """Plan: prune one thread; ``execute(sql, params)`` runs a statement and returns its rows.

    The caller runs the plan inside one write transaction."""
    if (yield call(execute, execute, _DELTA_SQL, (thread_id,))):
        raise UnsupportedError(
            f"Thread {thread_id!r} uses a DeltaChannel, which rebuilds its value from older "
            "checkpoints: pruning it would lose that value. Nothing was pruned; leave this "
            "thread unpruned, or delete it with checkpointer.delete_thread()."
        )
    ids: dict[str, list[str]] = {}
    for ns, checkpoint_id in (yield call(execute, execute, _ROWS_SQL, (thread_id,))):
        ids.setdefault(str(ns), []).append(str(checkpoint_id))
    roots = set(ids.get("", []))
    kept_roots = set(ids.get("", [])[:keep])
    deleted = namespaces = 0
    for ns, newest_first in ids.items():
        if ns and ":" in ns.split("|")[-1]:  # one subgraph call: it goes with its root
            rows = yield call(execute, execute, _METADATA_SQL, (thread_id, ns, newest_first[0]))
            root = _root_of(rows[0][0]) if rows else None
            if root is not None and root in roots and root not in kept_roots:
                for sql in _DROP_NAMESPACE_SQL:
                    yield call(execute, execute, sql, (thread_id, ns))
                deleted += len(newest_first)
                namespaces += 1
                continue
        if len(newest_first) > keep:
            cutoff = newest_first[keep - 1]
            for sql in _DROP_OLDER_SQL:
                yield call(execute, execute, sql, (thread_id, ns, cutoff))
            deleted += len(newest_first) - keep
    return _Pruned(deleted, namespaces)


def _is_sqlite(checkpointer: BaseCheckpointSaver[Any]) -> bool:
    from langgraph.checkpoint.sqlite import SqliteSaver

    return isinstance(checkpointer, SqliteSaver)


def _is_async_sqlite(checkpointer: BaseCheckpointSaver[Any]) -> bool:
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    except ImportError:  # aiosqlite is not installed
        return False
    return isinstance(checkpointer, AsyncSqliteSaver)


def _own_prune(checkpointer: BaseCheckpointSaver[Any], keep: int, method: str) -> Any:
    """The saver's own ``prune``/``aprune`` for ``keep=1``; otherwise a clear error."""
    name = type(checkpointer).__name__
    overridden = getattr(type(checkpointer), method, None) is not getattr(
        BaseCheckpointSaver, method)
    if not overridden:
        raise UnsupportedError(
            f"{name} cannot prune checkpoints (it has no {method}); use the SQLite checkpointer "
            "(open_checkpointer(path)) or Postgres, or delete whole threads with "
            "checkpointer.delete_thread(thread_id)."
        )
    if keep != 1:
        raise UnsupportedError(
            f"{name}.{method} keeps only the latest checkpoint: pass keep=1 (keeping {keep} "
            "is done for SQLite checkpointers only)."
        )
    return getattr(checkpointer, method)


def _log(pruned: list[_Pruned], threads: int) -> None:
    logger.info(
        "pruned %d checkpoints (%d subgraph calls) of %d threads",
        sum(p.checkpoints for p in pruned), sum(p.namespaces for p in pruned), threads,
    )


def prune_threads(
    checkpointer: BaseCheckpointSaver[Any], thread_ids: Sequence[str], *, keep: int = 1
) -> None:
    """Keep the latest ``keep`` checkpoints (and their pending writes) of each thread given,
    per namespace, and delete the older ones (see the module docstring for what is kept).

    Resuming a thread (``graph.invoke(..., config)``, :func:`~.threads.resume_config`) works as
    before; time travel reaches back ``keep`` checkpoints. Other threads are not touched.
    Raises ``NotImplementedError`` for a thread using a ``DeltaChannel`` (nothing of it is
    pruned) and for a saver that cannot prune, ``ValueError`` for ``keep < 1``.
    """
    ids = _check(thread_ids, keep)
    if not _is_sqlite(checkpointer):
        _own_prune(checkpointer, keep, "prune")(ids, strategy="keep_latest")
        return
    saver: Any = checkpointer
    conn: sqlite3.Connection = saver.conn

    def execute(sql: str, params: tuple[Any, ...]) -> list[Any]:
        return conn.execute(sql, params).fetchall()

    pruned = []
    for thread_id in ids:
        with saver.lock:
            saver.setup()
            if conn.in_transaction:
                conn.commit()
            conn.execute("BEGIN IMMEDIATE")
            try:
                pruned.append(run(_thread_plan(thread_id, keep, execute)))
            except BaseException:
                conn.rollback()
                raise
            conn.commit()
    _log(pruned, len(ids))


async def aprune_threads(
    checkpointer: BaseCheckpointSaver[Any], thread_ids: Sequence[str], *, keep: int = 1
) -> None:
    """Async version of :func:`prune_threads` (``AsyncSqliteSaver``, ``AsyncPostgresSaver``)."""
    ids = _check(thread_ids, keep)
    if _is_sqlite(checkpointer):  # a sync saver in async code: its own thread-safe path
        import asyncio

        await asyncio.to_thread(prune_threads, checkpointer, ids, keep=keep)
        return
    if not _is_async_sqlite(checkpointer):
        await _own_prune(checkpointer, keep, "aprune")(ids, strategy="keep_latest")
        return
    saver: Any = checkpointer
    conn = saver.conn

    async def execute(sql: str, params: tuple[Any, ...]) -> list[Any]:
        async with conn.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    pruned = []
    await saver.setup()
    for thread_id in ids:
        async with saver.lock:
            if conn.in_transaction:
                await conn.commit()
            await conn.execute("BEGIN IMMEDIATE")
            try:
                pruned.append(await arun(_thread_plan(thread_id, keep, execute)))
            except BaseException:
                await conn.rollback()
                raise
            await conn.commit()
    _log(pruned, len(ids))
