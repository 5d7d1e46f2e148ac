"""Puts against raw chromadb, interleaved in one process: the ratio a busy or drifting machine
cannot skew.

    python benchmarks/put_ratio.py --sizes 1000,10000 --runs 3

``throughput.py`` measures each backend in its own process, one after the other; on a shared
machine raw chromadb's own figures then move by a third between runs, and the ratio with them.
Here both sides share one process and one Chroma client and take turns batch by batch (the one
that goes first alternates), so whatever slows the machine slows both. Same corpus, same
precomputed 384-d vectors, the same metadata as ``throughput.py``'s raw adapter (namespace,
prefix keys, key and the value's fields); our store as ``ChromaStore(client, index=...)`` with
``fields=["text"]``. After the batches, single puts of new items, again taking turns.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
import uuid
from typing import Any

from _common import CachedEmbeddings, build_corpus, table, user_ns
from langgraph.store.base import PutOp

BATCH = 500
SINGLE = 200


def run(n: int, persistent: str | None) -> dict[str, float]:
    import chromadb
    from chromadb.config import Settings

    from langgraph_episodic import ChromaStore

    corpus = build_corpus(n)
    extra = [
        (user_ns(i % max(1, n // 100)), f"x{i}", {"text": f"{t} (new {i})", "kind": "fact"})
        for i, t in enumerate(corpus.texts[:SINGLE])
    ]
    emb = CachedEmbeddings(corpus.texts + [v["text"] for _, _, v in extra])
    settings = Settings(anonymized_telemetry=False)
    client = (
        chromadb.PersistentClient(persistent, settings=settings)
        if persistent
        else chromadb.EphemeralClient(settings=settings)
    )
    store = ChromaStore(
        client, collection=f"ours-{uuid.uuid4().hex[:8]}",
        index={"dims": emb.dims, "embed": emb, "fields": ["text"]},
    )  # fmt: skip
    col = client.create_collection(
        f"raw-{uuid.uuid4().hex[:8]}", embedding_function=None,
        configuration={"hnsw": {"space": "cosine"}},
    )  # fmt: skip

    def ours(batch: list[tuple[Any, str, dict[str, Any]]]) -> None:
        store.batch([PutOp(ns, key, value) for ns, key, value in batch])

    def raw(batch: list[tuple[Any, str, dict[str, Any]]]) -> None:
        texts = [value["text"] for _, _, value in batch]
        col.upsert(
            ids=[key for _, key, _ in batch],
            embeddings=emb.embed_documents(texts),
            documents=texts,
            metadatas=[
                {"ns": ".".join(ns), "_p1": ns[0], "_p2": ".".join(ns[:2]), "key": key, **value}
                for ns, key, value in batch
            ],
        )

    sides = {"ours": ours, "raw": raw}
    spent = {"ours": 0.0, "raw": 0.0}
    singles: dict[str, list[float]] = {"ours": [], "raw": []}
    gc.collect()
    for turn, start in enumerate(range(0, n, BATCH)):
        for name in ("ours", "raw") if turn % 2 == 0 else ("raw", "ours"):
            t = time.perf_counter()
            sides[name](corpus.items[start : start + BATCH])
            spent[name] += time.perf_counter() - t
    for turn, item in enumerate(extra):
        for name in ("ours", "raw") if turn % 2 == 0 else ("raw", "ours"):
            t = time.perf_counter()
            sides[name]([item])
            singles[name].append(time.perf_counter() - t)
    store.close()
    return {
        "ours_per_s": n / spent["ours"],
        "raw_per_s": n / spent["raw"],
        "ours_single_ms": statistics.median(singles["ours"]) * 1e3,
        "raw_single_ms": statistics.median(singles["raw"]) * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--persistent", metavar="DIR", help="a PersistentClient in this new folder")
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        for run_no in range(1, args.runs + 1):
            folder = f"{args.persistent}/{n}-{run_no}" if args.persistent else None
            r = run(n, folder)
            rows.append([
                f"{n:,}", run_no, f"{r['ours_per_s']:.0f}", f"{r['raw_per_s']:.0f}",
                f"{r['ours_per_s'] / r['raw_per_s']:.2f}x",
                f"{r['ours_single_ms']:.2f}", f"{r['raw_single_ms']:.2f}",
                f"{r['ours_single_ms'] / r['raw_single_ms']:.2f}x",
            ])  # fmt: skip
    print(
        f"{'PersistentClient' if args.persistent else 'EphemeralClient'}, batches of {BATCH}, "
        f"then {SINGLE} single puts of new items; load average {load_start:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end\n"
    )
    print(table(
        ["items", "run", "batched, ours (items/s)", "raw chromadb", "ours ÷ raw",
         "single put p50, ours (ms)", "raw chromadb", "ours ÷ raw"],
        rows,
    ))  # fmt: skip


if __name__ == "__main__":
    main()
