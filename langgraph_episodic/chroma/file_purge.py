"""Purge deleted data from the files of an embedded Chroma: its write-ahead log, free pages and
vector index files.

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

:func:`purge_files` removes all three for the collections of one :class:`~.store.ChromaStore`:
it rebuilds each collection whose index holds deleted vectors (``ChromaStore.maintenance``),
deletes the log rows that only a *deleted* record still needs (each add/update/upsert row of a
record id followed by a delete of that id; the delete rows, which hold only the id, stay, so a
replay after a restart ends in the same state), merges the full-text index, zeroes the
never-read tails of the index files (written from uncleared memory) and runs ``VACUUM``.
Nothing the store can still read is touched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .index_files import (
    CHROMA_FILE,
    DELETE_OPERATION,
    IndexFiles,
    holds_deleted,
    index_folders,
    normalises,
)

logger = logging.getLogger(__name__)

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
        return dataclasses.asdict(self)


def purge_files(store: Any, *, rebuild: bool = True) -> Purge | None:
    """Purge what a ``ChromaStore`` deleted from its files; None when ``store`` is no Chroma store.

    Also a wrapped one (e.g. in a ``RedactingStore``): embedded folder purged, in-memory nothing
    to do, server reported. ``rebuild``: see ``langgraph_episodic.privacy.purge_store``.
    """
    remote = getattr(getattr(store, "inner", store), "_remote", None)
    if remote is not None:  # a client of the process holding an embedded folder
        refusal = remote.needs_the_folder("purge_store", "purge")
        return Purge(f"Chroma folder {remote.folder}", False, refusal)
    collections = getattr(store, "collections", None)
    client = getattr(store, "client", None)
    if not isinstance(collections, dict) or client is None:
        return None
    drop = getattr(getattr(store, "inner", store), "drop_empty_namespaces", None)
    if callable(drop):  # (the records it keeps for emptied namespaces go first)
        drop()
    settings = client.get_settings()
    if "fastapi" in str(getattr(settings, "chroma_api_impl", "")).lower():
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
    """The kinds (of ``collection_ids``: kind -> Chroma id) whose vector index holds deleted
    vectors."""
    db = folder / CHROMA_FILE
    if not db.is_file():
        return []
    uri = f"file:{db}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS)) as con:
        return [k for k, cid in collection_ids.items() if holds_deleted(con, folder, cid)]


def purge_chroma_folder(folder: Path, collection_ids: list[str]) -> Purge:
    """Purge the log rows of deleted records of ``collection_ids``, zero the unused tails of
    their vector index files and vacuum ``chroma.sqlite3``.

    Safe while the folder is open in this process: only rows of records that are deleted are
    removed, and SQLite serialises the purge with Chroma's writes (busy timeout
    :data:`BUSY_TIMEOUT_SECONDS`). ``purged`` is False when a vector index still holds deleted
    vectors (a rebuild removes them, see :func:`purge_files`).
    """
    db = folder / CHROMA_FILE
    if not db.is_file():
        return Purge(f"Chroma folder {folder}", True, "no database file")
    size_before = db.stat().st_size
    connection = sqlite3.connect(db, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    with contextlib.closing(connection) as con:
        con.execute("BEGIN IMMEDIATE")
        try:
            removed = sum(_purge_log(con, cid) for cid in collection_ids)
            _merge_fulltext(con)
            # Inside the write transaction (and, for a live store, its write lock): no index
            # flush can rewrite the files meanwhile.
            scrubbed = sum(
                IndexFiles.read(path).scrub_unused(normalised=normalises(con, cid))
                for cid in collection_ids
                for path in index_folders(con, folder, cid)
            )
            with_deleted = [cid for cid in collection_ids if holds_deleted(con, folder, cid)]
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("VACUUM")
    detail = (
        f"removed {removed} write-ahead log rows of deleted records, merged the full-text "
        f"index, vacuumed {CHROMA_FILE} ({size_before:,} -> {db.stat().st_size:,} bytes), "
        f"zeroed {scrubbed:,} unused bytes of vector index files"
    )
    logger.info("purged %s: %s", folder, detail)
    return Purge(f"Chroma folder {folder}", not with_deleted, detail)


def _purge_log(con: sqlite3.Connection, collection_id: str) -> int:
    """Delete add/update/upsert rows of ``collection_id`` whose record is deleted later."""
    topics = con.execute(
        "SELECT DISTINCT topic FROM embeddings_queue WHERE topic LIKE ?", (f"%/{collection_id}",)
    ).fetchall()
    removed = 0
    for (topic,) in topics:
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
