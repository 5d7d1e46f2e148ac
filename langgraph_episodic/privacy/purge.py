"""Purge deleted data from the files: Chroma's write-ahead log and free pages, SQLite checkpoints.

Deleting through an API is not erasing. After ``store.delete`` an embedded Chroma (1.x) still
holds the deleted records in three places:

* its write-ahead log (table ``embeddings_queue`` of ``chroma.sqlite3``): every add/upsert with
  the full metadata, document and vector. Chroma trims the log only up to what its vector index
  has flushed to disk, once per ``hnsw:sync_threshold`` (1,000) writes per collection.
  ``chroma vacuum`` trims the same way and then runs ``VACUUM``: it does not remove them either.
* free pages of the database file and the full-text index's old segments.
* the vector index files (``<segment>/data_level0.bin``): hnswlib only *marks* a deleted
  vector; its numbers stay in memory and are written again at every flush, until the
  collection is dropped (see :mod:`.index_files`).

:func:`purge_store` removes all three for the collections of one
:class:`~langgraph_episodic.ChromaStore`: it rebuilds each collection whose index holds deleted
vectors (``ChromaStore.maintenance``: copy the live records, swap, drop the old collection and its
index folder), deletes the log rows that only a *deleted* record still needs
(each add/update/upsert row of a record id followed by a delete of that id; the delete rows,
which hold only the id, stay, so a replay after a restart ends in the same state), merges the
full-text index, zeroes the never-read tails of the index files (written from uncleared memory)
and runs ``VACUUM``. Nothing the store can still read is touched.
:func:`purge_checkpoints` runs ``VACUUM`` and truncates the write-ahead file of a SQLite
checkpoint database.

What it cannot purge is reported, not hidden (see :class:`Purge` and ``docs/privacy.md``): a
Chroma *server* keeps its own log and files (the operator's step is in the docs), Postgres
keeps dead rows until ``VACUUM FULL``.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

CHROMA_FILE = "chroma.sqlite3"
DELETE_OPERATION = 3
"""Chroma's code of a delete in ``embeddings_queue.operation`` (0 add, 1 update, 2 upsert)."""
BUSY_TIMEOUT_SECONDS = 30.0
"""How long a purge waits for Chroma's own writer to release the database."""


