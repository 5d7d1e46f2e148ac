"""Concurrent runs of one user, as the LangGraph server executes them (here in process: the
example graph on an embedded ChromaStore, ten ``ainvoke`` at once).

Episodes are separate items and all land. Entities are read, merged and written back, so runs
that overlap would overwrite each other's sentences (seen on ``langgraph dev`` before the
entity nodes took a per-key lock: 2 of 10 sentences kept). The test widens the window between
each run's read and its write, so without the lock every run reads before any writes.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import GetOp

from langgraph_episodic import ChromaStore, HashEmbeddings, build_memory_graph
from langgraph_episodic.graph import EpisodeMemories

from .conftest import EXAMPLE

RUNS = 10


class SlowEntityReads(ChromaStore):
    """A ChromaStore that pauses after every read of an entity, so that without a lock around
    read-merge-write every concurrent run reads the same old description before any writes."""

    async def abatch(self, ops: Any) -> Any:
        ops = list(ops)
        results = await super().abatch(ops)
        if any(isinstance(op, GetOp) and op.namespace[0] == "entities" for op in ops):
            await asyncio.sleep(0.05)
        return results


def example_agent() -> Any:
    spec = importlib.util.spec_from_file_location("example_graph", EXAMPLE / "graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.offline_agent


async def run_at_once(
    fast_tmp_path: Path,
    text: str,
    store_class: type[ChromaStore] = ChromaStore,
    facts: tuple[str, ...] = (),
) -> tuple[ChromaStore, EpisodeMemories]:
    store = store_class.persistent(
        fast_tmp_path / "mem", index={"dims": 64, "embed": HashEmbeddings(64)}
    )
    memories = EpisodeMemories(store)
    graph = build_memory_graph(
        example_agent(), store=store, checkpointer=InMemorySaver(), memories=memories
    )

    async def run(i: int) -> Any:
        return await graph.ainvoke(
            {"messages": [("user", text.format(i=i, fact=facts[i] if facts else ""))], "feedback": {"reward": 1.0}},
            {"configurable": {"user_id": "alice", "thread_id": f"alice:t{i}"}},
        )

    await asyncio.gather(*(run(i) for i in range(RUNS)))
    return store, memories


async def test_every_concurrent_run_records_its_episode(fast_tmp_path: Path) -> None:
    store, memories = await run_at_once(fast_tmp_path, "Please sort the numbers, case {i}.")
    try:
        stored = store.search(("episodes", "alice"), limit=100)
        assert len(stored) == RUNS
        assert memories.for_config({"configurable": {"user_id": "alice"}}).count() == RUNS
    finally:
        store.close()


ACME_FACTS = (
    "ACME opened an office in Lisbon.",
    "ACME sells garden tools online.",
    "ACME hired forty engineers this spring.",
    "ACME moved its billing system to Postgres.",
    "ACME sponsors the local chess club.",
    "ACME ships parcels with a blue van.",
    "ACME pays invoices within ten days.",
    "ACME runs a yearly hackathon in June.",
    "ACME keeps its backups on tape.",
    "ACME prints catalogues for retired customers.",
)


async def test_concurrent_runs_keep_every_entity_sentence(fast_tmp_path: Path) -> None:
    assert len(ACME_FACTS) == RUNS
    store, _ = await run_at_once(fast_tmp_path, "{fact}", SlowEntityReads, facts=ACME_FACTS)
    try:
        item = store.get(("entities", "alice"), "acme")
        assert item is not None
        description = item.value["description"]
        lost = [fact for fact in ACME_FACTS if fact not in description]
        assert not lost, description
    finally:
        store.close()
