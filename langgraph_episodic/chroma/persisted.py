"""A namespace's keyword index, field values and vectors kept beside an embedded store, so that
the first search after a restart loads them instead of reading and analyzing every record.

For a namespace of at least :data:`MIN_DOCS` documents in a store on a folder, :mod:`.restore`
writes what a first search built (:mod:`.reads`: the packed keyword index, the field values and,
when they fit the cache, the vectors) to ``<folder>/langgraph-episodic-index.<store>.<namespace>
.npz``; the next process's first search there loads it. Server and in-memory stores keep nothing.

A file is used only when it is what a rebuild would give now:

* its format, :func:`code_digest` (the code that builds it) and the analyzer's language match;
* it names the store's vector collection and that collection's metadata segment in Chroma's
  SQLite database (a rebuilt collection has new ones);
* Chroma's records of the namespace are those it was built from: the segment's ``max_seq_id``
  (moved by every write to the collection) is the one on file, or else the namespace's record
  count and highest record sequence number are (a write gives a record a new, higher number; a
  delete lowers the count). So a file outlives writes to other namespaces;
* or the namespace only gained records since (as many records carry a higher number than the
  file's as were added): :func:`.restore.warm` reads and adds them, as writes do (the vectors as
  the last rows, where a read of Chroma puts them). Any other change makes the file stale.

A file that fails a check or cannot be read (zip's CRC, every array's shape and range are
checked) is deleted and the namespace built from Chroma. Files hold arrays only
(``allow_pickle=False``) and are written to a temporary file and renamed.

A file holds a namespace's analyzed words, so a write that deletes a memory, or rewrites one
that had indexed text, deletes the file at once (:meth:`PersistedIndex.discard`, from
:meth:`.caches.StoreState.commit`): a deleted memory's words never outlive it on disk. Records
deleted behind the store's state (directly, or by a repair) delete every file of the store.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import sqlite3
import threading
import uuid
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .._types import Namespace
from ..errors import InvalidValueError
from .metadata_index import MetadataIndex, Stamp
from .ranking.lexical import PackedParts, restore_packed
from .ranking.shared_fields import FieldIndex
from .ranking.vectors import NamespaceVectors

logger = logging.getLogger(__name__)

PREFIX = "langgraph-episodic-index"
"""How kept files begin (files beside Chroma's: the folders there are Chroma's segments)."""
FORMAT = 1
"""The layout of a file; a file of another layout is rebuilt."""
MIN_DOCS = 1_000
"""Namespaces with fewer documents are not kept: reading them from Chroma is about as fast."""
SEPARATOR = "\x00"
"""Between the strings of a list kept as one UTF-8 array (a list holding it is not kept)."""

_UNREADABLE = (OSError, ValueError, KeyError, IndexError, TypeError, EOFError, zipfile.BadZipFile)
"""What reading a damaged file raises (``json`` and ``UnicodeDecodeError`` are ValueErrors)."""


class FieldParts(NamedTuple):
    """A field shard as arrays: document ``n`` is ``ids[n]`` with ``counts[n]`` keys, the next
    ones of ``field`` (an index into ``names``) and ``digest``."""

    ids: list[str]
    counts: np.ndarray
    names: list[str]
    field: np.ndarray
    digest: np.ndarray


@dataclass(frozen=True)
class Kept:
    """What a file holds for one namespace."""

    stamp: Stamp
    lexical: PackedParts
    fields: FieldParts
    vectors: tuple[np.ndarray, list[str]] | None
    """The normalised matrix and each row's vector id (None: not kept)."""


@dataclass(frozen=True)
class Loaded:
    """A namespace's file, read back and checked (the block's ``version`` is set by its keeper)."""

    stamp: Stamp
    lexical: Any
    """A packed lexical shard (:func:`.ranking.lexical.restore_packed`)."""
    fields: Any
    """A field shard (:func:`restore_fields`)."""
    vectors: NamespaceVectors | None
    appended: tuple[str, ...] = ()
    """Records of the namespace added since the file was written (none changed or deleted),
    in Chroma's order: to add before use (:func:`.restore.warm`)."""


