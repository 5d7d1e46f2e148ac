"""Peak memory of ChromaStore against raw chromadb, same items, each in its own process.

    python benchmarks/memory.py                     # 100k items in 1,000 namespaces, 64-d
    python benchmarks/memory.py --items 10000 --dims 64
    python benchmarks/memory.py --one-namespace --items 100000 --client persistent \
        --kinds ours,raw,raw-read
    python benchmarks/memory.py --one-namespace --items 100000 --kinds ours --trace

Every cell is a fresh child process (so its peak is its own): it loads ``--items`` LoCoMo-based
items (100 per user namespace, ``("users", "u<i>", "memories")``) with precomputed seeded
random ``--dims``-d unit vectors, in batches of 500, into an ephemeral store; then runs one
query search in each of ``--searched`` namespaces (which builds their in-process indexes) and
a ``get`` of every hundredth item. ``raw``: chromadb, one collection, the text as document
and the value's fields as flat metadata, searched by a ``where`` on the namespace;
``raw-read``: the same collection, each searched namespace read whole instead (its records
with their vectors, in pages of ``get_max_batch_size()``, as a store's first search there
reads them). ``ours``: ``ChromaStore`` indexing ``text``. ``--client ephemeral`` (the default)
keeps both sides' Chroma in memory (its SQLite included); ``--client persistent`` gives each
side a ``PersistentClient`` on a new temporary folder, as ``ChromaStore.persistent`` (the
library's default deployment) runs. Peak RSS is ``VmHWM``; "base" is the RSS after imports
and vectors, before the first item, so "growth" is what the items cost. "Trimmed" is the RSS
at the end once the C allocator has given back the memory freed so far (glibc's
``malloc_trim``): what the process still holds, not what its allocator keeps for reuse.

With ``--one-namespace`` every item goes into one namespace (``("shared", "knowledge")``), which
two query searches then search (the first builds the namespace's vector block, keyword index
and field index) before the ``get`` of every hundredth item. ``--trace`` (ChromaStore only)
also counts with ``tracemalloc`` what the first search allocates and keeps, by the module that
allocated it (tracing costs memory of its own: take the peak from a run without it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CachedEmbeddings, build_corpus, peak_rss_mb, rss_mb, table, user_ns
from _locomo_data import DEFAULT_DATA

BATCH = 500
KINDS = ("ours", "raw")
"""Run by default; ``raw-read`` on request."""
ONE_NS: tuple[str, ...] = ("shared", "knowledge")
"""The namespace of every item with ``--one-namespace``."""
TRACE_GROUPS = (
    ("vector cache (ranking/vectors.py)", "ranking/vectors.py"),
    ("keyword index (ranking/lexical.py)", "ranking/lexical.py"),
    ("field index (ranking/shared_fields.py)", "ranking/shared_fields.py"),
)
"""How ``--trace`` names what the first search keeps: by the innermost of the package's frames
of the allocation that is one of these modules (numpy's arrays count for the module that made
them; a record id made by ``record_format`` for the keyword index counts for the index)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=64)
    parser.add_argument("--searched", type=int, default=100, help="namespaces searched")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--client", choices=("ephemeral", "persistent"), default="ephemeral")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--item-cache-size", type=int, default=None,
                        help="ChromaStore's item_cache_size (default: the machine's)")
    parser.add_argument(
        "--one-namespace", action="store_true", help="every item in one namespace, searched twice"
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="count what the first search keeps, by module (ours only)",
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(cell(args.child, args.items, args.dims, args.searched, args.data,
                              args.client, args.item_cache_size, args.one_namespace,
                              args.trace)))
        return 0
    import os

    cache = "the machine's" if args.item_cache_size is None else f"{args.item_cache_size:,}"
    print(f"load average {os.getloadavg()}; {args.client} clients; item cache {cache}", flush=True)
    results = {}
    for kind in args.kinds.split(","):
        cmd = [sys.executable, __file__, "--child", kind, "--items", str(args.items),
               "--dims", str(args.dims), "--searched", str(args.searched), "--data", str(args.data),
               "--client", args.client]  # fmt: skip
        if args.item_cache_size is not None:
            cmd += ["--item-cache-size", str(args.item_cache_size)]
        cmd += ["--one-namespace"] * args.one_namespace + ["--trace"] * args.trace
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        results[kind] = json.loads(out.strip().splitlines()[-1])
        print(f"  {kind}: {results[kind]}", flush=True)
    rows = []
    for kind, r in results.items():
        per_item = 1024 * (r["peak_mb"] - r["base_mb"]) / args.items
        trimmed = r.get("trimmed_mb")
        rows.append([kind, f"{r['base_mb']:.0f}", f"{r['loaded_mb']:.0f}",
                     f"{r['searched_mb']:.0f}", f"{r['peak_mb']:.0f}", f"{per_item:.2f}",
                     "-" if trimmed is None else f"{trimmed:.0f}", f"{r['load_s']:.0f}"])  # fmt: skip
    if {"ours", "raw"} <= results.keys():
        ratio = results["ours"]["peak_mb"] / results["raw"]["peak_mb"]
        rows.append(["ours / raw (peak)", "", "", "", f"{ratio:.2f}x", "", "", ""])
    print(table(["process", "base MiB", "after loading MiB", "after first search MiB",
                 "peak MiB", "KiB per item (peak - base)", "at the end, trimmed MiB", "load s"],
                rows))  # fmt: skip
    traced = results.get("ours", {}).get("traced")
    if traced:
        print(table(["kept by the first search", "MiB", "bytes per item"],
                    [[name, f"{b / 2**20:.1f}", f"{b / args.items:.0f}"]
                     for name, b in traced.items()]))  # fmt: skip
    print(f"load average {os.getloadavg()}")
    return 0


