"""First search in one large namespace against raw chromadb reading that namespace.

A shared knowledge namespace or a long-lived agent puts every item into one namespace. The
store's first search there reads the namespace's vector records from Chroma (texts, field
paths, and the vectors when they fit the cache) and builds its keyword index; later searches
use what it keeps. This prints, per size, the first search (hybrid, the default, and lexical)
in a fresh process (after a search in another, one-item namespace) against raw chromadb reading the same records of the same collection in
pages of ``get_max_batch_size()``: by offset (``limit``/``offset``, the obvious loop) and by
ids (the ids of the namespace first, then the records by id, as the store reads). Those first
searches find nothing kept by an earlier process (the cell deletes the store's kept files); the
last column is the first hybrid search of a process opening the store after another process
searched the namespace and closed, which loads what that one kept beside the store
(``langgraph_episodic.chroma.persisted``).

Items: synthetic sentences of 6-14 words drawn from a 20,000-word vocabulary (Zipf-like),
deterministic per index; vectors: a seeded random unit vector of ``--dims`` dimensions per
item (no model), so the build is fast and the store's own cost is what is measured. The
store lives in a temporary folder on ``/dev/shm`` when there is one (else the system's temp
folder), built once per size; each measurement runs in its own child process (the cells
alternate, the table shows medians). Each child collects garbage (``gc.collect()``) before
its timed part: the imports leave the collector's first full pass over every object they made
(50-100 ms here) due, and it would fall in whichever call comes next, the store's warm-up having
brought it closer than the raw read's child. Later full passes, which the store's own objects
bring on at 10k items and beyond, are counted. Usage::

    python benchmarks/large_namespace.py                       # 1k, 10k, 100k, 3 runs each
    python benchmarks/large_namespace.py --sizes 1000 10000 --runs 5
    python benchmarks/large_namespace.py --sizes 100000 --runs 3 --no-offset --keep /dev/shm/kept
    python benchmarks/large_namespace.py --sizes 1000000 --runs 1 --no-offset
    python benchmarks/large_namespace.py --beyond-cache   # and searches beyond the cache
    python benchmarks/large_namespace.py --users 1000 --sizes 60000 250000 --dims 64
    python benchmarks/large_namespace.py --sizes 60000 250000 --dims 64 --runs 1 \
        --write-search 40 --no-offset    # and one put then one search, 40 times
    python benchmarks/large_namespace.py --sizes 1000000 --runs 1 --no-offset --queries 50

With ``--users N`` the items go to ``N`` user namespaces (``("users", "u<j>")``, item ``i`` to
user ``i % N``) and each child times every first search of 50 users after opening the store
(after one search in another user's namespace), printing p50/p95 per store size: a user's
first search should cost what that user holds, not what the store holds.

With ``--queries N`` three more cells time the searches after the first: a fresh store (hybrid,
then dense) searches the namespace once, then with ``N`` different queries of 2-4 words drawn
as the items' words are; raw chromadb ``query``s the vector records with the namespace's
``where`` for the same query vectors. A fourth table shows their p50/p95, the share of the
exact top 10 by cosine (over every item's vector) that the dense searches found, and each
cell's peak resident memory.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import peak_rss_mb
from _locomo_data import format_table

NS = ("shared", "knowledge")
WARM = ("shared", "warm-up")
"""A namespace of one item, searched first in each child, so the process's one-time costs
(imports, analyzers) are not counted as the large namespace's."""
COLLECTION = "large"
VOCABULARY = 20_000
QUERIES = ("w17 w230 w4410", "w3 w1200", "w58 w9 w777 w15000")


def text_of(i: int) -> str:
    """Item ``i``'s text: 6-14 Zipf-distributed words of the vocabulary, deterministic."""
    rng = np.random.default_rng(i)
    words = np.minimum(rng.zipf(1.3, size=6 + i % 9), VOCABULARY) - 1
    return " ".join(f"w{w}" for w in words)


