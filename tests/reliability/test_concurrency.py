"""Concurrency: many threads, asyncio tasks and processes on one store; nothing is lost.

Each writer writes its own keys (all must be there, exactly), overwrites one key of its own every
round (its last write must win) and a contended key every writer writes (its final value must be
one of the values written, and every reader must see the same one). Searches run all along and
must never raise. Afterwards each item's vector records must match its value.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from langgraph.store.base import BaseStore

from langgraph_episodic.chroma import record_format

from .conftest import LineReader, popen_python, raw_records, reap, stderr_of

NS = ("conc", "shared")
ROUNDS = 6
THREADS = 4
TASKS = 4
INDEX_FIELDS = ["text"]


def own_value(writer: str, r: int) -> dict[str, Any]:
    return {"text": f"writer {writer} round {r} owns this", "writer": writer, "round": r}


def hot_value(writer: str, r: int) -> dict[str, Any]:
    return {"text": f"hot written by {writer} in round {r}", "writer": writer, "round": r}


def written_hot(writers: list[str], rounds: int) -> list[dict[str, Any]]:
    return [hot_value(w, r) for w in writers for r in range(rounds)]


def check_store(store: BaseStore, writers: list[str], rounds: int) -> None:
    """Every own key, every writer's last 'mine', one agreed contended value."""
    for w in writers:
        for r in range(rounds):
            item = store.get(NS, f"{w}-{r}")
            assert item is not None and item.value == own_value(w, r), (w, r)
        mine = store.get(NS, f"{w}-mine")
        assert mine is not None and mine.value == own_value(w, rounds - 1), w
    hot = store.get(NS, "hot")
    assert hot is not None and hot.value in written_hot(writers, rounds)
    found = {i.key: i.value for i in store.search(NS, limit=10_000)}
    assert found["hot"] == hot.value
    assert len(found) == len(writers) * (rounds + 1) + 1


def check_vectors_match(store: Any) -> None:
    """Each item's current vector records (by the documented layout: ``<item>.<tag>#<i>`` with
    the item's ``_vtag``, or the item's own record) hold exactly its current text. Writers racing on one key on a server
    may leave the loser's vectors behind (never used by searches): ``verify`` removes them."""
    for attempt in range(2):
        records = raw_records(store)
        # (an item with one text is its own vector record, id without "#"; it wins over a
        # record of the same item in the item collection, a killed move's leftover)
        vectors = [r for r in records if r["collection"].endswith("__vec")]
        own = {r["id"] for r in vectors if "#" not in r["id"]}
        items = {r["id"]: r["meta"] for r in vectors if r["id"] in own}
        items.update(
            (r["id"], r["meta"])
            for r in records
            if "_value" in r["meta"] and r["id"] not in own and not r["collection"].endswith("__vec")
        )
        docs: dict[str, list[str]] = {}
        leftovers = 0
        for r in vectors:
            key = r["id"].rpartition("#")[0]
            iid = str(r["meta"]["_item"]) if key else r["id"]
            item = items.get(iid)
            tag = key.partition(".")[2] if key else str(r["meta"].get("_vtag"))
            if item is None or (item.get("_vtag") or "") != tag:
                leftovers += 1
                continue
            docs.setdefault(iid, []).append(r["text"])
        for rid, meta in items.items():
            value = record_format.value_of(meta)
            assert docs.get(rid, []) == [value["text"]], (rid, docs.get(rid))
        if not leftovers:
            return
        assert attempt == 0, f"{leftovers} leftover vector records after verify(repair=True)"
        report = store.verify(repair=True, grace_seconds=0)
        assert report.orphan_vectors + report.stale_vectors == leftovers


def _worker(store: BaseStore, writer: str, barrier: threading.Barrier) -> None:
    barrier.wait()
    for r in range(ROUNDS):
        store.put(NS, f"{writer}-{r}", own_value(writer, r), index=INDEX_FIELDS)
        store.put(NS, f"{writer}-mine", own_value(writer, r), index=INDEX_FIELDS)
        store.put(NS, "hot", hot_value(writer, r), index=INDEX_FIELDS)
        store.search(NS, query=f"writer {writer} round {r}", limit=5)
        store.search(NS, query="hot written", filter={"writer": writer}, limit=5)
        store.list_namespaces(prefix=("conc",))


