"""What Chroma's local vector index files hold, read from hnswlib's persistence code.

An embedded Chroma (1.x) keeps each collection's vector index in ``<folder>/<segment id>/``,
written by Chroma's fork of hnswlib (``hnswalg.h``, ``initPersistentIndex`` and
``persistDirty``):

* ``header.bin``: a format version, then ``offsetLevel0``, ``max_elements``,
  ``cur_element_count``, ``size_data_per_element`` ... as of the last flush.
* ``data_level0.bin``: ``size_data_per_element`` bytes per element (level-0 links, whose
  third byte carries the *deleted* mark ``0x01``, then the vector, then the label).
* ``length.bin``: one float32 per element, the vector's norm before normalisation. Only an
  index that normalises (space ``cosine``) ever sets or reads it; in an ``l2`` or ``ip`` index
  (Chroma's default, our items and namespaces collections) every slot is still written at each
  flush, straight from memory nobody set.
* ``link_lists.bin``, ``index_metadata.pickle`` (record id <-> label of live records).

A new index writes ``data_level0.bin`` and ``length.bin`` at their full initial capacity
(``max_elements``) straight from ``malloc``'d memory that nobody cleared: everything past
``cur_element_count`` elements is whatever the process had on its heap (we found other
collections' records and a forgotten user's text there). Later flushes write only the
elements that changed, each at its own offset; growing the index extends the files with holes
(zeros). On load, hnswlib reads all ``max_elements`` slots but uses only the first
``cur_element_count`` (a new element's slot is written before it is used), so bytes past
``cur_element_count`` are never used, nor is any byte of ``length.bin`` in an index that does
not normalise; zeroing them changes nothing Chroma reads. (In such an index, elements flushed
later get their ``length.bin`` slot from the same unset memory again: see docs/privacy.md.)

A deleted element keeps its vector in memory and in these files (only its mark changes): it is
written again at every flush that touches it. It goes only when the collection is rebuilt
(:mod:`langgraph_episodic.chroma.rebuild`).
"""

from __future__ import annotations

import json
import mmap
import os
import sqlite3
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CHROMA_FILE = "chroma.sqlite3"
"""Chroma's SQLite database in an embedded folder."""
HEADER_FIELDS = struct.Struct("<i6Q")
"""The start of ``header.bin``: format version, then hnswlib's offsetLevel0, max_elements,
cur_element_count, size_data_per_element, label_offset and offsetData."""
DELETE_MARK = 0x01
"""hnswlib's mark of a deleted element, in the third byte of its level-0 link header."""
FLOAT = 4
"""Bytes per element in ``length.bin``."""
DELETE_OPERATION = 3
"""Chroma's code of a delete in ``embeddings_queue.operation``."""


def seq_number(value: Any) -> int:
    """A sequence number as Chroma's SQLite holds it (None: 0)."""
    if isinstance(value, bytes):  # written by Chroma's older Python code
        return int.from_bytes(value, "big")
    return int(value or 0)


@dataclass(frozen=True)
class IndexFiles:
    """One vector index folder and its header as of the last flush (count 0 when never)."""

    folder: Path
    offset_level0: int
    count: int
    per_element: int

    @classmethod
    def read(cls, folder: Path) -> IndexFiles:
        raw = (folder / "header.bin").read_bytes() if (folder / "header.bin").is_file() else b""
        if len(raw) < HEADER_FIELDS.size:
            return cls(folder, 0, 0, 0)
        _, offset, _, count, per_element, _, _ = HEADER_FIELDS.unpack_from(raw)
        return cls(folder, offset, count, per_element)

    def marked_deleted(self) -> int:
        """How many flushed elements carry the deleted mark."""
        data = self.folder / "data_level0.bin"
        used = self.count * self.per_element
        if not used or not data.is_file() or data.stat().st_size < used:
            return 0
        with data.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mem:
            marks = mem[self.offset_level0 + 2 : used : self.per_element]
        return sum(1 for b in marks if b & DELETE_MARK)

    def scrub_unused(self, *, normalised: bool) -> int:
        """Zero the never-read bytes (see the module docstring): past the last flushed element
        of ``data_level0.bin`` and ``length.bin``, and all of ``length.bin`` for an index that
        does not normalise (``l2``, ``ip``). Return how many bytes."""
        zeroed = 0
        for name, used in (
            ("data_level0.bin", self.count * self.per_element),
            ("length.bin", self.count * FLOAT if normalised else 0),
        ):
            zeroed += _zero_tail(self.folder / name, used)
        return zeroed


def _zero_tail(path: Path, used: int) -> int:
    if not path.is_file():
        return 0
    size = path.stat().st_size
    if size <= used:
        return 0
    with path.open("r+b") as out:
        out.seek(used)
        remaining = size - used
        while remaining:
            chunk = min(remaining, 1 << 20)
            out.write(bytes(chunk))
            remaining -= chunk
        out.flush()
        os.fsync(out.fileno())
    return size - used


def index_folders(con: sqlite3.Connection, folder: Path, collection_id: str) -> list[Path]:
    """The vector index folders of a collection."""
    rows = con.execute(
        "SELECT id FROM segments WHERE collection = ? AND type LIKE '%hnsw%'", (collection_id,)
    ).fetchall()
    return [folder / str(row[0]) for row in rows if (folder / str(row[0])).is_dir()]


def normalises(con: sqlite3.Connection, collection_id: str) -> bool:
    """Whether the collection's index normalises its vectors (space ``cosine``), read from
    Chroma's stored schema (or, for older collections, its configuration)."""
    row = con.execute(
        "SELECT schema_str, config_json_str FROM collections WHERE id = ?", (collection_id,)
    ).fetchone()
    if row is None:
        return True  # unknown: keep the lengths
    schema, config = (json.loads(text) if text else {} for text in row)
    space = (
        schema.get("keys", {}).get("#embedding", {}).get("float_list", {})
        .get("vector_index", {}).get("config", {}).get("space")
        or (config.get("hnsw") or {}).get("space")
        or (config.get("hnsw_configuration") or {}).get("space")
        or "l2"
    )  # fmt: skip
    return bool(space == "cosine")


def holds_deleted(con: sqlite3.Connection, folder: Path, collection_id: str) -> bool:
    """Whether the collection's vector index holds deleted vectors: flushed with the deleted
    mark, or deleted since the last flush (a delete row in Chroma's log after the index's
    last flushed sequence number; such a vector is written, marked, at the next flush)."""
    for path in index_folders(con, folder, collection_id):
        if IndexFiles.read(path).marked_deleted():
            return True
    flushed = con.execute(
        "SELECT COALESCE(MAX(m.seq_id), 0) FROM max_seq_id AS m JOIN segments AS s "
        "ON s.id = m.segment_id WHERE s.collection = ? AND s.type LIKE '%hnsw%'",
        (collection_id,),
    ).fetchone()[0]
    row = con.execute(
        "SELECT 1 FROM embeddings_queue WHERE topic LIKE ? AND operation = ? AND seq_id > ? "
        "LIMIT 1",
        (f"%/{collection_id}", DELETE_OPERATION, seq_number(flushed)),
    ).fetchone()
    return row is not None
