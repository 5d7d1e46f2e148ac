"""The raw chromadb floor of the async op mix benchmark does the mix's work: its reads answer
what ChromaStore's answer, so the floor is not a shortcut that skips them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from script_modules import script_module

MIX = Path(__file__).resolve().parents[2] / "benchmarks" / "_async_mix.py"


async def _answers(store: Any) -> list[Any]:
    """One task's ops on two namespaces, and what each read answered (items as comparable
    tuples: the floor returns dicts, the store ``Item``s)."""

    def item(got: Any) -> Any:
        if got is None:
            return None
        if isinstance(got, dict):
            return (tuple(got["namespace"]), got["key"], got["value"])
        return (tuple(got.namespace), got.key, got.value)

    a, b = ("test", "foo", "bar", "baz", "0"), ("test", "foo", "bar", "baz", "1")
    out: list[Any] = []
    await store.aput(a, "k1", value={"foo": "bar1"})
    await store.aput(b, "k2", value={"foo": "bar2"})
    await store.aput(a, "k3", value={"foo": "bar3"})
    out.append(item(await store.aget(a, "k1")))
    out.append(item(await store.aget(b, "k1")))
    for depth in (1, 3, 5):
        out.append(await store.alist_namespaces(prefix=None, max_depth=depth))
    out.append(sorted(item(i) for i in await store.asearch(("test",))))
    await store.adelete(a, "k1")
    out.append(item(await store.aget(a, "k1")))
    out.append(sorted(item(i) for i in await store.asearch(("test",))))
    await store.adelete(b, "k2")
    out.append(await store.alist_namespaces(prefix=None, max_depth=5))
    return out


async def _run(mix: Any, backend: str) -> list[Any]:
    async with mix.FACTORIES[backend]() as store:
        return await _answers(store)


@pytest.mark.parametrize("backend", ["raw-chroma", "raw-chroma-1t"])
def test_the_raw_chromadb_floor_answers_what_the_store_answers(backend: str) -> None:
    with script_module("async_mix_floor", MIX) as mix:
        ours = asyncio.run(_run(mix, "chroma-eph"))
        raw = asyncio.run(_run(mix, backend))
    assert raw == ours
    assert ours[0] == (("test", "foo", "bar", "baz", "0"), "k1", {"foo": "bar1"})
    assert ours[1] is None
    assert ours[2] == [("test",)]
    assert len(ours[5]) == 3 and len(ours[7]) == 2
    assert ours[-1] == [("test", "foo", "bar", "baz", "0")]
