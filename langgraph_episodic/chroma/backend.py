"""What a ``ChromaStore`` works on: a stateless Chroma :class:`.gateway.Gateway` and the
in-process :class:`.caches.StoreState`, plus the reads that fill the state from Chroma.

A read that misses the state goes to Chroma outside the state's lock and offers its answer
back under the lock, where it is kept only if no write landed in between (the namespace's
registry version, or the commit log for item records). Stores opened on the same embedded
Chroma (the same path, or the process's ephemeral system) share one backend, so their state
never disagrees. A store on a server (``shared``) re-reads registry records on every search
and keeps only what their versions vouch for.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import Any

from . import lifecycle, record_format
from .caches import Listing, StoreState, slim
from .folder_lock import FolderLock, folder_of
from .gateway import Gateway, VectorRow
from .id_sets import IdSet
from .index_paths import is_ranked
from .metadata_index import MetadataIndex
from .persisted import PersistedIndex
from .ranking.lexical import LexicalIndex
from .ranking.shared_fields import FieldView
from .ranking.vectors import BlockView, NamespaceVectors, Rebuild
from .read_ahead import read_ahead
from .rebuild import recover_store
from .registry import Namespace, NamespaceInfo, record_id, records_by_namespace

race_hook: Any = None
"""Tests only: called as ``race_hook(step)`` between a read of Chroma and its write-back."""


@dataclass(frozen=True)
class Scope:
    """A snapshot of the namespaces one search ranks over (:meth:`Backend.scope`)."""

    namespaces: list[Namespace]
    vectors: list[BlockView] | None
    """Views of their cached vectors; None when Chroma's index answers (or none were asked)."""
    lexical: LexicalIndex | None
    """Their lexical shards (None when not asked), with those read but not kept (a write landed)."""
    fields: FieldView | None
    """Their secondary-field values (None when not asked)."""
    unindexed: tuple[Namespace, ...]
    """Those the registry flags as possibly holding items without vectors."""