def traced_by_group(snapshot: Any, before: Any) -> dict[str, int]:
    """Bytes allocated between ``before`` and ``snapshot`` and still held, by
    :data:`TRACE_GROUPS` (the first group among the package's frames of the allocation, the
    innermost first), the rest as "other" (with the innermost module), and the total."""
    out = {name: 0 for name, _ in TRACE_GROUPS}
    rest: dict[str, int] = {}
    total = 0
    for stat in snapshot.compare_to(before, "traceback"):
        if stat.size_diff <= 0:
            continue
        total += stat.size_diff
        ours = [f.filename.split("langgraph_episodic/")[-1] for f in stat.traceback
                if "langgraph_episodic" in f.filename][::-1]  # fmt: skip
        group = next((name for where in ours for name, path in TRACE_GROUPS
                      if where.endswith(path)), None)  # fmt: skip
        if group is None:
            where = f"other: {ours[0] if ours else '(outside the package)'}"
            rest[where] = rest.get(where, 0) + stat.size_diff
        else:
            out[group] += stat.size_diff
    top = sorted(rest.items(), key=lambda kv: -kv[1])
    return out | dict(top[:4]) | {"other, the rest": sum(b for _, b in top[4:]), "total": total}


def trimmed_rss_mb() -> float | None:
    """The RSS once the C allocator has given back the memory freed so far (glibc's
    ``malloc_trim``): what the process holds, without what its allocator keeps for reuse.
    None where there is no glibc."""
    import ctypes
    import gc

    gc.collect()
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        return None
    return rss_mb()


def cell(
    kind: str,
    n: int,
    dims: int,
    searched: int,
    data: Path,
    client_kind: str = "ephemeral",
    item_cache_size: int | None = None,
    one_ns: bool = False,
    trace: bool = False,
) -> dict[str, Any]:
    import tempfile
    import time

    import chromadb
    from chromadb.config import Settings

    folder = tempfile.mkdtemp(prefix=f"memory-{kind}-")
    settings = Settings(anonymized_telemetry=False)

    corpus = build_corpus(n, data)
    emb = CachedEmbeddings(corpus.texts + corpus.queries[:searched], dims=dims)
    if one_ns:
        corpus.items[:] = [(ONE_NS, f"k{i}", v) for i, (_, _, v) in enumerate(corpus.items)]
        hot = [ONE_NS, ONE_NS]
    else:
        users = corpus.users()
        hot = [user_ns(u * max(1, users // searched)) for u in range(min(searched, users))]
    traced: dict[str, int] | None = None
    base = rss_mb()
    started = time.perf_counter()
    if kind == "ours":
        from langgraph.store.base import PutOp

        from langgraph_episodic import ChromaStore

        index = {"dims": dims, "embed": emb, "fields": ["text"]}
        store = (
            ChromaStore.persistent(folder, index=index, item_cache_size=item_cache_size)
            if client_kind == "persistent"
            else ChromaStore.ephemeral(index=index, item_cache_size=item_cache_size)
        )
        for s in range(0, n, BATCH):
            store.batch([PutOp(*it) for it in corpus.items[s : s + BATCH]])
        loaded, load_s = rss_mb(), time.perf_counter() - started
        if trace:
            import tracemalloc

            tracemalloc.start(25)
            before = tracemalloc.take_snapshot()
        for i, ns in enumerate(hot):
            store.search(ns, query=corpus.queries[i], limit=10)
            if i == 0:
                searched_mb = rss_mb()
                if trace:
                    traced = traced_by_group(tracemalloc.take_snapshot(), before)
                    tracemalloc.stop()
        for item_ns, key, _ in corpus.items[::100]:
            store.get(item_ns, key)
    else:
        client = (
            chromadb.PersistentClient(path=folder, settings=settings)
            if client_kind == "persistent"
            else chromadb.EphemeralClient(settings=settings)
        )
        col = client.create_collection("raw", metadata={"hnsw:space": "cosine"})
        for s in range(0, n, BATCH):
            part = corpus.items[s : s + BATCH]
            texts = [v["text"] for _, _, v in part]
            col.upsert(
                ids=["/".join(ns) + "/" + k for ns, k, _ in part],
                embeddings=[emb.vector(t) for t in texts],
                documents=texts,
                metadatas=[{"ns": "/".join(ns), **v} for ns, _, v in part],
            )
        loaded, load_s = rss_mb(), time.perf_counter() - started
        page = client.get_max_batch_size()
        for i, ns in enumerate(hot):
            if kind == "raw-read":
                if ns in hot[:i]:
                    continue  # read once, as the store's first search
                for offset in range(0, n, page):
                    got = col.get(where={"ns": "/".join(ns)}, limit=page, offset=offset,
                                  include=["metadatas", "documents", "embeddings"])  # fmt: skip
                    if len(got["ids"]) < page:
                        break
                del got
                if i == 0:
                    searched_mb = rss_mb()
                continue
            col.query(query_embeddings=[emb.vector(corpus.queries[i])], n_results=10,
                      where={"ns": "/".join(ns)}, include=["metadatas", "documents", "distances"])  # fmt: skip
            if i == 0:
                searched_mb = rss_mb()
        for item_ns, key, _ in corpus.items[::100]:
            col.get(ids=["/".join(item_ns) + "/" + key], include=["metadatas", "documents"])
    peak = peak_rss_mb()
    result = {"base_mb": base, "loaded_mb": loaded, "searched_mb": searched_mb, "peak_mb": peak,
              "trimmed_mb": trimmed_rss_mb(), "load_s": load_s, "traced": traced}  # fmt: skip
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
