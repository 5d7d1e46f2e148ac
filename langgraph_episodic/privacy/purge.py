"""Purge deleted data from the files: Chroma's write-ahead log and free pages, SQLite checkpoints.

Deleting through an API is not erasing. After ``store.delete`` an embedded Chroma (1.x) still
holds the deleted records in two places of ``chroma.sqlite3``:

* its write-ahead log (table ``embeddings_queue``): every add/upsert with the full metadata,
  document and vector. Chroma trims the log only up to what its vector index has flushed to disk,
  and it flushes once per ``hnsw:sync_threshold`` (1,000) writes per collection, so a deletion is
  followed by up to about a thousand writes before the user's rows go. ``chroma vacuum`` trims
  the same way (up to the last flush) and then runs ``VACUUM``: it does not remove them either.
* free pages of the database file (SQLite marks deleted rows' pages free, it does not wipe them),
  and the full-text index's old segments.

:func:`purge_store` removes both for the collections of one :class:`~langgraph_episodic.ChromaStore`:
it deletes the log rows that only a *deleted* record still needs (each add/update/upsert row of a
record id followed by a delete of that id; the delete rows, which hold only the id, stay, so a
replay after a restart ends in the same state), merges the full-text index, and runs ``VACUUM``
(which rewrites the file without free pages). Nothing the store can still read is touched.
:func:`purge_checkpoints` runs ``VACUUM`` and truncates the write-ahead file of a SQLite
checkpoint database.

What it cannot purge is reported, not hidden (see :class:`Purge` and ``docs/privacy.md``): a
Chroma *server* keeps its own log and files (an operator runs ``chroma vacuum`` on the server's
folder), Postgres keeps dead rows until ``VACUUM FULL``, and an embedded Chroma's vector index file
(``<segment>/data_level0.bin``) keeps the vectors (numbers, never text) of records deleted after
the index was last flushed, marked deleted, until the collection is rebuilt.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import struct
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


def purge_store(store: Any) -> Purge:
    """Purge what ``store`` deleted from its files; say what could not be purged.

    Works on a :class:`~langgraph_episodic.ChromaStore` (also wrapped, e.g. in a
    ``RedactingStore``): embedded folder purged, in-memory nothing to do, server reported.
    LangGraph's ``InMemoryStore`` has no files; any other store is reported as not purged.
    Call it when the store is quiet: ``VACUUM`` holds the database's write lock while it runs.
    """
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
            "deleted through the API; the server keeps its own write-ahead log and free pages: "
            "stop it, run `langgraph-episodic forget --user <user> --path <its folder> --yes` "
            "(finds nothing left, purges the files) and start it again (see docs/privacy.md)",
        )
    if not getattr(settings, "is_persistent", False):
        return Purge("in-memory Chroma", True, "nothing is written to disk")
    folder = Path(str(settings.persist_directory))
    ids = [str(c.id) for c in collections.values()]
    return purge_chroma_folder(folder, ids)


def purge_chroma_folder(folder: Path, collection_ids: list[str]) -> Purge:
    """Purge the log rows of deleted records of ``collection_ids`` and vacuum ``chroma.sqlite3``.

    Safe while the folder is open in this process: only rows of records that are deleted are
    removed, and SQLite serialises the purge with Chroma's writes (busy timeout
    :data:`BUSY_TIMEOUT_SECONDS`).
    """
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
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("VACUUM")
    finally:
        con.close()
    vectors_left = _flushed_vector_indexes(folder, collection_ids)
    detail = (
        f"removed {removed} write-ahead log rows of deleted records, merged the full-text "
        f"index, vacuumed {CHROMA_FILE} ({size_before:,} -> {db.stat().st_size:,} bytes), "
        f"zeroed {scrubbed:,} unused bytes of vector index files"
    )
    if vectors_left:
        detail += (
            f"; {len(vectors_left)} vector index file(s) flushed earlier may still hold vectors "
            "(numbers, no text) of deleted records, marked deleted, until the collection is "
            "rebuilt (see docs/privacy.md)"
        )
    logger.info("purged %s: %s", folder, detail)
    return Purge(f"Chroma folder {folder}", not vectors_left, detail)


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


HEADER_FIELDS = struct.Struct("<i6Q")
"""The start of Chroma's ``header.bin``: format version, then hnswlib's offsetLevel0,
max_elements, cur_element_count, size_data_per_element, label_offset and offsetData."""


def _segment_dirs(con: sqlite3.Connection, folder: Path, collection_ids: list[str]) -> list[Path]:
    marks = ",".join("?" * len(collection_ids))
    rows = con.execute(
        f"SELECT id FROM segments WHERE collection IN ({marks}) AND type LIKE '%hnsw%'",
        collection_ids,
    ).fetchall()
    return [folder / row[0] for row in rows if (folder / row[0]).is_dir()]


def _scrub_vector_indexes(
    con: sqlite3.Connection, folder: Path, collection_ids: list[str]
) -> int:
    """Zero the bytes of each ``data_level0.bin`` past its last element; return how many.

    Chroma writes a new index file at its full initial capacity straight from memory it has
    not cleared, so the unused tail can hold copies of unrelated heap data: in our tests, whole
    records (namespace, document) of other collections. Chroma reads only the first
    ``cur_element_count`` elements, so zeroing the rest changes nothing it uses. Runs inside
    the purge's write transaction: no write can start the index flush that rewrites the file.
    """
    zeroed = 0
    for segment in _segment_dirs(con, folder, collection_ids):
        header, data = segment / "header.bin", segment / "data_level0.bin"
        if not header.is_file() or not data.is_file():
            continue
        raw = header.read_bytes()
        if len(raw) < HEADER_FIELDS.size:
            continue
        _, _, _, count, per_element, _, _ = HEADER_FIELDS.unpack_from(raw)
        used = count * per_element
        size = data.stat().st_size
        if size <= used:
            continue
        with data.open("r+b") as out:
            out.seek(used)
            remaining = size - used
            while remaining:
                chunk = min(remaining, 1 << 20)
                out.write(bytes(chunk))
                remaining -= chunk
            out.flush()
            os.fsync(out.fileno())
        zeroed += size - used
    return zeroed


def _flushed_vector_indexes(folder: Path, collection_ids: list[str]) -> list[Path]:
    """Vector index files of the collections that hold flushed data and deleted elements.

    A segment folder's ``link_lists.bin`` is empty until Chroma first flushes the index; after
    that its ``data_level0.bin`` holds every vector ever flushed, deleted ones included.
    """
    con = sqlite3.connect(f"file:{folder / CHROMA_FILE}?mode=ro", uri=True)
    try:
        marks = ",".join("?" * len(collection_ids))
        rows = con.execute(
            f"SELECT s.id FROM segments AS s JOIN max_seq_id AS m ON m.segment_id = s.id "
            f"WHERE s.collection IN ({marks}) AND s.type LIKE '%hnsw%'",
            collection_ids,
        ).fetchall()
    finally:
        con.close()
    return [folder / row[0] / "data_level0.bin" for row in rows if (folder / row[0]).is_dir()]


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