async def _task(store: BaseStore, writer: str) -> None:
    for r in range(ROUNDS):
        await store.aput(NS, f"{writer}-{r}", own_value(writer, r), index=INDEX_FIELDS)
        await store.aput(NS, f"{writer}-mine", own_value(writer, r), index=INDEX_FIELDS)
        await store.aput(NS, "hot", hot_value(writer, r), index=INDEX_FIELDS)
        await store.asearch(NS, query=f"writer {writer} round {r}", limit=5)
        await store.aget(NS, "hot")


def test_threads_and_tasks_on_one_embedded_store() -> None:
    from langgraph_episodic import ChromaStore, HashEmbeddings

    store = ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})
    thread_writers = [f"t{i}" for i in range(THREADS)]
    task_writers = [f"a{i}" for i in range(TASKS)]
    barrier = threading.Barrier(THREADS + 1)
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        futures = [pool.submit(_worker, store, w, barrier) for w in thread_writers]

        async def tasks() -> None:
            barrier.wait()
            await asyncio.gather(*(_task(store, w) for w in task_writers))

        asyncio.run(tasks())  # a task that raises fails the test here
        for future in futures:
            future.result(timeout=120)  # a thread that raised re-raises here; a hung one times out
    check_store(store, thread_writers + task_writers, ROUNDS)
    check_vectors_match(store)
    store.close()


WORKER = """
import json, sys
from langgraph_episodic import ChromaStore, HashEmbeddings

host, port, collection, writer, rounds = sys.argv[1:6]
store = ChromaStore.http(host, int(port), collection=collection,
                         index={"dims": 64, "embed": HashEmbeddings(64)})
NS = ("conc", "shared")
for r in range(int(rounds)):
    own = {"text": f"writer {writer} round {r} owns this", "writer": writer, "round": r}
    hot = {"text": f"hot written by {writer} in round {r}", "writer": writer, "round": r}
    store.put(NS, f"{writer}-{r}", own, index=["text"])
    store.put(NS, f"{writer}-mine", own, index=["text"])
    store.put(NS, "hot", hot, index=["text"])
    for query in (f"writer {writer} round {r}", "hot written"):
        store.search(NS, query=query, limit=5)  # an error ends the process: the test sees it
print("done", flush=True)
sys.stdin.readline()  # wait until every writer is done
hot = store.get(NS, "hot")
hits = [i.key for i in store.search(NS, query=hot.value["text"], limit=3)]
print("read", json.dumps({"hot": hot.value, "found": "hot" in hits}), flush=True)
"""

PROCESSES = 3


@pytest.mark.server
def test_processes_through_a_chroma_server(chroma_server: Any) -> None:
    import subprocess
    import uuid

    from langgraph_episodic import ChromaStore, HashEmbeddings

    collection = f"conc-{uuid.uuid4().hex[:12]}"
    writers = [f"p{i}" for i in range(PROCESSES)]
    args: Callable[[str], list[str]] = lambda w: [  # noqa: E731 - a one-line argument builder
        chroma_server.host, str(chroma_server.port), collection, w, str(ROUNDS)
    ]
    procs = [popen_python(WORKER, *args(w), stdin=subprocess.PIPE) for w in writers]
    try:
        readers = [LineReader(p) for p in procs]
        for proc, reader in zip(procs, readers, strict=True):
            lines = reader.wait_for(1, timeout=180)
            if not lines:
                reap(proc)
                pytest.fail(f"writer process failed or hung:\n{stderr_of(proc)}")
            assert lines[0] == "done", lines
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        seen = []
        for proc, reader in zip(procs, readers, strict=True):
            lines = reader.wait_for(2, timeout=120)
            assert len(lines) == 2, f"no read answer:\n{stderr_of(proc)}"
            seen.append(json.loads(lines[1].split(" ", 1)[1]))
            proc.wait(timeout=60)
    finally:
        for proc in procs:
            reap(proc)

    store = ChromaStore.http(chroma_server.host, chroma_server.port, collection=collection,
                             index={"dims": 64, "embed": HashEmbeddings(64)})
    check_store(store, writers, ROUNDS)
    final = store.get(NS, "hot")
    assert final is not None
    assert [s["hot"] for s in seen] == [final.value] * PROCESSES, "readers disagree on 'hot'"
    assert all(s["found"] for s in seen)
    check_vectors_match(store)