@dataclass
class Backend:
    """Gateway and state of one store (see the module docstring)."""

    gateway: Gateway
    state: StoreState
    shared: bool
    folder: Any = None
    """The :class:`.folder_lock.FolderLock` of an embedded persistent store, else None."""
    client: Any = None
    """The chromadb client (a rebuild swaps collections through it)."""

    @classmethod
    def open(cls, client: Any, name: str, *, shared: bool, sizes: Mapping[str, int]) -> Backend:
        """The backend of store ``name`` on ``client``, its caches of ``sizes`` (the keywords of
        :class:`.caches.StoreState`); counts a store of its embedded folder (give it back with
        :meth:`close_store`)."""
        system = embedded_system(client)
        if system is not None:
            lifecycle.opening(system, describe(client))
        folder = FolderLock.of_client(client)
        if shared and folder is None:  # a server's store: nothing in process to share
            return cls._create(client, name, None, True, sizes)
        key = (
            _system_key(client),
            getattr(client, "tenant", ""),
            getattr(client, "database", ""),
            name,
        )
        with _OPEN_LOCK:  # (held while a last close forgets the folder's backends)
            if folder is not None:
                folder.open_store(id(getattr(client, "_server", client)), _spelled(client))
            try:
                backend = None if shared else _OPEN.get(key)
                if backend is None:
                    backend = cls._create(client, name, folder, shared, sizes)
                    if not shared:
                        _OPEN[key] = backend
                return backend
            except BaseException:
                if folder is not None:
                    _close_store(folder)
                raise

    @classmethod
    def _create(
        cls,
        client: Any,
        name: str,
        folder: FolderLock | None,
        shared: bool,
        sizes: Mapping[str, int],
    ) -> Backend:
        state = StoreState(shared=shared, **sizes)
        if folder is not None:  # a rebuild killed half-way: finish or roll it back first
            recover_store(client, folder.folder, Gateway.names(name), folder.claim)
        index = MetadataIndex.of_folder(folder_of(client))
        if folder is not None and index is not None and not shared:
            state.persisted = PersistedIndex(folder.folder, name, index)  # (:mod:`.persisted`)
        return cls(Gateway.open(client, name, index), state, shared, folder, client)

    def close_store(self) -> None:
        """A store of this backend closed; after the last of its folder, the folder is given up
        and its backends forgotten (a later store reads the folder afresh)."""
        if self.folder is not None:
            with _OPEN_LOCK:
                _close_store(self.folder)

    # processes on one embedded folder --------------------------------------------------

    def claim_for_writing(self) -> None:
        """Make this process the writer of an embedded folder (see :mod:`.folder_lock`)."""
        if self.folder is not None:
            self.folder.claim()

    def check_readable(self) -> None:
        """Raise if another process writes (or wrote) this embedded folder."""
        if self.folder is not None:
            self.folder.check_readable()

    # item records ----------------------------------------------------------------------

    def fetch(
        self,
        ids: Sequence[str],
        namespaces: Mapping[str, Namespace] | None = None,
        empty: Collection[Namespace] = (),
    ) -> dict[str, dict[str, Any]]:
        """Item metadata by record id (missing ids are absent; the dicts are read-only).
        ``namespaces`` (record id -> namespace; with ``write_lock`` held): an embedded store then
        reads nothing for ids it knows are absent, and skips the item collection where the
        registry says it holds none, so a new item costs one read at most."""
        if self.shared:
            return self.gateway.get_items(ids)
        found, generation = self.state.cached_items(ids)
        missing = [rid for rid in dict.fromkeys(ids) if rid not in found]
        vectors_only: set[str] = set()
        if missing and namespaces is not None:
            known = self.known(list(dict.fromkeys(namespaces[rid] for rid in missing)))
            absent = self.state.absent({rid: namespaces[rid] for rid in missing}, empty)
            missing = [rid for rid in missing if rid not in absent]
            vectors_only = {
                rid
                for rid in missing
                if (info := known.get(namespaces[rid])) is not None and not info.item_records
            }
        if missing:
            read = self.gateway.get_items(missing, vectors_only)
            _pause("fetch")
            self.state.remember_read(generation, read)
            found.update(read)
        return found

    def empty_namespaces(self, namespaces: Sequence[Namespace]) -> set[Namespace]:
        """Of these namespaces, those an embedded store knows hold no item (with ``write_lock``):
        no registry record, and no item record in Chroma (a crash can leave unlisted items)."""
        if self.shared:
            return set()
        known = self.known(namespaces)
        return {
            ns
            for ns in namespaces
            if ns not in known
            and not self.state.knows_items_of(ns)
            and not self.gateway.holds_items(ns)
        }

    # the registry ----------------------------------------------------------------------

    def namespaces(self, prefix: Namespace) -> dict[Namespace, NamespaceInfo]:
        """Namespaces under ``prefix`` with their info (fresh from Chroma when shared)."""
        state = self.state
        if self.shared:
            fresh = records_by_namespace(
                self.gateway.registry_records(where=record_format.prefix_where(prefix))
            )
            with state.lock:
                state.registry.sync_under(prefix, fresh)
            return fresh
        self._load_registry()
        with state.lock:
            return state.registry.under(prefix)

    def _load_registry(self) -> None:
        state = self.state
        if state.registry.loaded:
            return
        with state.write_lock:  # no write lands while the mirror is filled
            if state.registry.loaded:
                return
            fresh = records_by_namespace(self.gateway.registry_records())
            # A marked record may have outlived its namespace's items (its writer was killed
            # before it unmarked it, :mod:`.registry`): those namespaces are checked.
            empty = [ns for ns, i in fresh.items() if i.kept and not self.gateway.holds_items(ns)]
            with state.lock:
                for ns, info in fresh.items():
                    state.registry.set(ns, info)
                for ns in empty:
                    state.registry.keep(ns, fresh[ns])
                state.registry.loaded = True

    def known(self, namespaces: Sequence[Namespace]) -> dict[Namespace, NamespaceInfo]:
        """The registry info of the given namespaces (fresh from Chroma when shared)."""
        if self.shared:
            metas = self.gateway.registry_records(ids=[record_id(ns) for ns in namespaces])
            return records_by_namespace(metas)
        self._load_registry()
        with self.state.lock:
            got = {ns: self.state.registry.get(ns) for ns in namespaces}
        return {ns: info for ns, info in got.items() if info is not None}

    def live(self, prefix: Namespace, now: float) -> list[Namespace]:
        """Namespaces under ``prefix`` holding an unexpired item (on a server a record's ``_exp``
        may lag another writer, so "all expired" and marked records are checked on the items)."""
        out = []
        for ns, info in self.namespaces(prefix).items():
            live = not record_format.expired(info.expires, now)
            if self.shared and (info.kept or not live):
                live = self.gateway.has_live_items(ns, now)
            if live:
                out.append(ns)
        return out

    def scope_where(self, prefix: Namespace) -> dict[str, Any] | None:
        """A ``where`` for the records under ``prefix``; None when every namespace lies under it
        (Chroma's unfiltered query is many times faster than a filtered one)."""
        if not prefix:
            return None
        known = self.namespaces(prefix)
        if len(known) == len(self.namespaces(())):
            return None
        return record_format.prefix_where(prefix, known)

    def vector_total(self) -> int:
        """How many vector records Chroma holds (an embedded store counts again after a write)."""
        if self.shared:
            return self.gateway.vector_count()
        state = self.state
        generation = state.generation
        with state.lock:
            cached = state.vector_total
        if cached is not None and cached[0] == generation:
            return cached[1]
        total = self.gateway.vector_count()
        with state.lock:
            state.vector_total = (generation, total)
        return total

    def current_lexical(self, prefix: Namespace) -> tuple[list[Namespace], LexicalIndex] | None:
        """The namespaces under ``prefix`` and a snapshot of their lexical shards when all are
        loaded and current, else None (reads nothing from Chroma)."""
        infos = self.namespaces(prefix)
        state = self.state
        with state.lock:
            if any(state.lexical_versions.get(ns) != info.version for ns, info in infos.items()):
                return None
            return list(infos), state.lexical.snapshot(infos)

    # listings (search without a query) -------------------------------------------------

    def listings(
        self, prefix: Namespace, only: Collection[Namespace] | None = None
    ) -> list[tuple[Namespace, Listing]] | None:
        """The listing of every namespace under ``prefix`` (in ``only``, when given); None when
        Chroma must answer (a server's store, too many namespaces, or more items than fit)."""
        if self.shared:
            return None
        infos = self.namespaces(prefix)
        if only is not None:
            infos = {ns: info for ns, info in infos.items() if ns in only}
        state = self.state
        with state.lock:
            have = {ns: state.listing(ns, info.version) for ns, info in infos.items()}
        stale = {ns: infos[ns].version for ns, got in have.items() if got is None}
        if len(stale) > _LAZY_SCAN_LIMIT:
            return None
        if stale:
            # One namespace: read it; several: one read of the prefix (as the scan it
            # replaces), or of the namespaces asked for.
            where = (
                record_format.namespaces_where(list(stale))
                if len(stale) == 1 or only is not None
                else record_format.prefix_where(prefix, infos)
            )
            rows: dict[Namespace, dict[str, dict[str, Any]]] = {ns: {} for ns in stale}
            one = next(iter(stale)) if len(stale) == 1 else None
            for rid, meta in self.gateway.read_items(where, one):
                per_ns = rows.get(record_format.ns_from_str(str(meta["_ns"])))
                if per_ns is not None:
                    per_ns[rid] = slim(meta)
            _pause("listings")
            # Sorted and made into id sets outside the lock (in proportion to the namespace).
            built = {ns: Listing.build(version, rows[ns]) for ns, version in stale.items()}
            if any(len(listing) > state.listing_cache_size for listing in built.values()):
                return None
            ids = {
                ns: IdSet(listing.metas)
                for ns, listing in built.items()
                if not state.knows_items_of(ns)
            }
            with state.lock:
                for ns, listing in built.items():
                    have[ns] = listing
                    state.install_listing(ns, listing, ids.get(ns))
        return [(ns, listing) for ns, listing in have.items() if listing is not None]

    # vectors and lexical shards ----------------------------------------------------------

    def scope(
        self, prefix: Namespace, *, vectors: bool, lexical: bool = True, fields: bool = False
    ) -> Scope:
        """Namespaces under ``prefix`` with snapshots of what is asked (vector views: None when
        Chroma's index must answer, the scope exceeding the cache or too many unloaded)."""
        infos = self.namespaces(prefix)
        state = self.state
        with state.lock:
            vectors, stale_vec, stale_lex = stale(state, prefix, infos, vectors, lexical)
        namespaces = list(infos)
        loaded, unkept = (
            self._load(prefix, stale_vec, stale_lex) if (stale_vec or stale_lex) else ({}, {})
        )
        unkept_lexical = {ns: shards[0] for ns, shards in unkept.items()}
        return Scope(
            namespaces,
            self._views(prefix, infos, loaded) if vectors else None,
            state.lexical.snapshot(namespaces, unkept_lexical) if lexical else None,
            state.fields.snapshot(namespaces, {ns: s[1] for ns, s in unkept.items()})
            if fields
            else None,
            tuple(ns for ns, info in infos.items() if info.unindexed),
        )

    def _views(
        self,
        prefix: Namespace,
        infos: Mapping[Namespace, NamespaceInfo],
        loaded: Mapping[Namespace, NamespaceVectors],
    ) -> list[BlockView] | None:
        state = self.state
        pending: list[BlockView | Rebuild] = []
        budget = state.vectors.max_vectors
        with state.lock:
            for ns, info in infos.items():
                block = state.vectors.get(ns)
                if block is None or (self.shared and block.version != info.version):
                    # (An embedded store's cached block is current even if newer than ``info``.)
                    block = loaded.get(ns)
                if block is None:
                    return None  # did not fit the cache (or was dropped): Chroma's index answers
                budget -= len(block)
                if budget < 0:
                    state.oversized.add(prefix)
                    return None
                pending.append(block.view())
        views: list[BlockView] = []
        for item in pending:
            if isinstance(item, Rebuild):
                built = item.build()
                _pause("rebuild")
                with state.lock:
                    item.block.install(item, built)
                views.append(item.view(built))
            else:
                views.append(item)
        return views

    def _load(
        self,
        prefix: Namespace,
        vectors: Mapping[Namespace, str],
        lexical: Mapping[Namespace, str],
    ) -> tuple[dict[Namespace, NamespaceVectors], dict[Namespace, tuple[Any, Any]]]:
        """Read the namespaces' vector records, build blocks and shards outside the lock, keep
        those still current; return the blocks built and the (lexical, field) shards not kept."""
        wanted = {**lexical, **vectors}
        overflow = False
        shards: dict[Namespace, tuple[Any, Any]] = {}
        if len(wanted) == 1 and len(lexical) == 1:
            # One namespace (a first search there): its shards are built page by page while
            # the next page is read.
            (ns,) = lexical
            rows, shard, fields = self._stream(
                ns, embeddings=ns in vectors, fit=self.state.vectors.max_vectors
            )
            shards[ns] = (shard, fields)
            if rows is None:  # more vectors than the cache holds, or none asked: none kept
                overflow = ns in vectors
                rows, vectors = [], {}
        elif len(wanted) > _PAGED_LOAD_FROM:
            # One paged read of the prefix: one read per namespace costs a Chroma round trip
            # each, which adds up at 100k items (docs/benchmarks.md, "Throughput").
            rows = self.gateway.read_vectors(
                record_format.prefix_where(prefix, wanted), embeddings=bool(vectors)
            )
        else:
            rows = []
            for ns in wanted:
                rows.extend(self.gateway.namespace_vectors(ns, embeddings=ns in vectors))
        by_ns: dict[Namespace, list[VectorRow]] = {ns: [] for ns in wanted}
        for row in rows:
            if row.namespace in by_ns and is_ranked(row.path):
                by_ns[row.namespace].append(row)
        state = self.state
        blocks, budget = _vector_blocks(vectors, by_ns, state.vectors.max_vectors)
        budget = -1 if overflow else budget
        for ns in [ns for ns in lexical if ns not in shards]:
            texts: dict[str, list[tuple[int, str, str]]] = {}
            for row in by_ns[ns]:
                key, _, index = record_format.split_vector_id(row.vid)
                texts.setdefault(key, []).append((index, row.text, row.path))
            shards[ns] = _shards(state, texts)
        _pause("load")
        unkept: dict[Namespace, tuple[Any, Any]] = {}
        with state.lock:
            for ns, (shard, fields) in shards.items():
                if self._current(ns, lexical[ns]):
                    state.lexical.put_shard(ns, shard)
                    state.fields.put_shard(ns, fields)
                    state.lexical_versions[ns] = lexical[ns]
                else:  # this search still scores what it read (as with vectors)
                    unkept[ns] = (shard, fields)
            for ns, block in blocks.items():
                if self._current(ns, block.version):
                    state.vectors.put(ns, block)
            if budget < 0:
                state.oversized.add(prefix)
        return blocks, unkept

    def _stream(
        self, ns: Namespace, *, embeddings: bool, fit: int
    ) -> tuple[list[VectorRow] | None, Any, Any]:
        """The vector records of ``ns`` and the (lexical, field) shards of their texts, each page
        analyzed while the next is read (an entry split over pages: all built again). The
        records are kept for their vectors only while at most ``fit`` came (else None), so a
        namespace past the vector cache never holds all its records at once."""
        rows: list[VectorRow] | None = [] if embeddings else None
        texts: dict[str, list[tuple[int, str, str]]] = {}
        split = False
        pages = read_ahead(self.gateway.namespace_vector_pages(ns, embeddings=embeddings))

        def docs() -> Iterator[tuple[str, str]]:
            nonlocal split, rows
            for page in pages:
                page = [row for row in page if is_ranked(row.path)]
                if rows is not None:
                    rows.extend(page)
                    rows = rows if len(rows) <= fit else None
                fresh: dict[str, None] = {}
                for row in page:
                    key, _, index = record_format.split_vector_id(row.vid)
                    parts = texts.get(key)
                    if parts is None:
                        parts = texts[key] = []
                        fresh[key] = None
                    elif key not in fresh:
                        split = True  # built from an earlier page: build all again below
                    parts.append((index, row.text, row.path))
                if split:
                    continue  # read the rest, build nothing more
                for key in fresh:
                    parts = texts[key]
                    parts.sort()
                    yield key, _joined(parts)

        with closing(pages):
            shard = self.state.lexical.build_shard(docs())
        if split:
            return rows, *_shards(self.state, texts)
        # Each entry's (path, text) list made as the field shard takes it, never all at once.
        fields = self.state.fields.build_shard((k, _by_path(p)) for k, p in texts.items())
        return rows, shard, fields

    def _current(self, ns: Namespace, version: str) -> bool:
        """Whether data read for ``version`` of ``ns`` may be kept (under the lock; shared: a
        later write forces a reload anyway)."""
        if self.shared:
            return True
        info = self.state.registry.get(ns)
        return info is not None and info.version == version


