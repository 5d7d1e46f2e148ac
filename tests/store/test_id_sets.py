"""What an embedded store knows it holds (:mod:`langgraph_episodic.chroma.id_sets`): the set
against a plain set, the Chroma reads it saves, and its exactness while listings load and
writes land on other threads."""

from __future__ import annotations

import itertools
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
from chromadb.api.models.Collection import Collection
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma import backend as reads_module
from langgraph_episodic.chroma import id_sets
from langgraph_episodic.chroma.id_sets import IdSet
from langgraph_episodic.chroma.record_format import item_id
from langgraph_episodic.chroma.testing import (
    forget_cached_items,
    forget_process_state,
    known_item_ids,
    known_namespaces,
)

from ._support import hash_index

NS = ("users", "u1", "memories")

IDS = [
    "00" * 16,
    "00" * 15 + "01",
    "01" + "00" * 15,  # trailing zero bytes: numpy's S16 pads with them
    "0100" + "00" * 14,
    "ff" * 16,
    "ff" * 15 + "00",
    *(item_id(NS, f"k{i}") for i in range(6)),
]


OPS = ("add", "discard", "start", "run", "finish", "finish again")


@settings(max_examples=300, deadline=None)
@given(
    start=st.sets(st.sampled_from(IDS)),
    ops=st.lists(
        st.tuples(st.sampled_from(OPS), st.lists(st.sampled_from(IDS), max_size=4)), max_size=40
    ),
    merge_at=st.integers(0, 3),
)
def test_the_set_holds_what_a_plain_set_holds(
    start: set[str], ops: list[tuple[str, list[str]]], merge_at: int
) -> None:
    """Changes, and merges the way a store makes them: started (the changes sealed), run as
    if outside the lock while more changes land, installed; and one installed before handed
    in again later, maybe after further merges were sealed (refused, changing nothing)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(id_sets, "_MERGE_MIN", merge_at)  # merges due every few changes
        held, truth = IdSet(start), set(start)
        started: list[id_sets.Merge] = []
        built: list[tuple[id_sets.Merge, Any]] = []
        installed: list[tuple[id_sets.Merge, Any]] = []
        for op, rids in ops:
            if op == "add":
                held.change(add=rids)
                truth |= set(rids)
            elif op == "discard":
                held.change(discard=rids)
                truth -= set(rids)
            elif op == "start":
                merge = held.start_merge()  # the one sealed before, until it is installed
                pending = started + [m for m, _ in built]
                if merge is not None and not any(m is merge for m in pending):
                    started.append(merge)
            elif op == "run" and started:
                merge = started.pop(0)
                built.append((merge, merge.run()))
            elif op == "finish" and built:
                merge, merged = built.pop(0)
                assert held.finish_merge(merge, merged)
                assert not held.finish_merge(merge, merged)
                installed.append((merge, merged))
            elif op == "finish again" and installed:
                assert not held.finish_merge(*installed[len(rids) % len(installed)])
            assert len(held) == len(truth)
            assert held.missing(IDS) == set(IDS) - truth
            assert {rid for rid in IDS if rid in held} == truth
        while (merge := held.start_merge()) is not None:  # whatever is due merges in the end
            assert held.finish_merge(merge, merge.run())
        assert len(held) == len(truth) and held.missing(IDS) == set(IDS) - truth


def test_a_merge_runs_from_what_it_sealed_and_changes_since_stay_on_top() -> None:
    """The merge a writer runs outside the lock reads only what it sealed: changes made while
    it runs (here, before it runs) are neither lost nor merged twice."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(id_sets, "_MERGE_MIN", 1)
        held = IdSet(IDS[:4])
        held.change(add=IDS[4:6], discard=IDS[:1])
        merge = held.start_merge()
        assert merge is not None and held.start_merge() is merge  # sealed once, until installed
        held.change(add=IDS[:1] + IDS[6:7], discard=IDS[4:5] + IDS[1:2])
        truth = (set(IDS[:4]) | set(IDS[4:6])) - {IDS[0]}  # sealed
        truth = (truth | {IDS[0], IDS[6]}) - {IDS[4], IDS[1]}  # and on top
        merged = merge.run()
        assert held.missing(IDS) == set(IDS) - truth
        assert held.finish_merge(merge, merged)
        assert not held.finish_merge(merge, merged)
        assert held.missing(IDS) == set(IDS) - truth and len(held) == len(truth)
        assert held.start_merge() is not merge


@contextmanager
def chroma_reads() -> Iterator[list[str]]:
    """The names of the collections read (``get``) while inside."""
    seen: list[str] = []
    real = Collection.get

    def spy(self: Collection, *args: Any, **kwargs: Any) -> Any:
        seen.append(self.name)
        return real(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Collection, "get", spy)
        yield seen


