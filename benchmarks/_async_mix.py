"""The async op mix of LangGraph's ``test_large_batches_async``, as a throughput benchmark.

LangGraph's own async store test gathers, for M rounds of N keys, six ops per key on one event
loop: ``aput``, ``aget``, ``alist_namespaces(max_depth=m+1)``, ``asearch(("test",))``, ``aput``
and ``adelete``, all through one ``asyncio.gather`` (the Postgres suite's version: N=1000, M=10,
60,000 ops). That is the load of a LangGraph server running many graph runs at once. Here the
same mix runs at a chosen total and reports ops/s for ChromaStore (ephemeral, no index),
``AsyncSqliteStore`` and ``InMemoryStore``; by concurrent tasks, against raw chromadb doing the
same writes and reads too (:data:`BACKENDS`).

    python benchmarks/throughput.py --async-mix 12000,60000
    python benchmarks/throughput.py --async-tasks 1,10,100 --async-ops 1800
    python benchmarks/throughput.py --async-calls 50      # Chroma calls a key, one task
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from functools import partial
from typing import Any

ROUNDS = 10
"""M of LangGraph's test: namespaces alternate between two, ``max_depth`` grows per round."""

BACKENDS = (
    "chroma-eph",
    "async-sqlite",
    "inmemory",
    "raw-chroma",
    "raw-chroma-1t",
    "chroma-floor",
    "chroma-floor-batched",
)
"""``raw-chroma``: raw chromadb doing what the mix asks the way a user of chromadb alone would,
on the same kind of client as ``chroma-eph`` (:class:`_RawChroma`): every op one Chroma call
(``upsert``, ``get`` by id, ``get`` of every record's metadata for the namespace listing, a
``get`` with a ``where`` on the namespace prefix and ``limit=10`` for the search, ``delete``)
through ``asyncio.to_thread``; ``-1t`` runs them on one worker thread instead.

``chroma-floor``: raw chromadb making only the writes the mix asks for (an upsert per put, a
delete per delete; reads, listings and searches cost nothing), one Chroma call each; with
``-batched``, the concurrent writes of all tasks gathered into one call per kind and loop
turn. No store that writes each op to Chroma before it returns can be faster."""


def coroutines(store: Any, total: int) -> list[Any]:
    """The op mix of ``test_large_batches_async`` with ``total`` ops (a multiple of 60)."""
    n = max(1, total // (6 * ROUNDS))
    coros: list[Any] = []
    for m in range(ROUNDS):
        ns = ("test", "foo", "bar", "baz", str(m % 2))
        for i in range(n):
            coros += [
                store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}),
                store.aget(ns, f"key{i}"),
                store.alist_namespaces(prefix=None, max_depth=m + 1),
                store.asearch(("test",)),
                store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}),
                store.adelete(ns, f"key{i}"),
            ]
    return coros


@asynccontextmanager
async def _chroma() -> AsyncIterator[Any]:
    from langgraph_episodic import ChromaStore

    store = ChromaStore.ephemeral(index=None)
    try:
        yield store
    finally:
        store.close()


@asynccontextmanager
async def _sqlite() -> AsyncIterator[Any]:
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    async with AsyncSqliteStore.from_conn_string(":memory:") as store:
        await store.setup()
        yield store


@asynccontextmanager
async def _memory() -> AsyncIterator[Any]:
    from langgraph.store.memory import InMemoryStore

    yield InMemoryStore()


