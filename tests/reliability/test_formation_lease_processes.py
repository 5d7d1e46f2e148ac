"""The formation lease across two real processes on one real ``chroma run`` server.

Two interpreters serve the same user from one Chroma server (two replicas of an app), each
with its own :class:`~langgraph_episodic.formation.DeferredFormation`. The user's queue holds
turns a stopped process left; both processes start at one signal (a file), so both find those
turns at once, and each then answers more turns of the user, which both workers see in the
shared queue. Each process logs when it held the user's formation lease (from the moment
``acquire`` granted it to the moment it called ``release``) and when it wrote the user's
entities. Afterwards:

* the lease periods of the two processes never overlap, and every entity write of a process
  falls in one of its own periods;
* every fact told was formed exactly once: one write of its fact record and one of its item,
  across both processes; none is missing and the queue is empty.
"""

from __future__ import annotations

import itertools
import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from .conftest import LineReader, popen_python, reap, stderr_of

pytestmark = [pytest.mark.server, pytest.mark.xdist_group("server-processes")]

LEFT = 6
"""Turns in the queue before the processes start (left by a stopped process)."""
EACH = 5
"""Turns each process answers after the start."""

REPLICA = """
import json, re, sys, time
from pathlib import Path
from typing import Any
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.store.base import BaseStore, PutOp
from langgraph_episodic import ChromaStore, HashEmbeddings, build_memory_graph
from langgraph_episodic.formation import DeferredFormation, lease
from langgraph_episodic.graph.threads import thread_config

host, port, collection, name, folder, each = sys.argv[1:7]
folder, each = Path(folder), int(each)
periods: list[list[float]] = []
writes: list[list[Any]] = []


class Model(BaseChatModel):
    '''Extraction names each Fact_* token with its line; each call takes 0.2 s.'''

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        time.sleep(0.2)
        text = str(messages[-1].content)
        found = [{"name": m.group(0), "description": line.strip()}
                 for line in text.splitlines() for m in re.finditer(r"Fact_\\w+", line)]
        reply = AIMessage(content="", tool_calls=[{
            "name": "ExtractedEntities", "args": {"entities": found}, "id": "x",
            "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


class Logged(BaseStore):
    '''Passes every op on; logs the writes of the user's entities (facts and items).'''

    def __init__(self, inner):
        self.inner = inner

    def batch(self, ops):
        ops = list(ops)
        for op in ops:
            if isinstance(op, PutOp) and op.namespace[:1] == ("entities",) and op.value:
                writes.append([time.time(), op.value.get("kind"), op.key])
        return self.inner.batch(ops)

    async def abatch(self, ops):
        return self.batch(ops)


real_acquire, real_release = lease.acquire, lease.release


def acquire(store, user, owner):
    held = real_acquire(store, user, owner)
    if held:
        periods.append([time.time(), float("inf")])
    return held


def release(store, user, owner):
    periods[-1][1] = time.time()
    real_release(store, user, owner)


lease.acquire, lease.release = acquire, release  # the worker calls lease.acquire(...)

store = Logged(ChromaStore.http(host, int(port), collection=collection,
                                index={"dims": 64, "embed": HashEmbeddings(64)}))
(folder / f"ready-{name}").touch()
while not (folder / "go").exists():
    time.sleep(0.005)
formation = DeferredFormation(debounce=0.05, max_wait=2.0, workers=2)
graph = build_memory_graph(lambda state: {"messages": [("ai", "Noted.")]}, model=Model(),
                           store=store, summarize=False, defer=formation)  # finds the queue
config = thread_config("alice", f"thread-{name}")
for i in range(each):
    graph.invoke({"messages": [("user", f"Remember that Fact_{name}{i} is on my list.")]},
                 config)
    time.sleep(0.4)  # longer than a formation: several batches, both workers contending
drained = formation.close(timeout=120)
print(json.dumps({"drained": drained, "periods": periods, "writes": writes}), flush=True)
"""


def _store(server: Any, collection: str) -> Any:
    from langgraph_episodic import ChromaStore, HashEmbeddings

    return ChromaStore.http(server.host, server.port, collection=collection,
                            index={"dims": 64, "embed": HashEmbeddings(64)})


def _leave_turns(store: Any, n: int) -> list[str]:
    """Queue ``n`` turns of alice, as a process stopped before forming them leaves them."""
    from langgraph_episodic._effects import run
    from langgraph_episodic.formation.pending import PendingTurn, enqueue
    from langgraph_episodic.graph.threads import thread_config

    facts = [f"Fact_left{i}" for i in range(n)]
    for fact in facts:
        turn = PendingTurn.of_run(thread_config("alice", "left"), "alice",
                                  text=f"Remember that {fact} is on my list.")
        run(enqueue(store, turn))
    return facts


def _start_together(server: Any, collection: str, folder: Path) -> list[dict[str, Any]]:
    names = ["a", "b"]
    procs = [popen_python(REPLICA, server.host, str(server.port), collection, name,
                          str(folder), str(EACH)) for name in names]
    readers = [LineReader(p) for p in procs]
    try:
        deadline = time.monotonic() + 120
        while not all((folder / f"ready-{n}").exists() for n in names):
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                pytest.fail("a replica did not get ready:\n" +
                            "\n".join(stderr_of(p) for p in procs if p.poll() is not None))
            time.sleep(0.01)
        (folder / "go").touch()
        results = []
        for p, reader in zip(procs, readers, strict=True):
            p.wait(timeout=300)
            lines = reader.finish()
            if p.returncode != 0 or not lines:
                pytest.fail(f"replica failed ({p.returncode}):\n{stderr_of(p)}")
            results.append(json.loads(lines[-1]))
        return results
    finally:
        for p in procs:
            reap(p)


def test_two_processes_form_one_users_queue_one_at_a_time_each_fact_once(
    chroma_server: Any, tmp_path: Path
) -> None:
    collection = f"lease-{uuid.uuid4().hex[:10]}"
    store = _store(chroma_server, collection)
    told = _leave_turns(store, LEFT)
    told += [f"Fact_{name}{i}" for name in "ab" for i in range(EACH)]
    results = _start_together(chroma_server, collection, tmp_path)
    assert all(r["drained"] for r in results), results

    periods = sorted((start, end, who) for who, r in enumerate(results)
                     for start, end in r["periods"])
    assert all(end < float("inf") for _, end, _ in periods), "every lease taken was released"
    for (_, end, who), (start, _, other) in itertools.pairwise(periods):
        assert end <= start, f"process {who} held the lease until {end}, process {other} " \
                             f"took it at {start}"
    for who, r in enumerate(results):
        for at, kind, key in r["writes"]:
            assert any(s <= at <= e for s, e in r["periods"]), \
                f"process {who} wrote {kind} {key} outside its lease"

    writes = [(kind, key) for r in results for _, kind, key in r["writes"]]
    items = [key for kind, key in writes if kind == "entity"]
    assert sorted(items) == sorted(f.lower() for f in told), "each item written once"
    facts = [key for kind, key in writes if kind == "fact"]
    assert len(facts) == len(set(facts)) == len(told), "each fact record written once"
    stored = store.search(("entities", "alice"), limit=100, filter={"kind": "entity"})
    assert sorted(i.value["name"] for i in stored) == sorted(told)
    assert store.search(("_pending",), limit=100) == []
    assert all(r["periods"] for r in results), "each process took the lease at least once"