class IndexVectors(Embeddings):
    """A seeded random unit vector per item, looked up by its text's item index (``#<i>``
    ends every stored text); the query's vector is seeded by its text."""

    def __init__(self, dims: int) -> None:
        self.dims = dims

    def _unit(self, seed: int) -> list[float]:
        v = np.random.default_rng(seed).standard_normal(self.dims)
        return list(v / np.linalg.norm(v))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._unit(int(t.rsplit("#", 1)[1])) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._unit(10**9 + sum(map(ord, text)))


def _store(path: Path, dims: int, **options: Any) -> Any:
    from langgraph_episodic import ChromaStore

    index = {"dims": dims, "embed": IndexVectors(dims), "fields": ["text"]}
    return ChromaStore.persistent(path, collection=COLLECTION, index=index, **options)


def user_ns(j: int) -> tuple[str, ...]:
    return ("users", f"u{j:05d}")


def build(path: Path, size: int, dims: int, users: int = 0, per_user: int = 0) -> float:
    """Put ``size`` items into ``NS`` of a new store at ``path`` (or over ``users`` user
    namespaces: all of them, or ``per_user`` each and the rest into ``NS``); the seconds it
    took."""
    from langgraph.store.base import PutOp

    store = _store(path, dims)
    start = time.perf_counter()
    batch = 5_000
    for first in range(0, size, batch):
        ops = [
            PutOp(
                user_ns(i % users) if users and i < (per_user * users or size) else NS,
                f"k{i:07d}",
                {"text": f"{text_of(i)} #{i}", "n": i},
            )
            for i in range(first, min(size, first + batch))
        ]
        store.batch(ops)
    took = time.perf_counter() - start
    store.put(WARM, "only", {"text": f"{text_of(0)} #0", "n": 0})
    store.close()
    return took


KEPT = "langgraph-episodic-index.*"
"""The files where a store keeps what first searches built (deleted before a cell that times a
first search built from Chroma)."""


def _first_search(path: Path, dims: int, mode: str) -> tuple[Any, int, float]:
    """A fresh store, one search in ``WARM``, then its first search in ``NS``: (the store,
    its hits, seconds). Nothing kept by an earlier process: the search reads the namespace
    from Chroma."""
    for kept in path.glob(KEPT):
        kept.unlink()
    store = _store(path, dims, search_mode=mode)
    store.search(WARM, query=QUERIES[2], limit=10)
    gc.collect()
    start = time.perf_counter()
    found = store.search(NS, query=QUERIES[0], limit=10)
    return store, len(found), time.perf_counter() - start


def cell_store(path: Path, dims: int, mode: str, rounds: int = 0) -> dict[str, Any]:
    """A fresh store's first search (then a second one) in ``NS``, two puts, and ``rounds``
    of one put then one search."""
    store, found, first = _first_search(path, dims, mode)
    start = time.perf_counter()
    store.search(NS, query=QUERIES[1], limit=10)
    second = time.perf_counter() - start
    puts = []  # the first write after the first search unpacks the keyword index (once)
    for n in range(2):
        start = time.perf_counter()
        store.put(NS, f"probe{n}", {"text": f"{text_of(n)} probe #{n}", "n": -1})
        puts.append(time.perf_counter() - start)
    cycles = []  # (put, search) of a write then a search
    for n in range(rounds):
        start = time.perf_counter()
        store.put(NS, f"cycle{n}", {"text": f"{text_of(n + 7)} cycle #{n}", "n": -1})
        between = time.perf_counter()
        store.search(NS, query=QUERIES[n % len(QUERIES)], limit=10)
        cycles.append((between - start, time.perf_counter() - between))
    for n in range(2):
        store.delete(NS, f"probe{n}")  # the namespace as built, for the next cells
    for n in range(rounds):
        store.delete(NS, f"cycle{n}")
    store.close()
    return {"seconds": first, "second": second, "found": found, "puts": puts, "cycles": cycles}


QUERY_SEED = 7
"""Seeds the words of :func:`distinct_queries`."""