@dataclass(frozen=True)
class Purge:
    """What purging one storage did.

    ``purged`` is True when the files hold no copy of deleted data any more (or there are no
    files: an in-memory store). ``detail`` says what was done, or what an operator must do.
    """

    target: str
    purged: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form, for reports."""
        return {"target": self.target, "purged": self.purged, "detail": self.detail}


# --- Chroma ----------------------------------------------------------------------------------


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
    remote = getattr(getattr(store, "inner", store), "_remote", None)
    if remote is not None:  # a client of the process holding an embedded folder
        refusal = remote.needs_the_folder("purge_store", "purge")
        return Purge(f"Chroma folder {remote.folder}", False, refusal)
    collections = getattr(store, "collections", None)
    client = getattr(store, "client", None)
    if not isinstance(collections, dict) or client is None:
        return _other_store(store)
    settings = client.get_settings()
    impl = str(getattr(settings, "chroma_api_impl", ""))
    if "fastapi" in impl.lower():
        host = getattr(settings, "chroma_server_host", None) or "server"
        port = getattr(settings, "chroma_server_http_port", None)
        return Purge(
            f"Chroma server {host}:{port}",
            False,
            "deleted through the API; the server keeps its own write-ahead log, free pages and "
            "vector index files: stop it, run `langgraph-episodic purge --path <its folder>` "
            "(purges the files) and start it again (see docs/privacy.md)",
        )
    if not getattr(settings, "is_persistent", False):
        return Purge("in-memory Chroma", True, "nothing is written to disk")
    folder = Path(str(settings.persist_directory))
    maintenance = getattr(store, "maintenance", None)
    if not callable(maintenance):
        return purge_chroma_folder(folder, [str(c.id) for c in collections.values()])
    with maintenance() as work:
        return _purge_live(work, folder, rebuild=rebuild)


def _purge_live(work: Any, folder: Path, *, rebuild: bool) -> Purge:
    """Purge the folder of a live store through its ``maintenance()`` (``work``; the folder
    is claimed: another process writing it gets ``FolderInUseError`` and nothing is touched):
    rebuild, then purge the log and the files with the store's writes held (no index flush
    can run meanwhile)."""
    kinds = _with_deleted_vectors(folder, work.collection_ids())
    rebuilt = work.rebuild(kinds) if rebuild else []
    with work.writes_held() as ids:
        purge = purge_chroma_folder(folder, list(ids.values()))
    left = [] if rebuild else kinds
    detail = purge.detail
    if rebuilt:
        detail += f"; rebuilt {', '.join(rebuilt)} (their old vector index files removed)"
    if left:
        detail += (
            f"; the vector index of {', '.join(left)} still holds deleted vectors (numbers, no "
            "text), marked deleted: run purge_store(store) or `langgraph-episodic purge` to "
            "rebuild it"
        )
    # (Not purge.purged: other writers' deletes since the rebuild may mark vectors again;
    # none of them is of what was deleted before this call.)
    return Purge(purge.target, not left, detail)


def _with_deleted_vectors(folder: Path, collection_ids: Mapping[str, str]) -> list[str]:
    """The store's collections (kinds, of ``collection_ids``: kind -> Chroma id) whose vector
    index holds deleted vectors."""
    from .index_files import holds_deleted

    db = folder / CHROMA_FILE
    if not db.is_file():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_SECONDS)
    try:
        return [k for k, cid in collection_ids.items() if holds_deleted(con, folder, cid)]
    finally:
        con.close()


def purge_chroma_folder(folder: Path, collection_ids: list[str]) -> Purge:
    """Purge the log rows of deleted records of ``collection_ids``, zero the unused tails of
    their vector index files and vacuum ``chroma.sqlite3``.

    Safe while the folder is open in this process: only rows of records that are deleted are
    removed, and SQLite serialises the purge with Chroma's writes (busy timeout
    :data:`BUSY_TIMEOUT_SECONDS`). ``purged`` is False when a vector index still holds deleted
    vectors (a rebuild removes them, see :func:`purge_store`).
    """
    from .index_files import holds_deleted

    db = folder / CHROMA_FILE
    if not db.is_file():
        return Purge(f"Chroma folder {folder}", True, "no database file")
    size_before = db.stat().st_size
    con = sqlite3.connect(db, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        removed = 0
        try:
            for cid in collection_ids:
                removed += _purge_log(con, cid)
            _merge_fulltext(con)
            scrubbed = _scrub_vector_indexes(con, folder, collection_ids)
            with_deleted = [cid for cid in collection_ids if holds_deleted(con, folder, cid)]
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("VACUUM")
    finally:
        con.close()
    detail = (
        f"removed {removed} write-ahead log rows of deleted records, merged the full-text "
        f"index, vacuumed {CHROMA_FILE} ({size_before:,} -> {db.stat().st_size:,} bytes), "
        f"zeroed {scrubbed:,} unused bytes of vector index files"
    )
    logger.info("purged %s: %s", folder, detail)
    return Purge(f"Chroma folder {folder}", not with_deleted, detail)


def _purge_log(con: sqlite3.Connection, collection_id: str) -> int:
    """Delete add/update/upsert rows of ``collection_id`` whose record is deleted later."""
    topics = [
        row[0]
        for row in con.execute(
            "SELECT DISTINCT topic FROM embeddings_queue WHERE topic LIKE ?",
            (f"%/{collection_id}",),
        )
    ]
    removed = 0
    for topic in topics:
        cur = con.execute(
            "DELETE FROM embeddings_queue WHERE topic = ? AND operation != ? AND EXISTS ("
            " SELECT 1 FROM embeddings_queue AS later WHERE later.topic = embeddings_queue.topic"
            " AND later.id = embeddings_queue.id AND later.operation = ?"
            " AND later.seq_id > embeddings_queue.seq_id)",
            (topic, DELETE_OPERATION, DELETE_OPERATION),
        )
        removed += max(cur.rowcount, 0)
    return removed


def _merge_fulltext(con: sqlite3.Connection) -> None:
    """Merge the FTS5 index's segments, dropping the entries of deleted documents."""
    exists = con.execute(
        "SELECT 1 FROM sqlite_master WHERE name = 'embedding_fulltext_search'"
    ).fetchone()
    if exists:
        con.execute(
            "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')"
        )


