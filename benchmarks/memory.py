"""Peak memory of ChromaStore against raw chromadb, same items, each in its own process.

    python benchmarks/memory.py                     # 100k items in 1,000 namespaces, 64-d
    python benchmarks/memory.py --items 10000 --dims 64

Every cell is a fresh child process (so its peak is its own): it loads ``--items`` LoCoMo-based
items (100 per user namespace, ``("users", "u<i>", "memories")``) with precomputed seeded
random ``--dims``-d unit vectors, in batches of 500, into an ephemeral store; then runs one
query search in each of ``--searched`` namespaces (which builds their in-process indexes) and
a ``get`` of every hundredth item. ``raw``: chromadb, one collection, the text as document
and the value's fields as flat metadata, searched by a ``where`` on the namespace.
``ours``: ``ChromaStore`` indexing ``text``. ``--client ephemeral`` (the default) keeps both
sides' Chroma in memory (its SQLite included); ``--client persistent`` gives each side a
``PersistentClient`` on a new temporary folder, as ``ChromaStore.persistent`` (the library's
default deployment) runs. Peak RSS is ``VmHWM``; "base" is the
RSS after imports and vectors, before the first item, so "growth" is what the items cost.
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
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(cell(args.child, args.items, args.dims, args.searched, args.data,
                              args.client, args.item_cache_size)))
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
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        results[kind] = json.loads(out.strip().splitlines()[-1])
        print(f"  {kind}: {results[kind]}", flush=True)
    rows = []
    for kind, r in results.items():
        per_item = 1024 * (r["peak_mb"] - r["base_mb"]) / args.items
        rows.append([kind, f"{r['base_mb']:.0f}", f"{r['loaded_mb']:.0f}", f"{r['peak_mb']:.0f}",
                     f"{per_item:.1f}", f"{r['load_s']:.0f}"])  # fmt: skip
    if {"ours", "raw"} <= results.keys():
        ratio = results["ours"]["peak_mb"] / results["raw"]["peak_mb"]
        rows.append(["ours / raw (peak)", "", "", f"{ratio:.2f}x", "", ""])
    print(table(["process", "base MiB", "after loading MiB", "peak MiB", "KB per item (peak - base)",
                 "load s"], rows))  # fmt: skip
    print(f"load average {os.getloadavg()}")
    return 0


def cell(
    kind: str,
    n: int,
    dims: int,
    searched: int,
    data: Path,
    client_kind: str = "ephemeral",
    item_cache_size: int | None = None,
) -> dict[str, Any]:
    import tempfile
    import time

    import chromadb
    from chromadb.config import Settings

    folder = tempfile.mkdtemp(prefix=f"memory-{kind}-")
    settings = Settings(anonymized_telemetry=False)

    corpus = build_corpus(n, data)
    emb = CachedEmbeddings(corpus.texts + corpus.queries[:searched], dims=dims)
    base = rss_mb()
    started = time.perf_counter()
    users = corpus.users()
    hot = [user_ns(u * max(1, users // searched)) for u in range(min(searched, users))]
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
        for i, ns in enumerate(hot):
            store.search(ns, query=corpus.queries[i], limit=10)
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
        for i, ns in enumerate(hot):
            col.query(query_embeddings=[emb.vector(corpus.queries[i])], n_results=10,
                      where={"ns": "/".join(ns)}, include=["metadatas", "documents", "distances"])  # fmt: skip
        for item_ns, key, _ in corpus.items[::100]:
            col.get(ids=["/".join(item_ns) + "/" + key], include=["metadatas", "documents"])
    result = {"base_mb": base, "loaded_mb": loaded, "peak_mb": peak_rss_mb(), "load_s": load_s}
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
