"""Rebuild a collection of an embedded Chroma folder: copy, swap, drop; and recover from a crash.

Chroma's local vector index never forgets a vector (a delete only marks it, and dropping a
collection leaves its segment folder). So a collection is *rebuilt*: its live records are
copied into a fresh collection, the two swap names, and the old one is dropped with its
segment folders. The bulk copy runs without the store's write lock; records written meanwhile
(noted by a :class:`JournalingGateway`) are copied again under it just before the swap. A kill
at any moment is safe (a restart finds one complete collection, see :func:`recover`):

1. ``<name>__rebuild`` is created and filled; its metadata says ``copying``, then (checked
   against the original under the write lock) ``complete``.
2. The old collection is renamed ``<name>__retired``.
3. ``<name>__rebuild`` is renamed ``<name>`` (its metadata back to the original, one call).
4. ``<name>__retired`` is dropped and its segment folders removed.

:func:`recover` (run when a store opens, by ``verify(repair=True)`` and before each rebuild)
finishes or rolls back what a kill interrupted: with ``<name>`` present the leftovers go;
without it a complete copy is renamed in, else the retired original is renamed back.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import sqlite3
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

from ..errors import Error
from .gateway import Gateway, read_pages
from .index_files import CHROMA_FILE

logger = logging.getLogger(__name__)


class Rebuilt(Protocol):
    """What a live rebuild works on: a store's gateway (swapped while it copies) and state
    (its locks), and the claim of its folder (a :class:`.backend.Backend` is one)."""

    gateway: Gateway
    state: Any

    def claim_for_writing(self) -> None: ...


REBUILD_SUFFIX = "__rebuild"
RETIRED_SUFFIX = "__retired"
STATE_KEY = "langgraph_episodic_rebuild"
"""Collection metadata key of a copy: ``copying`` until every record is in, then ``complete``."""
COPY_PAGE = 1000
"""Records read (with embeddings) and written per step of a copy."""


step_hook: Any = None
"""Tests only: called as ``step_hook(step)`` at each step of :func:`rebuild_live` (a test kills
its process there to check that a restart recovers)."""


def _step(step: str) -> None:
    if step_hook is not None:
        step_hook(step)


class RebuildError(Error, RuntimeError):
    """A copy did not end with the same records as its original (nothing was swapped)."""


def segment_dirs(folder: Path, collection_id: str) -> list[Path]:
    """The segment folders of a collection (only its vector index segment has files)."""
    db = folder / CHROMA_FILE
    if not db.is_file():
        return []
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30.0)) as con:
        rows = con.execute("SELECT id FROM segments WHERE collection = ?", (collection_id,))
        ids = [str(row[0]) for row in rows]
    return [folder / sid for sid in ids if _is_uuid(sid) and (folder / sid).is_dir()]


def _is_uuid(text: str) -> bool:
    try:
        return str(uuid.UUID(text)) == text
    except ValueError:
        return False


def drop(client: Any, folder: Path, name: str) -> bool:
    """Drop collection ``name`` and remove its segment folders; False when it does not exist."""
    found = _find(client, name)
    if found is None:
        return False
    dirs = segment_dirs(folder, str(found.id))
    client.delete_collection(name)
    for path in dirs:
        shutil.rmtree(path)
    logger.info("dropped collection %s and %d segment folder(s)", name, len(dirs))
    return True


def _find(client: Any, name: str) -> Any:
    from chromadb.errors import NotFoundError

    try:
        return client.get_collection(name, embedding_function=None)
    except (NotFoundError, ValueError):
        return None


def _original_metadata(meta: dict[str, Any] | None) -> dict[str, Any] | None:
    if not meta:
        return None
    kept = {k: v for k, v in meta.items() if k != STATE_KEY}
    return kept or None


def leftovers(client: Any, names: Iterable[str]) -> list[str]:
    """Collections a rebuild of one of ``names`` left behind (copies, retired originals)."""
    wanted = {f"{n}{s}" for n in names for s in (REBUILD_SUFFIX, RETIRED_SUFFIX)}
    existing = {c if isinstance(c, str) else c.name for c in client.list_collections()}
    return sorted(wanted & existing)


def recover(client: Any, folder: Path, name: str) -> str | None:
    """Finish or roll back an interrupted rebuild of collection ``name``; say what was done
    (None: nothing to do). Call with the folder's write lock held."""
    copy, retired = _find(client, name + REBUILD_SUFFIX), _find(client, name + RETIRED_SUFFIX)
    if copy is None and retired is None:
        return None
    if _find(client, name) is not None:  # the swap finished, or never started
        for leftover in (copy, retired):
            if leftover is not None:
                drop(client, folder, leftover.name)
        return f"{name}: dropped the leftovers of an interrupted rebuild"
    complete = copy is not None and (copy.metadata or {}).get(STATE_KEY) == "complete"
    if complete:
        copy.modify(name=name, metadata=_original_metadata(copy.metadata))
        if retired is not None:
            drop(client, folder, retired.name)
        return f"{name}: finished an interrupted rebuild (the complete copy is in place)"
    if retired is None:  # cannot happen in the protocol's order; keep the copy's data
        raise RebuildError(
            f"Collection {name!r} is missing and only an incomplete copy exists; "
            f"inspect {name + REBUILD_SUFFIX!r} before deleting anything."
        )
    retired.modify(name=name)
    if copy is not None:
        drop(client, folder, copy.name)
    return f"{name}: rolled back an interrupted rebuild (the original is in place)"


