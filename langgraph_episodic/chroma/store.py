"""``ChromaStore``: a LangGraph ``BaseStore`` on Chroma, embedded by default, server-ready.

It implements ``batch`` and ``abatch`` only; every other method comes from ``BaseStore``. Both
run the same pure core (:mod:`.core`): ops are validated and planned first, so a bad op fails
the whole batch before anything is written; then reads run against the state before the batch
and puts are applied last, last write wins per (namespace, key).

Where it deliberately differs from ``InMemoryStore`` (each is tested):

* ``created_at`` is kept when an item is updated (``InMemoryStore`` resets it).
* Search without a query orders by ``updated_at`` descending (as ``PostgresStore``).
* Filters: dotted keys reach nested values; range operators never match a missing field or a
  value of another type (``InMemoryStore`` raises); see :mod:`.filters`.
* Negative ``limit`` / ``offset`` raise ``ValueError`` (``InMemoryStore`` slices from the end).
* TTL is supported (``supports_ttl = True``); expired items are never returned.
* ``search_mode="hybrid"`` (the default) fuses BM25 and dense rankings; its scores are not
  cosine similarities. ``search_mode="dense"`` returns cosine similarity, as ``InMemoryStore``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
)

from . import layout
from .core import (
    Fields,
    Plan,
    fixed_prefix,
    list_namespaces,
    newest_first,
    prepare,
    to_search_item,
    tokenized_fields,
)
from .filters import combine, matches, value_where
from .lexical import LexicalIndex

logger = logging.getLogger(__name__)

SearchMode = Literal["hybrid", "dense", "lexical"]
SEARCH_MODES: tuple[str, ...] = ("hybrid", "dense", "lexical")

_DEFAULT: Any = object()
_HYBRID_DEPTH = 100
"""How deep each ranking goes before fusion (at least; more for deep pages)."""


class Hit(NamedTuple):
    """A search result before it becomes a ``SearchItem``: the item, its score, id and TTL."""

    item: Item
    score: float | None
    rid: str
    ttl: float | None


def _default_index() -> IndexConfig:
    from ..embeddings import MODEL_DIMS, default_embeddings

    return {"dims": MODEL_DIMS, "embed": default_embeddings(), "fields": ["$"]}


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


class ChromaStore(BaseStore):
    """A LangGraph store on Chroma with semantic (or hybrid) search, filters and TTL.

    Args:
        client: Any chromadb client (``PersistentClient``, ``EphemeralClient``, ``HttpClient``).
            Prefer the constructors :meth:`persistent`, :meth:`ephemeral` and :meth:`http`.
        collection: Base name of the two collections the store keeps (``<name>`` for items,
            ``<name>__vec`` for vectors). 3-60 characters of ``[a-zA-Z0-9._-]``.
        index: A LangGraph ``IndexConfig`` (``dims``, ``embed``, ``fields``). Defaults to the
            packaged all-MiniLM-L6-v2 over the whole value; ``None`` turns semantic search off.
        ttl: A LangGraph ``TTLConfig`` (``default_ttl`` minutes, ``refresh_on_read``,
            ``sweep_interval_minutes`` to start a background sweeper).
        search_mode: ``"hybrid"`` (BM25 fused with dense, the default), ``"dense"`` (cosine
            similarity, like ``InMemoryStore``) or ``"lexical"`` (BM25 only).
        lexical_max_age: Seconds after which the in-process lexical index reloads a namespace
            from Chroma, to see writes made by other processes. ``None``: never (right when
            this process is the only writer). :meth:`http` sets 30 s.

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
        lexical_max_age: float | None = None,
    ) -> None:
        if search_mode not in SEARCH_MODES:
            raise ValueError(f"search_mode must be one of {SEARCH_MODES}, got {search_mode!r}.")
        self._client = client
        self.collection_name = collection
        config: IndexConfig | None = _default_index() if index is _DEFAULT else index
        self.index_config: IndexConfig | None = None
        self.embeddings: Embeddings | None = None
        self._fields: Fields | None = None
        if config is not None:
            self.index_config = IndexConfig(**config)
            self.embeddings = ensure_embeddings(config.get("embed"))
            self._fields = tokenized_fields(config.get("fields"))
        elif search_mode == "lexical":
            self._fields = tokenized_fields(None)
        self.search_mode: SearchMode = search_mode
        self.ttl_config = ttl
        self._now: Callable[[], float] = time.time
        self._lock = threading.RLock()
        self._lexical = LexicalIndex()
        self._lex_scopes: dict[tuple[str, ...], float] = {}
        self._lex_namespaces: set[tuple[str, ...]] = set()
        self.lexical_max_age = lexical_max_age
        self._items = client.get_or_create_collection(
            collection, embedding_function=None, metadata={"langgraph_episodic": "items"}
        )
        self._vectors = client.get_or_create_collection(
            f"{collection}__vec",
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={"langgraph_episodic": "vectors"},
        )
        self._max_batch = int(client.get_max_batch_size())
        self._sweeper: threading.Thread | None = None
        self._sweeper_stop = threading.Event()
        if ttl and ttl.get("sweep_interval_minutes"):
            self.start_ttl_sweeper()

    # ------------------------------------------------------------------ constructors

    @classmethod
    def persistent(cls, path: str | Path = "./.episodic", **kwargs: Any) -> ChromaStore:
        """An embedded store kept in the folder ``path`` (created if missing)."""
        import chromadb

        Path(path).mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(path=str(path), settings=_settings())
        return cls(client, **kwargs)

    @classmethod
    def ephemeral(cls, **kwargs: Any) -> ChromaStore:
        """An in-memory store. Each call gets its own collection unless ``collection`` is given
        (Chroma shares ephemeral clients within a process)."""
        import chromadb

        kwargs.setdefault("collection", f"ephemeral-{uuid.uuid4().hex[:16]}")
        return cls(chromadb.EphemeralClient(settings=_settings()), **kwargs)

    @classmethod
    def http(
        cls,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        ssl: bool = False,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> ChromaStore:
        """A store on a Chroma server (``chroma run``), shared by processes and machines."""
        import chromadb

        try:
            client = chromadb.HttpClient(
                host=host, port=port, ssl=ssl, headers=dict(headers or {}), settings=_settings()
            )
        except Exception as exc:  # chromadb raises bare Exception/ValueError for a dead server
            raise ConnectionError(
                f"Cannot reach a Chroma server at {host}:{port} ({exc}). Start one with "
                f"`chroma run --path ./chroma-data --host {host} --port {port}`."
            ) from exc
        kwargs.setdefault("lexical_max_age", 30.0)
        return cls(client, **kwargs)

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> ChromaStore:
        """A store on the Chroma server at ``url`` (``http://host:port`` or ``https://...``)."""
        from urllib.parse import urlparse

        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"Expected a URL like http://127.0.0.1:8000, got {url!r}.")
        port = parsed.port or (443 if parsed.scheme == "https" else 8000)
        return cls.http(parsed.hostname, port, ssl=parsed.scheme == "https", **kwargs)

    # ------------------------------------------------------------------ batch API

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ops in one batch (see the module docstring for the semantics)."""
        plan = prepare(ops, self._fields)
        doc_vectors, query_vectors = self._embed(plan)
        return self._execute(plan, doc_vectors, query_vectors)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async version of :meth:`batch`; Chroma calls run in a worker thread."""
        plan = prepare(ops, self._fields)
        doc_vectors, query_vectors = await self._aembed(plan)
        return await asyncio.to_thread(self._execute, plan, doc_vectors, query_vectors)

    # ------------------------------------------------------------------ embedding

    def _embed(self, plan: Plan) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
        texts, queries = self._to_embed(plan)
        if not self.embeddings:
            return {}, {}
        docs = self.embeddings.embed_documents(texts) if texts else []
        qvecs = [self.embeddings.embed_query(q) for q in queries]
        return self._pair(texts, docs), self._pair(queries, qvecs)

    async def _aembed(self, plan: Plan) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
        texts, queries = self._to_embed(plan)
        if not self.embeddings:
            return {}, {}
        docs = await self.embeddings.aembed_documents(texts) if texts else []
        qvecs = list(await asyncio.gather(*(self.embeddings.aembed_query(q) for q in queries)))
        return self._pair(texts, docs), self._pair(queries, qvecs)

    def _to_embed(self, plan: Plan) -> tuple[list[str], list[str]]:
        queries = plan.queries_to_embed() if self.search_mode != "lexical" else []
        return plan.texts_to_embed(), queries

    def _pair(self, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> dict[str, Any]:
        if len(vectors) != len(texts):
            raise ValueError(
                f"The embedder returned {len(vectors)} vectors for {len(texts)} texts."
            )
        dims = self.index_config.get("dims") if self.index_config is not None else None
        out = {}
        for text, vec in zip(texts, vectors, strict=True):
            vec = [float(x) for x in vec]
            if dims and len(vec) != dims:
                raise ValueError(
                    f"The embedder returned {len(vec)}-d vectors but index['dims'] is {dims}. "
                    "Fix index['dims'] to match the model."
                )
            out[text] = vec
        return out

    # ------------------------------------------------------------------ execution

    def _execute(
        self,
        plan: Plan,
        doc_vectors: Mapping[str, list[float]],
        query_vectors: Mapping[str, list[float]],
    ) -> list[Result]:
        results: list[Result] = [None] * plan.n_ops
        now = self._now()
        refresh: dict[str, float] = {}
        if plan.gets:
            self._run_gets(plan.gets, results, now, refresh)
        for i, op in plan.searches:
            results[i] = self._search(op, query_vectors.get(op.query or ""), now, refresh)
        if plan.listings:
            namespaces = self._live_namespaces(plan.listings, now)
            for i, lop in plan.listings:
                results[i] = list_namespaces(namespaces, lop)
        if refresh:
            self._refresh_ttl(refresh)
        if plan.puts:
            self._apply_puts(plan, doc_vectors, now)
        return results

    def _fetch(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Item metadata by id (missing ids are absent)."""
        out: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), self._max_batch):
            got = self._items.get(
                ids=unique[start : start + self._max_batch], include=["metadatas"]
            )
            for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
                out[rid] = dict(meta)
        return out

    def _alive(self, meta: Mapping[str, Any] | None, now: float) -> bool:
        return meta is not None and float(meta.get("_expires", layout.NO_EXPIRY)) >= now

    def _note_refresh(
        self, meta: Mapping[str, Any], rid: str, want: bool, now: float, refresh: dict[str, float]
    ) -> None:
        ttl = layout.ttl_of(meta)
        if want and ttl is not None:
            refresh[rid] = now + ttl * 60.0

    def _run_gets(
        self,
        gets: list[tuple[int, GetOp]],
        results: list[Result],
        now: float,
        refresh: dict[str, float],
    ) -> None:
        ids = [layout.item_id(op.namespace, op.key) for _, op in gets]
        metas = self._fetch(ids)
        for (i, op), rid in zip(gets, ids, strict=True):
            meta = metas.get(rid)
            if meta is None or not self._alive(meta, now):
                continue
            results[i] = layout.item_from_metadata(meta)
            self._note_refresh(meta, rid, op.refresh_ttl, now, refresh)

    def _refresh_ttl(self, refresh: dict[str, float]) -> None:
        ids = list(refresh)
        with self._lock:
            for start in range(0, len(ids), self._max_batch):
                chunk = ids[start : start + self._max_batch]
                self._items.update(ids=chunk, metadatas=[{"_expires": refresh[r]} for r in chunk])

    # ------------------------------------------------------------------ search

    def _search(
        self,
        op: SearchOp,
        qvec: list[float] | None,
        now: float,
        refresh: dict[str, float],
    ) -> list[SearchItem]:
        mode = self.search_mode
        lexical = bool(op.query) and mode in ("hybrid", "lexical") and self._fields is not None
        dense = bool(op.query) and mode in ("hybrid", "dense") and qvec is not None
        if lexical and dense:
            hits = self._hybrid(op, qvec or [], now)
        elif dense:
            hits = self._dense(op, qvec or [], now)
        elif lexical:
            hits = self._lexical_search(op, now)
        else:
            hits = self._scan(op, now)[op.offset : op.offset + op.limit]
        page = []
        for hit in hits:
            page.append(to_search_item(hit.item, hit.score))
            if op.refresh_ttl and hit.ttl is not None:
                refresh[hit.rid] = now + hit.ttl * 60.0
        return page

    def _items_where(self, op: SearchOp, now: float) -> dict[str, Any] | None:
        return combine(
            layout.prefix_where(op.namespace_prefix),
            value_where(op.filter),
            {"_expires": {"$gte": now}},
        )

    def _scan(self, op: SearchOp, now: float, *, unscored_only: bool = False) -> list[Hit]:
        """All live items under the prefix matching the filter, newest first."""
        where = self._items_where(op, now)
        if unscored_only:
            where = combine(where, {"_nvec": 0})
        got = self._items.get(where=where, include=["metadatas"])
        hits = []
        for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
            item = layout.item_from_metadata(meta)
            if matches(item.value, op.filter):
                hits.append(Hit(item, None, rid, layout.ttl_of(meta)))
        order = {id(it): n for n, it in enumerate(newest_first(h.item for h in hits))}
        return sorted(hits, key=lambda h: order[id(h.item)])

    def _resolve(
        self, ranked: Sequence[tuple[str, float]], op: SearchOp, now: float, need: int
    ) -> list[Hit]:
        """Live items matching the filter, in rank order, until ``need`` are found.

        Candidates are fetched in chunks, so a page of 10 reads about 20 records, not the whole
        candidate list; a selective filter or expired items make it read further.
        """
        out: list[Hit] = []
        chunk = max(2 * need, 20)
        for start in range(0, len(ranked), chunk):
            part = ranked[start : start + chunk]
            metas = self._fetch([rid for rid, _ in part])
            for rid, score in part:
                meta = metas.get(rid)
                if meta is None or not self._alive(meta, now):
                    continue
                item = layout.item_from_metadata(meta)
                if matches(item.value, op.filter):
                    out.append(Hit(item, score, rid, layout.ttl_of(meta)))
            if len(out) >= need:
                break
            chunk *= 2
        return out

    def _dense_ranking(
        self, op: SearchOp, qvec: list[float], depth: int
    ) -> tuple[list[tuple[str, float]], bool]:
        """Item ids by best cosine similarity, and whether the ranking may go deeper."""
        where = combine(layout.prefix_where(op.namespace_prefix), value_where(op.filter))
        got = self._vectors.query(
            query_embeddings=[qvec], n_results=depth, where=where, include=["metadatas", "distances"]
        )
        best: dict[str, float] = {}
        metas = got["metadatas"][0] if got["metadatas"] else []
        dists = got["distances"][0] if got["distances"] else []
        for meta, dist in zip(metas, dists, strict=True):
            rid = str(meta["_item"])
            score = 1.0 - float(dist)
            if rid not in best or score > best[rid]:
                best[rid] = score
        ranked = sorted(best.items(), key=lambda kv: -kv[1])
        return ranked, len(metas) >= depth

    def _dense(self, op: SearchOp, qvec: list[float], now: float) -> list[Hit]:
        need = op.offset + op.limit
        depth = max(2 * need + 10, 20)
        while True:
            ranked, more = self._dense_ranking(op, qvec, depth)
            kept = self._resolve(ranked, op, now, need)
            if len(kept) >= need or not more:
                break
            depth *= 4
        page = kept[op.offset : need]
        if len(page) < op.limit:
            # As InMemoryStore: fill a short page with items that have no vectors.
            page.extend(self._scan(op, now, unscored_only=True)[: op.limit - len(page)])
        return page

    # ------------------------------------------------------------------ lexical + hybrid

    def _lexical_namespaces(self, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        """Namespaces under ``prefix`` in the lexical index, loading them from Chroma if needed."""
        with self._lock:
            now = time.monotonic()
            covered = any(
                prefix[: len(scope)] == scope
                and (self.lexical_max_age is None or now - loaded < self.lexical_max_age)
                for scope, loaded in self._lex_scopes.items()
            )
            if not covered:
                self._load_lexical(prefix)
                self._lex_scopes[prefix] = now
            n = len(prefix)
            return [ns for ns in self._lex_namespaces if ns[:n] == prefix]

    def _load_lexical(self, prefix: tuple[str, ...]) -> None:
        n = len(prefix)
        for ns in [ns for ns in self._lex_namespaces if ns[:n] == prefix]:
            self._lexical.drop_namespace(ns)
            self._lex_namespaces.discard(ns)
        got = self._vectors.get(
            where=layout.prefix_where(prefix), include=["metadatas", "documents"]
        )
        texts: dict[str, tuple[tuple[str, ...], list[tuple[str, str]]]] = {}
        for meta, doc in zip(got["metadatas"] or [], got["documents"] or [], strict=True):
            rid = str(meta["_item"])
            ns = layout.ns_from_str(str(meta["_ns"]))
            texts.setdefault(rid, (ns, []))[1].append((str(meta.get("_path", "")), doc or ""))
        docs = []
        for rid, (ns, parts) in texts.items():
            docs.append((ns, rid, "\n".join(t for _, t in sorted(parts))))
            self._lex_namespaces.add(ns)
        self._lexical.upsert_many(docs)

    def _lexical_ranking(self, op: SearchOp, depth: int) -> list[tuple[str, float]]:
        namespaces = self._lexical_namespaces(op.namespace_prefix)
        with self._lock:
            return self._lexical.search(op.query or "", namespaces, depth)

    def _lexical_search(self, op: SearchOp, now: float) -> list[Hit]:
        need = op.offset + op.limit
        depth = max(2 * need + 10, _HYBRID_DEPTH)
        while True:
            ranked = self._lexical_ranking(op, depth)
            kept = self._resolve(ranked, op, now, need)
            if len(kept) >= need or len(ranked) < depth:
                break
            depth *= 4
        return kept[op.offset : need]

    def _hybrid(self, op: SearchOp, qvec: list[float], now: float) -> list[Hit]:
        from .fusion import fuse

        need = op.offset + op.limit
        depth = max(2 * need + 10, _HYBRID_DEPTH)
        while True:
            dense, more_dense = self._dense_ranking(op, qvec, depth)
            lexical = self._lexical_ranking(op, depth)
            fused = fuse(dense, lexical, limit=2 * depth)
            kept = self._resolve(fused, op, now, need)
            if len(kept) >= need or (not more_dense and len(lexical) < depth):
                break
            depth *= 4
        return kept[op.offset : need]

    # ------------------------------------------------------------------ namespaces

    def _live_namespaces(
        self, listings: list[tuple[int, ListNamespacesOp]], now: float
    ) -> set[tuple[str, ...]]:
        prefixes = [fixed_prefix(op.match_conditions) for _, op in listings]
        common = prefixes[0] if len(set(prefixes)) == 1 else ()
        where = combine(layout.prefix_where(common), {"_expires": {"$gte": now}})
        got = self._items.get(where=where, include=["metadatas"])
        return {layout.ns_from_str(str(m["_ns"])) for m in got["metadatas"] or []}

    # ------------------------------------------------------------------ writes

    def _apply_puts(
        self, plan: Plan, doc_vectors: Mapping[str, list[float]], now: float
    ) -> None:
        puts = list(plan.puts.values())
        ids = [layout.item_id(p.op.namespace, p.op.key) for p in puts]
        with self._lock:
            old = self._fetch(ids)
            vec_ids: list[str] = []
            vec_embs: list[list[float]] = []
            vec_metas: list[dict[str, Any]] = []
            vec_docs: list[str] = []
            stale_vecs: list[str] = []
            item_ids: list[str] = []
            item_metas: list[dict[str, Any]] = []
            deleted: list[str] = []
            for p, rid in zip(puts, ids, strict=True):
                op, prev = p.op, old.get(rid)
                n_old = int(prev.get("_nvec", 0)) if prev else 0
                if op.value is None:
                    if prev is not None:
                        deleted.append(rid)
                        stale_vecs.extend(layout.vector_id(rid, j) for j in range(n_old))
                    continue
                stale_keys = {k: v for k, v in (prev or {}).items() if k.startswith(("v.", "_p"))}
                for j, (path, text) in enumerate(p.texts):
                    meta = layout.vector_metadata(op.namespace, op.key, op.value, iid=rid)
                    meta["_path"] = path
                    vec_ids.append(layout.vector_id(rid, j))
                    vec_embs.append(doc_vectors[text])
                    vec_metas.append(layout.clear_stale(meta, stale_keys))
                    vec_docs.append(text)
                stale_vecs.extend(layout.vector_id(rid, j) for j in range(len(p.texts), n_old))
                created = (
                    float(prev["_created"]) if prev is not None and self._alive(prev, now) else now
                )
                ttl = op.ttl
                meta = layout.item_metadata(
                    op.namespace,
                    op.key,
                    op.value,
                    created_at=created,
                    updated_at=now,
                    expires_at=layout.NO_EXPIRY if ttl is None else now + float(ttl) * 60.0,
                    ttl=ttl,
                    n_vectors=len(p.texts),
                )
                item_ids.append(rid)
                item_metas.append(layout.clear_stale(meta, prev))
            self._write(vec_ids, vec_embs, vec_metas, vec_docs, stale_vecs, item_ids, item_metas)
            if deleted:
                self._chunked(self._items.delete, deleted)
            self._update_lexical(puts, ids)

    def _write(
        self,
        vec_ids: list[str],
        vec_embs: list[list[float]],
        vec_metas: list[dict[str, Any]],
        vec_docs: list[str],
        stale_vecs: list[str],
        item_ids: list[str],
        item_metas: list[dict[str, Any]],
    ) -> None:
        step = self._max_batch
        for s in range(0, len(vec_ids), step):
            self._vectors.upsert(
                ids=vec_ids[s : s + step],
                embeddings=vec_embs[s : s + step],
                metadatas=vec_metas[s : s + step],
                documents=vec_docs[s : s + step],
            )
        if stale_vecs:
            self._chunked(self._vectors.delete, stale_vecs)
        for s in range(0, len(item_ids), step):
            chunk = item_ids[s : s + step]
            self._items.upsert(
                ids=chunk,
                embeddings=[layout.PLACEHOLDER_EMBEDDING] * len(chunk),
                metadatas=item_metas[s : s + step],
            )

    def _chunked(self, fn: Callable[..., Any], ids: list[str]) -> None:
        for s in range(0, len(ids), self._max_batch):
            fn(ids=ids[s : s + self._max_batch])

    def _update_lexical(self, puts: list[Any], ids: list[str]) -> None:
        for p, rid in zip(puts, ids, strict=True):
            ns = p.op.namespace
            if not any(ns[: len(scope)] == scope for scope in self._lex_scopes):
                continue
            if p.op.value is None or not p.texts:
                self._lexical.remove(ns, rid)
            else:
                self._lexical.upsert(ns, rid, "\n".join(t for _, t in sorted(p.texts)))
                self._lex_namespaces.add(ns)

    # ------------------------------------------------------------------ TTL

    def sweep_ttl(self) -> int:
        """Delete expired items (and their vectors and lexical entries); return how many."""
        now = self._now()
        with self._lock:
            got = self._items.get(where={"_expires": {"$lt": now}}, include=["metadatas"])
            ids = list(got["ids"])
            if not ids:
                return 0
            stale = [
                layout.vector_id(rid, j)
                for rid, meta in zip(ids, got["metadatas"] or [], strict=True)
                for j in range(int(meta.get("_nvec", 0)))
            ]
            if stale:
                self._chunked(self._vectors.delete, stale)
            self._chunked(self._items.delete, ids)
            for rid, meta in zip(ids, got["metadatas"] or [], strict=True):
                self._lexical.remove(layout.ns_from_str(str(meta["_ns"])), rid)
        logger.debug("swept %d expired items", len(ids))
        return len(ids)

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

    def close(self) -> None:
        """Stop the sweeper. The Chroma client itself needs no closing."""
        self.stop_ttl_sweeper(timeout=5)

    def __enter__(self) -> ChromaStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