def _digest(text: str, size: int) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).hexdigest()


_SOURCES = (
    "language",
    "chroma/ranking/lexical.py",
    "chroma/ranking/shared_fields.py",
    "chroma/ranking/vectors.py",
    "chroma/backend.py",
    "chroma/record_format.py",
    "chroma/index_paths.py",
    "chroma/persisted.py",
)
"""The code that decides what a file holds (relative to the package)."""


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """A digest of the code that builds what a file holds and of the stemmer's packages: a
    file another version wrote is rebuilt, never read as if it matched."""
    package = Path(__file__).resolve().parent.parent
    h = hashlib.blake2b(digest_size=16)
    h.update(f"format {FORMAT}".encode())
    for name in _SOURCES:
        path = package / name
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for file in files:
            h.update(file.name.encode())
            h.update(file.read_bytes())
    for dist in ("snowballstemmer", "PyStemmer", "numpy"):
        try:
            h.update(f"{dist} {importlib.metadata.version(dist)}".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{dist} absent".encode())
    return h.hexdigest()


# --- files --------------------------------------------------------------------------------------


def _strings(values: list[str]) -> np.ndarray | None:
    """``values`` as one UTF-8 array (None when one holds :data:`SEPARATOR`)."""
    joined = SEPARATOR.join(values)
    if joined.count(SEPARATOR) != max(len(values) - 1, 0):
        return None
    return np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8)


def _unstrings(array: np.ndarray, n: int) -> list[str]:
    if array.dtype != np.uint8 or array.ndim != 1:
        raise InvalidValueError("a string list is not bytes")
    if n == 0:
        if len(array):
            raise InvalidValueError("a string list holds more than it counts")
        return []
    values = array.tobytes().decode("utf-8", "surrogatepass").split(SEPARATOR)
    if len(values) != n:
        raise InvalidValueError("a string list holds another count than it says")
    return values


def field_parts(shard: Any) -> FieldParts:
    """A field shard's memories and their keys, in the shard's order."""
    ids: list[str] = []
    counts: list[int] = []
    names: dict[str, int] = {}
    fields: list[int] = []
    digests: list[int] = []
    for doc_id, keys in shard.keys.items():
        ids.append(doc_id)
        counts.append(len(keys))
        for field, value in keys:
            fields.append(names.setdefault(field, len(names)))
            digests.append(value)
    return FieldParts(
        ids,
        np.array(counts, dtype=np.int32),
        list(names),
        np.array(fields, dtype=np.int32),
        np.array(digests, dtype=np.uint64),
    )


def restore_fields(parts: FieldParts) -> Any:
    """The field shard of ``parts``, as :meth:`.FieldIndex.build_shard` built it (``ValueError``
    when the parts do not form one)."""
    counts, field, digest = parts.counts, parts.field, parts.digest
    if (
        counts.dtype != np.int32
        or counts.shape != (len(parts.ids),)
        or field.dtype != np.int32
        or digest.dtype != np.uint64
        or field.shape != digest.shape
        or int(counts.sum()) != len(field)
        or (len(counts) and int(counts.min()) < 1)
        or (len(field) and (int(field.min()) < 0 or int(field.max()) >= len(parts.names)))
    ):
        raise InvalidValueError("Not a field shard: its arrays do not fit.")
    shard = FieldIndex.build_shard(())
    names = parts.names
    pairs = list(zip([names[k] for k in field.tolist()], digest.tolist(), strict=True))
    if len(pairs) == len(parts.ids):  # one key a memory (every count is 1): at once
        if len(set(pairs)) == len(pairs):  # (and every value held once)
            shard.groups = {
                key: {doc_id: None} for key, doc_id in zip(pairs, parts.ids, strict=True)
            }
        else:
            for key, doc_id in zip(pairs, parts.ids, strict=True):
                shard.groups.setdefault(key, {})[doc_id] = None
        shard.keys = dict(zip(parts.ids, [(key,) for key in pairs], strict=True))
        if len(shard.keys) != len(parts.ids):
            raise InvalidValueError("Not a field shard: a memory repeats.")
        return shard
    at = 0
    for doc_id, n in zip(parts.ids, counts.tolist(), strict=True):
        shard.fill(doc_id, tuple(pairs[at : at + n]))
        at += n
    keys = shard.keys
    if len(keys) != len(parts.ids) or any(len(set(k)) != len(k) for k in keys.values()):
        raise InvalidValueError("Not a field shard: a memory or a key repeats.")
    return shard


