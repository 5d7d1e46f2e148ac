"""Deferred formation survives SIGKILL: what was answered is formed by the next start, once.

A real interpreter answers two turns with ``defer=`` on a ``ChromaStore.persistent(path)``
(one turn carries feedback, so an episode is due as well) and is SIGKILLed before its worker
forms them. The next interpreter finds the turns in the store's queue and forms them. A
second scenario kills the forming interpreter after its formation writes and before it deletes
the queue items, the worst moment: the third start must find the memory complete and write
none of it again.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from .conftest import LineReader, popen_python, reap, stderr_of

APP = """
import json, sys, time
from langgraph.store.base import BaseStore, PutOp
from langgraph_episodic import ChromaStore, HashEmbeddings, build_memory_graph
from langgraph_episodic.formation import DeferredFormation
from langgraph_episodic.graph.threads import thread_config

path, phase, log = sys.argv[1], sys.argv[2], sys.argv[3]


class Logged(BaseStore):
    '''Passes every op to the store; logs formation writes; in phase "die", stops for good
    at the first deletion of a queue item (formed, not yet deleted).'''

    def __init__(self, inner):
        self.inner = inner

    def batch(self, ops):
        ops = list(ops)
        for op in ops:
            if isinstance(op, PutOp) and op.namespace[0] == "_pending" and op.value is None:
                if phase == "die":
                    print("FORMED", flush=True)
                    time.sleep(3600)
            elif isinstance(op, PutOp) and op.namespace[0] in ("entities", "episodes"):
                with open(log, "a") as f:
                    f.write(json.dumps([phase, list(op.namespace), op.key]) + "\\n")
        return self.inner.batch(ops)

    async def abatch(self, ops):
        return self.batch(ops)


store = Logged(ChromaStore.persistent(path, index={"dims": 64, "embed": HashEmbeddings(64)}))
wait = 3600.0 if phase == "answer" else 0.0
formation = DeferredFormation(debounce=wait, max_wait=wait)
graph = build_memory_graph(lambda state: {"messages": [("ai", "Noted.")]}, store=store,
                           summarize=False, defer=formation)
if phase == "answer":
    config = thread_config("alice", "s1")
    graph.invoke({"messages": [("user", "I work at ACME and I use LangGraph daily.")]}, config)
    graph.invoke({"messages": [("user", "Sort a list of numbers")],
                  "feedback": {"reward": 1.0}}, config)
    print("ANSWERED", flush=True)
    time.sleep(3600)
drained = formation.close(timeout=120)
inner = store.inner
print(json.dumps({
    "drained": drained,
    "entities": sorted(i.value["name"] for i in inner.search(("entities", "alice"), limit=100, filter={"kind": "entity"})),
    "episodes": [e.value["solution"] for e in inner.search(("episodes", "alice"), limit=100)],
    "pending": len(inner.search(("_pending",), limit=100)),
}), flush=True)
"""


def kill_after(path: Path, phase: str, log: Path, line: str) -> None:
    proc = popen_python(APP, str(path), phase, str(log))
    try:
        seen = LineReader(proc).wait_for(1, timeout=180)
        if seen != [line]:
            reap(proc)
            pytest.fail(f"{phase}: expected {line!r}, got {seen}:\n{stderr_of(proc)}")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
    finally:
        reap(proc)


def restart(path: Path, log: Path) -> dict[str, Any]:
    proc = popen_python(APP, str(path), "recover", str(log))
    try:
        lines = LineReader(proc).finish(timeout=180)
        proc.wait(timeout=30)
        if proc.returncode != 0 or not lines:
            pytest.fail(f"recover failed ({proc.returncode}):\n{stderr_of(proc)}")
        result: dict[str, Any] = json.loads(lines[-1])
        return result
    finally:
        reap(proc)


def writes(log: Path, phase: str) -> list[Any]:
    if not log.exists():
        return []
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    return [row[1:] for row in rows if row[0] == phase]


def test_killed_between_answer_and_formation_the_next_start_forms_it(tmp_path: Path) -> None:
    path, log = tmp_path / "db", tmp_path / "writes.jsonl"
    kill_after(path, "answer", log, "ANSWERED")
    assert writes(log, "answer") == [], "killed before anything was formed"
    result = restart(path, log)
    assert result == {"drained": True, "entities": ["ACME", "LangGraph"],
                      "episodes": ["Noted."], "pending": 0}


def test_killed_after_forming_before_dequeuing_nothing_is_formed_twice(tmp_path: Path) -> None:
    path, log = tmp_path / "db", tmp_path / "writes.jsonl"
    kill_after(path, "answer", log, "ANSWERED")
    kill_after(path, "die", log, "FORMED")
    formed = writes(log, "die")
    assert {ns[0] for ns, _ in formed} == {"entities", "episodes"}, formed
    assert {"acme", "langgraph"} <= {key for _, key in formed}, "both entities were formed"
    result = restart(path, log)
    assert result == {"drained": True, "entities": ["ACME", "LangGraph"],
                      "episodes": ["Noted."], "pending": 0}
    assert writes(log, "recover") == [], "the replay wrote nothing again"
