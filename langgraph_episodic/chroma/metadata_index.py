"""Chroma's metadata segment, read directly (read-only) from an embedded folder's SQLite file.

Chroma evaluates a ``where`` by testing every record of the collection, so reading one
namespace by ``where`` costs in proportion to the whole collection. Its SQLite file indexes
metadata by (key, value), so an embedded store reads a namespace's ids from there
(:meth:`MetadataIndex.ids`) and the records by id through Chroma
(``benchmarks/large_namespace.py``). When the file cannot answer (an in-memory or server client,
another schema), :meth:`MetadataIndex.ids` gives None and the caller reads by ``where``. The same
file's sequence numbers tell whether a namespace's records changed since a kept file was built
from them (:class:`Stamp`, :mod:`.persisted`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .._types import Namespace
from .index_files import CHROMA_FILE, seq_number
from .record_format import ns_str

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

_IDS_OF_VALUE = """
SELECT e.embedding_id FROM embedding_metadata AS m
JOIN embeddings AS e ON e.id = m.id
JOIN segments AS s ON s.id = e.segment_id
WHERE m.key = ? AND m.string_value = ? AND s.collection = ? AND s.scope = 'METADATA'
"""
"""The ids of a collection's records whose metadata ``key`` holds a string: through the
``(key, string_value)`` index of Chroma's schema (``embedding_metadata_string_value``)."""


@dataclass(frozen=True)
class Stamp:
    """The state of Chroma's records a kept file was built from (see :mod:`.persisted`)."""

    collection: str
    """The vector collection's id."""
    segment: str
    """Its metadata segment's id."""
    seq: int
    """The segment's last sequence number."""
    count: int
    """How many records of the namespace the collection held."""
    ns_seq: int
    """The highest sequence number of those records."""


class MetadataIndex:
    """Reads of Chroma's metadata segment in the SQLite file of a persistent embedded client,
    through one connection kept open: closing a descriptor of the file would drop the POSIX
    locks Chroma's SQLite holds on it (a Chroma read after such a close took up to 300 ms
    instead of 2-20)."""

    def __init__(self, database: Path) -> None:
        self._database = database
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._broken = False

    @classmethod
    def of_folder(cls, folder: str | None) -> MetadataIndex | None:
        """The index of an embedded client's folder (None for other clients)."""
        if folder is None:
            return None
        database = Path(folder) / CHROMA_FILE
        return cls(database) if database.is_file() else None

    def _read(self, read: Callable[[sqlite3.Connection], _T]) -> _T:
        """``read(connection)`` in one read transaction (``sqlite3.Error`` is raised)."""
        with self._lock:
            con = self._conn
            if con is None:
                uri = f"{self._database.as_uri()}?mode=ro"
                con = self._conn = sqlite3.connect(
                    uri, uri=True, timeout=10.0, check_same_thread=False
                )
            con.execute("BEGIN")
            try:
                return read(con)
            finally:
                con.rollback()

    def ids(self, collection: Any, key: str, value: str) -> list[str] | None:
        """Ids of ``collection``'s records whose metadata ``key`` equals ``value``; None when
        the file cannot tell (then read by ``where``)."""
        if self._broken:
            return None
        args = (key, value, str(collection.id))
        try:
            return self._read(lambda con: [row[0] for row in con.execute(_IDS_OF_VALUE, args)])
        except sqlite3.Error as exc:  # (a schema of another Chroma: for good; else this once)
            _log.warning("Chroma's metadata index unreadable (%s); reading by where", exc)
            self._broken = "no such" in str(exc)
            return None

    def segment_seq(self, collection: str) -> tuple[str, int] | None:
        """The collection's metadata segment and its last sequence number (None: unknown)."""
        return self._read(lambda con: _segment_seq(con, collection))

    def namespace(self, segment: str, ns: Namespace) -> tuple[int, int]:
        """How many records of ``ns`` the segment holds, and their highest sequence number."""
        return self._read(lambda con: _namespace(con, segment, ns))

    def added_since(self, segment: str, ns: Namespace, seq: int) -> list[str]:
        """The ids of the records of ``ns`` written after ``seq``, in the segment's order."""
        rows = self._read(
            lambda con: con.execute(
                "SELECT e.embedding_id FROM embeddings AS e JOIN embedding_metadata AS m "
                "ON m.id = e.id WHERE e.segment_id = ? AND m.key = '_ns' "
                "AND m.string_value = ? AND e.seq_id > ? ORDER BY e.id",
                (segment, ns_str(ns), seq),
            ).fetchall()
        )
        return [str(row[0]) for row in rows]

    def stamp(self, collection: str, ns: Namespace) -> Stamp | None:
        """The :class:`Stamp` of ``ns``'s records in ``collection`` now (None: unknown)."""

        def read(con: sqlite3.Connection) -> Stamp | None:
            found = _segment_seq(con, collection)
            if found is None:
                return None
            count, ns_seq = _namespace(con, found[0], ns)
            return Stamp(collection, found[0], found[1], count, ns_seq)

        return self._read(read)


def _segment_seq(con: sqlite3.Connection, collection: str) -> tuple[str, int] | None:
    row = con.execute(
        "SELECT s.id, m.seq_id FROM segments AS s LEFT JOIN max_seq_id AS m "
        "ON m.segment_id = s.id WHERE s.collection = ? AND s.scope = 'METADATA'",
        (collection,),
    ).fetchall()
    return None if not row else (str(row[0][0]), seq_number(row[0][1]))


def _namespace(con: sqlite3.Connection, segment: str, ns: Namespace) -> tuple[int, int]:
    ((count, top),) = con.execute(
        "SELECT COUNT(*), MAX(e.seq_id) FROM embeddings AS e JOIN embedding_metadata AS m "
        "ON m.id = e.id WHERE e.segment_id = ? AND m.key = '_ns' AND m.string_value = ?",
        (segment, ns_str(ns)),
    ).fetchall()
    return int(count), seq_number(top)