def _store(**options: Any) -> ChromaStore:
    return ChromaStore.ephemeral(
        collection=f"ids-{uuid.uuid4().hex[:10]}", index=hash_index(fields=["text"]), **options
    )


@pytest.fixture
def store() -> Iterator[ChromaStore]:
    opened = _store()
    yield opened
    opened.close()


def test_a_put_of_a_new_key_reads_nothing_where_the_store_knows_the_namespace(
    store: ChromaStore,
) -> None:
    with chroma_reads() as reads:  # the registry, and that no item of the namespace exists
        store.put(NS, "first", {"text": "a namespace this process creates"})
    assert reads
    with chroma_reads() as reads:
        store.put(NS, "second", {"text": "a new key in it"})
        store.put(NS, "first", {"text": "and the first again"}, index=False)
    assert reads == []
    assert store.get(NS, "first").value == {"text": "and the first again"}  # type: ignore[union-attr]


def test_a_delete_of_the_last_item_reads_nothing_and_unlists_the_namespace(
    store: ChromaStore,
) -> None:
    store.put(NS, "only", {"text": "soon gone"})
    store.put(("other",), "stays", {"text": "here"})
    with chroma_reads() as reads:
        store.delete(NS, "only")
    assert reads == []
    assert store.list_namespaces() == [("other",)]
    assert store.search(NS) == []


def test_a_new_process_reads_until_it_has_listed_the_namespace(store: ChromaStore) -> None:
    store.put(NS, "old", {"text": "written before"})
    forget_process_state(store)  # what a new process knows
    with chroma_reads() as reads:
        store.put(NS, "new1", {"text": "a new key"})
    assert reads, "a store that never read the namespace must ask Chroma"
    assert {item.key for item in store.search(NS)} == {"old", "new1"}  # loads the listing
    with chroma_reads() as reads:
        store.put(NS, "new2", {"text": "another new key"})
    assert reads == []
    created = store.get(NS, "old").created_at  # type: ignore[union-attr]
    forget_cached_items(store)
    store.put(NS, "old", {"text": "rewritten"})  # known to exist: its record is read
    assert store.get(NS, "old").created_at == created  # type: ignore[union-attr]


def test_a_namespace_the_registry_lost_is_not_taken_for_empty(store: ChromaStore) -> None:
    """A crash (or a write from outside) can leave items whose namespace has no registry
    record (``verify`` reports it). A put there must still find the record it replaces, and
    a delete must still delete."""
    store.put(NS, "kept", {"text": "before the loss", "extra": 1})
    store.put(NS, "gone", {"text": "to delete"})
    created = store.get(NS, "kept").created_at  # type: ignore[union-attr]
    registry = store.collections["namespaces"]
    registry.delete(ids=registry.get(include=[])["ids"])
    forget_process_state(store)  # as a new process
    store.put(NS, "kept", {"text": "rewritten"})
    store.delete(NS, "gone")
    assert store.get(NS, "kept").created_at == created  # type: ignore[union-attr]
    assert store.get(NS, "gone") is None
    assert store.search(NS, filter={"extra": 1}) == []
    assert [item.key for item in store.search(NS)] == ["kept"]


def test_a_store_on_a_server_keeps_no_sets() -> None:
    """Other processes write to a server: every put reads the record it may replace."""
    name = f"ids-{uuid.uuid4().hex[:10]}"
    store = ChromaStore.ephemeral(collection=name, index=hash_index(fields=["text"]), shared=True)
    try:
        store.put(NS, "first", {"text": "one"})
        with chroma_reads() as reads:
            store.put(NS, "second", {"text": "two"})
        assert reads
        assert known_namespaces(store) == set()
    finally:
        store.close()


def _ids_in_chroma(store: ChromaStore) -> set[str]:
    return {item_id(ns, key) for ns, key in store.raw_records(lambda ns: ns == NS).items}


