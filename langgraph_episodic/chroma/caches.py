"""Everything one ``ChromaStore`` keeps in process, owned by one object under one lock.

:class:`StoreState` holds the namespace registry mirror, the item cache, the per-namespace
listings (items newest first, for searches without a query), the vector blocks and the
lexical shards. Rules that keep it correct under threads and asyncio:

* Every change and every read of these structures happens under ``lock``. Readers leave with
  immutable things (a copy of a registry slice, a listing tuple, a :class:`BlockView`, a
  lexical snapshot), so numpy and BM25 work runs outside the lock.
* A writer changes Chroma first and then applies its change here in one step
  (:meth:`commit`), which bumps ``generation`` and the written namespaces' registry versions.
* A reader that missed a cache reads Chroma *outside* the lock and writes the answer back only
  if nothing it read was written since it started (item ids: the commit log; namespaces:
  their registry version). So a reader never puts back data older than the last write.
* Writers of one process are serialised by ``write_lock`` (held across their Chroma calls);
  readers never take it.
* Every batch passes ``batches`` (a :class:`BatchGate`): a rebuild that swaps a collection
  (see :mod:`.rebuild`) drops the old one only when no batch that may still hold it runs.
"""

from __future__ import annotations

import bisect
import contextlib
import sys
import threading
from collections import OrderedDict, deque
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import record_format
from .id_sets import IdSet, Merge
from .persisted import PersistedIndex
from .ranking.lexical import LexicalIndex
from .ranking.shared_fields import FieldIndex
from .ranking.vectors import VectorCache
from .registry import Namespace, RegistryMirror