class PersistedIndex:
    """The kept namespaces of one store on an embedded folder (see the module docstring)."""

    def __init__(self, folder: Path, store: str, chroma: MetadataIndex) -> None:
        self.chroma = chroma
        """Chroma's records, which a file is checked against."""
        self.root = folder
        self.stem = f"{PREFIX}.{_digest(store, 8)}"
        self._lock = threading.Lock()
        self._absent: set[Namespace] = set()
        """Namespaces known to have no file (checked or deleted by this process)."""
        self._discards: dict[Namespace, int] = {}
        """How many times each namespace's file was discarded (a save racing a write)."""

    def path(self, ns: Namespace) -> Path:
        """The file of ``ns``."""
        return self.root / f"{self.stem}.{_digest(json.dumps(list(ns)), 16)}.npz"

    # -- deleting ---------------------------------------------------------------------------

    def discard(self, namespaces: Iterable[Namespace]) -> None:
        """Delete the files of ``namespaces`` (memories deleted or rewritten there)."""
        with self._lock:
            for ns in namespaces:
                self._discards[ns] = self._discards.get(ns, 0) + 1
                if ns in self._absent:
                    continue
                self._unlink(self.path(ns))
                self._absent.add(ns)

    def discard_all(self) -> None:
        """Delete every file of the store (Chroma's records changed behind the state)."""
        with self._lock:
            for pattern in (f"{self.stem}.*.npz", f".{self.stem}.*.tmp"):
                for path in self.root.glob(pattern):
                    self._unlink(path)
            self._absent.clear()
            for ns in self._discards:
                self._discards[ns] += 1

    def discards(self, ns: Namespace) -> int:
        with self._lock:
            return self._discards.get(ns, 0)

    @staticmethod
    def _unlink(path: Path) -> None:
        try:
            path.unlink(missing_ok=True)
        except OSError as e:  # (a write must not fail once Chroma holds it: say so instead)
            logger.warning("Cannot delete the kept index %s (%s); delete it by hand.", path, e)

    # -- reading ----------------------------------------------------------------------------

    def load(self, ns: Namespace, collection: str, language: str) -> Loaded | None:
        """The namespace's file if it holds what a rebuild would give now, else None (a file
        that does not is deleted)."""
        path = self.path(ns)
        with self._lock:
            if ns in self._absent:
                return None
        if not path.is_file():
            with self._lock:
                self._absent.add(ns)
            return None
        try:
            kept = _read(path, ns, language)
        except _UNREADABLE as e:
            logger.warning("The kept index %s cannot be read (%s); rebuilding it.", path, e)
            self._drop(ns, path)
            return None
        try:
            appended = None if kept is None else self._since(kept.stamp, ns, collection)
        except sqlite3.Error as e:  # (Chroma's file unreadable now: build from Chroma)
            logger.warning("Cannot check the kept index %s against Chroma (%s).", path, e)
            return None
        if kept is None or appended is None:
            self._drop(ns, path)
            return None
        return dataclasses.replace(kept, appended=tuple(appended)) if appended else kept

    def _since(self, stamp: Stamp, ns: Namespace, collection: str) -> list[str] | None:
        """The records of ``ns`` added since ``stamp``; None when the file is stale."""
        if stamp.collection != collection:
            return None
        now = self.chroma.segment_seq(collection)
        if now is None or now[0] != stamp.segment:
            return None
        if now[1] == stamp.seq:
            return []
        count, top = self.chroma.namespace(stamp.segment, ns)
        if (count, top) == (stamp.count, stamp.ns_seq):
            return []
        if count <= stamp.count:
            return None
        # Only additions when as many were written as were added (see the module docstring).
        added = self.chroma.added_since(stamp.segment, ns, stamp.ns_seq)
        return added if len(added) == count - stamp.count else None

    def _drop(self, ns: Namespace, path: Path) -> None:
        with self._lock:
            self._unlink(path)
            self._absent.add(ns)

    # -- writing ----------------------------------------------------------------------------

    def save(self, ns: Namespace, language: str, kept: Kept, discards: int) -> bool:
        """Write the namespace's file atomically; False when it cannot be kept (a string holding
        :data:`SEPARATOR`) or a write discarded it since :meth:`discards` said ``discards``."""
        arrays = _arrays(ns, language, kept)
        if arrays is None:
            return False
        path = self.path(ns)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            with tmp.open("wb") as out:
                np.savez(out, allow_pickle=False, **arrays)
            os.replace(tmp, path)
        except OSError as e:  # (a full or read-only disk: the search still answers)
            logger.warning("Cannot keep the index of a namespace in %s (%s).", path, e)
            return False
        finally:
            self._unlink(tmp)
        with self._lock:
            if self._discards.get(ns, 0) != discards:  # a write landed: its words may differ
                self._unlink(path)
                self._absent.add(ns)
                return False
            self._absent.discard(ns)
        return True