def test_a_listing_read_before_a_write_does_not_become_the_set(
    store: ChromaStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forced: a search reads the namespace's items, then waits while another thread puts a
    new key and deletes an old one. What it read is then out of date and must not become what
    the store knows it holds (else the next put of the deleted key would skip its read, and a
    put of the new one would take it for new)."""
    store.put(NS, "old", {"text": "listed, then deleted"})
    forget_process_state(store)  # nothing known: the search lists
    wrote = threading.Event()

    def hook(step: str) -> None:
        if step == "listings" and not wrote.is_set():
            wrote.set()
            with ThreadPoolExecutor(1) as pool:
                pool.submit(store.put, NS, "new", {"text": "written meanwhile"}).result()
                pool.submit(store.delete, NS, "old").result()

    monkeypatch.setattr(reads_module, "race_hook", hook)
    store.search(NS, limit=10)
    assert wrote.is_set(), "the write did not land inside the listing's load"
    held = known_item_ids(store, NS)
    assert held is None or (item_id(NS, "new") in held and item_id(NS, "old") not in held)
    monkeypatch.setattr(reads_module, "race_hook", None)
    assert [item.key for item in store.search(NS, limit=10)] == ["new"]
    held = known_item_ids(store, NS)
    assert held is not None
    assert item_id(NS, "new") in held and item_id(NS, "old") not in held


def test_sets_stay_exact_while_listings_load_and_writes_land() -> None:
    """Writers put and delete keys of one namespace while readers drop what the process knows
    and list the namespace again (a listing builds the set, kept only if no write landed
    meanwhile), all released together, with a thread switch every microsecond."""
    store = _store(item_cache_size=1)
    old = sys.getswitchinterval()
    try:
        store.put(NS, "seed", {"text": "keeps the namespace listed"})
        barrier = threading.Barrier(4)

        def writer(w: int) -> None:
            barrier.wait()
            for i in range(30):
                key = f"w{w}-{i % 5}"
                if i % 3 == 2:
                    store.delete(NS, key)
                else:
                    store.put(NS, key, {"text": f"value {i}"})

        def reader() -> None:
            barrier.wait()
            for i in range(30):
                if i % 4 == 0:
                    forget_process_state(store)
                store.search(NS, limit=100)

        sys.setswitchinterval(1e-6)
        with ThreadPoolExecutor(4) as pool:
            futures = [pool.submit(writer, w) for w in range(2)]
            futures += [pool.submit(reader) for _ in range(2)]
            for future in futures:
                future.result(timeout=300)
        sys.setswitchinterval(old)
        truth = _ids_in_chroma(store)
        held = known_item_ids(store, NS)
        if held is None:  # the last reset came after the last listing: list it once more
            store.search(NS, limit=100)
            held = known_item_ids(store, NS)
            assert held is not None
        keys = ["seed", *(f"w{w}-{i}" for w in range(2) for i in range(5))]
        assert {item_id(NS, k) for k in keys if item_id(NS, k) in held} == truth
        assert len(held) == len(truth)
    finally:
        sys.setswitchinterval(old)
        store.close()


def test_sets_stay_exact_while_merges_run_outside_the_lock() -> None:
    """Writers put and delete in one namespace, merging its set every few changes (each merge
    run by the writer outside the state's lock), while readers drop what the process knows,
    list the namespace again and read keys: a reset between a merge's start and its install
    leaves the merge to a set no longer used. All released together, a thread switch every
    microsecond; the set then holds exactly the ids Chroma holds."""
    store = _store(item_cache_size=1)
    old = sys.getswitchinterval()
    merges: list[int] = []
    keys = [f"k{i}" for i in range(40)]

    def merging() -> None:
        merges.append(threading.get_ident())
        time.sleep(0.005)  # a window for a reader to reset and list the namespace

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(id_sets, "_MERGE_MIN", 2)
            patch.setattr(id_sets, "merge_hook", merging)
            store.batch([PutOp(NS, key, {"text": f"seed {key}"}) for key in keys])
            barrier = threading.Barrier(5)

            def writer(w: int) -> None:
                barrier.wait()
                for i in range(12):
                    mine = [*keys[w::3][i % 7 :][:6], f"w{w}-{i}"]  # past an eighth
                    if i % 3 == 2:
                        store.batch([PutOp(NS, key, None) for key in mine])
                    else:
                        store.batch([PutOp(NS, key, {"text": f"{key} {i}"}) for key in mine])

            def reader(r: int) -> None:
                barrier.wait()
                reset = False
                for i in itertools.count():
                    if not reset and len(merges) >= 2 + 4 * r:  # between merges, or inside one
                        forget_process_state(store)
                        reset = True
                    store.search(NS, limit=200)
                    store.get(NS, keys[i % len(keys)])
                    if written.is_set():
                        return

            written = threading.Event()
            sys.setswitchinterval(1e-6)
            with ThreadPoolExecutor(5) as pool:
                readers = [pool.submit(reader, r) for r in range(2)]
                try:
                    for future in [pool.submit(writer, w) for w in range(3)]:
                        future.result(timeout=300)
                finally:
                    written.set()
                for future in readers:
                    future.result(timeout=300)
            sys.setswitchinterval(old)
        assert len(merges) >= 2, "the writers did not merge"
        truth = _ids_in_chroma(store)
        held = known_item_ids(store, NS)
        if held is None:  # the last reset came after the last listing: list it once more
            store.search(NS, limit=200)
            held = known_item_ids(store, NS)
            assert held is not None
        every = [*keys, *(f"w{w}-{i}" for w in range(3) for i in range(12))]
        assert {item_id(NS, k) for k in every if item_id(NS, k) in held} == truth
        assert len(held) == len(truth)
    finally:
        sys.setswitchinterval(old)
        store.close()
