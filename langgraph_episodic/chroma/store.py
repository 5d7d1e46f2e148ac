"""``ChromaStore``: a LangGraph ``BaseStore`` on Chroma, embedded by default, server-ready.

It implements ``batch`` and ``abatch`` only; every other method comes from ``BaseStore``. Both
run the same pure core (:mod:`.plans`): ops are validated and planned first, so a bad op fails
the whole batch before anything is written; then reads run against the state before the batch
and puts are applied last, last write wins per (namespace, key).

Where it deliberately differs from ``InMemoryStore`` (each is tested):

* ``created_at`` is kept when an item is updated (``InMemoryStore`` resets it).
* Search without a query orders by ``updated_at`` descending (as ``PostgresStore``).
* Filters: dotted keys reach nested values; range operators never match a missing field or a
  value of another type (``InMemoryStore`` raises); see :mod:`.filters`.
* Negative ``limit`` / ``offset`` raise ``ValueError`` (``InMemoryStore`` slices from the end).
* TTL is supported (``supports_ttl = True``); expired items are never returned.
* ``search_mode="hybrid"`` (the default) fuses BM25 and dense rankings; its score is
  ``0.35 * cosine + 0.65 * lexical share`` (:mod:`.ranking.fusion`; a German question of the
  two-language default weighs the lexical share at
  :data:`~langgraph_episodic.bilingual.GERMAN_LEXICAL`), in ``[0, 1]`` and on the same scale
  for every query and namespace. ``search_mode="dense"`` returns cosine similarity, as
  ``InMemoryStore``.

Concurrency: the store is safe to share between threads and asyncio tasks. Its in-process
state has one owner (:mod:`.caches`, one lock, readers work on snapshots, a write-back older
than the last write is dropped); writes reach Chroma in a crash-safe order (:mod:`.writes`);
concurrent ``abatch`` calls on one event loop are gathered into one batch (:mod:`.coalesce`).
An embedded folder is written by one process at a time (:mod:`.folder_lock`): the process that
holds it serves it to the others that open it with :meth:`ChromaStore.persistent`
(:mod:`.sharing`); one that cannot be served gets ``FolderInUseError`` naming the fix. Many
machines share a store through a Chroma server.
One folder is one store state in a process, however its path is spelled. After ``close()``
every call raises ``StoreClosedError``; in a child made by ``fork`` an embedded store of the
parent raises ``StoreForkedError`` (open stores after the fork, or use ``spawn``; see
:mod:`.lifecycle`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    IndexConfig,
    Op,
    Result,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
)

from .._types import SEARCH_MODES
from ..errors import ConnectionFailedError, InvalidValueError, TimedOutError
from ..language.analysis import Language
from ..language.baseline import Baseline, Calibration, baseline_for, calibration_of
from . import lifecycle, memory_budget, raw_records, record_format, search, sharing, writes
from .backend import Backend, describe, embedded_system
from .coalesce import Coalescer
from .embedder import Vectors, aembed, default_index, embed, routed, stored_dims
from .explain import Explanation, explanation
from .folder_lock import folder_of
from .gateway import Gateway
from .index_paths import check_fields
from .lifecycle import Calls, StoreClosedError, StoreForkedError
from .maintenance import Maintenance
from .plans import (
    DEFAULT_MAX_INDEXED_BYTES,
    DEFAULT_MAX_VALUE_BYTES,
    BatchPlan,
    Fields,
    Limits,
    prepare,
    tokenized_fields,
)
from .ranking import shared_fields
from .raw_records import ItemExtras, RawRecords
from .registry import fixed_prefix, list_namespaces
from .search import Method
from .sharing_client import RemoteFolder
from .verify import VerifyReport
from .verify import verify as verify_store

logger = logging.getLogger(__name__)

SearchMode = Literal["hybrid", "dense", "lexical"]

_DEFAULT: Any = object()


def _server_error(exc: BaseException, endpoint: str) -> OSError:
    """A clear error for a Chroma server that is down or too slow."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return TimedOutError(
            f"The Chroma server at {endpoint} did not answer in time ({type(exc).__name__}). "
            "Check that it is healthy, or raise ChromaStore.http(..., timeout=...)."
        )
    return ConnectionFailedError(
        f"Cannot reach a Chroma server at {endpoint} ({exc}). Start it with "
        f"`chroma run --path ./chroma-data --host {endpoint.rsplit(':', 1)[0]} "
        f"--port {endpoint.rsplit(':', 1)[1]}`; calls work again once it is back."
    )


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


