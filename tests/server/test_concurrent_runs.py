"""Concurrent runs of one user, as the LangGraph server executes them (here in process: the
example graph on an embedded ChromaStore, ten ``ainvoke`` at once).

Episodes are separate items and all land. Entities are not: the entity-extract node reads the
stored description, merges the new sentence in and puts it back, with nothing that makes the
read and the write one step, so runs that overlap overwrite each other's sentences. Seen on
``langgraph dev`` too (10 runs at once: 2 of 10 sentences kept). The test makes the
overlap certain (every run reads before any writes), so its outcome does not depend on timing. The store has no
compare-and-set to build on (nor has LangGraph's ``BaseStore``), so this is recorded, not fixed
here.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import GetOp

from langgraph_episodic import ChromaStore, EpisodeMemories, HashEmbeddings, build_memory_graph

from .conftest import EXAMPLE

RUNS = 10


class ReadsTogether(ChromaStore):
    """A ChromaStore on which every run's read of an entity returns only once all ``RUNS``
    runs have read it: the interleaving "all read, then all write", made certain."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.entity_reads = 0
        self.all_read = asyncio.Event()

    async def abatch(self, ops: Any) -> Any:
        ops = list(ops)
        results = await super().abatch(ops)
        if any(isinstance(op, GetOp) and op.namespace[0] == "entities" for op in ops):
            self.entity_reads += 1
            if self.entity_reads >= RUNS:
                self.all_read.set()
            await asyncio.wait_for(self.all_read.wait(), timeout=60)
        return results


def example_agent() -> Any:
    spec = importlib.util.spec_from_file_location("example_graph", EXAMPLE / "graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.offline_agent


async def run_at_once(
    fast_tmp_path: Path, text: str, store_class: type[ChromaStore] = ChromaStore
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
            {"messages": [("user", text.format(i=i))], "feedback": {"reward": 1.0}},
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


@pytest.mark.xfail(
    strict=True,  # XPASS fails: remove the mark once the node is fixed
    reason="entity_extract_node read-merge-writes a user's entity without a lock or "
    "compare-and-set: concurrent runs of one user lose description sentences",
)
async def test_concurrent_runs_keep_every_entity_sentence(fast_tmp_path: Path) -> None:
    text = "ACME opened an office in City{i}."
    store, _ = await run_at_once(fast_tmp_path, text, ReadsTogether)
    try:
        item = store.get(("entities", "alice"), "acme")
        assert item is not None
        description = item.value["description"]
        kept = [i for i in range(RUNS) if f"City{i}." in description]
        assert kept == list(range(RUNS)), description
    finally:
        store.close()
