"""Purge deleted data from the files: a store's (:func:`purge_store`), SQLite checkpoints'.

Deleting through an API is not erasing: an embedded Chroma keeps deleted records in its
write-ahead log, free pages and vector index files until they are purged. What cannot be purged
(a Chroma *server*'s files, Postgres's dead rows) is reported in the :class:`Purge`, not hidden
(``docs/privacy.md`` has the operator's steps).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from typing import Any

from ..chroma import Purge, purge_files

__all__ = ["Purge", "apurge_checkpoints", "purge_checkpoints", "purge_store"]


def purge_store(store: Any, *, rebuild: bool = True) -> Purge:
    """Purge what ``store`` deleted from its files; say what could not be purged.

    Works on a :class:`~langgraph_episodic.ChromaStore` (also wrapped, e.g. in a
    ``RedactingStore``): embedded folder purged, in-memory nothing to do, server reported.
    LangGraph's ``InMemoryStore`` has no files; any other store is reported as not purged.

    ``rebuild=True`` also rebuilds each collection whose vector index holds deleted vectors
    (``ChromaStore.maintenance``): the store stays usable meanwhile (writes
    wait only for short steps; how long the rebuild takes: ``docs/privacy.md``).
    ``rebuild=False`` leaves them and reports ``purged=False``: run it again with the default
    later (or ``langgraph-episodic purge``).
    """
    return purge_files(store, rebuild=rebuild) or _other_store(store)


def _other_store(store: Any) -> Purge:
    name = type(getattr(store, "inner", store)).__name__
    if name == "InMemoryStore":
        return Purge("in-memory store", True, "nothing is written to disk")
    return Purge(name, False, "items deleted through the API; this library does not know how "
                 "this store keeps deleted data in its files (Postgres: dead rows until VACUUM "
                 "FULL); see docs/privacy.md")


# --- checkpoints ------------------------------------------------------------------------------


def purge_checkpoints(checkpointer: Any) -> Purge:
    """``VACUUM`` a SQLite checkpoint database and truncate its WAL file.

    Covers LangGraph's ``SqliteSaver``; ``InMemorySaver`` has nothing on disk; Postgres is
    reported (its dead rows stay in the table files until ``VACUUM FULL``).
    """
    conn = getattr(checkpointer, "conn", None)
    if not isinstance(conn, sqlite3.Connection):
        return _other_checkpointer(checkpointer)
    with getattr(checkpointer, "lock", None) or contextlib.nullcontext():
        rows = conn.execute("PRAGMA database_list").fetchall()
        if conn.in_transaction:
            conn.commit()
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return _sqlite_purge(rows)


async def apurge_checkpoints(checkpointer: Any) -> Purge:
    """Async version of :func:`purge_checkpoints` (``AsyncSqliteSaver`` included)."""
    conn: Any = getattr(checkpointer, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        return await asyncio.to_thread(purge_checkpoints, checkpointer)
    if not type(conn).__module__.startswith("aiosqlite"):
        return _other_checkpointer(checkpointer)
    async with getattr(checkpointer, "lock", None) or contextlib.nullcontext():
        rows = await (await conn.execute("PRAGMA database_list")).fetchall()
        await conn.commit()
        await conn.execute("VACUUM")
        await conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return _sqlite_purge(rows)


def _sqlite_purge(database_list: Any) -> Purge:
    path = next((str(r[2]) for r in database_list if r[1] == "main"), "")
    if not path:
        return Purge("in-memory SQLite checkpoints", True, "nothing is written to disk")
    return Purge(f"SQLite checkpoints {path}", True,
                 "vacuumed (free pages rewritten away) and the write-ahead file truncated")


def _other_checkpointer(checkpointer: Any) -> Purge:
    name = type(checkpointer).__name__
    if name in ("InMemorySaver", "MemorySaver"):
        return Purge("in-memory checkpoints", True, "nothing is written to disk")
    if "Postgres" in name:
        return Purge("Postgres checkpoints", False,
                     "rows deleted; Postgres keeps dead rows in its table files and its WAL "
                     "until `VACUUM FULL checkpoints, checkpoint_blobs, checkpoint_writes` and "
                     "WAL recycling: an operator's job (see docs/privacy.md)")
    return Purge(name, False, "threads deleted through the API; this library does not know how "
                 "this checkpointer keeps deleted data in its files")