def _scrub_vector_indexes(
    con: sqlite3.Connection, folder: Path, collection_ids: list[str]
) -> int:
    """Zero the never-read tails of the collections' vector index files (``data_level0.bin``
    and ``length.bin``, see :mod:`.index_files`); return how many bytes. Runs inside the
    purge's write transaction, and (for a live store) under its write lock: no index flush
    can rewrite the files meanwhile."""
    from .index_files import IndexFiles, index_folders, normalises

    return sum(
        IndexFiles.read(path).scrub_unused(normalised=normalises(con, cid))
        for cid in collection_ids
        for path in index_folders(con, folder, cid)
    )


def _other_store(store: Any) -> Purge:
    inner = getattr(store, "inner", store)
    name = type(inner).__name__
    if name == "InMemoryStore":
        return Purge("in-memory store", True, "nothing is written to disk")
    return Purge(
        name,
        False,
        "items deleted through the API; this library does not know how this store keeps "
        "deleted data in its files (Postgres: dead rows until VACUUM FULL); see docs/privacy.md",
    )


# --- checkpoints ------------------------------------------------------------------------------


def _sqlite_file(conn: Any) -> str:
    rows = conn.execute("PRAGMA database_list").fetchall()
    return next((str(r[2]) for r in rows if r[1] == "main"), "")


def purge_checkpoints(checkpointer: Any) -> Purge:
    """``VACUUM`` a SQLite checkpoint database and truncate its WAL file.

    Covers LangGraph's ``SqliteSaver``; ``InMemorySaver`` has nothing on disk; Postgres is
    reported (its dead rows stay in the table files until ``VACUUM FULL``).
    """
    conn = getattr(checkpointer, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        lock = getattr(checkpointer, "lock", None)
        if lock is None:
            return _vacuum_sqlite(conn)
        with lock:
            return _vacuum_sqlite(conn)
    return _other_checkpointer(checkpointer)


async def apurge_checkpoints(checkpointer: Any) -> Purge:
    """Async version of :func:`purge_checkpoints` (``AsyncSqliteSaver`` included)."""
    conn = getattr(checkpointer, "conn", None)
    if type(conn).__module__.startswith("aiosqlite"):
        lock = getattr(checkpointer, "lock", None)
        if lock is None:
            return await _avacuum_sqlite(conn)
        async with lock:
            return await _avacuum_sqlite(conn)
    if isinstance(conn, sqlite3.Connection):
        import asyncio

        return await asyncio.to_thread(purge_checkpoints, checkpointer)
    return _other_checkpointer(checkpointer)


def _vacuum_sqlite(conn: sqlite3.Connection) -> Purge:
    path = _sqlite_file(conn)
    if conn.in_transaction:
        conn.commit()
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return _sqlite_purge(path)


async def _avacuum_sqlite(conn: Any) -> Purge:
    rows = await (await conn.execute("PRAGMA database_list")).fetchall()
    path = next((str(r[2]) for r in rows if r[1] == "main"), "")
    await conn.commit()
    await conn.execute("VACUUM")
    await conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return _sqlite_purge(path)


def _sqlite_purge(path: str) -> Purge:
    if not path:
        return Purge("in-memory SQLite checkpoints", True, "nothing is written to disk")
    return Purge(
        f"SQLite checkpoints {path}",
        True,
        "vacuumed (free pages rewritten away) and the write-ahead file truncated",
    )


def _other_checkpointer(checkpointer: Any) -> Purge:
    name = type(checkpointer).__name__
    if name == "InMemorySaver" or name == "MemorySaver":
        return Purge("in-memory checkpoints", True, "nothing is written to disk")
    if "Postgres" in name:
        return Purge(
            "Postgres checkpoints",
            False,
            "rows deleted; Postgres keeps dead rows in its table files and its WAL until "
            "`VACUUM FULL checkpoints, checkpoint_blobs, checkpoint_writes` and WAL recycling: "
            "an operator's job (see docs/privacy.md)",
        )
    return Purge(
        name,
        False,
        "threads deleted through the API; this library does not know how this checkpointer "
        "keeps deleted data in its files",
    )
