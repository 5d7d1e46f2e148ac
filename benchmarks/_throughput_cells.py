"""The child-process side of ``throughput.py``: one cell (backend, size) per process.

Each function takes a spec dict and returns a JSON-able result. Backends are driven through
small adapters that do the same work: batched puts, single puts, gets, searches (query,
filter, both, across all users) and namespace listing.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    DIMS,
    FILTER,
    Corpus,
    build_corpus,
    peak_rss_mb,
    rss_mb,
    stopwatch,
    timed_loop,
    user_ns,
)
from _throughput_breakdown import breakdown
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp

PUT_BATCH = 500
LIST_PAGE = 5000
MAX_HYBRID_ALL = 10_000
"""Above this size the hybrid all-users search is skipped: its first call loads every text of
the store into the in-process lexical index (minutes at 100k; the 10k figure scales linearly)."""
MAX_USER_COLLECTIONS = 300
"""The per-user-collection layout creates at most this many (each costs megabytes)."""
HOT_USERS = 20
"""Searches cycle over this many users (the first searches of each are the "cold" row)."""


def run_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Run the child job described by ``spec`` (see ``throughput.py``)."""
    kinds = {"cell": run_cell, "model": run_model}
    return kinds[spec["kind"]](spec)


def _settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


def _flat_meta(ns: tuple[str, ...], key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"ns": ".".join(ns), "_p1": ns[0], "_p2": ".".join(ns[:2]), "key": key, **value}


def _where(ns: tuple[str, ...], filt: dict[str, Any] | None) -> dict[str, Any] | None:
    clauses: list[dict[str, Any]] = []
    if len(ns) >= 2:
        clauses.append({"_p2": ".".join(ns[:2])})
    clauses += [{k: v} for k, v in (filt or {}).items()]
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


# ------------------------------------------------------------------------------ adapters


