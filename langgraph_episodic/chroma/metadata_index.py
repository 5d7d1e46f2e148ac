"""The record ids of one namespace, read from the index Chroma keeps on its metadata.

Chroma evaluates a ``where`` by testing every record of the collection, so reading one
namespace by ``where`` costs in proportion to the whole collection. Its SQLite file indexes
metadata by (key, value), so an embedded store reads a namespace's ids from there (read-only)
and the records by id through Chroma (``benchmarks/large_namespace.py``). When the file cannot
answer (an in-memory or server client, another schema), :meth:`MetadataIndex.ids` gives None
and the caller reads by ``where``.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

_log = logging.getLogger(__name__)

_IDS_OF_VALUE = """
SELECT e.embedding_id FROM embedding_metadata AS m
JOIN embeddings AS e ON e.id = m.id
JOIN segments AS s ON s.id = e.segment_id
WHERE m.key = ? AND m.string_value = ? AND s.collection = ? AND s.scope = 'METADATA'
"""
"""The ids of a collection's records whose metadata ``key`` holds a string: through the
``(key, string_value)`` index of Chroma's schema (``embedding_metadata_string_value``)."""


class MetadataIndex:
    """Reads of Chroma's metadata index in the SQLite file of a persistent embedded client."""

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
        database = Path(folder) / "chroma.sqlite3"
        return cls(database) if database.is_file() else None

    def ids(self, collection: Any, key: str, value: str) -> list[str] | None:
        """Ids of ``collection``'s records whose metadata ``key`` equals ``value``; None when
        the file cannot tell (then read by ``where``)."""
        with self._lock:
            if self._broken:
                return None
            try:
                if self._conn is None:
                    self._conn = sqlite3.connect(
                        f"{self._database.as_uri()}?mode=ro", uri=True, check_same_thread=False
                    )
                rows = self._conn.execute(_IDS_OF_VALUE, (key, value, str(collection.id)))
                return [row[0] for row in rows]
            except sqlite3.Error as exc:  # (a schema of another Chroma: for good; else this once)
                _log.warning("Chroma's metadata index unreadable (%s); reading by where", exc)
                self._broken = "no such" in str(exc)
                return None