def _hnsw_configuration(collection: Any) -> Any:
    config = getattr(collection, "configuration_json", None) or {}
    hnsw = config.get("hnsw") if isinstance(config, dict) else None
    return {"hnsw": {k: v for k, v in hnsw.items() if v is not None}} if hnsw else {}


def start_copy(client: Any, folder: Path, old: Any) -> Any:
    """A fresh, empty ``<name>__rebuild`` with ``old``'s index settings and metadata."""
    drop(client, folder, old.name + REBUILD_SUFFIX)
    return client.create_collection(
        old.name + REBUILD_SUFFIX,
        embedding_function=None,
        configuration=_hnsw_configuration(old),
        metadata={**dict(old.metadata or {}), STATE_KEY: "copying"},
    )


def copy_records(old: Any, new: Any, ids: Sequence[str], max_batch: int) -> None:
    """Copy the records ``ids`` from ``old`` to ``new`` as they are now, with embeddings
    (upserted; ids ``old`` no longer holds are deleted from ``new``)."""
    page = max(1, min(COPY_PAGE, max_batch))
    include = ["embeddings", "metadatas", "documents"]
    pages = read_pages(old, None, include, page, f"records of {old.name} to copy", ids)
    for first, got in zip(range(0, len(ids), page), pages, strict=True):
        if got["ids"]:
            docs = got["documents"]
            new.upsert(
                ids=got["ids"],
                embeddings=got["embeddings"],
                metadatas=got["metadatas"],
                documents=docs if docs is not None and any(d is not None for d in docs) else None,
            )
        gone = sorted(set(ids[first : first + page]) - set(got["ids"]))
        if gone:
            new.delete(ids=gone)
        _step("page")


def finish_copy(client: Any, folder: Path, old: Any, new: Any) -> None:
    """Check the copy against the original (call with the writers stopped) and mark it
    complete; drop it and raise :class:`RebuildError` when they differ."""
    if new.count() != old.count():
        counts = new.count(), old.count()
        drop(client, folder, new.name)
        raise RebuildError(
            f"The copy of {old.name!r} holds {counts[0]} records, the original {counts[1]}: "
            "a writer outside this store changed it during the rebuild; nothing was swapped."
        )
    new.modify(metadata={**dict(old.metadata or {}), STATE_KEY: "complete"})


def swap(client: Any, old: Any, new: Any) -> Any:
    """Steps 2 and 3: the old collection retires, the complete copy takes its name. Returns
    the copy's fresh handle under the original name."""
    name, meta = old.name, _original_metadata(dict(new.metadata or {}))
    old.modify(name=name + RETIRED_SUFFIX)
    _step("retired")
    new.modify(name=name, metadata=meta)
    return client.get_collection(name, embedding_function=None)


