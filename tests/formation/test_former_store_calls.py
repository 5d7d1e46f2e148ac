"""A deferred batch costs a fixed number of store calls, however many entities it forms: its
facts and items are written in one batch, and each entity's item is read once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.store.base import BaseStore, GetOp, Op, PutOp

from langgraph_episodic.formation import Former, PendingTurn
from langgraph_episodic.graph.threads import thread_config
from langgraph_episodic.kinds.entities import EntityWriter
from tests.fakes import ScriptedChatModel


class Counting(BaseStore):
    """Passes every batch on and keeps it."""

    def __init__(self, inner: BaseStore) -> None:
        self.inner = inner
        self.batches: list[list[Op]] = []

    def batch(self, ops: Iterable[Op]) -> list[Any]:
        listed = list(ops)
        self.batches.append(listed)
        return self.inner.batch(listed)

    async def abatch(self, ops: Iterable[Op]) -> list[Any]:
        return self.batch(ops)


def extraction(names: list[str]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{
        "name": "ExtractedEntities", "id": "call", "type": "tool_call",
        "args": {"entities": [{"name": n, "description": f"The user relies on {n} at work."}
                              for n in names]}}])


def form(store: BaseStore, user: str, n: int) -> Counting:
    names = [f"Tool{i}" for i in range(n)]
    former = Former(EntityWriter(ScriptedChatModel(script=[extraction(names)])), episodes=False)
    counting = Counting(store)
    turns = [PendingTurn.of_run(thread_config(user, "s1"), user, text=f"I rely on {name} at work.")
             for name in names]
    formed = former.form(counting, turns)
    assert sorted(formed.entities) == sorted(names)
    found = store.search(("entities", user), limit=100, filter={"kind": "entity"})
    assert sorted(i.value["name"] for i in found) == sorted(names)
    return counting


def test_ten_entities_cost_the_store_calls_of_one(store: BaseStore) -> None:
    one, ten = form(store, "alice", 1), form(store, "bob", 10)
    assert len(ten.batches) == len(one.batches)
    writes = [b for b in ten.batches if any(isinstance(op, PutOp) for op in b)]
    assert len(writes) == 1, "the facts and the items in one write batch"
    kinds = sorted(op.value["kind"] for op in writes[0] if isinstance(op, PutOp) and op.value)
    assert kinds == ["entity"] * 10 + ["fact"] * 10
    item_reads = [op.key for b in ten.batches for op in b
                  if isinstance(op, GetOp) and op.key.startswith("tool")]
    assert sorted(item_reads) == sorted(f"tool{i}" for i in range(10)), "each item read once"
