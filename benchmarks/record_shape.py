"""What a record's metadata keys and document cost Chroma's upsert: our record's shapes against
raw chromadb's.

    python benchmarks/record_shape.py --runs 3

Chroma writes a row and an index entry per metadata key, and indexes a document for full-text
search, so a single upsert's time grows with both. Each shape gets its own collection on one
EphemeralClient, preloaded with the same 1,000 items; then 300 single upserts of new items, the
shapes in a shuffled order each turn, same ids and vectors. Shapes:

* ``raw chromadb``: ``throughput.py``'s raw adapter (namespace, two prefix keys, key, the
  value's fields), the text as the document;
* ``keys of their own``: our item record with the key, times and text path as metadata keys of
  their own and the namespace's deepest prefix key beside ``_ns``, the text as the document
  (the layout before :data:`langgraph_episodic.chroma.record_format.IN_HEADER`);
* ``header, document``: our item record's metadata as the store writes it, the text as the
  document (the layout before
  :data:`langgraph_episodic.chroma.record_format.TEXT_IN_VALUE`);
* ``ours``: our item record as the store writes it
  (:func:`langgraph_episodic.chroma.record_format.stored_metadata`), no document.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from _common import CachedEmbeddings, build_corpus, table

PRELOAD = 1000
SINGLE = 300

Shape = Callable[[tuple[str, ...], str, dict[str, Any]], dict[str, Any]]
WITHOUT_DOCUMENT = {"ours"}


def shapes() -> dict[str, Shape]:
    from langgraph_episodic.chroma import record_format as rf

    def view(ns: tuple[str, ...], key: str, value: dict[str, Any]) -> dict[str, Any]:
        return rf.item_metadata(
            ns, key, value, created_us=1, updated_us=1, expires_at=rf.NO_EXPIRY, ttl=None,
            n_vectors=1, tag=rf.ITEM_TAG, path="text",
        )  # fmt: skip

    def raw(ns: tuple[str, ...], key: str, value: dict[str, Any]) -> dict[str, Any]:
        return {"ns": ".".join(ns), "_p1": ns[0], "_p2": ".".join(ns[:2]), "key": key, **value}

    def own_keys(ns: tuple[str, ...], key: str, value: dict[str, Any]) -> dict[str, Any]:
        meta = view(ns, key, value)
        meta["_value"] = rf.value_body(meta["_value"])
        meta[f"_p{len(ns)}"] = meta["_ns"]
        return meta

    def ours(ns: tuple[str, ...], key: str, value: dict[str, Any]) -> dict[str, Any]:
        return rf.stored_metadata(view(ns, key, value), None)

    def with_document(ns: tuple[str, ...], key: str, value: dict[str, Any]) -> dict[str, Any]:
        meta = ours(ns, key, value)
        meta["_value"] = rf.HEADED + meta["_value"][1:]
        return meta

    return {"raw chromadb": raw, "keys of their own": own_keys,
            "header, document": with_document, "ours": ours}  # fmt: skip


def run() -> dict[str, tuple[float, int]]:
    """Median single-upsert ms and metadata key count of each shape."""
    import chromadb
    from chromadb.config import Settings

    from langgraph_episodic.chroma import record_format as rf

    corpus = build_corpus(PRELOAD + SINGLE)
    emb = CachedEmbeddings(corpus.texts)
    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    made = shapes()
    cols = {}
    for name in made:
        col = client.create_collection(
            f"shape-{uuid.uuid4().hex[:8]}", embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
        )  # fmt: skip
        for start in range(0, PRELOAD, 500):
            batch = corpus.items[start : start + 500]
            texts = [v["text"] for _, _, v in batch]
            col.upsert(
                ids=[rf.item_id(ns, k) for ns, k, _ in batch],
                embeddings=emb.embed_documents(texts),
                documents=None if name in WITHOUT_DOCUMENT else texts,
                metadatas=[made[name](ns, k, v) for ns, k, v in batch],
            )
        cols[name] = col
    times: dict[str, list[float]] = {name: [] for name in made}
    order = list(made)
    for ns, key, value in corpus.items[PRELOAD:]:
        random.shuffle(order)
        vec = emb.embed_documents([value["text"]])
        for name in order:
            meta = made[name](ns, key, value)
            t = time.perf_counter()
            cols[name].upsert(
                ids=[rf.item_id(ns, key)], embeddings=vec, metadatas=[meta],
                documents=None if name in WITHOUT_DOCUMENT else [value["text"]],
            )  # fmt: skip
            times[name].append(time.perf_counter() - t)
    ns, key, value = corpus.items[0]
    return {name: (statistics.median(times[name]) * 1e3, len(made[name](ns, key, value)))
            for name in made}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = []
    for run_no in range(1, args.runs + 1):
        got = run()
        base = got["raw chromadb"][0]
        rows.extend(
            [run_no, name, keys, f"{ms:.2f}", f"{ms / base:.2f}x"]
            for name, (ms, keys) in got.items()
        )
    print(
        f"{SINGLE} single upserts per shape after {PRELOAD:,} preloaded, EphemeralClient; "
        f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end\n"
    )
    print(table(["run", "shape", "metadata keys", "upsert p50 (ms)", "÷ raw chromadb"], rows))


if __name__ == "__main__":
    main()