def _check_known(mode: str, name: str) -> None:
    if mode not in SEARCH_MODES:
        raise InvalidValueError(f"{name} must be one of {SEARCH_MODES}, got {mode!r}.")


def _resolved_cache_sizes(
    vector_cache_size: int | None, item_cache_size: int | None, index: IndexConfig | None
) -> dict[str, int]:
    """The cache sizes by keyword: those given, else the machine's (:mod:`.memory_budget`)."""
    available = (
        memory_budget.available_memory()
        if vector_cache_size is None or item_cache_size is None
        else None
    )
    if vector_cache_size is None:
        dims = index.get("dims") if index is not None else None
        vector_cache_size = memory_budget.vector_cache_size(dims, available)
    if item_cache_size is None:
        item_cache_size = memory_budget.item_cache_size(available)
    sizes = (("vector_cache_size", vector_cache_size), ("item_cache_size", item_cache_size))
    for name, size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise InvalidValueError(
                f"{name} must be a whole number of entries >= 0 (or None for the machine's "
                f"default), got {size!r}."
            )
    return dict(sizes)


class ChromaStore(BaseStore):
    """A LangGraph store on Chroma with semantic (or hybrid) search, filters and TTL.

    Args:
        client: Any chromadb client (``PersistentClient``, ``EphemeralClient``, ``HttpClient``).
            Prefer the constructors :meth:`persistent`, :meth:`ephemeral` and :meth:`http`.
        collection: Base name of the two collections the store keeps (``<name>`` for items,
            ``<name>__vec`` for vectors). 3-60 characters of ``[a-zA-Z0-9._-]``.
        index: A LangGraph ``IndexConfig`` (``dims``, ``embed``, ``fields``). Defaults to the
            two-language embedder over the whole value (:mod:`..bilingual`: German questions
            scored by the multilingual model, English ones by the packaged all-MiniLM-L6-v2);
            a store written with one of those models alone (384 or 512 dims) opens with that
            model. ``None`` turns semantic search off.
        ttl: A LangGraph ``TTLConfig`` (``default_ttl`` minutes, ``refresh_on_read``,
            ``sweep_interval_minutes`` to start a background sweeper).
        search_mode: ``"hybrid"`` (BM25 fused with dense, the default), ``"dense"`` (cosine
            similarity, like ``InMemoryStore``) or ``"lexical"`` (BM25 only).
        shared: Whether other processes write to the same Chroma (always true on a server:
            :meth:`http` sets it). A shared store checks namespace versions on every search so
            its in-process caches never serve stale results; an embedded store is its only
            writer and keeps its caches current by itself.
        redact: A function applied to every value put and every query searched, before
            anything is embedded or stored, e.g. ``Redactor()`` from
            ``langgraph_episodic.privacy`` (e-mail addresses, phone numbers, IBANs, cards).
        language: How the keyword side analyzes text: ``"auto"`` (the default: English or
            German detected per text, each stemmed with its Snowball stemmer), ``"en"`` or
            ``"de"`` (see :mod:`langgraph_episodic.language.analysis`). Stores sharing one embedded Chroma must agree.
            With the packaged model it also picks the mean vector a question's cosine is
            measured from in hybrid scores (:mod:`langgraph_episodic.language.baseline`; ``"auto"``: the question's).
            With the two-language default it pins every question's route: ``"de"`` scores each
            by the multilingual model's cosine with its German calibration (BM25 at a small share),
            ``"en"`` by MiniLM fused with BM25, whatever language the question looks like;
            ``"auto"`` takes the route of the language detected in each question
            (:meth:`..bilingual.BilingualEmbeddings.routed`).
        vector_cache_size: Most vectors held in process for exact, fast per-namespace search
            (float32: 384 dims x 200,000 = about 300 MB). Larger scopes use Chroma's index.
            ``None`` (the default) follows the machine: 5% of the memory available when the
            store opens, between 10,000 and 200,000 vectors (:mod:`.memory_budget`).
        item_cache_size: Most item records held in process (for ``get``, search results and
            the record a put replaces; a miss reads Chroma). ``None`` (the default) follows
            the machine: 1% of the memory available when the store opens, between 10,000 and
            100,000 records. What it costs at 100,000 items: ``docs/benchmarks.md``, "Peak
            memory". Stores of one collection in a process share the caches of the first.
        field_lift: With more than one indexed field (``fields=["text", "time"]``), hybrid
            search lifts memories holding the exact value of a field other than the first
            (the same date, place, project) as the best hits toward the best hit's score; no
            score is lowered and the best hit stays first (see :mod:`.ranking.shared_fields`). Acts
            only when the index names more than one field. What it gains on LoCoMo with the
            session date indexed: ``docs/retrieval.md``, "Shared-field lift".
        max_value_bytes: The largest value a put accepts, in UTF-8 bytes of compact JSON
            (default 1 MiB; ``None``: no limit). A larger one is refused before anything is
            written, the whole batch with it (see :class:`.plans.Limits`).
        max_indexed_bytes: The most text a put embeds and keyword-indexes, in UTF-8 bytes summed
            over the item's index fields (default 64 KiB; ``None``: no limit). With the default
            ``fields=["$"]`` that text is the whole value as JSON.
        clock: Where the store reads the time, in epoch seconds (default ``time.time``): the
            ``created_at`` / ``updated_at`` stamps, TTL expiry, the sweep and ``verify``'s grace
            period. Pass a settable clock to test expiry without sleeping.

    >>> from langgraph_episodic import ChromaStore, HashEmbeddings
    >>> store = ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})
    >>> store.put(("users", "alice"), "pref", {"text": "likes dark roast coffee"})
    >>> [r.key for r in store.search(("users", "alice"), query="coffee")]
    ['pref']
    """

    supports_ttl = True

    def __init__(
        self,
        client: Any,
        *,
        collection: str = "langgraph_store",
        index: IndexConfig | None = _DEFAULT,
        ttl: TTLConfig | None = None,
        search_mode: SearchMode = "hybrid",
        shared: bool = False,
        vector_cache_size: int | None = None,
        item_cache_size: int | None = None,
        redact: Callable[[Any], Any] | None = None,
        language: Language = "auto",
        field_lift: bool = True,
        max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES,
        max_indexed_bytes: int | None = DEFAULT_MAX_INDEXED_BYTES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        _check_known(search_mode, "search_mode")
        self.limits = Limits(max_value_bytes, max_indexed_bytes)
        self._client = client
        self.collection_name = collection
        config: IndexConfig | None = (
            default_index(stored_dims(client, collection)) if index is _DEFAULT else index
        )
        self.index_config: IndexConfig | None = None
        self.embeddings: Embeddings | None = None
        self._baseline: Baseline | None = None
        self._calibrate: Callable[[np.ndarray], Calibration] | None = None
        # (Without an index, a lexical store still tokenizes the whole value.)
        self._fields: Fields | None = tokenized_fields(None) if search_mode == "lexical" else None
        if config is not None:
            self.index_config = IndexConfig(**config)
            self.embeddings = ensure_embeddings(config.get("embed"))
            self._baseline = baseline_for(self.embeddings)
            if language != "auto":
                self.embeddings = routed(self.embeddings, language)
            self._calibrate = calibration_of(self.embeddings)
            fields = config.get("fields")
            if fields is not None:
                fields = list(check_fields(fields, "index['fields']"))
            self._fields = tokenized_fields(fields)
        self.search_mode: SearchMode = search_mode
        self.field_lift = field_lift
        self.ttl_config = ttl
        self.redact = redact
        self.clock: Callable[[], float] = clock
        self._endpoint: str | None = None
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()
        self._remote = client if isinstance(client, RemoteFolder) else None
        """The process serving this store's folder, when another process holds it."""
        self._cache_sizes = _resolved_cache_sizes(
            vector_cache_size, item_cache_size, self.index_config
        )
        self.language: Language = language
        if self._remote is None:
            self._backend = self._open_backend(client, shared)
        self._calls = Calls(
            f"{self._remote.description if self._remote else describe(client)} "
            f"(collection {collection!r})",
            fork_checked=self._remote is not None or embedded_system(client) is not None,
        )
        self._coalescer = Coalescer(self._arun)
        if ttl and ttl.get("sweep_interval_minutes"):
            self.start_ttl_sweeper()

    def _open_backend(self, client: Any, shared: bool) -> Backend:
        """This store's backend on ``client``, its keyword side analyzing in ``language`` (a
        failure gives back the folder's count the backend took)."""
        backend = Backend.open(client, self.collection_name, shared=shared, sizes=self._cache_sizes)
        try:
            backend.state.lexical.use_language(self.language)
        except BaseException:
            backend.close_store()
            raise
        return backend

    # ------------------------------------------------------------------ constructors

    @classmethod
    def persistent(cls, path: str | Path = "./.episodic", **kwargs: Any) -> ChromaStore:
        """An embedded store kept in the folder ``path`` (created if missing).

        Many processes may open one folder: the first holds it and serves it to the others,
        whose stores send it their batches (:mod:`.sharing`; docs/store.md, "Many processes
        on one folder")."""
        import chromadb

        Path(path).mkdir(parents=True, exist_ok=True)
        # One folder is one Chroma system and one store state however it is spelled (a
        # trailing slash, a symlink, ``a/../a``): Chroma tells its systems apart by the string.
        folder = os.path.realpath(path)
        lifecycle.refuse_inherited(folder, f"The store on the folder {folder}")
        collection = kwargs.get("collection", "langgraph_store")
        with sharing.opening(folder, collection, kwargs.get("language", "auto")) as remote:
            if remote is not None:
                try:
                    return cls(remote, **kwargs)
                except BaseException:
                    remote.close()
                    raise
            client = chromadb.PersistentClient(path=folder, settings=_settings())
            store = cls(client, **kwargs)
        sharing.serve(store, folder)
        return store

    def _take_over(self) -> None:
        """Become the folder's embedded store and serve it (its owner went, :mod:`.sharing`)."""
        import chromadb

        assert self._remote is not None
        client = chromadb.PersistentClient(path=self._remote.folder, settings=_settings())
        self._client, self._backend = client, self._open_backend(client, shared=False)
        folder, self._remote = self._remote.folder, None
        sharing.serve(self, folder)

    @classmethod
    def ephemeral(cls, **kwargs: Any) -> ChromaStore:
        """An in-memory store. Each call gets its own collection unless ``collection`` is given
        (Chroma shares ephemeral clients within a process)."""
        import chromadb

        kwargs.setdefault("collection", f"ephemeral-{uuid.uuid4().hex[:16]}")
        lifecycle.refuse_inherited(lifecycle.EPHEMERAL, "The in-memory store")
        return cls(chromadb.EphemeralClient(settings=_settings()), **kwargs)

    @classmethod
    def http(
        cls,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        ssl: bool = False,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = 30.0,
        **kwargs: Any,
    ) -> ChromaStore:
        """A store on a Chroma server (``chroma run``), shared by processes and machines.

        ``timeout`` bounds every request in seconds (``None``: wait forever), so a server that
        hangs raises ``TimeoutError`` instead of blocking the agent. An unreachable server
        raises ``ConnectionError`` naming the address and how to start one; calls work again
        as soon as the server is back.
        """
        import chromadb
        import httpx

        endpoint = f"{host}:{port}"
        try:
            client = chromadb.HttpClient(
                host=host, port=port, ssl=ssl, headers=dict(headers or {}), settings=_settings()
            )
            session = getattr(getattr(client, "_server", None), "_session", None)
            if isinstance(session, httpx.Client):
                session.timeout = httpx.Timeout(timeout)
            kwargs.setdefault("shared", True)
            store = cls(client, **kwargs)
        except (httpx.TransportError, ValueError) as exc:
            # chromadb raises ValueError("Could not connect to a Chroma server...") or httpx errors
            raise _server_error(exc, endpoint) from exc
        store._endpoint = endpoint
        return store

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> ChromaStore:
        """A store on the Chroma server at ``url`` (``http://host:port`` or ``https://...``)."""
        from urllib.parse import urlparse

        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise InvalidValueError(f"Expected a URL like http://127.0.0.1:8000, got {url!r}.")
        port = parsed.port or (443 if parsed.scheme == "https" else 8000)
        return cls.http(parsed.hostname, port, ssl=parsed.scheme == "https", **kwargs)

    @property
    def collections(self) -> dict[str, Any]:
        """The raw Chroma collections behind the store: ``vectors`` (one record per indexed
        text; an item with one indexed text is that record, with the item's metadata),
        ``items`` (the records of items with no indexed text or several) and ``namespaces``
        (the registry); see :mod:`.record_format`. For audits and migrations; writing to them
        directly bypasses the store's caches."""
        if self._remote is not None:
            raise AttributeError("a store served by another process has no Chroma collections")
        gw = self._backend.gateway
        return {"items": gw.items, "vectors": gw.vectors, "namespaces": gw.namespaces}

    @property
    def client(self) -> Any:
        """The chromadb client the store runs on (e.g. for ``privacy.purge_store``)."""
        return self._client

    # ------------------------------------------------------------------ batch API

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ops in one batch (see the module docstring for the semantics)."""
        self._calls.check()
        plan = prepare(ops, self._fields, self.redact, self.limits)
        return self._run(plan, *self._embed(plan))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async version of :meth:`batch`. Calls made concurrently on one event loop are
        gathered into one batch (one embedding call, one worker thread hop, one pass over
        Chroma); each caller still sees its own batch's semantics (see :mod:`.coalesce`)."""
        self._calls.check()
        plan = prepare(ops, self._fields, self.redact, self.limits)
        return await self._coalescer.submit(plan)

    async def _arun(self, plan: BatchPlan) -> list[Result]:
        vectors: tuple[Vectors, Vectors] = ({}, {})
        if self.embeddings:
            vectors = await aembed(self.embeddings, *self._to_embed(plan))
        return await asyncio.to_thread(self._run, plan, *vectors)

    def _run(
        self,
        plan: BatchPlan,
        doc_vectors: Mapping[str, np.ndarray],
        query_vectors: Mapping[str, np.ndarray],
    ) -> list[Result]:
        methods = [self._method(op, query_vectors.get(op.query or "")) for _, op in plan.searches]
        args = (plan, doc_vectors, query_vectors, methods)
        if self._remote is not None:
            return list(self._remote.call(self, "_execute", *args))
        if self._endpoint is None:
            return self._execute(*args)
        import httpx

        try:
            return self._execute(*args)
        except httpx.TransportError as exc:
            raise _server_error(exc, self._endpoint) from exc

    # ------------------------------------------------------------------ embedding

    def _embed(self, plan: BatchPlan, mode: SearchMode | None = None) -> tuple[Vectors, Vectors]:
        if not self.embeddings:
            return {}, {}
        return embed(self.embeddings, *self._to_embed(plan, mode))

    def _to_embed(
        self, plan: BatchPlan, mode: SearchMode | None = None
    ) -> tuple[int | None, list[str], list[str]]:
        """``index['dims']``, the batch's texts and its questions (none when ranked lexically)."""
        dims = self.index_config.get("dims") if self.index_config is not None else None
        queries = plan.queries_to_embed() if (mode or self.search_mode) != "lexical" else []
        return dims, plan.texts_to_embed(), queries

    # ------------------------------------------------------------------ execution

    def _execute(
        self,
        plan: BatchPlan,
        doc_vectors: Mapping[str, np.ndarray],
        query_vectors: Mapping[str, np.ndarray],
        methods: Sequence[Method],
    ) -> list[Result]:
        """Run ``plan``; ``methods`` rank its searches in order (:meth:`_method`; a batch sent
        by another process brings its own)."""
        with self._calls.call(), self._backend.state.batches.batch():
            b = self._backend
            b.check_readable()
            results: list[Result] = [None] * plan.n_ops
            now = self.clock()
            refresh: dict[str, tuple[tuple[str, ...], float, bool]] = {}
            if plan.gets:
                ids = [record_format.item_id(op.namespace, op.key) for _, op in plan.gets]
                metas = b.fetch(ids)
                for (i, gop), rid in zip(plan.gets, ids, strict=True):
                    meta = metas.get(rid)
                    if meta is None or record_format.expired(record_format.expiry_of(meta), now):
                        continue
                    results[i] = record_format.item_from_metadata(meta)
                    ttl = record_format.ttl_of(meta)
                    if gop.refresh_ttl and ttl is not None:
                        own = record_format.in_vectors(meta)
                        refresh[rid] = (gop.namespace, now + ttl * 60.0, own)
            for (i, sop), method in zip(plan.searches, methods, strict=True):
                qvec = query_vectors.get(sop.query or "")
                hits = search.run(b, sop, qvec, now, method).page
                results[i] = [h.item for h in hits]
                for h in hits:
                    if sop.refresh_ttl and h.ttl is not None:
                        refresh[h.rid] = (h.item.namespace, now + h.ttl * 60.0, h.own)
            for i, lop in plan.listings:
                live = b.live(fixed_prefix(lop.match_conditions), now)
                results[i] = list_namespaces(live, lop)
            if refresh:
                writes.refresh_ttl(b, refresh)
            if plan.puts:
                writes.apply_puts(b, plan, doc_vectors, now)
            return results

    def _method(
        self, op: SearchOp, qvec: np.ndarray | None, mode: SearchMode | None = None
    ) -> Method:
        """How this store ranks ``op`` (in ``mode``, default its own)."""
        mode = mode or self.search_mode
        lexical = bool(op.query) and mode != "dense" and self._fields is not None
        if not op.query or mode == "lexical" or qvec is None:
            return search.Method("lexical" if lexical else "scan")
        if not lexical:  # dense, or hybrid without indexed text
            if self._calibrate is None:
                return search.Method("dense")
            own = self._calibrate(qvec)
            return search.Method("dense", Calibration(scale=own.scale, first=own.first))
        if self._calibrate is not None:
            calibration = self._calibrate(qvec)
        elif self._baseline is not None:
            calibration = Calibration(self._baseline.of(qvec, op.query, self.language))
        else:
            calibration = Calibration()
        fields = self._fields or []
        lift = None
        if self.field_lift:  # one field: each memory's context fields (memory_context)
            lift = fields[0][0] if len(fields) > 1 else shared_fields.EACH_FIRST
        return search.Method("hybrid", calibration, lift)

    def explain(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        floor: float | None = None,
        mode: SearchMode | None = None,
    ) -> Explanation:
        """The hits of ``search(namespace_prefix, query=..., filter=..., limit=..., offset=...)``
        with what each score is made of (cosine, lexical share, shared-field lift; see
        :mod:`.explain`), computed by the same ranking as the search. ``floor`` marks the hits
        under it (``below_floor``). It never refreshes a TTL.

        ``mode`` ranks this one call as a store of that ``search_mode`` would (default: this
        store's). ``"dense"`` answers a query over many namespaces from Chroma's vector index
        in milliseconds, where the keyword side of ``"hybrid"`` reads and sorts every matching
        memory under the prefix (the inspector's search over all users uses it).

        >>> from langgraph_episodic import ChromaStore, HashEmbeddings
        >>> store = ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})
        >>> store.put(("users", "alice"), "pref", {"text": "likes dark roast coffee"})
        >>> [(h.item.key, h.rank) for h in store.explain(("users",), query="coffee").hits]
        [('pref', 1)]
        """
        self._calls.check()
        if mode is not None:
            self._check_mode(mode)
        op = SearchOp(tuple(namespace_prefix), filter, limit, offset, query, refresh_ttl=False)
        plan = prepare([op], self._fields, self.redact, self.limits)
        _, query_vectors = self._embed(plan, mode)
        ((_, sop),) = plan.searches
        qvec = query_vectors.get(sop.query or "")
        method = self._method(sop, qvec, mode)
        if self._remote is not None:
            return self._remote.call(self, "_explain", sop, qvec, method, floor)
        return self._explain(sop, qvec, method, floor)

    def _explain(
        self, sop: SearchOp, qvec: np.ndarray | None, method: Method, floor: float | None
    ) -> Explanation:
        with self._calls.call(), self._backend.state.batches.batch():
            self._backend.check_readable()
            ranked = search.run(self._backend, sop, qvec, self.clock(), method)
        return explanation(ranked, method, sop.offset, floor)

    def _check_mode(self, mode: str) -> None:
        _check_known(mode, "mode")
        has = {"vectors": self.embeddings is not None, "indexed text": self._fields is not None}
        needs = {"hybrid": ("vectors", "indexed text"), "dense": ("vectors",),
                 "lexical": ("indexed text",)}
        can = [m for m in SEARCH_MODES if all(has[n] for n in needs[m])]
        if mode not in can:
            fix = (f"pass mode={can[0]!r}" if can else "open the store with an index "
                   "(index={'dims': ..., 'embed': ...})")
            raise InvalidValueError(
                f"mode={mode!r} ranks by {' and '.join(needs[mode])}, which this store lacks: "
                f"{fix}."
            )

    def restore_times(
        self,
        times: Mapping[tuple[tuple[str, ...], str], tuple[datetime, datetime, datetime | None]],
    ) -> int:
        """Set ``created_at``, ``updated_at`` and the expiry (None: keep it) of existing items,
        e.g. when importing a backup; ``put`` always stamps "now". Returns how many existed."""
        if self._remote is not None:
            return int(self._remote.call(self, "restore_times", times))
        seconds = {
            k: (c.timestamp(), u.timestamp(), e.timestamp() if e is not None else None)
            for k, (c, u, e) in times.items()
        }
        with self._calls.call():
            return writes.restore_times(self._backend, seconds)

    # ------------------------------------------------------------------ TTL

    def sweep_ttl(self) -> int:
        """Delete expired items (and their vectors and lexical entries); return how many."""
        if self._remote is not None:
            return int(self._remote.call(self, "sweep_ttl"))
        with self._calls.call():
            count = writes.sweep(self._backend, self.clock())
        logger.debug("swept %d expired items", count)
        return count

    async def asweep_ttl(self) -> int:
        """Async version of :meth:`sweep_ttl`."""
        return await asyncio.to_thread(self.sweep_ttl)

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep expired items every ``sweep_interval_minutes`` in a daemon thread.

        The interval defaults to ``ttl["sweep_interval_minutes"]``, else 5 minutes. The returned
        future completes when :meth:`stop_ttl_sweeper` stops the thread.
        """
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if self._sweeper is not None and self._sweeper.is_alive():
            future.set_result(None)
            return future
        interval = sweep_interval_minutes or (self.ttl_config or {}).get(
            "sweep_interval_minutes"
        ) or 5
        self._sweeper_stop.clear()

        def run() -> None:
            while not self._sweeper_stop.wait(float(interval) * 60.0):
                try:
                    self.sweep_ttl()
                except (StoreClosedError, StoreForkedError):
                    break
                except Exception:  # a transient server error must not kill the sweeper
                    logger.exception("TTL sweep failed; retrying at the next interval")
            future.set_result(None)

        self._sweeper = threading.Thread(target=run, name="chroma-ttl-sweeper", daemon=True)
        self._sweeper.start()
        return future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True if it stopped (or was not running)."""
        if self._sweeper is None:
            return True
        self._sweeper_stop.set()
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped

    def verify(self, *, repair: bool = False, grace_seconds: float | None = None) -> VerifyReport:
        """Check that Chroma holds what the store's write order promises, and with
        ``repair=True`` fix what is not: vector records no item names (orphans) or that an
        item no longer names (stale, left by a crash or a lost race), namespaces with items
        but no registry record, registry records without items, and latest expiries that lag.
        Searches never return such records; this removes them and says how many there were.
        It also lists items whose index fields hold no text (``unsearchable_items``: no vector,
        so no query finds them), without counting them against ``ok``: see :mod:`.verify`.

        ``grace_seconds``: on a server, vectors younger than this (default 600) are left
        alone, as they may belong to a put still running in another process. An embedded
        store is its only writer and repairs everything.

        >>> from langgraph_episodic import ChromaStore, HashEmbeddings
        >>> store = ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})
        >>> store.put(("users", "alice"), "pref", {"text": "tea"})
        >>> store.verify().ok
        True
        """
        if self._remote is not None:
            return self._remote.call(self, "verify", repair=repair, grace_seconds=grace_seconds)
        if grace_seconds is None:
            grace_seconds = 600.0 if self._backend.shared else 0.0
        with self._calls.call():
            return verify_store(
                self._backend, self.clock(), repair=repair, grace_seconds=grace_seconds
            )

    async def averify(
        self, *, repair: bool = False, grace_seconds: float | None = None
    ) -> VerifyReport:
        """Async version of :meth:`verify`."""
        return await asyncio.to_thread(self.verify, repair=repair, grace_seconds=grace_seconds)

    def close(self) -> None:
        """End the store: stop the sweeper, let calls in flight finish, and refuse every later
        call with ``StoreClosedError``. When no other open store of this process uses the same
        embedded folder, give up its write lock (another process may write it then).

        Nothing the store does writes after ``close()`` returns. Closing twice is harmless; in
        a forked child, ``close()`` only marks the parent's store closed there (the folder
        stays the parent's).
        """
        self.stop_ttl_sweeper(timeout=5)
        sharing.stop_serving(self)  # (first: requests of other processes finish and answer)
        if self._calls.close():
            if self._remote is not None:
                self._remote.close()
                return
            from chromadb.errors import ChromaError

            try:
                writes.unmark(self._backend)  # (the registry as another process reads it)
            except ChromaError:  # (e.g. the folder is gone; a store reading it checks marks)
                logger.warning("could not unmark the namespace registry", exc_info=True)
            finally:
                self._backend.close_store()

    def __enter__(self) -> ChromaStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ records beyond the API

    def item_extras(
        self, keys: Sequence[tuple[tuple[str, ...], str]]
    ) -> dict[tuple[tuple[str, ...], str], ItemExtras]:
        """What the ``BaseStore`` API does not say about the items ``(namespace, key)``: their
        TTL, expiry and indexed fields (an export keeps them); missing items are absent."""
        items, vectors = (
            self._client.get_collection(n) for n in Gateway.names(self.collection_name)[:2]
        )
        size = int(self._client.get_max_batch_size())
        return raw_records.item_extras(items, vectors, size, keys)

    def vector_dims(self) -> int | None:
        """Dimensions of the vectors the store holds (None when it holds none)."""
        vectors = self._client.get_collection(Gateway.names(self.collection_name)[1])
        return raw_records.vector_dims(vectors)

    def raw_records(
        self,
        match: Callable[[tuple[str, ...]], bool],
        *,
        prefixes: Collection[tuple[str, ...]] | None = None,
    ) -> RawRecords:
        """The items and vector records in Chroma whose namespace ``match`` accepts, read from
        the raw collections, not through the namespace registry: all of them, or only those
        under one of the namespace ``prefixes``. Finds what a crash left behind (see
        :meth:`verify`), e.g. for forgetting a user. A store served by another process finds
        none (the serving process's store does)."""
        if self._remote is not None:
            return raw_records.NO_RECORDS
        with self._calls.call():
            gw = self._backend.gateway
            return raw_records.scan(gw.items, gw.vectors, match, prefixes)

    def delete_vector_records(self, ids: Sequence[str]) -> None:
        """Delete the vector records ``ids`` (:attr:`RawRecords.vector_ids`) from Chroma
        directly; a store served by another process deletes none."""
        if self._remote is not None:
            return
        with self._calls.call():
            raw_records.delete_vectors(self._backend.gateway.vectors, ids)
            self._backend.state.discard_kept()  # (their words: :mod:`.persisted`)

    def drop_empty_namespaces(self) -> None:
        """Delete the registry records this store kept for the namespaces it emptied (a put
        refilling one then writes none, :mod:`.registry`): a namespace's name may hold a user
        id, so forgetting a user and a purge call this. A store served by another process
        keeps none."""
        if self._remote is None:
            with self._calls.call():
                self._backend.claim_for_writing()  # (as the purge does next)
                writes.unmark(self._backend)

    @contextlib.contextmanager
    def maintenance(self) -> Iterator[Maintenance]:
        """Work on the files of this embedded persistent store while it stays in use (a
        purge): claims the folder for this process (``FolderInUseError`` when another one
        writes it), and :meth:`close` waits for the block to end. See :mod:`.maintenance`."""
        if self._remote is not None:
            raise InvalidValueError(self._remote.needs_the_folder("maintenance", "purge"))
        folder = folder_of(self._client)
        if folder is None:
            raise InvalidValueError("Only an embedded persistent store has files to work on.")
        with self._calls.call():
            self._backend.claim_for_writing()
            yield Maintenance(self._backend, self._client, Path(folder))