class _ChromaWrites:
    """The writes of the mix on a raw Chroma collection, nothing else (see :data:`BACKENDS`)."""

    def __init__(self, batched: bool) -> None:
        import chromadb
        from chromadb.config import Settings

        client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
        self.col = client.create_collection(
            f"floor-{uuid.uuid4().hex[:8]}", embedding_function=None
        )
        self.batched = batched
        self.pending: list[tuple[str, str, dict[str, Any] | None, asyncio.Future[None]]] = []

    def _write(self, runs: list[tuple[str, list[tuple[str, dict[str, Any] | None]]]]) -> None:
        for kind, rows in runs:
            latest = dict(rows)  # one record per id in a call, the last write
            if kind == "put":
                metas = [m or {} for m in latest.values()]
                self.col.upsert(ids=list(latest), embeddings=[[0.0]] * len(latest), metadatas=metas)
            else:
                self.col.delete(ids=list(latest))

    async def _op(self, kind: str, rid: str, meta: dict[str, Any] | None) -> None:
        if not self.batched:
            self._write([(kind, [(rid, meta)])])
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not self.pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self.pending.append((kind, rid, meta, future))
        await future

    def _flush(self) -> None:
        pending, self.pending = self.pending, []
        runs: list[tuple[str, list[tuple[str, dict[str, Any] | None]]]] = []
        for kind, rid, meta, _ in pending:  # runs of one kind keep the order of put and delete
            if not runs or runs[-1][0] != kind:
                runs.append((kind, []))
            runs[-1][1].append((rid, meta))
        self._write(runs)
        for *_, future in pending:
            future.set_result(None)

    async def aput(self, ns: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        meta = {"ns": ".".join(ns), "key": key, "value": json.dumps(value)}
        await self._op("put", ".".join(ns) + "/" + key, meta)

    async def adelete(self, ns: tuple[str, ...], key: str) -> None:
        await self._op("delete", ".".join(ns) + "/" + key, None)

    async def aget(self, ns: tuple[str, ...], key: str) -> None:
        return None

    async def alist_namespaces(self, **kwargs: Any) -> list[Any]:
        return []

    async def asearch(self, prefix: tuple[str, ...]) -> list[Any]:
        return []


class _RawChroma:
    """The mix on raw chromadb, reads included (see :data:`BACKENDS`).

    One collection; a record per item, id ``<ns>/<key>``, the value as JSON in its metadata
    with the namespace, the key, the times and the namespace's prefixes (``p1`` the first
    label, ``p2`` the first two, ...) so that a prefix search is one ``where``. Chroma needs a
    vector per record: a one-number placeholder, as ``ChromaStore`` writes for an item without
    an index."""

    def __init__(self, one_thread: bool) -> None:
        import chromadb
        from chromadb.config import Settings

        client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
        self.col = client.create_collection(f"raw-{uuid.uuid4().hex[:8]}", embedding_function=None)
        self.pool = ThreadPoolExecutor(1) if one_thread else None

    async def _call(self, fn: Callable[..., Any], **kwargs: Any) -> Any:
        if self.pool is None:
            return await asyncio.to_thread(fn, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self.pool, partial(fn, **kwargs))

    async def aput(self, ns: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        now = time.time()
        meta: dict[str, Any] = {"ns": "/".join(ns), "key": key, "value": json.dumps(value)}
        meta |= {"created_at": now, "updated_at": now}
        meta |= {f"p{d}": "/".join(ns[:d]) for d in range(1, len(ns) + 1)}
        await self._call(
            self.col.upsert, ids=["/".join(ns) + "//" + key], embeddings=[[0.0]], metadatas=[meta]
        )

    async def adelete(self, ns: tuple[str, ...], key: str) -> None:
        await self._call(self.col.delete, ids=["/".join(ns) + "//" + key])

    async def aget(self, ns: tuple[str, ...], key: str) -> dict[str, Any] | None:
        got = await self._call(self.col.get, ids=["/".join(ns) + "//" + key], include=["metadatas"])
        return _item(got["metadatas"][0]) if got["ids"] else None

    async def alist_namespaces(
        self, prefix: tuple[str, ...] | None = None, max_depth: int | None = None
    ) -> list[tuple[str, ...]]:
        got = await self._call(self.col.get, include=["metadatas"])
        spaces = {tuple(m["ns"].split("/"))[:max_depth] for m in got["metadatas"]}
        return sorted(s for s in spaces if prefix is None or s[: len(prefix)] == prefix)[:100]

    async def asearch(self, prefix: tuple[str, ...]) -> list[dict[str, Any]]:
        where = {f"p{len(prefix)}": "/".join(prefix)}
        got = await self._call(self.col.get, where=where, limit=10, include=["metadatas"])
        return [_item(m) for m in got["metadatas"]]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def _item(meta: dict[str, Any]) -> dict[str, Any]:
    """What a read returns: the namespace, key, value and times of a record's metadata."""
    return {
        "namespace": tuple(meta["ns"].split("/")),
        "key": meta["key"],
        "value": json.loads(meta["value"]),
        "created_at": meta["created_at"],
        "updated_at": meta["updated_at"],
    }


@asynccontextmanager
async def _raw() -> AsyncIterator[Any]:
    raw = _RawChroma(one_thread=False)
    try:
        yield raw
    finally:
        raw.close()


@asynccontextmanager
async def _raw_one_thread() -> AsyncIterator[Any]:
    raw = _RawChroma(one_thread=True)
    try:
        yield raw
    finally:
        raw.close()


@asynccontextmanager
async def _floor() -> AsyncIterator[Any]:
    yield _ChromaWrites(batched=False)


@asynccontextmanager
async def _floor_batched() -> AsyncIterator[Any]:
    yield _ChromaWrites(batched=True)


FACTORIES: dict[str, Callable[[], AbstractAsyncContextManager[Any]]] = {
    "chroma-eph": _chroma,
    "async-sqlite": _sqlite,
    "inmemory": _memory,
    "raw-chroma": _raw,
    "raw-chroma-1t": _raw_one_thread,
    "chroma-floor": _floor,
    "chroma-floor-batched": _floor_batched,
}


async def _measure(backend: str, total: int) -> dict[str, float]:
    async with FACTORIES[backend]() as store:
        coros = coroutines(store, total)
        started, cpu = time.perf_counter(), time.process_time()
        results = await asyncio.gather(*coros)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert len(results) == len(coros)
    return {"ops": float(len(coros)), "seconds": wall, "cpu": cpu, "ops_s": len(coros) / wall}


def measure(backend: str, total: int) -> dict[str, float]:
    """Run the mix once on a fresh store of ``backend``; ops/s and wall/CPU seconds."""
    return asyncio.run(_measure(backend, total))


async def _one_task(store: Any, task: int, keys: int) -> int:
    """One task's share of the mix: the six ops of each of its keys, one after another."""
    done = 0
    for i in range(keys):
        m = i % ROUNDS
        ns, key = ("test", "foo", "bar", "baz", str(m % 2)), f"t{task}-key{i}"
        await store.aput(ns, key, value={"foo": "bar" + str(i)})
        await store.aget(ns, key)
        await store.alist_namespaces(prefix=None, max_depth=m + 1)
        await store.asearch(("test",))
        await store.aput(ns, key, value={"foo": "bar" + str(i)})
        await store.adelete(ns, key)
        done += 6
    return done


async def _measure_tasks(backend: str, tasks: int, total: int, keep: int = 0) -> dict[str, float]:
    async with FACTORIES[backend]() as store:
        keys = max(1, total // (6 * tasks))
        await _one_task(store, -1, 2)  # warm up
        for m in range(2 * (keep > 0)):  # items that stay: the namespaces never empty
            ns = ("test", "foo", "bar", "baz", str(m))
            for i in range(keep):
                await store.aput(ns, f"kept{i}", value={"foo": "kept" + str(i)})
        started, cpu = time.perf_counter(), time.process_time()
        counts = await asyncio.gather(*(_one_task(store, t, keys) for t in range(tasks)))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    ops = float(sum(counts))
    return {"ops": ops, "seconds": wall, "cpu": cpu, "ops_s": ops / wall}


def run_tasks(
    tasks: list[int], backends: list[str], total: int, rounds: int = 2, keep: int = 0
) -> dict[str, dict[int, dict[str, float]]]:
    """The mix run by ``tasks`` concurrent tasks (each awaiting its ops one by one), about
    ``total`` ops per cell; backends alternate within each round, the best round is kept.
    ``keep``: items put into each of the two namespaces before the timed part, which stay
    (so no op of the mix empties a namespace or puts into an empty one)."""
    out: dict[str, dict[int, dict[str, float]]] = {}
    for n in tasks:
        for r in range(rounds):
            for backend in backends if r % 2 == 0 else backends[::-1]:
                cell = asyncio.run(_measure_tasks(backend, n, total, keep))
                best = out.setdefault(backend, {}).get(n)
                if best is None or cell["ops_s"] > best["ops_s"]:
                    out[backend][n] = cell
                print(f"  {backend:>13} {n:>4} tasks: {cell['ops_s']:>10,.0f} ops/s "
                      f"({cell['seconds']:.1f} s wall, {cell['cpu']:.1f} s CPU)", flush=True)  # fmt: skip
    return out


async def _count_calls(backend: str, keys: int, keep: int) -> dict[str, tuple[float, float]]:
    store_calls: dict[str, list[float]] = {}
    from chromadb.api.models.Collection import Collection

    originals = {name: getattr(Collection, name) for name in ("upsert", "get", "delete", "query")}

    def counted(name: str) -> Callable[..., Any]:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return originals[name](self, *args, **kwargs)
            finally:
                kind = "registry" if self.name.endswith("__ns") else "records"
                cell = store_calls.setdefault(f"{kind} {name}", [0, 0.0])
                cell[0] += 1
                cell[1] += time.perf_counter() - started

        return call

    async with FACTORIES[backend]() as store:
        await _one_task(store, -1, 2)
        for m in range(2 * (keep > 0)):
            for i in range(keep):
                await store.aput(("test", "foo", "bar", "baz", str(m)), f"kept{i}", value={"i": i})
        try:
            for name in originals:
                setattr(Collection, name, counted(name))
            await _one_task(store, 0, keys)
        finally:
            for name, original in originals.items():
                setattr(Collection, name, original)
    return {k: (n / keys, 1000 * t / keys) for k, (n, t) in sorted(store_calls.items())}


def calls_table(backends: list[str], keys: int, keep: int = 0) -> str:
    """A markdown table: Chroma calls a key of the mix makes with one task (the six ops), and
    their wall milliseconds, per backend (``registry``: the store's namespace records)."""
    lines = ["| backend | Chroma call | calls a key | ms a key |", "|---|---|---:|---:|"]
    for backend in backends:
        counts = asyncio.run(_count_calls(backend, keys, keep))
        for call, (n, ms) in counts.items():
            lines.append(f"| {backend} | {call} | {n:.2f} | {ms:.2f} |")
        total_n, total_ms = sum(n for n, _ in counts.values()), sum(m for _, m in counts.values())
        lines.append(f"| {backend} | all | {total_n:.2f} | {total_ms:.2f} |")
    return "\n".join(lines)


def tasks_table(results: dict[str, dict[int, dict[str, float]]], tasks: list[int]) -> str:
    """A markdown table: ops/s per backend and task count, ChromaStore against the fastest raw
    chromadb backend run (the floor, target 0.9x), and each against AsyncSqliteStore."""
    others = [b for b in results if b != "async-sqlite"]
    raws = [b for b in results if b.startswith("raw-chroma")]
    floor = " | chroma-eph / raw chromadb" if "chroma-eph" in results and raws else ""
    lines = [
        "| tasks | "
        + " | ".join(f"{b} (ops/s)" for b in results)
        + floor
        + "".join(f" | {b} / async-sqlite" for b in others)
        + " |",
        "|---:|" + "---:|" * (len(results) + len(others) + bool(floor)),
    ]
    for n in tasks:
        row = [f"{results[b][n]['ops_s']:,.0f}" if n in results[b] else "-" for b in results]
        if floor:
            best = max((results[b][n]["ops_s"] for b in raws if n in results[b]), default=None)
            ours = results["chroma-eph"].get(n)
            row.append(f"{ours['ops_s'] / best:.2f}x" if ours and best else "-")
        sqlite = results.get("async-sqlite", {}).get(n)
        for b in others:
            cell = results[b].get(n)
            row.append(f"{cell['ops_s'] / sqlite['ops_s']:.2f}x" if cell and sqlite else "-")
        lines.append(f"| {n} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def run(sizes: list[int], backends: list[str]) -> dict[str, dict[int, dict[str, float]]]:
    """Every (backend, size) cell, printing progress as it goes."""
    out: dict[str, dict[int, dict[str, float]]] = {}
    for total in sizes:
        for backend in backends:
            cell = measure(backend, total)
            out.setdefault(backend, {})[total] = cell
            print(f"  {backend:>13} {int(cell['ops']):>7,} ops: {cell['ops_s']:>10,.0f} ops/s "
                  f"({cell['seconds']:.1f} s wall, {cell['cpu']:.1f} s CPU)", flush=True)  # fmt: skip
    return out


def table(results: dict[str, dict[int, dict[str, float]]], sizes: list[int]) -> str:
    """A markdown table: ops/s per backend and size, and ChromaStore / AsyncSqliteStore."""
    lines = [
        "| ops | " + " | ".join(f"{b} (ops/s)" for b in results) + " | chroma / async-sqlite |",
        "|---:|" + "---:|" * (len(results) + 1),
    ]
    for total in sizes:
        cells = [results[b].get(total) for b in results]
        row = [f"{c['ops_s']:,.0f}" if c else "-" for c in cells]
        chroma = results.get("chroma-eph", {}).get(total)
        sqlite = results.get("async-sqlite", {}).get(total)
        ratio = f"{chroma['ops_s'] / sqlite['ops_s']:.3f}x" if chroma and sqlite else "-"
        n_ops = int(next(c for c in cells if c)["ops"]) if any(cells) else total
        lines.append(f"| {n_ops:,} | " + " | ".join(row) + f" | {ratio} |")
    lines.append("")
    lines.append("Target: ChromaStore at least 0.25x AsyncSqliteStore.")
    return "\n".join(lines)