class StoreAdapter:
    """Any LangGraph ``BaseStore``; ``dense`` is a twin store in dense mode over the same data."""

    def __init__(self, store: Any, dense: Any = None, *, hybrid: bool = False) -> None:
        self.store, self.dense, self.hybrid = store, dense, hybrid

    def put_batch(self, items: list[tuple[tuple[str, ...], str, dict[str, Any]]]) -> None:
        self.store.batch([PutOp(ns, k, v) for ns, k, v in items])

    def put_one(self, ns: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        self.store.put(ns, key, value)

    def get(self, ns: tuple[str, ...], key: str) -> Any:
        return self.store.get(ns, key)

    def search(self, ns: tuple[str, ...], query: str | None, filt: Any, dense: bool) -> Any:
        store = self.dense if dense and self.dense is not None else self.store
        return store.search(ns, query=query, filter=filt, limit=10)

    def list_ns(self) -> Any:
        return self.store.list_namespaces(prefix=("users",), limit=100)


class RawChromaAdapter:
    """chromadb directly: one collection, flat metadata, the floor for our overhead."""

    hybrid = False

    def __init__(self, emb: Embeddings, collection: Any) -> None:
        self.emb, self.col = emb, collection

    def put_batch(self, items: list[tuple[tuple[str, ...], str, dict[str, Any]]]) -> None:
        texts = [v["text"] for _, _, v in items]
        self.col.upsert(
            ids=[k for _, k, _ in items],
            embeddings=self.emb.embed_documents(texts),
            documents=texts,
            metadatas=[_flat_meta(ns, k, v) for ns, k, v in items],
        )

    def put_one(self, ns: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        self.put_batch([(ns, key, value)])

    def get(self, ns: tuple[str, ...], key: str) -> Any:
        return self.col.get(ids=[key], include=["metadatas", "documents"])

    def search(self, ns: tuple[str, ...], query: str | None, filt: Any, dense: bool) -> Any:
        where = _where(ns, filt)
        if query is None:
            return self.col.get(where=where, limit=10, include=["metadatas", "documents"])
        return self.col.query(
            query_embeddings=[self.emb.embed_query(query)],
            n_results=10,
            where=where,
            include=["metadatas", "documents", "distances"],
        )

    def list_ns(self) -> Any:
        return _paged_namespaces(self.col.get)


def _paged_namespaces(get: Any) -> list[tuple[str, ...]]:
    """Every record's namespace, read in pages (one get of 100k records fails in Chroma with
    "too many SQL variables")."""
    found: set[tuple[str, ...]] = set()
    for offset in range(0, 10**7, LIST_PAGE):
        got = get(include=["metadatas"], limit=LIST_PAGE, offset=offset)
        metas = got["metadatas"] or []
        found.update(tuple(str(m["ns"]).split(".")) for m in metas)
        if len(metas) < LIST_PAGE:
            break
    return sorted(found)[:100]


class LangchainChromaAdapter(RawChromaAdapter):
    """langchain-chroma's ``Chroma`` vector store."""

    def __init__(self, emb: Embeddings, vectorstore: Any) -> None:
        self.emb, self.vs = emb, vectorstore

    def put_batch(self, items: list[tuple[tuple[str, ...], str, dict[str, Any]]]) -> None:
        self.vs.add_texts(
            [v["text"] for _, _, v in items],
            metadatas=[_flat_meta(ns, k, v) for ns, k, v in items],
            ids=[k for _, k, _ in items],
        )

    def get(self, ns: tuple[str, ...], key: str) -> Any:
        return self.vs.get(ids=[key])

    def search(self, ns: tuple[str, ...], query: str | None, filt: Any, dense: bool) -> Any:
        where = _where(ns, filt)
        if query is None:
            return self.vs.get(where=where, limit=10)
        return self.vs.similarity_search_with_score(query, k=10, filter=where)

    def list_ns(self) -> Any:
        return _paged_namespaces(self.vs.get)


def make_backend(spec: dict[str, Any], emb: Embeddings) -> tuple[Any, Any]:
    """(adapter, ChromaStore or None) for ``spec["backend"]``."""
    backend = spec["backend"]
    index: Any = {"dims": DIMS, "embed": emb, "fields": ["text"]}
    name = f"bench-{uuid.uuid4().hex[:12]}"
    work = Path(spec["workdir"]) / name
    if backend.startswith("ours-"):
        import chromadb

        from langgraph_episodic import ChromaStore

        if backend == "ours-http":
            store = ChromaStore.http("127.0.0.1", spec["port"], collection=name, index=index)
            dense = ChromaStore.http(
                "127.0.0.1", spec["port"], collection=name, index=index, search_mode="dense"
            )
            return StoreAdapter(store, dense, hybrid=True), store
        if backend == "ours-eph":
            client = chromadb.EphemeralClient(settings=_settings())
        else:
            client = chromadb.PersistentClient(path=str(work), settings=_settings())
        store = ChromaStore(client, collection=name, index=index)
        dense = ChromaStore(client, collection=name, index=index, search_mode="dense")
        return StoreAdapter(store, dense, hybrid=True), store
    if backend == "raw-chroma":
        import chromadb

        client = chromadb.EphemeralClient(settings=_settings())
        col = client.create_collection(
            name, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )
        return RawChromaAdapter(emb, col), None
    if backend == "lc-chroma":
        import chromadb
        from langchain_chroma import Chroma

        vs = Chroma(
            collection_name=name,
            embedding_function=emb,
            client=chromadb.EphemeralClient(settings=_settings()),
            collection_configuration={"hnsw": {"space": "cosine"}},
        )
        return LangchainChromaAdapter(emb, vs), None
    if backend == "inmemory":
        from langgraph.store.memory import InMemoryStore

        return StoreAdapter(InMemoryStore(index=index)), None
    if backend == "sqlite":
        from langgraph.store.sqlite import SqliteStore

        work.mkdir(parents=True)
        db: Any = sqlite3
        if not hasattr(sqlite3.Connection, "enable_load_extension"):
            try:  # this Python's sqlite3 cannot load sqlite-vec; pysqlite3 can
                import pysqlite3.dbapi2

                db = pysqlite3.dbapi2
            except ImportError as exc:
                raise RuntimeError(
                    "SqliteStore needs sqlite extensions (sqlite-vec) and this Python's sqlite3 "
                    "cannot load them: `pip install pysqlite3-binary`."
                ) from exc
        conn = db.connect(str(work / "store.db"), check_same_thread=False, isolation_level=None)
        store = SqliteStore(conn, index=index)
        store.setup()
        return StoreAdapter(store), None
    raise ValueError(f"unknown backend {backend!r}")


# ------------------------------------------------------------------------------ one cell


def run_cell(spec: dict[str, Any]) -> dict[str, Any]:
    """Load ``n`` items into one backend and time every operation."""
    from _common import CachedEmbeddings

    n, quick = int(spec["n"]), bool(spec.get("quick"))
    corpus = build_corpus(n)
    # Queries are precomputed too: a search row then times the store, not a vector's creation.
    emb = CachedEmbeddings(corpus.texts + _extra_texts(corpus) + corpus.queries)
    adapter, store = make_backend(spec, emb)
    server_cpu = _server_cpu(spec)
    base_rss = rss_mb()
    rows: dict[str, Any] = {}
    cpu0 = server_cpu() if server_cpu else 0.0
    with stopwatch() as sw:
        for start in range(0, n, PUT_BATCH):
            adapter.put_batch(corpus.items[start : start + PUT_BATCH])
    cpu = sw["cpu"] + ((server_cpu() - cpu0) if server_cpu else 0.0)
    rows["put_batch"] = {"items_per_s": n / sw["wall"], "items_per_cpu_s": n / cpu}
    growth = rss_mb() - base_rss
    reps = _reps(n, quick)
    rng = np.random.default_rng(1)
    hot = list(range(min(HOT_USERS, corpus.users())))
    queries = corpus.queries

    def loop(fn: Any, count: int) -> dict[str, float]:
        return timed_loop(fn, reps=count, max_seconds=reps["seconds"], server_cpu=server_cpu).summary()

    extra = _extra_items(corpus, hot)
    rows["put_one"] = loop(lambda i: adapter.put_one(*extra[i]), min(reps["put_one"], len(extra)))
    keys = rng.integers(0, n, size=reps["get"])
    rows["get"] = loop(lambda i: adapter.get(*corpus.items[keys[i]][:2]), reps["get"])

    def q(i: int) -> str:
        return queries[(i * 31) % len(queries)]

    def search(key: str, count: int, *, query: bool, filt: bool, dense: bool, all_: bool) -> None:
        def fn(i: int) -> Any:
            ns = ("users",) if all_ else user_ns(hot[i % len(hot)])
            return adapter.search(ns, q(i) if query else None, FILTER if filt else None, dense)

        rows[key] = loop(fn, count)

    hybrid = adapter.hybrid
    suffix = "" if hybrid else "_dense"
    if hybrid:
        search("query_cold", len(hot), query=True, filt=False, dense=False, all_=False)
    search("query" + suffix, reps["search"], query=True, filt=False, dense=False, all_=False)
    search("filter", reps["search"], query=False, filt=True, dense=False, all_=False)
    search("query_filter" + suffix, reps["search"], query=True, filt=True, dense=False, all_=False)
    if hybrid:
        search("query_dense", reps["search"], query=True, filt=False, dense=True, all_=False)
        search("query_filter_dense", reps["search"], query=True, filt=True, dense=True, all_=False)
        search("query_all_dense", reps["search"], query=True, filt=False, dense=True, all_=True)
    if not hybrid or n <= MAX_HYBRID_ALL:
        if hybrid:
            search("query_all_cold", 1, query=True, filt=False, dense=False, all_=True)
        search("query_all" + suffix, reps["search"], query=True, filt=False, dense=False, all_=True)
    peak = peak_rss_mb()
    layout = None
    if spec["backend"] == "raw-chroma" and n >= 10_000:
        layout = run_layout(adapter.col, emb, corpus, hot, quick=quick)
    rows["list_ns"] = loop(lambda i: adapter.list_ns(), reps["list"])
    result: dict[str, Any] = {
        "loadavg": os.getloadavg()[0],
        "store_version": store_version() if store is not None else None,
        "rows": rows,
        "peak_mb": peak,
        "base_mb": base_rss,
        "rss_growth_mb": growth,
        "n": n,
        "n_real_texts": corpus.n_real,
    }
    if store is not None and (spec["backend"] == "ours-eph" or not quick):
        result["breakdown"] = breakdown(store, adapter.dense, corpus, hot, quick=quick)
    if layout is not None:
        result["layout"] = layout
    return result


def store_version() -> str:
    """A short hash of the store's sources: the store changes while it is optimised, so each
    result says which version it measured."""
    import hashlib

    import langgraph_episodic.chroma as pkg

    digest = hashlib.blake2b(digest_size=4)
    for path in sorted(Path(pkg.__file__).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _reps(n: int, quick: bool) -> dict[str, Any]:
    if quick:
        return {"search": 20, "get": 50, "put_one": 10, "list": 5, "seconds": 3.0}
    big = n > 10_000
    return {
        "search": 60 if big else 100,
        "get": 200,
        "put_one": 30,
        "list": 1 if big else 10,
        "seconds": 20.0 if big else 12.0,
    }


def _extra_items(corpus: Corpus, hot: list[int]) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    """New items for the single-put row (texts not in the corpus)."""
    return [
        (user_ns(hot[i % len(hot)]), f"x{i}", {"text": t, "kind": "fact", "turn": -i})
        for i, t in enumerate(_extra_texts(corpus))
    ]


def _extra_texts(corpus: Corpus) -> list[str]:
    return [f"Extra note {i}: {corpus.queries[i % len(corpus.queries)]}" for i in range(600)]


def _server_cpu(spec: dict[str, Any]) -> Any:
    pid = spec.get("server_pid")
    if not pid:
        return None
    import psutil

    proc = psutil.Process(pid)

    def cpu() -> float:
        t = proc.cpu_times()
        return float(t.user + t.system)

    return cpu


# ------------------------------------------------------------------------------ real model


class CountingEmbeddings(Embeddings):
    """Wraps an embedder and counts ``embed_documents`` calls and texts."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.calls = 0
        self.texts = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        self.texts += len(set(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def run_model(spec: dict[str, Any]) -> dict[str, Any]:
    """The packaged model: query embedding vs torch threads (other core idle, then busy), puts
    against raw ``SentenceTransformer.encode`` of the same texts, and search latency."""
    import chromadb
    from _common import CachedEmbeddings

    from langgraph_episodic import ChromaStore, default_embeddings

    n, quick = int(spec["n"]), bool(spec.get("quick"))
    m = min(128 if quick else 1000, n)
    corpus = build_corpus(n)
    emb = default_embeddings()
    with stopwatch() as load:
        model = emb.model
        model.encode(["warm up"] * 8)
    threads = thread_latency(emb, corpus.queries, reps=10 if quick else 40,
                             batch_size=32 if quick else 64, seconds=4.0 if quick else 20.0)
    client = chromadb.EphemeralClient(settings=_settings())
    name = f"model-{uuid.uuid4().hex[:12]}"
    if n > m:
        cached = CachedEmbeddings(corpus.texts)
        pre = ChromaStore(client, collection=name, index={"dims": DIMS, "embed": cached, "fields": ["text"]})
        for s in range(0, n - m, PUT_BATCH):
            pre.batch([PutOp(*it) for it in corpus.items[s : min(n - m, s + PUT_BATCH)]])
    counting = CountingEmbeddings(emb)
    index: Any = {"dims": DIMS, "embed": counting, "fields": ["text"]}
    store = ChromaStore(client, collection=name, index=index)
    dense = ChromaStore(client, collection=name, index=index, search_mode="dense")
    new = corpus.items[n - m :]
    chunk = 64 if quick else 250
    t_raw = t_store = 0.0
    batches = 0
    for c, s in enumerate(range(0, m, chunk)):
        part = new[s : s + chunk]
        texts = [v["text"] for _, _, v in part]
        for step in ("raw", "store") if c % 2 == 0 else ("store", "raw"):
            t = time.perf_counter()
            if step == "raw":
                model.encode(texts, batch_size=64, normalize_embeddings=True,
                             convert_to_numpy=True, show_progress_bar=False)
                t_raw += time.perf_counter() - t
            else:
                store.batch([PutOp(*it) for it in part])
                t_store += time.perf_counter() - t
                batches += 1
    calls_per_batch = counting.calls / batches
    dup_texts = [f"Duplicate check {i}: {corpus.queries[i]}" for i in range(50)]
    counting.texts = 0
    store.batch([PutOp(user_ns(0), f"dup{i}", {"text": dup_texts[i % 50]}) for i in range(100)])
    hot = list(range(min(HOT_USERS, corpus.users())))
    reps, secs = (15, 8.0) if quick else (40, 20.0)
    queries = corpus.queries

    def searcher(s: Any) -> Any:
        return lambda i: s.search(user_ns(hot[i % len(hot)]), query=queries[(7 * i) % len(queries)], limit=10)

    for i in range(len(hot)):  # load every namespace's lexical index first
        searcher(store)(i)
    return {
        "n": n,
        "m": m,
        "store_version": store_version(),
        "model_load_s": load["wall"],
        "threads": threads,
        "encode_per_s": m / t_raw,
        "store_per_s": m / t_store,
        "ratio": t_raw / t_store,
        "embed_calls_per_batch": round(calls_per_batch, 2),
        "dup_texts_embedded": counting.texts,
        "dup_batch_size": 100,
        "query_embed": timed_loop(lambda i: emb.embed_query(queries[(11 * i) % len(queries)] + "?"),
                                  reps=reps, max_seconds=secs).summary(),
        "search_hybrid": timed_loop(searcher(store), reps=reps, max_seconds=secs).summary(),
        "search_dense": timed_loop(searcher(dense), reps=reps, max_seconds=secs).summary(),
    }


BUSY_LOOP = "import time\nend = time.time() + 120\nwhile time.time() < end: pass"
"""A spinning process that keeps the other core busy (it stops by itself after 2 minutes)."""


def thread_latency(
    emb: Any, queries: list[str], *, reps: int, batch_size: int = 64, seconds: float = 20.0
) -> dict[str, Any]:
    """One query embedding with 1 and 2 torch threads, the other core idle then busy; and the
    throughput of one batch of ``batch_size`` texts in each setting."""
    import subprocess
    import sys

    import torch

    default = torch.get_num_threads()
    out: dict[str, Any] = {"default_threads": default}
    for load in ("idle", "busy"):
        busy = subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) if load == "busy" else None
        try:
            for threads in (1, 2):
                torch.set_num_threads(threads)
                for i in range(3):
                    emb.embed_query(f"warm {queries[i]}")
                def one(i: int, t: int = threads, w: str = load) -> Any:
                    return emb.embed_query(f"{queries[i % len(queries)]} {t}{w}")

                s = timed_loop(one, reps=reps, max_seconds=seconds)
                summary = s.summary()
                batch = [f"{q} ({load} {threads})" for q in queries[:batch_size]]
                t = time.perf_counter()
                emb.embed_documents(batch)
                summary["batch_texts_per_s"] = len(batch) / (time.perf_counter() - t)
                out[f"{load}/{threads}"] = summary
        finally:
            if busy is not None:
                busy.terminate()
                busy.wait(timeout=10)
    torch.set_num_threads(default)
    return out


def run_layout(
    flat: Any, emb: Any, corpus: Corpus, hot: list[int], *, quick: bool
) -> dict[str, Any]:
    """Query cost by namespace layout in raw chromadb: one collection filtered by ``where``,
    one collection per user, brute force over a user's vectors (fetched, or cached)."""
    import chromadb

    n, users = len(corpus.items), corpus.users()
    secs, reps = (5.0, 30) if quick else (12.0, 100)
    queries = [emb.embed_query(q) for q in corpus.queries[:64]]

    def u(i: int) -> str:
        return f"users.u{hot[i % len(hot)]}"

    rows: dict[str, dict[str, float]] = {}

    def row(label: str, fn: Any) -> None:
        rows[label] = timed_loop(fn, reps=reps, max_seconds=secs).summary()

    def query(col: Any, i: int, where: Any = None) -> Any:
        return col.query(query_embeddings=[queries[i % 64]], n_results=10, where=where,
                         include=["distances"])

    row("one collection, no where (all users: the floor)", lambda i: query(flat, i))
    row("one collection, where user", lambda i: query(flat, i, {"_p2": u(i)}))
    row("one collection, where user AND kind",
        lambda i: query(flat, i, {"$and": [{"_p2": u(i)}, {"kind": "event"}]}))
    row("one collection, get ids where user (no vectors)",
        lambda i: flat.get(where={"_p2": u(i)}, include=[]))
    matrix: dict[str, Any] = {}

    def brute(i: int, cache: dict[str, Any] | None = None) -> Any:
        mat = cache.get(u(i)) if cache is not None else None
        if mat is None:
            got = flat.get(where={"_p2": u(i)}, include=["embeddings"])
            mat = np.asarray(got["embeddings"], dtype=np.float32)
            if cache is not None:
                cache[u(i)] = mat
        return np.argsort(-(mat @ np.asarray(queries[i % 64], dtype=np.float32)))[:10]

    row("brute force: get user's vectors + numpy", brute)
    for i in range(len(hot)):
        brute(i, matrix)
    row("brute force, user's vectors cached (numpy only)", lambda i: brute(i, matrix))
    costs: dict[str, float] = {}
    made = min(users, MAX_USER_COLLECTIONS)
    client = chromadb.EphemeralClient(settings=_settings())
    cols = {}
    r0 = rss_mb()
    by_user: dict[int, list[int]] = {}
    for j, (ns, _, _) in enumerate(corpus.items):
        by_user.setdefault(int(ns[1][1:]), []).append(j)
    with stopwatch() as sw:
        for user in range(made):
            col = client.create_collection(f"user-{user}", embedding_function=None,
                                           configuration={"hnsw": {"space": "cosine"}})
            js = by_user[user]
            col.add(ids=[f"m{j}" for j in js],
                    embeddings=emb.embed_documents([corpus.items[j][2]["text"] for j in js]),
                    metadatas=[{"kind": corpus.items[j][2]["kind"]} for j in js])
            if user in hot:
                cols[user] = col
    costs[f"collection per user: created {made} of {users}"] = made
    costs["collection per user: seconds per collection (create + 100 items)"] = sw["wall"] / made
    costs["collection per user: RSS MiB per collection"] = (rss_mb() - r0) / made
    row("collection per user, handle cached",
        lambda i: query(cols[hot[i % len(hot)]], i))
    row("collection per user, get_collection + query",
        lambda i: query(client.get_collection(f"user-{hot[i % len(hot)]}"), i))
    row("collection per user, where kind",
        lambda i: query(cols[hot[i % len(hot)]], i, {"kind": "event"}))
    return {"n": n, "rows": rows, "costs": costs}