_STRING_LISTS = ("lexical_ids", "lexical_terms", "field_ids", "field_names", "vector_ids")
"""The arrays of a file that hold a list of strings (:func:`_strings`)."""


def _arrays(ns: Namespace, language: str, kept: Kept) -> dict[str, np.ndarray] | None:
    vectors = kept.vectors
    parts: dict[str, Any] = {
        **{f"lexical_{name}": part for name, part in kept.lexical._asdict().items()},
        **{f"field_{name}": part for name, part in kept.fields._asdict().items()},
        "vector_matrix": vectors[0] if vectors is not None else np.zeros((0, 0), np.float32),
        "vector_ids": vectors[1] if vectors is not None else [],
    }
    parts["lexical_starts"] = parts["lexical_starts"].astype(np.int64)
    strings = {name: _strings(parts[name]) for name in _STRING_LISTS}
    if any(value is None for value in strings.values()):
        return None
    header = {
        "format": FORMAT,
        "code": code_digest(),
        "language": language,
        "namespace": list(ns),
        "stamp": vars(kept.stamp),
        "counts": {name: len(parts[name]) for name in _STRING_LISTS},
        "vectors": vectors is not None,
    }
    return {
        "header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
        **parts,
        **strings,
    }


def _read(path: Path, ns: Namespace, language: str) -> Loaded | None:
    """The file's contents; None when another code, language or namespace wrote it."""
    with np.load(path, allow_pickle=False) as files:
        header = json.loads(files["header"].tobytes().decode())
        if (
            not isinstance(header, dict)
            or header.get("format") != FORMAT
            or header.get("code") != code_digest()
            or header.get("language") != language
            or header.get("namespace") != list(ns)
        ):
            return None
        counts = header["counts"]
        stamp = Stamp(**header["stamp"])
        if not all(isinstance(v, int) for v in (stamp.seq, stamp.count, stamp.ns_seq)):
            raise InvalidValueError("the stamp is not numbers")

        def part(name: str) -> Any:
            if name in _STRING_LISTS:
                return _unstrings(files[name], counts[name])
            return files[name]

        lexical = PackedParts(*(part(f"lexical_{name}") for name in PackedParts._fields))
        fields = FieldParts(*(part(f"field_{name}") for name in FieldParts._fields))
        vectors = None
        if header["vectors"] is True:
            vectors = NamespaceVectors.restored("", part("vector_matrix"), part("vector_ids"))
    lexical = lexical._replace(starts=lexical.starts.astype(np.intp, copy=False))
    return Loaded(stamp, restore_packed(lexical), restore_fields(fields), vectors)
