"""The state one ``ChromaStore`` works on: its collections, registry and in-process caches.

:class:`Backend` is shared by the read side (:mod:`.search`) and the write side
(:mod:`.writes`). It also loads a namespace's vectors and texts from Chroma into the vector
cache and the lexical index, checking the registry version so that a cache is never stale
(a store on a server re-reads versions on every search; an embedded store is its only writer).
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import layout
from .lexical import LexicalIndex
from .registry import NamespaceRegistry
from .vector_cache import NamespaceVectors, VectorCache

Namespace = tuple[str, ...]


@dataclass
class Backend:
    """Collections, registry and caches of one store (see the module docstring)."""

    items: Any
    vectors: Any
    registry: NamespaceRegistry
    max_batch: int
    shared: bool
    cache: VectorCache
    lexical: LexicalIndex = field(default_factory=LexicalIndex)
    lexical_versions: dict[Namespace, str] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    item_cache_size: int = 100_000
    """Item records kept in process by an embedded store (its own writes keep them exact), each
    with only :data:`.layout.CACHED_KEYS`: about 730 bytes each, 73 MB when full. A miss costs
    a Chroma read (0.5 ms at 100k items)."""
    _item_cache: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)
    oversized: set[Namespace] = field(default_factory=set)
    """Prefixes whose vectors did not fit the cache (cleared when items are deleted)."""
    scan_cache_size: int = 20_000
    """Item records an embedded store keeps per namespace, for searches without a query."""
    _scans: OrderedDict[Namespace, tuple[str, dict[str, dict[str, Any]]]] = field(
        default_factory=OrderedDict
    )
    _scan_rows: int = 0

    @classmethod
    def open(cls, client: Any, name: str, *, shared: bool, vector_cache_size: int) -> Backend:
        """The backend of store ``name`` on ``client``, created on first use.

        Stores opened on the same embedded Chroma (the same path, or the process's ephemeral
        system) share one backend, so their caches never disagree.
        """
        if shared:
            return cls._create(client, name, shared=True, vector_cache_size=vector_cache_size)
        key = (
            _system_key(client),
            getattr(client, "tenant", ""),
            getattr(client, "database", ""),
            name,
        )
        with _OPEN_LOCK:
            backend = _OPEN.get(key)
            if backend is None:
                backend = cls._create(
                    client, name, shared=False, vector_cache_size=vector_cache_size
                )
                _OPEN[key] = backend
            return backend

    @classmethod
    def _create(cls, client: Any, name: str, *, shared: bool, vector_cache_size: int) -> Backend:
        items = client.get_or_create_collection(
            name, embedding_function=None, metadata={"langgraph_episodic": "items"}
        )
        vectors = client.get_or_create_collection(
            f"{name}__vec",
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={"langgraph_episodic": "vectors"},
        )
        return cls(
            items=items,
            vectors=vectors,
            registry=NamespaceRegistry(client, name, shared=shared),
            max_batch=int(client.get_max_batch_size()),
            shared=shared,
            cache=VectorCache(vector_cache_size),
        )

    # records ---------------------------------------------------------------

    def fetch(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Item metadata by record id (missing ids are absent). Treat the dicts as read-only."""
        out: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(ids))
        if not self.shared:
            for rid in unique:
                meta = self._item_cache.get(rid)
                if meta is not None:
                    out[rid] = meta
            unique = [rid for rid in unique if rid not in out]
        for start in range(0, len(unique), self.max_batch):
            got = self.items.get(ids=unique[start : start + self.max_batch], include=["metadatas"])
            for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
                out[rid] = dict(meta)
                self.remember(rid, out[rid])
        return out

    def remember(self, rid: str, meta: Mapping[str, Any] | None) -> None:
        """Record what Chroma now holds for item ``rid`` (None: deleted) in the item cache."""
        if self.shared:
            return
        if meta is None:
            self._item_cache.pop(rid, None)
            return
        self._item_cache[rid] = _slim(meta)
        self._item_cache.move_to_end(rid)
        while len(self._item_cache) > self.item_cache_size:
            self._item_cache.popitem(last=False)

    def set_expiry(self, rid: str, expires: float) -> None:
        """Update the cached expiry of item ``rid`` after a TTL refresh."""
        meta = self._item_cache.get(rid)
        if meta is not None:
            meta["_expires"] = expires

    # namespace listings for searches without a query ----------------------------

    def scan_rows(self, prefix: Namespace) -> list[tuple[str, dict[str, Any]]] | None:
        """Every item record under ``prefix`` as (record id, cached metadata), from memory.

        None when Chroma must be read instead: a store on a server (others write), more
        unloaded namespaces than :data:`_LAZY_SCAN_LIMIT`, or more items than the cache holds.
        A namespace loads with one read of its records (as a search without a query read them
        every time before: 31 ms per search at 10k items, 300 ms at 100k) and then follows this
        store's own writes; its registry version says when it must load again.
        """
        if self.shared:
            return None
        infos = self.registry.under(prefix)
        with self.lock:
            stale = [ns for ns, info in infos.items() if self._scan_version(ns) != info.version]
            if len(stale) > _LAZY_SCAN_LIMIT:
                return None
            if stale:
                # One namespace: read it; several: one read of the prefix (as the scan it replaces).
                where = {"_ns": layout.ns_str(stale[0])} if len(stale) == 1 else None
                loaded: dict[Namespace, dict[str, dict[str, Any]]] = {ns: {} for ns in stale}
                for rid, meta in self._read_items(where or layout.prefix_where(prefix)):
                    rows = loaded.get(layout.ns_from_str(str(meta["_ns"])))
                    if rows is not None:
                        rows[rid] = _slim(meta)
                for ns, rows in loaded.items():
                    self._put_scan(ns, infos[ns].version, rows)
            out: list[tuple[str, dict[str, Any]]] = []
            for ns in infos:
                entry = self._scans.get(ns)
                if entry is None:
                    return None  # larger than the cache
                self._scans.move_to_end(ns)
                out.extend(entry[1].items())
            return out

    def _read_items(self, where: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
        """(record id, metadata) of the item records matching ``where``, read in pages."""
        out: list[tuple[str, dict[str, Any]]] = []
        while True:
            got = self.items.get(where=where, include=["metadatas"], limit=_PAGE, offset=len(out))
            out.extend(zip(got["ids"], got["metadatas"] or [], strict=True))
            if len(got["ids"]) < _PAGE:
                return out

    def update_scans(
        self,
        updates: Mapping[Namespace, Mapping[str, Mapping[str, Any] | None]],
        versions: Mapping[Namespace, str],
    ) -> None:
        """Apply this store's own writes to loaded namespace listings.

        ``updates[ns][record id]`` is the record's new metadata, a patch of some keys (a TTL
        refresh), or None (deleted). Namespaces in ``versions`` take that registry version.
        """
        for ns, per_item in updates.items():
            entry = self._scans.get(ns)
            if entry is None:
                continue
            rows = entry[1]
            before = len(rows)
            for rid, patch in per_item.items():
                if patch is None:
                    rows.pop(rid, None)
                elif rid in rows or "_value" in patch:
                    rows[rid] = {**rows.get(rid, {}), **_slim(patch)}
            self._scan_rows += len(rows) - before
            self._scans[ns] = (versions.get(ns, entry[0]), rows)
        self._evict_scans(keep=None)

    def _scan_version(self, ns: Namespace) -> str | None:
        entry = self._scans.get(ns)
        return entry[0] if entry is not None else None

    def _put_scan(self, ns: Namespace, version: str, rows: dict[str, dict[str, Any]]) -> None:
        self._drop_scan(ns)
        if len(rows) > self.scan_cache_size:
            return
        self._scans[ns] = (version, rows)
        self._scan_rows += len(rows)
        self._evict_scans(keep=ns)

    def _drop_scan(self, ns: Namespace) -> None:
        old = self._scans.pop(ns, None)
        if old is not None:
            self._scan_rows -= len(old[1])

    def _evict_scans(self, keep: Namespace | None) -> None:
        while self._scan_rows > self.scan_cache_size and self._scans:
            ns = next(iter(self._scans))
            if ns == keep:
                if len(self._scans) == 1:
                    return
                self._scans.move_to_end(ns)
                continue
            self._drop_scan(ns)

    def chunked(self, fn: Callable[..., Any], ids: Sequence[str]) -> None:
        """Call ``fn(ids=...)`` in chunks Chroma accepts."""
        for start in range(0, len(ids), self.max_batch):
            fn(ids=list(ids[start : start + self.max_batch]))

    # namespace loading -------------------------------------------------------

    def scope(
        self, prefix: Namespace, *, vectors: bool, lexical: bool = True
    ) -> tuple[list[Namespace], list[NamespaceVectors] | None]:
        """Namespaces under ``prefix``, loaded into the lexical index (with ``lexical``) and the
        vector cache (with ``vectors``). The vector list is None when Chroma's index must answer
        instead: the scope exceeds the cache, or too many of its namespaces are not loaded."""
        infos = self.registry.under(prefix)
        with self.lock:
            if vectors and prefix in self.oversized:
                vectors = False  # known not to fit: Chroma's index answers, skip the load
            if vectors:
                unloaded = sum(
                    _version(self.cache.get(ns)) != info.version for ns, info in infos.items()
                )
                if unloaded > _LAZY_VECTOR_LIMIT:
                    # Loading this many namespaces' vectors first took 26 s at 100k items;
                    # Chroma's index answers this query, and namespaces load as users search.
                    vectors = False
            if not vectors and not lexical:
                return list(infos), None
            stale = [
                ns
                for ns, info in infos.items()
                if (lexical and self.lexical_versions.get(ns) != info.version)
                or (vectors and _version(self.cache.get(ns)) != info.version)
            ]
            if len(stale) > _PAGED_LOAD_FROM:
                self._load_paged(
                    prefix, {ns: infos[ns].version for ns in stale}, with_vectors=vectors
                )
            entries: list[NamespaceVectors] | None = [] if vectors else None
            budget = self.cache.max_vectors
            for ns, info in infos.items():
                cached = self.cache.get(ns) if entries is not None else None
                fresh_vec = cached is not None and cached.version == info.version
                fresh_lex = self.lexical_versions.get(ns) == info.version
                if entries is not None and not fresh_vec:
                    cached = self._load(ns, info.version, with_vectors=True)
                elif lexical and not fresh_lex:
                    self._load(ns, info.version, with_vectors=False)
                if entries is not None and cached is not None:
                    budget -= len(cached)
                    if budget < 0:
                        entries = None  # too large for the cache: use Chroma's index
                        self.oversized.add(prefix)
                    else:
                        entries.append(cached)
            return list(infos), entries

    def covers_everything(self, prefix: Namespace) -> bool:
        """Whether every namespace of the store lies under ``prefix``."""
        return not prefix or len(self.registry.under(prefix)) == len(self.registry.under(()))

    def _load_paged(
        self, prefix: Namespace, versions: Mapping[Namespace, str], *, with_vectors: bool
    ) -> None:
        """Load many namespaces with one paged read of the prefix (one read per namespace cost
        about 150 ms each at 100k items). With ``with_vectors``, vectors are cached while they
        fit the cache; without, only the lexical index is filled (less to read and to hold)."""
        texts: dict[Namespace, dict[str, list[tuple[int, str]]]] = {ns: {} for ns in versions}
        entries = {ns: NamespaceVectors(v) for ns, v in versions.items()}
        budget = self.cache.max_vectors
        overflow = not with_vectors
        include = ["documents", "metadatas", *(["embeddings"] if with_vectors else [])]
        offset = 0
        while True:
            got = self.vectors.get(
                where=layout.prefix_where(prefix),
                include=include,
                limit=_PAGE,
                offset=offset,
            )
            ids = got["ids"]
            embeddings = got.get("embeddings")
            for n, (vid, doc, meta) in enumerate(
                zip(ids, got["documents"] or [], got["metadatas"] or [], strict=True)
            ):
                ns = layout.ns_from_str(str(meta["_ns"]))
                if ns not in versions:
                    continue
                iid, index = split_vector_id(vid)
                texts[ns].setdefault(iid, []).append((index, doc or ""))
                if embeddings is not None and not overflow:
                    entries[ns].replace_item_rows(iid, [(vid, embeddings[n])])
                    budget -= 1
                    overflow = budget < 0
            offset += len(ids)
            if len(ids) < _PAGE:
                break
        for ns, version in versions.items():
            self.lexical.drop_namespace(ns)
            self.lexical.upsert_many(
                (ns, iid, "\n".join(t for _, t in sorted(parts)))
                for iid, parts in texts[ns].items()
            )
            self.lexical_versions[ns] = version
            if not overflow:  # never cache a namespace with only some of its vectors
                self.cache.put(ns, entries[ns])
        if overflow and with_vectors:
            self.oversized.add(prefix)

    def _load(self, ns: Namespace, version: str, *, with_vectors: bool) -> NamespaceVectors | None:
        include = ["documents", "embeddings"] if with_vectors else ["documents"]
        got = self.vectors.get(where={"_ns": layout.ns_str(ns)}, include=include)
        texts: dict[str, list[tuple[int, str]]] = {}
        entry = NamespaceVectors(version) if with_vectors else None
        embeddings = got.get("embeddings")
        for n, (vid, doc) in enumerate(zip(got["ids"], got["documents"] or [], strict=True)):
            iid, index = split_vector_id(vid)
            texts.setdefault(iid, []).append((index, doc or ""))
            if entry is not None and embeddings is not None:
                entry.replace_item_rows(iid, [(vid, embeddings[n])])
        self.lexical.drop_namespace(ns)
        self.lexical.upsert_many(
            (ns, iid, "\n".join(t for _, t in sorted(parts))) for iid, parts in texts.items()
        )
        self.lexical_versions[ns] = version
        if entry is not None:
            self.cache.put(ns, entry)
        return entry

    def forget(self, ns: Namespace) -> None:
        """Drop a namespace from the in-process caches (it reloads on the next search)."""
        self.cache.drop(ns)
        self._drop_scan(ns)
        self.lexical.drop_namespace(ns)
        self.lexical_versions.pop(ns, None)

    def apply_to_caches(
        self,
        changes: Mapping[Namespace, Mapping[str, Sequence[tuple[str, str, Sequence[float]]]]],
        versions: Mapping[Namespace, str],
    ) -> None:
        """Apply this store's own writes to the caches, or drop them when others may write.

        ``changes[ns][item id]`` lists the item's new (vector id, text, vector); empty = deleted.
        """
        if any(not rows for per_item in changes.values() for rows in per_item.values()):
            self.oversized.clear()  # deletes may make a scope fit again
        for ns, per_item in changes.items():
            if self.shared or ns not in versions:
                self.forget(ns)
                continue
            entry = self.cache.get(ns)
            if entry is not None:
                before = len(entry)
                for iid, rows in per_item.items():
                    entry.replace_item(iid, [(vid, vec) for vid, _, vec in rows])
                entry.version = versions[ns]
                self.cache.resized(ns, before)
            if ns in self.lexical_versions:
                for iid, rows in per_item.items():
                    if rows:
                        self.lexical.upsert(ns, iid, "\n".join(text for _, text, _ in rows))
                    else:
                        self.lexical.remove(ns, iid)
                self.lexical_versions[ns] = versions[ns]

    # namespace bookkeeping after deletes ---------------------------------------

    def settle(self, namespaces: Sequence[Namespace]) -> dict[Namespace, str]:
        """After deletes: forget empty namespaces, recompute the latest expiry of the others.

        Returns the new registry version of each namespace that still exists.
        """
        versions: dict[Namespace, str] = {}
        empty: list[Namespace] = []
        for ns in namespaces:
            where_ns = {"_ns": layout.ns_str(ns)}
            if not self.items.get(where=where_ns, limit=1, include=[])["ids"]:
                empty.append(ns)
                continue
            forever = self.items.get(
                where={"$and": [where_ns, {"_expires": {"$gte": layout.NO_EXPIRY}}]},
                limit=1,
                include=[],
            )
            if forever["ids"]:
                expires = layout.NO_EXPIRY
            else:
                got = self.items.get(where=where_ns, include=["metadatas"])
                expires = max(float(m["_expires"]) for m in got["metadatas"] or [])
            versions[ns] = self.registry.set_expiry(ns, expires)
        if empty:
            self.registry.remove(empty)
            for ns in empty:
                self.forget(ns)
        return versions


_LAZY_VECTOR_LIMIT = 64
"""At most this many namespaces' vectors are loaded for one search."""
_LAZY_SCAN_LIMIT = 16
"""At most this many namespaces' item listings are loaded for one search without a query."""
_PAGED_LOAD_FROM = 16
"""Load a scope with one paged read when more namespaces than this need loading."""
_PAGE = 2000
"""Records per paged read. One read of 100k records fails with "too many SQL variables"; pages
of 5,000 left 59 MiB more resident after loading 10k texts than pages of 2,000 (0.88 s either
way), and pages of 1,000 took 1.2 s."""


def _slim(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of an item record's metadata the caches keep (the namespace string interned:
    a namespace's items share one copy)."""
    slim = {k: meta[k] for k in layout.CACHED_KEYS if k in meta}
    if isinstance(slim.get("_ns"), str):
        slim["_ns"] = sys.intern(slim["_ns"])
    return slim


def _version(entry: NamespaceVectors | None) -> str | None:
    return entry.version if entry is not None else None


_OPEN: weakref.WeakValueDictionary[tuple[Any, ...], Backend] = weakref.WeakValueDictionary()
_OPEN_LOCK = threading.Lock()


def _system_key(client: Any) -> Any:
    """What identifies the embedded Chroma a client talks to: its path (or "ephemeral") and
    the live system object behind it (clients of one path share it until one is closed)."""
    return (getattr(client, "_identifier", None), id(getattr(client, "_server", client)))


def split_vector_id(vid: str) -> tuple[str, int]:
    """``"<item id>#<i>"`` -> (item id, i)."""
    iid, _, index = vid.rpartition("#")
    return iid, int(index)