def stale(
    state: StoreState,
    prefix: Namespace,
    infos: Mapping[Namespace, NamespaceInfo],
    vectors: bool,
    lexical: bool,
) -> tuple[bool, dict[Namespace, str], dict[Namespace, str]]:
    """Whether a search of ``prefix`` loads vectors, and the namespaces whose vectors and
    lexical shards it must load (-> their version). Call under the state's lock."""
    vectors = vectors and prefix not in state.oversized  # (known not to fit: Chroma's index)
    stale_vec = {
        ns: info.version
        for ns, info in infos.items()
        if vectors and block_version(state.vectors.get(ns)) != info.version
    }
    if len(stale_vec) > _LAZY_VECTOR_LIMIT:
        # Loading many namespaces' vectors first takes seconds at 100k items (docs/benchmarks.md,
        # "Throughput"); Chroma's index answers this query, and namespaces load as users search.
        vectors, stale_vec = False, {}
    stale_lex = {  # (a namespace whose vectors load gets its shard from the same read)
        ns: info.version
        for ns, info in infos.items()
        if (lexical or ns in stale_vec) and state.lexical_versions.get(ns) != info.version
    }
    return vectors, stale_vec, stale_lex


def _vector_blocks(
    vectors: Mapping[Namespace, str],
    by_ns: Mapping[Namespace, list[VectorRow]],
    budget: int,
) -> tuple[dict[Namespace, NamespaceVectors], int]:
    """The block of each namespace in ``vectors`` while the total fits ``budget``; what is left."""
    blocks: dict[Namespace, NamespaceVectors] = {}
    for ns, version in vectors.items():
        rows = by_ns[ns]
        entries = [(record_format.item_of_vector(r.vid), r.vid, r.embedding) for r in rows]
        block = NamespaceVectors.loaded(version, [e for e in entries if e[2] is not None])
        budget -= len(block)
        if budget >= 0:  # never cache a namespace with only some of its vectors
            blocks[ns] = block
    return blocks, budget


