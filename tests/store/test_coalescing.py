"""Concurrent async calls on one store are gathered into batches without changing any answer.

Each test runs the same calls through ``asyncio.gather`` (coalesced) and one by one, and
compares what every caller observed; and counts Chroma round trips to show the gathering.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.store.base import GetOp, PutOp

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.testing import count_runs

NS = ("users", "alice")


def _store() -> ChromaStore:
    return ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})


def test_gathered_calls_cost_one_execution_per_batch() -> None:
    store = _store()
    runs = count_runs(store)  # count executions

    async def main() -> None:
        await asyncio.gather(*(store.aput(NS, f"k{n}", {"text": f"memory {n}"}) for n in range(50)))
        await asyncio.gather(
            *(store.aget(NS, f"k{n}") for n in range(50)),
            *(store.asearch(NS, query=f"memory {n}", limit=2) for n in range(10)),
            store.alist_namespaces(),
        )

    asyncio.run(main())
    assert runs == [50, 61]
    assert len(store.search(NS, limit=100)) == 50


def test_each_caller_sees_what_it_would_see_alone() -> None:
    gathered, alone = _store(), _store()
    for store in (gathered, alone):
        store.put(NS, "a", {"text": "first value", "v": 0})

    async def caller(store: ChromaStore, n: int) -> list[Any]:
        seen = []
        await store.aput(NS, f"own{n}", {"text": f"own {n}", "v": n})
        item = await store.aget(NS, f"own{n}")  # after its own awaited put: must see it
        seen.append(item.value if item else None)
        await store.aput(NS, "a", {"text": "contended", "v": n})
        await store.adelete(NS, f"own{n}")
        seen.append(await store.aget(NS, f"own{n}"))
        seen.append(sorted(i.key for i in await store.asearch(NS, limit=100)
                           if i.key.startswith("own") and i.key == f"own{n}"))
        return seen

    async def together() -> list[Any]:
        return await asyncio.gather(*(caller(gathered, n) for n in range(8)))

    async def one_by_one() -> list[Any]:
        return [await caller(alone, n) for n in range(8)]

    assert asyncio.run(together()) == asyncio.run(one_by_one())
    last = gathered.get(NS, "a")
    assert last is not None and last.value["text"] == "contended"
    assert {i.key for i in gathered.search(NS, limit=100)} == {"a"}


def test_a_bad_call_fails_alone() -> None:
    store = _store()

    async def main() -> list[Any]:
        return await asyncio.gather(
            store.aput(NS, "good", {"text": "fine"}),
            store.aput(NS, "bad", {"text": float("nan")}),
            store.abatch([GetOp(NS, "good"), PutOp(NS, "other", {"text": "also fine"})]),
            return_exceptions=True,
        )

    results = asyncio.run(main())
    assert results[0] is None
    assert isinstance(results[1], ValueError)
    assert results[2] == [None, None]
    assert store.get(NS, "good") is not None and store.get(NS, "other") is not None
    assert store.get(NS, "bad") is None


def test_an_embedder_failure_fails_only_its_caller() -> None:
    class Picky(HashEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            if any("poison" in t for t in texts):
                raise RuntimeError("the embedder refused a text")
            return super().embed_documents(texts)

    store = ChromaStore.ephemeral(index={"dims": 64, "embed": Picky(64)})

    async def main() -> list[Any]:
        return await asyncio.gather(
            store.aput(NS, "ok", {"text": "fine"}),
            store.aput(NS, "poisoned", {"text": "poison"}),
            return_exceptions=True,
        )

    results = asyncio.run(main())
    assert results[0] is None
    assert isinstance(results[1], RuntimeError)
    assert store.get(NS, "ok") is not None and store.get(NS, "poisoned") is None


@pytest.mark.parametrize("loops", [2])
def test_a_store_serves_several_event_loops(loops: int) -> None:
    store = _store()
    for n in range(loops):
        asyncio.run(store.aput(NS, f"k{n}", {"text": "x"}))
    assert asyncio.run(store.aget(NS, "k0")) is not None
    assert len(store.search(NS)) == loops