def slim(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of an item record the caches keep, strings interned (never changed in place)."""
    out = {k: meta[k] for k in record_format.CACHED_KEYS if k in meta}
    text = out.get("_value")
    if isinstance(text, str) and text.startswith(record_format.HEADS):
        out["_value"] = record_format.value_body(text)
        out[record_format.HEADED_FLAG] = text[0]
    for k in record_format.held_leaf_keys(out):
        out[sys.intern(k)] = meta[k]
    for k in ("_ns", "_path"):
        if isinstance(out.get(k), str):
            out[k] = sys.intern(out[k])
    return out


_SHAPES_MAX = 4096
"""Distinct key tuples an item cache shares among its records; further shapes keep their own."""

CachedRecord = tuple[Any, ...]
"""An item cache's record: its key tuple (shared by every record of that shape), then the values
(a third of a dict's memory)."""


def pack_record(
    meta: Mapping[str, Any], shapes: dict[tuple[str, ...], tuple[str, ...]]
) -> CachedRecord:
    """``meta`` (from :func:`slim`) as a :data:`CachedRecord`, its keys shared via ``shapes``."""
    keys = tuple(meta)
    shape = shapes.get(keys)
    if shape is None:
        shape = keys
        if len(shapes) < _SHAPES_MAX:
            shapes[keys] = keys
    return (shape, *meta.values())


def unpack_record(record: CachedRecord) -> dict[str, Any]:
    return dict(zip(record[0], record[1:], strict=True))


def order_key(meta: Mapping[str, Any]) -> tuple[int, str]:
    """Newest first, then by key (a listing holds one namespace)."""
    return (-int(meta["_updated"]), str(meta["_key"]))


class BatchGate:
    """Batches in flight; :meth:`exclusive` waits until none is and holds new ones back (to drop
    a swapped-out collection). Never enter it holding ``write_lock``: a batch may wait for it."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._active = 0
        self._closed = False

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._closed)
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._closed)
            self._closed = True
            self._cond.wait_for(lambda: not self._active)
        try:
            yield
        finally:
            with self._cond:
                self._closed = False
                self._cond.notify_all()


@dataclass(frozen=True)
class Listing:
    """One namespace's item records, newest first, as of registry version ``version``; a write
    builds a new one, so a search without a query walks a snapshot."""

    version: str
    keys: tuple[tuple[int, str, str], ...]
    """(-updated, key, record id), sorted."""
    metas: Mapping[str, Mapping[str, Any]]

    @classmethod
    def build(cls, version: str, rows: Mapping[str, Mapping[str, Any]]) -> Listing:
        keys = sorted((*order_key(m), rid) for rid, m in rows.items())
        return cls(version, tuple(keys), dict(rows))

    def __len__(self) -> int:
        return len(self.keys)

    def changed(self, version: str, rows: Mapping[str, Mapping[str, Any] | None]) -> Listing:
        """A new listing with ``rows`` applied (None: deleted; a patch without ``_value``:
        merged into the existing record only)."""
        metas = dict(self.metas)
        keys = list(self.keys)
        for rid, patch in rows.items():
            old = metas.get(rid)
            if old is not None:
                del keys[bisect.bisect_left(keys, (*order_key(old), rid))]
                del metas[rid]
            if patch is None or (old is None and "_value" not in patch):
                continue
            # A full record replaces the old one (it leaves out keys at their default, which
            # the old one may hold); a patch (an expiry, restored times) is merged into it.
            meta = slim(patch) if "_value" in patch else {**(old or {}), **slim(patch)}
            metas[rid] = meta
            bisect.insort(keys, (*order_key(meta), rid))
        return Listing(version, tuple(keys), metas)


class StoreState:
    """The in-process state of one store (see the module docstring)."""

    def __init__(
        self,
        *,
        shared: bool,
        vector_cache_size: int,
        item_cache_size: int,
        listing_cache_size: int = 20_000,
    ) -> None:
        self.lock = threading.RLock()
        self.write_lock = threading.RLock()
        self.batches = BatchGate()
        self.rebuild_lock = threading.Lock()
        """Held for a whole rebuild (:mod:`.rebuild`). Take it before ``write_lock`` (after it:
        only without blocking)."""
        self.shared = shared
        self.registry = RegistryMirror()
        self.vectors = VectorCache(vector_cache_size)
        self.lexical = LexicalIndex(lock=self.lock)
        self.fields = FieldIndex(lock=self.lock)
        """Memories by exact secondary-field value, kept with the lexical shards."""
        self.lexical_versions: dict[Namespace, str] = {}
        self.oversized: set[Namespace] = set()
        """Prefixes whose vectors did not fit the cache (cleared when items are deleted)."""
        self.item_cache_size = item_cache_size
        """Item records an embedded store keeps (its own writes keep them exact)."""
        self._items: OrderedDict[str, CachedRecord] = OrderedDict()
        self._shapes: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.listing_cache_size = listing_cache_size
        """Item records an embedded store keeps in listings (searches without a query)."""
        self._listings: OrderedDict[Namespace, Listing] = OrderedDict()
        self._listing_rows = 0
        self.generation = 0
        self.vector_total: tuple[int, int] | None = None
        """(generation, how many vector records Chroma held then), for :mod:`.nearest`."""
        self._log: deque[tuple[int, frozenset[str]]] = deque(maxlen=_LOG)
        self._ids: dict[Namespace, IdSet] = {}
        """An embedded store's namespaces whose every item it knows (:mod:`.id_sets`)."""
        self.persisted: PersistedIndex | None = None
        """The namespaces kept beside a store on a folder (:mod:`.persisted`)."""

    # generations -----------------------------------------------------------------------

    def written_since(self, generation: int, rids: Iterable[str]) -> set[str]:
        """The given item ids written after ``generation`` (all when the log does not reach that
        far). Call under the lock."""
        wanted = set(rids)
        if generation == self.generation:
            return set()
        if not self._log or self._log[0][0] > generation + 1:
            return wanted
        out: set[str] = set()
        for gen, written in reversed(self._log):
            if gen <= generation:
                break
            out |= wanted & written
        return out

    # items -----------------------------------------------------------------------------

    def cached_items(self, ids: Iterable[str]) -> tuple[dict[str, dict[str, Any]], int]:
        """Cached item records by id, and the generation to check a write-back against."""
        with self.lock:
            items = self._items
            found = {rid: unpack_record(items[rid]) for rid in ids if rid in items}
            return found, self.generation

    def remember_read(self, generation: int, metas: Mapping[str, Mapping[str, Any]]) -> None:
        """Cache item records read from Chroma, unless written since ``generation``."""
        if self.shared or not metas:
            return
        with self.lock:
            stale = self.written_since(generation, metas)
            for rid, meta in metas.items():
                if rid not in stale:
                    self._put_item(rid, slim(meta))

    def _put_item(self, rid: str, meta: dict[str, Any] | None) -> None:
        if meta is None:
            self._items.pop(rid, None)
            return
        self._items[rid] = pack_record(meta, self._shapes)
        self._items.move_to_end(rid)
        while len(self._items) > self.item_cache_size:
            self._items.popitem(last=False)

    def clear_items(self) -> None:
        """Forget every cached item record (they are read again from Chroma)."""
        with self.lock:
            self._items.clear()

    # which items exist ---------------------------------------------------------------

    def absent(self, namespaces: Mapping[str, Namespace], empty: Collection[Namespace]) -> set[str]:
        """Of these record ids (-> namespace), those an embedded store knows it does not hold (in
        ``empty``, or missing from the namespace's :class:`.id_sets.IdSet`). Hold ``write_lock``."""
        if self.shared:
            return set()
        with self.lock:
            out = {rid for rid, ns in namespaces.items() if ns in empty}
            by_ns: dict[Namespace, list[str]] = {}
            for rid, ns in namespaces.items():
                if rid not in out and ns in self._ids:
                    by_ns.setdefault(ns, []).append(rid)
            for ns, rids in by_ns.items():
                out |= self._ids[ns].missing(rids)
            return out

    def knows_items_of(self, ns: Namespace) -> bool:
        """Whether an embedded store knows every item ``ns`` holds."""
        with self.lock:
            return ns in self._ids

    def empty_after(self, ns: Namespace, change: Commit) -> bool:
        """Whether an embedded store knows ``ns`` is empty once ``change`` is committed."""
        if self.shared:
            return False
        with self.lock:
            held = self._ids.get(ns)
            if held is None:
                return False
            written = [rid for rid in change.items if change.namespaces[rid] == ns]
            new = held.missing(written)
            gone = sum(1 for rid in written if change.items[rid] is None and rid not in new)
            added = sum(1 for rid in new if change.items[rid] is not None)
            return len(held) - gone + added == 0

    # listings --------------------------------------------------------------------------

    def listing(self, ns: Namespace, version: str) -> Listing | None:
        """The namespace's listing if it is current (call under the lock)."""
        entry = self._listings.get(ns)
        if entry is None or entry.version != version:
            return None
        self._listings.move_to_end(ns)
        return entry

    def install_listing(self, ns: Namespace, listing: Listing, ids: IdSet | None = None) -> None:
        """Keep a listing read from Chroma, and ``ids`` (its items' ids), if its version is still
        current (call under the lock)."""
        info = self.registry.get(ns)
        if info is None or info.version != listing.version:
            return
        self._set_listing(ns, listing)
        if not self.shared and ns not in self._ids and ids is not None:
            self._ids[ns] = ids  # every item of ns, as of its current version

    def _set_listing(self, ns: Namespace, listing: Listing | None) -> None:
        old = self._listings.pop(ns, None)
        if old is not None:
            self._listing_rows -= len(old)
        if listing is None or len(listing) > self.listing_cache_size:
            return
        self._listings[ns] = listing
        self._listing_rows += len(listing)
        while self._listing_rows > self.listing_cache_size and len(self._listings) > 1:
            first = next(iter(self._listings))
            if first == ns:
                self._listings.move_to_end(ns)
                continue
            self._listing_rows -= len(self._listings.pop(first))

    # namespaces ------------------------------------------------------------------------

    def forget_namespace(self, ns: Namespace) -> None:
        """Drop a namespace's blocks, shard and listing (call under the lock)."""
        self.vectors.drop(ns)
        self._set_listing(ns, None)
        self.lexical.drop_namespace(ns)
        self.fields.drop_namespace(ns)
        self.lexical_versions.pop(ns, None)

    def reset(self) -> None:
        """Forget everything, kept files too (after a repair)."""
        self.discard_kept()
        with self.lock:
            self._items.clear()
            self._listings.clear()
            self._listing_rows = 0
            self.lexical.clear()
            self.fields.clear()
            self.lexical_versions.clear()
            self.vectors = VectorCache(self.vectors.max_vectors)
            self.oversized.clear()
            self.registry = RegistryMirror()
            self._ids.clear()
            self.generation += 1
            self._log.clear()  # every earlier reader's write-back is dropped

    def discard_kept(self) -> None:
        """Delete every namespace file kept beside the store (Chroma changed behind this state)."""
        if self.persisted is not None:
            self.persisted.discard_all()

    # the commit of a write -------------------------------------------------------------

    def commit(self, change: Commit) -> None:
        """Apply a write that has reached Chroma, in one step. Work in proportion to a namespace
        stays out of the lock: the keyword index takes the write beside its frozen base, and an
        :class:`.id_sets.IdSet` due a merge merges after the lock (:meth:`_merge_ids`)."""
        if self.persisted is not None:  # (kept words may be gone from Chroma now)
            self.persisted.discard(change.rewritten())
        merges: list[tuple[IdSet, Merge]] = []
        with self.lock:
            self.generation += 1
            self._log.append((self.generation, frozenset(change.items)))
            if not self.shared:
                for rid, meta in change.items.items():
                    self._put_item(rid, None if meta is None else slim(meta))
                for rid, patch in change.patches.items():
                    old = self._items.get(rid)
                    if old is not None:
                        self._items[rid] = pack_record(
                            {**unpack_record(old), **patch}, self._shapes
                        )
                merges = self._count_items(change)
            if change.deleted_any:
                self.oversized.clear()  # deletes may make a scope fit again
            for ns in change.removed:
                kept = change.kept.get(ns)
                if kept is None:
                    self.registry.drop(ns)
                    self.forget_namespace(ns)
                    self._ids.pop(ns, None)
                else:  # known empty, its caches current: a put there and a search read nothing
                    self.registry.keep(ns, kept)
                    self._ids.setdefault(ns, IdSet())
                    self._apply(ns, kept.version, change)
            for ns, info in change.registry.items():
                self.registry.set(ns, info)
            touched = change.touched
            for ns in touched:
                if ns in change.removed:
                    continue
                info = self.registry.get(ns)
                if self.shared or info is None:
                    self.forget_namespace(ns)
                    continue
                self._apply(ns, info.version, change)
            if not self.shared:  # TTL refreshes of namespaces not otherwise written
                for ns in {change.namespaces[rid] for rid in change.patches} - touched:
                    listing = self._listings.get(ns)
                    if listing is not None:
                        patches = change.rows_in(ns, change.patches)
                        self._set_listing(ns, listing.changed(listing.version, patches))
        self._merge_ids(merges)

    def _count_items(self, change: Commit) -> list[tuple[IdSet, Merge]]:
        """Keep the written namespaces' id sets exact; return the merges they are due."""
        for ns in change.created:
            self._ids[ns] = IdSet()
        changed: dict[Namespace, tuple[list[str], list[str]]] = {}
        for rid, meta in change.items.items():
            ns = change.namespaces[rid]
            if ns in self._ids:
                changed.setdefault(ns, ([], []))[meta is None].append(rid)
        merges = []
        for ns, (added, gone) in changed.items():
            held = self._ids[ns]
            held.change(added, gone)
            merge = held.start_merge()
            if merge is not None:
                merges.append((held, merge))
        return merges

    def _merge_ids(self, merges: list[tuple[IdSet, Merge]]) -> None:
        """Run each merge outside the lock (the writer holds ``write_lock``), install it inside."""
        for held, merge in merges:
            merged = merge.run()
            with self.lock:
                held.finish_merge(merge, merged)

    def _apply(self, ns: Namespace, version: str, change: Commit) -> None:
        """Bring an embedded store's caches of ``ns`` to the committed state."""
        vectors = change.vectors.get(ns, {})
        block = self.vectors.get(ns)
        if block is not None:
            before = len(block)
            for iid, rows in vectors.items():
                block.replace_item(iid, [(vid, vec) for vid, _, vec in rows])
            block.version = version
            self.vectors.resized(ns, before)
        if ns in self.lexical_versions:
            for iid, rows in vectors.items():
                old_key = change.old_keys.get(iid)
                if old_key is not None:
                    self.lexical.remove(ns, old_key)
                    self.fields.remove(ns, old_key)
                if rows:
                    key = record_format.split_vector_id(rows[0][0])[0]
                    self.lexical.upsert(ns, key, "\n".join(text for _, text, _ in rows))
                    paths = change.paths.get(iid, ())
                    if len(paths) == len(rows):
                        texts = [text for _, text, _ in rows]
                        self.fields.upsert(ns, key, zip(paths, texts, strict=True))
            self.lexical_versions[ns] = version
        listing = self._listings.get(ns)
        if listing is not None:
            rows_changed = change.rows_in(ns, change.patches, change.items)
            self._set_listing(ns, listing.changed(version, rows_changed))


@dataclass
class Commit:
    """One write as the state applies it, after Chroma holds it."""

    items: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    """Item id -> its new full record metadata (None: deleted)."""
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    """Item id -> its namespace (for every id in ``items`` and ``patches``)."""
    vectors: dict[Namespace, dict[str, list[tuple[str, str, Any]]]] = field(default_factory=dict)
    """Namespace -> item id -> its new (vector id, text, vector) rows; empty when none."""
    old_keys: dict[str, str | None] = field(default_factory=dict)
    """Item id -> the entry key its texts had before (None: none indexed)."""
    patches: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Item id -> metadata keys changed in place (TTL refreshes, restored times)."""
    registry: dict[Namespace, Any] = field(default_factory=dict)
    """Namespace -> its new :class:`.registry.NamespaceInfo`."""
    removed: set[Namespace] = field(default_factory=set)
    """Namespaces that no longer hold items."""
    kept: dict[Namespace, Any] = field(default_factory=dict)
    """Those of ``removed`` whose registry record Chroma keeps: its info (marked ``kept``)."""
    deleted_any: bool = False
    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Item id -> the field path of each of its new rows (as ``vectors``' rows)."""
    created: set[Namespace] = field(default_factory=set)
    """Namespaces that held no item before this write (:meth:`.backend.Backend.empty_namespaces`)."""

    @property
    def touched(self) -> set[Namespace]:
        """Namespaces whose items or registry record changed (not mere TTL patches)."""
        return {self.namespaces[rid] for rid in self.items} | set(self.registry)

    def rewritten(self) -> set[Namespace]:
        """The namespaces whose indexed texts this write may have removed."""
        out = set(self.removed)
        for rid, meta in self.items.items():
            if meta is None or self.old_keys.get(rid, rid) is not None:
                out.add(self.namespaces[rid])
        return out

    def rows_in(
        self, ns: Namespace, *of: Mapping[str, dict[str, Any] | None]
    ) -> dict[str, dict[str, Any] | None]:
        """The rows of ``of`` (``items``, ``patches``; a later one wins) in ``ns``, by item id."""
        return {rid: m for rows in of for rid, m in rows.items() if self.namespaces[rid] == ns}


_LOG = 4096
"""Commits remembered for write-back checks; an older reader's write-back is dropped."""