def _joined(parts: list[tuple[int, str, str]]) -> str:
    """An entry's lexical document: its (index, text, path) parts' texts, one a line."""
    return "\n".join(t for _, t, _ in parts)


def _by_path(parts: list[tuple[int, str, str]]) -> list[tuple[str, str]]:
    return [(path, t) for _, t, path in parts]


def _shards(state: StoreState, texts: Mapping[str, list[tuple[int, str, str]]]) -> tuple[Any, Any]:
    """The (lexical, field) shards of a namespace's entries: key -> (index, text, path) parts,
    sorted here into the order the put indexed them (the first is the content)."""
    for parts in texts.values():
        parts.sort()
    shard = state.lexical.build_shard((k, _joined(p)) for k, p in texts.items())
    return shard, state.fields.build_shard((k, _by_path(p)) for k, p in texts.items())


def _pause(step: str) -> None:
    hook = race_hook
    if hook is not None:
        hook(step)


_LAZY_VECTOR_LIMIT = 64
"""At most this many namespaces' vectors are loaded for one search."""
_LAZY_SCAN_LIMIT = 16
"""At most this many namespaces' item listings are loaded for one search without a query."""
_PAGED_LOAD_FROM = 16
"""Load a scope with one paged read when more namespaces than this need loading."""


def block_version(entry: NamespaceVectors | None) -> str | None:
    return entry.version if entry is not None else None


