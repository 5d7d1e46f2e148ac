"""Where a ChromaStore spends its time: every Chroma call, lexical call and embedding timed.

The store's collections, lexical index and embedder are wrapped in :class:`Tap` proxies, so
each operation's wall time splits into Chroma calls (``items.get``, ``vectors.query``, ...),
the lexical index, the embedder, and the rest (the store's own Python: planning, JSON,
building items, fusion). A cProfile of warm hybrid searches names the hottest functions.
"""

from __future__ import annotations

import cProfile
import dataclasses
import json
import pstats
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import FILTER, Corpus, user_ns
from langgraph.store.base import PutOp


class Tap:
    """A proxy that times every method call of ``target`` into ``log`` as ``<name>.<method>``."""

    def __init__(self, target: Any, name: str, log: dict[str, float], ids: dict[str, list[int]]):
        self._target, self._name, self._log, self._ids = target, name, log, ids

    def __getattr__(self, attr: str) -> Any:
        value = getattr(self._target, attr)
        if not callable(value):
            return value
        label = f"{self._name}.{attr}"

        def timed(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                self._log[label] += time.perf_counter() - t
                if kwargs.get("ids") is not None:
                    self._ids[label].append(len(kwargs["ids"]))

        return timed


def _install(store: Any, log: dict[str, float], ids: dict[str, list[int]]) -> Any:
    """Wrap whatever the store holds (its layout changes as it is optimised); return the raw
    items collection."""
    backend = store._backend
    gw = backend.gateway
    raw_items = gw.items._target if isinstance(gw.items, Tap) else gw.items
    if not isinstance(gw.items, Tap):  # (stores on one client may share a backend)
        backend.gateway = dataclasses.replace(
            gw,
            items=Tap(gw.items, "chroma items", log, ids),
            vectors=Tap(gw.vectors, "chroma vectors", log, ids),
            namespaces=Tap(gw.namespaces, "chroma namespaces", log, ids),
        )
    state = backend.state
    for name, label in (("lexical", "lexical"), ("vectors", "vector cache")):
        if not isinstance(getattr(state, name), Tap):
            setattr(state, name, Tap(getattr(state, name), label, log, ids))
    if not isinstance(store.embeddings, Tap):
        store.embeddings = Tap(store.embeddings, "embed", log, ids)
    return raw_items


def breakdown(
    store: Any, dense: Any, corpus: Corpus, hot: list[int], *, quick: bool
) -> dict[str, Any]:
    """Mean ms per op by part, a few facts (metadata size, fetch sizes) and a profile."""
    log: dict[str, float] = defaultdict(float)
    ids: dict[str, list[int]] = defaultdict(list)
    raw_items = _install(store, log, ids)
    _install(dense, log, ids)
    if raw_items is None:  # the dense twin shares the store's (already wrapped) backend
        raw_items = getattr(store, "_backend", store).items._target
    queries = corpus.queries
    k = 10 if quick else 20

    def ns(i: int) -> tuple[str, ...]:
        return user_ns(hot[i % len(hot)])

    def q(i: int) -> str:
        return queries[(13 * i) % len(queries)]

    counter = iter(range(10**9))

    size = 100 if quick else 500

    def put_batch(i: int) -> None:
        store.batch([
            PutOp(ns(j), f"bd{j}-{i}", {"text": f"breakdown note {j} {i}: {q(j)}", "kind": "fact"})
            for j in range(size)
        ])

    ops: dict[str, tuple[Callable[[int], Any], int]] = {
        "search hybrid: query": (lambda i: store.search(ns(i), query=q(i), limit=10), k),
        "search dense: query": (lambda i: dense.search(ns(i), query=q(i), limit=10), k),
        "search hybrid: query + filter": (
            lambda i: store.search(ns(i), query=q(i), filter=FILTER, limit=10), k),
        "search: filter only": (lambda i: store.search(ns(i), filter=FILTER, limit=10), k),
        "get": (lambda i: store.get(*corpus.items[(i * 97) % len(corpus.items)][:2]), k),
        "put 1 item": (lambda i: store.put(ns(i), f"bd1-{next(counter)}", {"text": q(i)}), k),
        f"put batch of {size}": (put_batch, 2),
        "list_namespaces": (lambda i: store.list_namespaces(prefix=("users",), limit=100), 3),
    }
    fetched: list[int] = []
    result: dict[str, dict[str, float]] = {}
    for name, (fn, reps) in ops.items():
        fn(0)  # warm (lexical namespaces loaded, caches filled)
        log.clear()
        ids.clear()
        t = time.perf_counter()
        for i in range(1, reps + 1):
            fn(i)
        total = (time.perf_counter() - t) / reps
        parts = {part: 1e3 * s / reps for part, s in sorted(log.items(), key=lambda kv: -kv[1])}
        parts["rest (store's own Python)"] = 1e3 * total - sum(parts.values())
        parts["total"] = 1e3 * total
        result[name] = parts
        if name == "search hybrid: query":
            fetched = list(ids.get("chroma items.get", []))
    facts = _facts(store, raw_items, fetched, k)
    prof = cProfile.Profile()
    prof.enable()
    for i in range(20):
        store.search(ns(i), query=q(i + 5), limit=10)
    prof.disable()
    return {"ops": result, "facts": facts, "profile": profile_lines(prof, 20)}


def _mean(values: Any) -> float:
    got = list(values)
    return statistics.mean(got) if got else 0.0


def _facts(store: Any, items: Any, fetched: list[int], searches: int) -> dict[str, float]:
    """Metadata sizes and the cost of fetching fewer items per search. Item records are the
    item collection's and the vector collection's records of items with one text (their own
    vector record, id without "#"); vector records are the others."""
    vectors = store.collections["vectors"]
    vec = vectors.get(limit=400, include=["metadatas"])
    own = [(rid, m) for rid, m in zip(vec["ids"], vec["metadatas"] or [], strict=True) if "#" not in rid]
    got = items.get(limit=200, include=["metadatas"])
    metas = [*(got["metadatas"] or []), *(m for _, m in own)][:200]
    vmetas = [m for rid, m in zip(vec["ids"], vec["metadatas"] or [], strict=True) if "#" in rid]
    facts = {
        "item record metadata, JSON bytes (mean)": _mean(len(json.dumps(m)) for m in metas),
        "item record metadata, keys (mean)": _mean(len(m) for m in metas),
        "vector record metadata, JSON bytes (mean)": _mean(len(json.dumps(m)) for m in vmetas),
        "items.get calls per hybrid search": len(fetched) / searches if fetched else 0.0,
        "ids per items.get in hybrid search (mean)": _mean(fetched),
    }
    all_ids = [*items.get(limit=400, include=[])["ids"], *(rid for rid, _ in own)][:400]
    gateway = store._backend.gateway
    n_fetch = round(facts["ids per items.get in hybrid search (mean)"]) or 200
    for label, count in (("items.get of 10 ids, ms", 10), (f"items.get of {n_fetch} ids, ms", n_fetch)):
        times = []
        for r in range(15):
            chunk = all_ids[(r * 7) % 100 : (r * 7) % 100 + count]
            t = time.perf_counter()
            gateway.get_items(chunk)
            times.append(time.perf_counter() - t)
        facts[label] = 1e3 * statistics.median(times)
    return facts


def profile_lines(prof: cProfile.Profile, ops: int, top: int = 14) -> list[str]:
    """The ``top`` functions by own time, as ``own ms/op  cum ms/op  calls/op  where``."""
    stats = pstats.Stats(prof)
    entries = []
    table: dict[Any, Any] = getattr(stats, "stats", {})  # pstats keeps its rows here, untyped
    for (file, line, func), (_, nc, tt, ct, _) in table.items():
        short = "/".join(Path(file).parts[-2:]) if file != "~" else ""
        entries.append((tt, ct, nc, f"{short}:{line}({func})"))
    entries.sort(reverse=True)
    lines = [f"{'own ms/op':>9} {'cum ms/op':>9} {'calls/op':>8}  function"]
    for tt, ct, nc, where in entries[:top]:
        lines.append(f"{1e3 * tt / ops:9.2f} {1e3 * ct / ops:9.2f} {nc / ops:8.1f}  {where}")
    return lines