@dataclass(frozen=True)
class JournalingGateway(Gateway):
    """A gateway that notes the record ids every write touches, per collection kind, while a
    rebuild copies (those records are copied again before the swap)."""

    journal: dict[str, set[str]] = field(
        default_factory=lambda: {"items": set(), "vectors": set(), "namespaces": set()}
    )


def _journaled(name: str, kinds: tuple[str, ...]) -> Any:
    def write(self: JournalingGateway, ids: Sequence[str], *args: Any, **kwargs: Any) -> None:
        for kind in kinds:
            self.journal[kind].update(ids)
        getattr(Gateway, name)(self, ids, *args, **kwargs)

    return write


_VECTORS_TOO = ("items", "vectors")  # (items that are their own vector record live there)
for _name, _kinds in {
    "upsert_items": ("items",),
    "update_items": _VECTORS_TOO,
    "delete_items": _VECTORS_TOO,
    "upsert_vectors": ("vectors",),
    "delete_vectors": ("vectors",),
    "upsert_registry": ("namespaces",),
    "delete_registry": ("namespaces",),
}.items():
    setattr(JournalingGateway, _name, _journaled(_name, _kinds))


def _plain(gateway: Gateway, kind: str, collection: Any) -> Gateway:
    """``gateway`` as a :class:`Gateway` that journals nothing, with ``collection`` as its
    collection ``kind``."""
    given = {f.name: getattr(gateway, f.name) for f in fields(Gateway)}
    return Gateway(**{**given, kind: collection})


def recover_kind(b: Rebuilt, client: Any, folder: Path, kind: str) -> None:
    """:func:`recover` the store's collection ``kind`` (``"items"``, ...) and point the store's
    gateway at what holds its name then (call under the write lock)."""
    name = getattr(b.gateway, kind).name
    if recover(client, folder, name) is not None:
        b.gateway = _plain(b.gateway, kind, _find(client, name))


def rebuild_live(b: Rebuilt, client: Any, folder: Path, kinds: Iterable[str]) -> list[str]:
    """Rebuild the store's collections ``kinds`` (``"items"``, ``"vectors"``, ``"namespaces"``)
    while the store stays in use (same ids and metadata: caches stay valid); return the names
    rebuilt. The old collection is dropped once no batch that may still read it runs."""
    with b.state.rebuild_lock:
        return [_rebuild_one(b, client, folder, kind) for kind in kinds]


def _rebuild_one(b: Rebuilt, client: Any, folder: Path, kind: str) -> str:
    """Rebuild one collection (see :func:`rebuild_live`); return its name."""
    with b.state.write_lock:
        b.claim_for_writing()
        recover_kind(b, client, folder, kind)
        name = getattr(b.gateway, kind).name
        old = _find(client, name)
        _step("start")
        journaling = JournalingGateway(**vars(_plain(b.gateway, kind, old)))
        b.gateway = journaling
        ids = list(old.get(include=[])["ids"])  # (ids alone need no pages)
        new = start_copy(client, folder, old)
        _step("listed")
    try:
        copy_records(old, new, ids, b.gateway.max_batch)
        with b.state.write_lock:
            _step("copied")
            copy_records(old, new, sorted(journaling.journal[kind]), b.gateway.max_batch)
            finish_copy(client, folder, old, new)
            _step("complete")
            fresh = swap(client, old, new)
            b.gateway = _plain(b.gateway, kind, fresh)
            _step("swapped")
    except BaseException:
        with b.state.write_lock:
            recover(client, folder, name)
            b.gateway = _plain(b.gateway, kind, _find(client, name))
        raise
    with b.state.batches.exclusive():
        drop(client, folder, name + RETIRED_SUFFIX)
    _step("dropped")
    return str(name)


def recover_store(client: Any, folder: Path, names: Iterable[str], claim: Any) -> list[str]:
    """Run :func:`recover` for the store's collections ``names`` if a rebuild left anything
    (``claim()`` makes this process the folder's writer first); return what was done."""
    names = list(names)
    if not leftovers(client, names):
        return []
    claim()
    done = [msg for n in names if (msg := recover(client, folder, n)) is not None]
    for msg in done:
        logger.warning("%s", msg)
    return done