def distinct_queries(n: int, dims: int) -> dict[str, list[float]]:
    """``n`` queries of 2-4 Zipf-distributed words (drawn as :func:`text_of` draws them),
    deterministic, each to the vector the store embeds it with. The vectors differ too:
    :class:`IndexVectors` seeds a query's by the sum of its characters, which about 950
    values take here."""
    embed = IndexVectors(dims)
    rng = np.random.default_rng(QUERY_SEED)
    found: dict[tuple[float, ...], str] = {}
    while len(found) < n:
        words = np.minimum(rng.zipf(1.3, size=rng.integers(2, 5)), VOCABULARY) - 1
        text = " ".join(f"w{w}" for w in words)
        found.setdefault(tuple(embed.embed_query(text)), text)
    return {text: list(vector) for vector, text in found.items()}


def exact_top10(size: int, dims: int, queries: list[list[float]]) -> list[set[int]]:
    """The 10 items of ``NS`` nearest each query vector by cosine, over every item's vector
    (unit vectors, so cosine is the dot product)."""
    embed = IndexVectors(dims)
    items = np.empty((size, dims))
    for first in range(0, size, 10_000):
        last = min(size, first + 10_000)
        items[first:last] = embed.embed_documents([f"#{i}" for i in range(first, last)])
    return [set(np.argpartition(items @ q, -10)[-10:].tolist()) for q in queries]


def cell_queries(path: Path, dims: int, mode: str, n: int, size: int) -> dict[str, Any]:
    """A fresh store's first search in ``NS``, then one search with each of ``n``
    :func:`distinct_queries`, and the process's peak resident memory; in dense mode also the
    mean share of the exact top 10 by cosine that each search found (computed after the peak
    is read)."""
    store, found, first = _first_search(path, dims, mode)
    queries = distinct_queries(n, dims)
    took, keys = [], []
    for query in queries:
        start = time.perf_counter()
        hits = store.search(NS, query=query, limit=10)
        took.append(time.perf_counter() - start)
        keys.append({int(hit.key[1:]) for hit in hits})  # "k0001234" is item 1234
    store.close()
    result = {"seconds": first, "found": found, "took": took, "peak": peak_rss_mb()}
    if mode == "dense":
        exact = exact_top10(size, dims, list(queries.values()))
        shares = [len(mine & best) / 10 for mine, best in zip(keys, exact, strict=True)]
        result["agreement"] = statistics.mean(shares)
    return result


def cell_restart(path: Path, dims: int, mode: str, prime: bool) -> dict[str, Any]:
    """The first search in ``NS`` of a process opening the store after another process
    searched there and closed (``prime``: be that other process, untimed)."""
    store = _store(path, dims, search_mode=mode)
    store.search(WARM, query=QUERIES[2], limit=10)
    if prime:
        store.search(NS, query=QUERIES[1], limit=10)
        store.close()
        return {"seconds": 0.0}
    gc.collect()
    start = time.perf_counter()
    found = store.search(NS, query=QUERIES[0], limit=10)
    took = time.perf_counter() - start
    store.close()
    return {"seconds": took, "found": len(found)}


def cell_beyond(path: Path, dims: int, mode: str, how: str) -> dict[str, Any]:
    """Searches in ``NS`` after its first, with a vector cache of 1,000 vectors (the namespace
    is beyond it): Chroma's index asked without a ``where`` (``how="unfiltered"``, the store's
    way) or always with the namespace's ``where`` (``"filtered"``)."""
    from langgraph_episodic.chroma import nearest

    if how == "filtered":
        nearest.unfiltered_size = lambda depth, held, total: None
    store = _store(path, dims, search_mode=mode, vector_cache_size=1_000)
    store.search(WARM, query=QUERIES[2], limit=10)
    store.search(NS, query=QUERIES[2], limit=10)
    took = []
    for query in (*QUERIES, *QUERIES):
        start = time.perf_counter()
        store.search(NS, query=query, limit=10)
        took.append(time.perf_counter() - start)
    store.close()
    return {"seconds": statistics.median(took)}


USERS_SEARCHED = 50
"""Users whose first search a child times."""


