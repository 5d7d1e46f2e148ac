"""A search racing an update of an item finds the item (its old or new value), never misses it.

A search ranks a snapshot of the in-process state (vectors, BM25 shards), then reads the
ranked items' records and keeps a candidate only if the vectors or text it was ranked by carry
the item's current tag. An update landing between the two made the item fail that check: the
search answered as if the item did not exist (found by a test of the shared-field lift;
measured on a small store: 1-4 of 600 searches racing 200 updates, in lexical mode an empty
answer). :func:`search.run` ranks again when this process committed a write during
the search.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma import backend as backend_module
from langgraph_episodic.chroma import record_format, search
from langgraph_episodic.chroma.backend import Backend

NS = ("users", "u1")
MODES = ["lexical", "dense", "hybrid"]
OTHERS = [f"other memory number {i} about lakes and rivers" for i in range(8)]


def open_store(mode: str, collection: str | None = None) -> ChromaStore:
    """A small store; with ``collection``, a ``shared=True`` store on that collection (two of
    them behave as two processes on one server: separate state, one Chroma)."""
    index = {"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]}
    if collection is not None:
        store = ChromaStore.ephemeral(
            collection=collection, index=index, search_mode=mode, shared=True
        )
    else:
        store = ChromaStore.ephemeral(index=index, search_mode=mode)
    for i, text in enumerate(OTHERS):
        store.put(NS, f"o{i}", {"text": text})
    store.put(NS, "trip", {"text": "kayak trip on the lake", "round": 0})
    return store



@pytest.mark.parametrize("writer_is", ["same store", "another process"])
@pytest.mark.parametrize("mode", MODES)
def test_an_update_between_the_ranking_and_the_read_of_records(
    mode: str, writer_is: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forced: the first read of records of the search waits until another thread has
    updated the item the search is about to find (same text, new tag), through the same store
    or through a second shared store on the same collection (another process on a server)."""
    if writer_is == "same store":
        store = writer = open_store(mode)
    else:
        name = f"upd-{uuid.uuid4().hex[:8]}"
        writer = open_store(mode, collection=name)
        store = ChromaStore.ephemeral(
            collection=name,
            index={"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]},
            search_mode=mode,
            shared=True,
        )
        assert store.search(NS, query="kayak trip", limit=1)[0].key == "trip"  # state loaded
    real_fetch = Backend.fetch
    updated = threading.Event()

    def fetch(self: Backend, ids: Any, *args: Any) -> dict[str, dict[str, Any]]:
        if not updated.is_set() and threading.current_thread().name == "searcher":
            updated.set()
            with ThreadPoolExecutor(1) as pool:  # the writer is another thread
                new = {"text": "kayak trip on the lake", "round": 1}
                pool.submit(writer.put, NS, "trip", new).result()
        return real_fetch(self, ids, *args)

    monkeypatch.setattr(Backend, "fetch", fetch)
    found: list[Any] = []
    searcher = threading.Thread(
        target=lambda: found.extend(store.search(NS, query="kayak trip", limit=3)), name="searcher"
    )
    searcher.start()
    searcher.join(60)
    assert updated.is_set(), "the update did not land inside the search"
    assert found and found[0].key == "trip", [(i.key, i.score) for i in found]
    assert found[0].value["round"] == 1  # read after the update: its value is the new one
    store.close()
    writer.close()


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_a_candidate_that_fails_the_tag_check_without_a_write_is_not_ranked_again(
    mode: str, shared: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Vectors left behind by a crash fail the same check forever: with no write committed
    meanwhile the search must not rank again (it would only repeat itself). A shared store
    cannot see other processes' commits: it reloads the namespace once, misses the same record
    again, and stops."""
    store = open_store(mode, collection=f"left-{uuid.uuid4().hex[:8]}" if shared else None)
    real_fetch = Backend.fetch
    trip = record_format.item_id(NS, "trip")

    def fetch(self: Backend, ids: Any, *args: Any) -> dict[str, dict[str, Any]]:
        got = dict(real_fetch(self, ids, *args))
        if trip in got:
            got[trip] = {**got[trip], "_vtag": "leftover"}  # as if ranked by another value's vectors
        return got

    monkeypatch.setattr(Backend, "fetch", fetch)
    runs = []
    real_once = search._once

    def counted(*args: Any) -> Any:
        runs.append(1)
        return real_once(*args)

    monkeypatch.setattr(search, "_once", counted)
    hits = store.search(NS, query="kayak trip", limit=3)
    assert "trip" not in [h.key for h in hits]  # its tag does not match: never answered
    assert len(runs) == (2 if shared else 1)
    store.close()


@pytest.mark.parametrize("mode", MODES)
def test_searches_racing_updates_always_find_the_item(mode: str, fast_switching: None) -> None:
    """The unforced race: one thread updates the item 150 times, two search it 200 times each,
    started together behind a barrier with a thread switch every microsecond."""
    store = open_store(mode)
    barrier = threading.Barrier(3)
    misses: list[Any] = []

    def writer() -> None:
        barrier.wait()
        for r in range(150):
            store.put(NS, "trip", {"text": "kayak trip on the lake", "round": r})

    def reader() -> None:
        barrier.wait()
        for _ in range(200):
            hits = store.search(NS, query="kayak trip", limit=3)
            if not hits or hits[0].key != "trip":
                misses.append([(h.key, h.score) for h in hits])

    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(writer), pool.submit(reader), pool.submit(reader)]
        for future in futures:
            future.result(timeout=300)
    assert not misses, misses[:3]
    assert search.RERANKS >= 1
    store.close()


def test_a_write_while_the_search_loads_the_shards_keeps_the_lexical_side(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Forced: the search's first load of the namespace (text read from Chroma, shards built)
    pauses until another thread has written to that namespace. The shards are then not kept
    (a newer version exists), and the search scored the namespace with no lexical side at all:
    every score 0 (seen in 1-2 of 1,200 searches racing writes; in lexical mode, as here, an
    empty answer). It now scores what it read."""
    store = open_store("lexical")  # written, never searched: the first search loads the shards
    wrote = threading.Event()

    def hook(step: str) -> None:
        if step == "load" and not wrote.is_set() and threading.current_thread().name == "searcher":
            wrote.set()
            with ThreadPoolExecutor(1) as pool:
                pool.submit(store.put, NS, "new", {"text": "an unrelated new memory"}).result()

    monkeypatch.setattr(backend_module, "race_hook", hook)
    found: list[Any] = []
    searcher = threading.Thread(
        target=lambda: found.extend(store.search(NS, query="kayak trip", limit=3)), name="searcher"
    )
    searcher.start()
    searcher.join(60)
    assert wrote.is_set(), "the write did not land inside the load"
    assert found and found[0].key == "trip" and (found[0].score or 0.0) > 0.0, [
        (i.key, i.score) for i in found
    ]
    store.close()
