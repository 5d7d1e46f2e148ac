"""The async op mix of LangGraph's ``test_large_batches_async``, as a throughput benchmark.

LangGraph's own async store test gathers, for M rounds of N keys, six ops per key on one event
loop: ``aput``, ``aget``, ``alist_namespaces(max_depth=m+1)``, ``asearch(("test",))``, ``aput``
and ``adelete``, all through one ``asyncio.gather`` (the Postgres suite's version: N=1000, M=10,
60,000 ops). That is the load of a LangGraph server running many graph runs at once. Here the
same mix runs at a chosen total and reports ops/s for ChromaStore (ephemeral, no index), ``AsyncSqliteStore`` and ``InMemoryStore``.

    python benchmarks/throughput.py --async-mix 12000,60000
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

ROUNDS = 10
"""M of LangGraph's test: namespaces alternate between two, ``max_depth`` grows per round."""

BACKENDS = ("chroma-eph", "async-sqlite", "inmemory", "chroma-floor", "chroma-floor-batched")
"""``chroma-floor``: raw chromadb making only the writes the mix asks for (an upsert per put, a
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


async def _measure_tasks(backend: str, tasks: int, total: int) -> dict[str, float]:
    async with FACTORIES[backend]() as store:
        keys = max(1, total // (6 * tasks))
        await _one_task(store, -1, 2)  # warm up
        started, cpu = time.perf_counter(), time.process_time()
        counts = await asyncio.gather(*(_one_task(store, t, keys) for t in range(tasks)))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    ops = float(sum(counts))
    return {"ops": ops, "seconds": wall, "cpu": cpu, "ops_s": ops / wall}


def run_tasks(
    tasks: list[int], backends: list[str], total: int, rounds: int = 2
) -> dict[str, dict[int, dict[str, float]]]:
    """The mix run by ``tasks`` concurrent tasks (each awaiting its ops one by one), about
    ``total`` ops per cell; backends alternate within each round, the best round is kept."""
    out: dict[str, dict[int, dict[str, float]]] = {}
    for n in tasks:
        for r in range(rounds):
            for backend in backends if r % 2 == 0 else backends[::-1]:
                cell = asyncio.run(_measure_tasks(backend, n, total))
                best = out.setdefault(backend, {}).get(n)
                if best is None or cell["ops_s"] > best["ops_s"]:
                    out[backend][n] = cell
                print(f"  {backend:>13} {n:>4} tasks: {cell['ops_s']:>10,.0f} ops/s "
                      f"({cell['seconds']:.1f} s wall, {cell['cpu']:.1f} s CPU)", flush=True)  # fmt: skip
    return out


def tasks_table(results: dict[str, dict[int, dict[str, float]]], tasks: list[int]) -> str:
    """A markdown table: ops/s per backend and task count, and each against AsyncSqliteStore."""
    others = [b for b in results if b != "async-sqlite"]
    lines = [
        "| tasks | "
        + " | ".join(f"{b} (ops/s)" for b in results)
        + "".join(f" | {b} / async-sqlite" for b in others)
        + " |",
        "|---:|" + "---:|" * (len(results) + len(others)),
    ]
    for n in tasks:
        row = [f"{results[b][n]['ops_s']:,.0f}" if n in results[b] else "-" for b in results]
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