_OPEN: weakref.WeakValueDictionary[tuple[Any, ...], Backend] = weakref.WeakValueDictionary()
_OPEN_LOCK = threading.Lock()


def _close_store(folder: FolderLock) -> None:
    """Count a store of ``folder`` closed; after the last, forget its backends (hold _OPEN_LOCK)."""
    if folder.close_store():
        for key in [k for k, b in _OPEN.items() if b.folder is folder]:
            del _OPEN[key]


def _system_key(client: Any) -> Any:
    """The embedded Chroma a client talks to: its folder (or "ephemeral") and live system."""
    where = folder_of(client) or getattr(client, "_identifier", None)
    return (where, id(getattr(client, "_server", client)))


def embedded_system(client: Any) -> str | None:
    """The embedded Chroma of a client (its folder, or ``"ephemeral"``); None for a server's."""
    folder = folder_of(client)
    if folder is not None:
        return folder
    try:
        settings = client.get_settings()
    except AttributeError:
        return None
    if str(getattr(settings, "chroma_api_impl", "")).endswith("FastAPI"):
        return None
    return lifecycle.EPHEMERAL


def _spelled(client: Any) -> str:
    try:
        return str(client.get_settings().persist_directory)
    except AttributeError:
        return "?"


def describe(client: Any) -> str:
    """How messages name the store of ``client``."""
    folder = folder_of(client)
    return f"The store on the folder {folder}" if folder else "The in-memory store"
