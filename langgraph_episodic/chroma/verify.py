"""``ChromaStore.verify()``: find, and on request repair, what a crash or a race left behind.

The write order of :mod:`.writes` guarantees that searches never answer from leftovers, but
leftovers cost space and skew BM25 statistics. This reads every record once and reports:

* orphan vectors (no item) and stale ones (their item no longer names them): killed writes;
* items missing vectors: never produced by the store's own writes (put the item again);
* shadowed item records: an item-collection record of an item that is its own vector record
  (a killed move between the collections);
* registry drift: unregistered namespaces with items, records of empty namespaces (not
  those marked as kept, :mod:`.registry`), and records whose latest expiry is below their
  items'.

It also lists unsearchable items: their put asked to index fields that hold no text, so no
query finds them (``get``, filters and listings still do). They do not count against ``ok``:
an absent path is legal (as in ``InMemoryStore``) and ``repair`` cannot invent the text; the
caller puts the item again with fields it has, or with ``index=False``.

``repair=True`` removes the leftovers (on a server only those older than a grace period: a
younger one may be a put still running), fixes the registry and reloads the in-process state.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import record_format
from .backend import Backend
from .rebuild import leftovers, recover_kind
from .registry import Namespace, NamespaceInfo, record_id, records, records_by_namespace


@dataclass(frozen=True)
class VerifyReport:
    """What :meth:`.ChromaStore.verify` found (and, with ``repaired``, fixed)."""

    items: int
    vectors: int
    orphan_vectors: int
    stale_vectors: int
    items_missing_vectors: int
    unregistered_namespaces: tuple[Namespace, ...]
    empty_namespaces: tuple[Namespace, ...]
    expiry_drift: tuple[Namespace, ...]
    repaired: bool
    """Whether the problems found (less ``kept_recent``) were fixed."""
    kept_recent: int = 0
    """Orphan or stale vectors left alone because they are younger than the grace period."""
    leftover_collections: tuple[str, ...] = ()
    """Collections a rebuild killed half-way left (``<name>__rebuild``, ``<name>__retired``;
    see :mod:`.rebuild`). Opening the store removes them; ``repair`` does too."""
    unsearchable_items: tuple[tuple[Namespace, str, tuple[str, ...]], ...] = ()
    """(namespace, key, paths asked) of items whose index fields hold no text: no vector, so
    no query finds them. Not counted against :attr:`ok` (see the module docstring)."""
    shadowed_items: int = 0
    """Records in the item collection of items that are their own vector record (a killed
    move's leftovers; searches and reads never see them)."""

    @property
    def ok(self) -> bool:
        """Whether nothing needs repair."""
        return not (
            self.orphan_vectors
            or self.stale_vectors
            or self.items_missing_vectors
            or self.shadowed_items
            or self.unregistered_namespaces
            or self.empty_namespaces
            or self.expiry_drift
            or self.leftover_collections
        )


def verify(b: Backend, now: float, *, repair: bool, grace_seconds: float) -> VerifyReport:
    """Read every record of the store and report (and with ``repair`` fix) what is wrong."""
    with b.state.write_lock:
        if repair:
            b.claim_for_writing()
        else:
            b.check_readable()
        left = _rebuild_leftovers(b, repair=repair)
        gw = b.gateway
        items = dict(gw.read_items(None))
        vector_ids = gw.vector_ids()
        shadows = gw.shadows()
        cutoff = now - grace_seconds  # records written after it are kept (grace period)
        # (on a server a young shadow may be a move still running elsewhere)
        limit = record_format.to_micros(cutoff)
        shadowed = [rid for rid, shadow in shadows if int(shadow.get("_updated", 0)) <= limit]
        registry = records_by_namespace(gw.registry_records())
        vectors = _check_vectors(items, vector_ids, cutoff)
        missing = _missing_vectors(items, set(vector_ids))
        latest, unsearchable = _scan_items(items)
        unregistered = tuple(sorted(ns for ns in latest if ns not in registry))
        # (a marked record may stand for an empty namespace: :mod:`.registry`)
        empty = tuple(sorted(ns for ns in registry if ns not in latest and not registry[ns].kept))
        drift = tuple(
            sorted(
                ns for ns, exp in latest.items() if ns in registry and registry[ns].expires < exp
            )
        )
        if repair:
            _repair(b, shadowed, vectors.bad, latest, unregistered, drift, empty)
        return VerifyReport(
            items=len(items),
            vectors=len(vector_ids),
            orphan_vectors=vectors.orphans,
            stale_vectors=vectors.stale,
            items_missing_vectors=missing,
            unregistered_namespaces=unregistered,
            empty_namespaces=empty,
            expiry_drift=drift,
            repaired=repair,
            kept_recent=len(shadows) - len(shadowed) + vectors.kept,
            leftover_collections=left,
            unsearchable_items=tuple(sorted(unsearchable)),
            shadowed_items=len(shadows),
        )


@dataclass(frozen=True)
class _VectorCheck:
    """What :func:`_check_vectors` found among the vector records."""

    orphans: int
    stale: int
    kept: int
    """Orphan or stale vectors younger than the grace period (left alone)."""
    bad: list[str]
    """Orphan or stale vectors to remove."""


def _check_vectors(
    items: Mapping[str, Mapping[str, Any]], vector_ids: Sequence[str], cutoff: float
) -> _VectorCheck:
    """Sort the vector records no item names into orphans (no item) and stale ones."""
    bad: list[str] = []
    orphans = stale = kept = 0
    for vid in vector_ids:
        key, tag, index = record_format.split_vector_id(vid)
        meta = items.get(record_format.split_entry_key(key)[0])
        if (
            meta is not None
            and record_format.vector_tag(meta) == tag
            and index < record_format.n_vectors(meta)
        ):
            continue
        if meta is None:
            orphans += 1
        else:
            stale += 1
        made = record_format.tag_time(tag)
        if made is not None and made > cutoff:
            kept += 1
        else:
            bad.append(vid)
    return _VectorCheck(orphans, stale, kept, bad)


def _missing_vectors(items: Mapping[str, Mapping[str, Any]], present: set[str]) -> int:
    """How many items name a vector record that is not there."""
    return sum(
        1
        for rid, meta in items.items()
        if any(
            record_format.vector_id(rid, j, record_format.vector_tag(meta)) not in present
            for j in range(record_format.n_vectors(meta))
        )
    )


def _scan_items(
    items: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[Namespace, float], list[tuple[Namespace, str, tuple[str, ...]]]]:
    """The latest expiry of each namespace holding items, and the unsearchable items."""
    latest: dict[Namespace, float] = {}
    unsearchable: list[tuple[Namespace, str, tuple[str, ...]]] = []
    for meta in items.values():
        ns = record_format.ns_from_str(str(meta["_ns"]))
        latest[ns] = max(record_format.expiry_of(meta), latest.get(ns, 0.0))
        if meta.get("_notext") and not record_format.n_vectors(meta):
            asked = tuple(json.loads(str(meta["_notext"])))
            unsearchable.append((ns, str(meta["_key"]), asked))
    return latest, unsearchable


def _repair(
    b: Backend,
    shadowed: list[str],
    bad: list[str],
    latest: Mapping[Namespace, float],
    unregistered: tuple[Namespace, ...],
    drift: tuple[Namespace, ...],
    empty: tuple[Namespace, ...],
) -> None:
    """Remove the leftovers, register, fix and unregister namespaces, reload the state."""
    gw = b.gateway
    gw.delete_items(shadowed, in_vectors=False)
    gw.delete_vectors(bad)
    fixes = {ns: NamespaceInfo(uuid.uuid4().hex, latest[ns]) for ns in (*unregistered, *drift)}
    gw.upsert_registry(*records(fixes))
    for ns in empty:
        gw.delete_registry([record_id(ns)])
        if b.shared:  # a put elsewhere may have landed since the read
            expires = gw.latest_expiry(ns)
            if expires is not None:
                gw.upsert_registry(*records({ns: NamespaceInfo(uuid.uuid4().hex, expires)}))
    b.state.reset()


def _rebuild_leftovers(b: Backend, *, repair: bool) -> tuple[str, ...]:
    """Collections an interrupted rebuild left (embedded folders only); with ``repair``
    finish or roll back the rebuild (call under the write lock)."""
    if b.folder is None or b.client is None:
        return ()
    if not b.state.rebuild_lock.acquire(blocking=False):
        return ()  # a rebuild runs now: its copy is no leftover
    try:
        kinds = ("items", "vectors", "namespaces")
        found = tuple(leftovers(b.client, [getattr(b.gateway, kind).name for kind in kinds]))
        if repair and found:
            for kind in kinds:
                recover_kind(b, b.client, b.folder.folder, kind)
        return found
    finally:
        b.state.rebuild_lock.release()