def cell_users(path: Path, dims: int, mode: str, users: int, run: int) -> dict[str, Any]:
    """A fresh store's first search in each of :data:`USERS_SEARCHED` users' namespaces
    (spread over the users, shifted by ``run``), after one search in another user's."""
    store = _store(path, dims, search_mode=mode)
    store.search(user_ns(users - 1), query=QUERIES[2], limit=10)
    gc.collect()
    took = []
    step = max(1, (users - 1) // USERS_SEARCHED)
    for n in range(USERS_SEARCHED):
        ns = user_ns((n * step + run) % (users - 1))
        start = time.perf_counter()
        store.search(ns, query=QUERIES[n % len(QUERIES)], limit=10)
        took.append(time.perf_counter() - start)
    store.close()
    return {"took": took}


def _raw(path: Path) -> tuple[Any, Any]:
    """Raw chromadb's client on the store's folder and the collection of its vector records."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(path), settings=Settings(anonymized_telemetry=False)
    )
    return client, client.get_collection(f"{COLLECTION}__vec")


def cell_users_raw(path: Path, users: int, run: int) -> dict[str, Any]:
    """Raw chromadb reading the same users' vector records with a ``where`` on the namespace."""
    from langgraph_episodic.chroma import record_format

    _, vectors = _raw(path)
    include: Any = ["documents", "metadatas", "embeddings"]
    where: Any = {"_ns": record_format.ns_str(user_ns(users - 1))}
    vectors.get(where=where, include=include)
    gc.collect()
    took = []
    step = max(1, (users - 1) // USERS_SEARCHED)
    for n in range(USERS_SEARCHED):
        where = {"_ns": record_format.ns_str(user_ns((n * step + run) % (users - 1)))}
        start = time.perf_counter()
        vectors.get(where=where, include=include)
        took.append(time.perf_counter() - start)
    return {"took": took}


def cell_raw(path: Path, how: str) -> dict[str, Any]:
    """Raw chromadb reading the namespace's vector records (texts, metadata, vectors)."""
    from langgraph_episodic.chroma import record_format

    client, vectors = _raw(path)
    page = int(client.get_max_batch_size())
    where: Any = {"_ns": record_format.ns_str(NS)}
    include: Any = ["documents", "metadatas", "embeddings"]
    gc.collect()
    start = time.perf_counter()
    records = 0
    if how == "offset":
        while True:
            got = vectors.get(where=where, include=include, limit=page, offset=records)
            records += len(got["ids"])
            if len(got["ids"]) < page:
                break
    else:
        ids = vectors.get(where=where, include=[])["ids"]
        for first in range(0, len(ids), page):
            records += len(vectors.get(ids=ids[first : first + page], include=include)["ids"])
    return {"seconds": time.perf_counter() - start, "records": records}


def cell_queries_raw(path: Path, dims: int, n: int) -> dict[str, Any]:
    """Raw chromadb's ``query`` of the vector records with the namespace's ``where`` for the
    vectors of the same :func:`distinct_queries`, after one such query (as the store's first
    search; its time is not in the table), and the process's peak resident memory."""
    from langgraph_episodic.chroma import record_format

    _, vectors = _raw(path)
    where: Any = {"_ns": record_format.ns_str(NS)}
    queries = [IndexVectors(dims).embed_query(QUERIES[0]), *distinct_queries(n, dims).values()]
    gc.collect()
    took = []
    for query in queries:
        start = time.perf_counter()
        vectors.query(query_embeddings=[query], n_results=10, where=where)
        took.append(time.perf_counter() - start)
    return {"seconds": took[0], "took": took[1:], "peak": peak_rss_mb()}


def _child(args: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--cell", *args], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"cell {args} failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--runs", type=int, default=3, help="child processes per cell")
    parser.add_argument("--dims", type=int, default=16)
    parser.add_argument("--no-offset", action="store_true", help="skip raw reads by offset")
    parser.add_argument(
        "--beyond-cache",
        action="store_true",
        help="also time searches after the first with a 1,000-vector cache, unfiltered and "
        "filtered queries of Chroma's index (a second table)",
    )
    parser.add_argument(
        "--users",
        type=int,
        default=0,
        help="spread the items over this many user namespaces "
        "and time each user's first search (a table of p50/p95)",
    )
    parser.add_argument(
        "--per-user",
        type=int,
        default=0,
        help="with --users: items per user, the rest of "
        "--sizes in one shared namespace (default: every item to a user)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="build each store in this folder once and reuse it on later runs (build 0 s)",
    )
    parser.add_argument(
        "--write-search",
        type=int,
        default=0,
        metavar="N",
        help="also time N rounds of one "
        "put then one search in the namespace, after the first search and two puts (hybrid "
        "children; p50/p95 in a third table)",
    )
    parser.add_argument(
        "--queries",
        type=int,
        default=0,
        metavar="N",
        help="also time N searches with N different queries after the first search, hybrid and "
        "dense, and raw chromadb's filtered query (p50/p95, dense against exact cosine and each "
        "child's peak memory in a fourth table; N up to 500)",
    )
    parser.add_argument("--cell", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.queries > 500:
        parser.error("--queries: at most 500 (the queries' vectors take about 950 values)")
    if args.cell:
        kind, path, *rest = args.cell
        if kind == "users":
            result = cell_users(Path(path), int(rest[0]), rest[1], int(rest[2]), int(rest[3]))
        elif kind == "users-raw":
            result = cell_users_raw(Path(path), int(rest[0]), int(rest[1]))
        elif kind == "queries":
            result = cell_queries(Path(path), int(rest[0]), rest[1], int(rest[2]), int(rest[3]))
        elif kind == "queries-raw":
            result = cell_queries_raw(Path(path), int(rest[0]), int(rest[1]))
        elif kind == "raw":
            result = cell_raw(Path(path), rest[0])
        elif kind in ("restart", "prime"):
            result = cell_restart(Path(path), int(rest[0]), rest[1], kind == "prime")
        elif kind == "beyond":
            result = cell_beyond(Path(path), int(rest[0]), rest[1], rest[2])
        else:
            result = cell_store(Path(path), int(rest[0]), rest[1], int(rest[2]))
        print(json.dumps(result))
        return
    root = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    if args.users:
        users_table(root, args)
        return
    rows = []
    beyond_rows: list[list[str]] = []
    cycle_rows: list[list[str]] = []
    query_rows: list[list[str]] = []
    for size in args.sizes:
        kept = args.keep / f"one-{size}-{args.dims}d" if args.keep else None
        folder = kept or Path(tempfile.mkdtemp(prefix="large-ns-", dir=root))
        try:
            built = 0.0
            if not (folder / "db").exists():
                built = build(folder / "db", size, args.dims)
            print(f"{size:,} items built in {built:.1f} s", file=sys.stderr, flush=True)
            db, dims = str(folder / "db"), str(args.dims)
            cells: dict[str, list[str]] = {
                "hybrid": ["store", db, dims, "hybrid", str(args.write_search)],
                "lexical": ["store", db, dims, "lexical", "0"],
                "raw ids": ["raw", db, "ids"],
                "restart": ["restart", db, dims, "hybrid"],
            }
            if not args.no_offset:
                cells["raw offset"] = ["raw", db, "offset"]
            if args.beyond_cache:
                for mode in ("hybrid", "dense"):
                    for how in ("unfiltered", "filtered"):
                        cells[f"beyond {mode} {how}"] = ["beyond", db, dims, mode, how]
            if args.queries:
                for mode in ("hybrid", "dense"):
                    cells[f"queries {mode}"] = ["queries", db, dims, mode, str(args.queries),
                                                str(size)]
                cells["queries raw"] = ["queries-raw", db, dims, str(args.queries)]
            times: dict[str, list[float]] = {name: [] for name in cells}
            second: list[float] = []
            puts: list[list[float]] = []
            cycles: list[tuple[float, float]] = []
            queried: dict[str, list[dict[str, Any]]] = {
                name: [] for name in cells if name.startswith("queries")
            }
            for _ in range(args.runs):
                for name, cell in cells.items():
                    if name == "restart":  # another process searches there first, and closes
                        _child(["prime", *cell[1:]])
                    got = _child(cell)
                    if got.get("records", size) != size:
                        raise RuntimeError(f"{name} read {got['records']} of {size} records")
                    times[name].append(got["seconds"])
                    if name == "hybrid":
                        second.append(got["second"])
                        puts.append(got["puts"])
                        cycles.extend(got["cycles"])
                    if name in queried:
                        queried[name].append(got)
            med = {name: statistics.median(ts) for name, ts in times.items()}
            raw = min(v for k, v in med.items() if k.startswith("raw"))
            rows.append(
                [
                    f"{size:,}",
                    f"{built:.0f}",
                    f"{med['raw ids']:.2f}",
                    f"{med['raw offset']:.2f}" if "raw offset" in med else "-",
                    f"{med['hybrid']:.2f}",
                    f"{med['hybrid'] / raw:.2f}",
                    f"{med['lexical']:.2f}",
                    f"{med['lexical'] / raw:.2f}",
                    f"{statistics.median(second) * 1000:.1f}",
                    f"{statistics.median(p[0] for p in puts) * 1000:.1f}",
                    f"{statistics.median(p[1] for p in puts) * 1000:.1f}",
                    f"{med['restart']:.2f}",
                ]
            )
            print(format_table(HEADERS, rows[-1:]), file=sys.stderr, flush=True)
            if cycles:
                cycle_rows.append([f"{size:,}", *_percentiles(cycles)])
            if args.beyond_cache:
                beyond_rows.append(
                    [f"{size:,}"]
                    + [
                        f"{med[f'beyond {mode} {how}'] * 1000:.1f}"
                        for mode in ("hybrid", "dense")
                        for how in ("unfiltered", "filtered")
                    ]
                )
            if args.queries:
                kinds = ("hybrid", "dense", "raw")
                took = {
                    kind: [t for got in queried[f"queries {kind}"] for t in got["took"]]
                    for kind in kinds
                }
                agreement = statistics.mean(got["agreement"] for got in queried["queries dense"])
                query_rows.append(
                    [f"{size:,}", f"{med['queries hybrid']:.2f}"]
                    + [f"{np.percentile(took[k], q) * 1000:.1f}" for k in kinds for q in (50, 95)]
                    + [f"{agreement:.3f}"]
                    + [f"{max(got['peak'] for got in queried[f'queries {k}']):.0f}" for k in kinds]
                )
        finally:
            if kept is None:
                shutil.rmtree(folder, ignore_errors=True)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\nOne namespace, {args.dims}-dim vectors, medians of {args.runs} child processes "
        f"per cell; load average at the end {load} ({os.cpu_count()} cores)."
    )
    print(format_table(HEADERS, rows))
    if beyond_rows:
        print(
            "\nSearches after the first with a 1,000-vector cache (medians of 6 searches per "
            "child, then of the children):"
        )
        print(format_table(BEYOND_HEADERS, beyond_rows))
    if cycle_rows:
        print(
            f"\nOne put then one search in the namespace, {args.write_search} rounds per hybrid "
            "child after its first search and two puts (all children's rounds pooled):"
        )
        print(format_table(CYCLE_HEADERS, cycle_rows))
    if query_rows:
        print(
            f"\nAfter the first search: {args.queries} searches with different queries per child "
            "(limit 10; p50/p95 of all children's), the dense top 10 against the exact top 10 "
            "by cosine, and each cell's peak resident memory (the most of its children):"
        )
        print(format_table(QUERY_HEADERS, query_rows))


def _percentiles(cycles: list[tuple[float, float]]) -> list[str]:
    """p50 and p95 (ms) of the puts, the searches and the two together."""
    cells = []
    for values in (
        [put for put, _ in cycles],
        [search for _, search in cycles],
        [put + search for put, search in cycles],
    ):
        p50, p95 = np.percentile(np.array(values) * 1000, [50, 95])
        cells.extend([f"{p50:.1f}", f"{p95:.1f}"])
    return cells


def users_table(root: Path, args: argparse.Namespace) -> None:
    """The table of ``--users``: each user's first search after opening, per store size."""
    rows = []
    for size in args.sizes:
        shape = f"users{args.users}x{args.per_user or 'all'}-{size}-{args.dims}d"
        kept = args.keep / shape if args.keep else None
        folder = kept or Path(tempfile.mkdtemp(prefix="large-ns-", dir=root))
        try:
            db = str(folder / "db")
            built = 0.0
            if not (folder / "db").exists():
                built = build(folder / "db", size, args.dims, args.users, args.per_user)
            print(f"{size:,} items built in {built:.1f} s", file=sys.stderr, flush=True)
            took: dict[str, list[float]] = {"hybrid": [], "dense": [], "raw": []}
            for run in range(args.runs):
                for mode in ("hybrid", "dense"):
                    cell = ["users", db, str(args.dims), mode, str(args.users), str(run)]
                    took[mode] += _child(cell)["took"]
                took["raw"] += _child(["users-raw", db, str(args.users), str(run)])["took"]
            rows.append(
                [f"{size:,}", f"{args.per_user or size // args.users:,}", f"{built:.0f}"]
                + [
                    f"{np.percentile(took[name], q) * 1000:.1f}"
                    for name in ("hybrid", "dense", "raw")
                    for q in (50, 95)
                ]
            )
            print(format_table(USERS_HEADERS, rows[-1:]), file=sys.stderr, flush=True)
        finally:
            if kept is None:
                shutil.rmtree(folder, ignore_errors=True)
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\n{args.users:,} user namespaces, {args.dims}-dim vectors, {USERS_SEARCHED} users' "
        f"first searches per child, {args.runs} children per cell; load average at the end "
        f"{load} ({os.cpu_count()} cores)."
    )
    print(format_table(USERS_HEADERS, rows))


USERS_HEADERS = [
    "items",
    "per user",
    "build (s)",
    "hybrid p50 (ms)",
    "hybrid p95 (ms)",
    "dense p50 (ms)",
    "dense p95 (ms)",
    "raw where p50 (ms)",
    "raw where p95 (ms)",
]
"""Columns of ``--users``; "raw where" is raw chromadb's ``get`` of the user's vector records
(documents, metadata, embeddings) with a ``where`` on the namespace."""


HEADERS = [
    "items",
    "build (s)",
    "raw by ids (s)",
    "raw by offset (s)",
    "first search hybrid (s)",
    "x raw",
    "first search lexical (s)",
    "x raw",
    "second search hybrid (ms)",
    "first put after (ms)",
    "second put (ms)",
    "hybrid after a restart (s)",
]
"""Columns; "x raw" divides by the faster of the two raw reads. The puts follow the hybrid
searches in the same namespace: the first write after a namespace's first search keeps its
keyword index's packed form and writes beside it. The first searches read the namespace from
Chroma (nothing kept by an earlier process); "after a restart" is the first hybrid search of a
process opening the store after another one searched the namespace and closed (it loads what
that one kept beside the store)."""

CYCLE_HEADERS = [
    "items",
    "put p50 (ms)",
    "put p95 (ms)",
    "search p50 (ms)",
    "search p95 (ms)",
    "put + search p50 (ms)",
    "put + search p95 (ms)",
]

QUERY_HEADERS = [
    "items",
    "first search hybrid (s)",
    "hybrid p50 (ms)",
    "hybrid p95 (ms)",
    "dense p50 (ms)",
    "dense p95 (ms)",
    "raw filtered p50 (ms)",
    "raw filtered p95 (ms)",
    "dense top-10 vs exact",
    "peak MiB hybrid",
    "peak MiB dense",
    "peak MiB raw",
]
"""Columns of ``--queries``; "raw filtered" is raw chromadb's ``query`` of the vector records
with ``where`` on the namespace, for the same query vectors; "dense top-10 vs exact" is the
mean share of the exact top 10 by cosine over every item's vector that the dense search found;
peak memory is ``VmHWM``."""

BEYOND_HEADERS = [
    "items",
    "hybrid, unfiltered (ms)",
    "hybrid, filtered (ms)",
    "dense, unfiltered (ms)",
    "dense, filtered (ms)",
]


if __name__ == "__main__":
    main()
