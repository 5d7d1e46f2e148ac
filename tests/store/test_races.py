"""Races on one store's in-process state, forced rather than hoped for.

Each test pins one interleaving that broke the store before it had one owner of its state
(issue 13): threads behind a barrier with a tiny switch interval, or a hook that pauses one
side between its read of Chroma and what it does with the answer while the other side writes.
Pauses wait on events with a timeout, so a store that (correctly) blocks the writer while the
reader is paused still finishes: the writer then lands after the reader, which is also fine.

Two ``shared=True`` stores on one ephemeral collection behave as two processes on one server
(separate caches and locks, one Chroma), without starting a server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from chromadb.api.models.Collection import Collection
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.testing import (
    forget_cached_items,
    forget_process_state,
    gateway_of,
    known_item_ids,
)
from langgraph_episodic.privacy import forget_user

from ._support import HTTP, backend_param

DIMS = 64
SEED = 3000
ASYNC_PUTS = 300
"""Namespaces under the prefix before the race (a longer iteration for a put to land in)."""
PAUSE_S = 1.5
"""Longest a paused reader waits for the writer (a store that blocks the writer meanwhile
makes the writer land after the pause instead)."""


def _index() -> Any:
    return {"dims": DIMS, "embed": HashEmbeddings(DIMS)}


class Pause:
    """Pause the thread that makes the first matching ``Collection.get`` right after Chroma
    answered, until :meth:`resume` (or the timeout)."""

    def __init__(self, match: Callable[[Collection, dict[str, Any]], bool]) -> None:
        self.match = match
        self.reader: int | None = None
        """Only calls from this thread id pause (None: any thread)."""
        self.paused = threading.Event()
        self._resume = threading.Event()
        self._fired = False
        self._lock = threading.Lock()

    def resume(self) -> None:
        self._resume.set()

    def maybe_pause(self, col: Collection, kwargs: dict[str, Any]) -> None:
        if self.reader is not None and threading.get_ident() != self.reader:
            return
        if not self.match(col, kwargs):
            return
        with self._lock:
            if self._fired:
                return
            self._fired = True
        self.paused.set()
        self._resume.wait(PAUSE_S)


@contextmanager
def pausing(pause: Pause) -> Iterator[Pause]:
    original = Collection.get

    def get(self: Collection, *args: Any, **kwargs: Any) -> Any:
        out = original(self, *args, **kwargs)
        pause.maybe_pause(self, kwargs)
        return out

    Collection.get = get  # type: ignore[method-assign]  # a test hook on the Chroma client
    try:
        yield pause
    finally:
        Collection.get = original  # type: ignore[method-assign]  # restore


def run_in_thread(fn: Callable[[], Any]) -> concurrent.futures.Future[Any]:
    """Start ``fn`` in its own thread; the future re-raises what it raised."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    future = pool.submit(fn)
    pool.shutdown(wait=False)
    return future


def result(future: concurrent.futures.Future[Any]) -> Any:
    return future.result(timeout=30)


# --- threads on the namespace registry ------------------------------------------------------


@pytest.mark.usefixtures("fast_switching")
def test_listing_and_searching_while_puts_add_namespaces_under_the_prefix() -> None:
    store = ChromaStore.ephemeral(index=_index())
    store.batch([PutOp(("users", f"seed{n}"), "k", {"text": "seed"}) for n in range(SEED)])
    writers, readers, per_writer = 3, 3, 25
    barrier = threading.Barrier(writers + readers)
    errors: list[BaseException] = []

    def write(w: int) -> None:
        barrier.wait()
        for n in range(per_writer):
            store.put(("users", f"w{w}-{n}"), "k", {"text": f"writer {w} item {n}"})

    def read(r: int) -> None:
        barrier.wait()
        for _ in range(per_writer):
            store.list_namespaces(prefix=("users",), limit=10_000)
            store.search(("users",), query="writer item", limit=3)

    with concurrent.futures.ThreadPoolExecutor(writers + readers) as pool:
        futures = [pool.submit(write, w) for w in range(writers)]
        futures += [pool.submit(read, r) for r in range(readers)]
        for future in futures:
            error = future.exception(timeout=300)
            if error is not None:
                errors.append(error)
    assert not errors, errors[:3]
    listed = store.list_namespaces(prefix=("users",), limit=10_000)
    assert len(listed) == writers * per_writer + SEED


@pytest.mark.usefixtures("fast_switching")
def test_aput_and_alist_namespaces_gathered_on_one_loop() -> None:
    store = ChromaStore.ephemeral(index=None)
    store.batch([PutOp(("users", f"seed{n}"), "k", {"text": "seed"}) for n in range(SEED)])

    async def main() -> list[Any]:
        ops: list[Any] = []
        for n in range(ASYNC_PUTS):
            ops.append(store.aput(("users", f"u{n}"), "k", {"text": f"user {n}"}))
            ops.append(store.alist_namespaces(prefix=("users",), limit=10_000))
        return await asyncio.gather(*ops, return_exceptions=True)

    results = asyncio.run(main())
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, errors[:3]
    assert len(store.list_namespaces(prefix=("users",), limit=10_000)) == ASYNC_PUTS + SEED


# --- a reader writing back what it read after a put landed -----------------------------------


def test_get_does_not_write_back_a_value_older_than_a_concurrent_put() -> None:
    store = ChromaStore.ephemeral(index=_index())
    ns = ("users", "alice")
    store.put(ns, "pref", {"text": "version 1", "v": 1})
    forget_cached_items(store)  # the next get reads Chroma
    name = store.collection_name
    # (the item's record: an item with one text is its own vector record, in ``__vec``)
    pause = Pause(lambda col, kw: col.name in (name, f"{name}__vec") and kw.get("ids") is not None)
    with pausing(pause):

        def get() -> Any:
            pause.reader = threading.get_ident()
            return store.get(ns, "pref")

        reader = run_in_thread(get)
        assert pause.paused.wait(10), "the get never read Chroma"
        writer = run_in_thread(lambda: store.put(ns, "pref", {"text": "version 2", "v": 2}))
        concurrent.futures.wait([writer], timeout=PAUSE_S / 2)
        pause.resume()
        first = result(reader)
        result(writer)
    assert first is not None and first.value["v"] in (1, 2)
    after = store.get(ns, "pref")
    assert after is not None and after.value["v"] == 2, "get serves the value the put replaced"
    assert [i.value["v"] for i in store.search(ns)] == [2]


def test_put_landing_while_a_search_rebuilds_the_vector_block_is_not_lost() -> None:
    """A dense search compacting a namespace's vectors while a put lands must not drop the
    put's vector (before: its version was bumped, so the stale block looked fresh for good)."""
    from langgraph_episodic.chroma.ranking import vectors as vector_cache

    store = ChromaStore.ephemeral(index=_index(), search_mode="dense")
    ns = ("users", "alice")
    for n in range(5):
        store.put(ns, f"k{n}", {"text": f"ordinary memory number {n}"})
    store.search(ns, query="ordinary memory")  # loads the namespace's vectors
    store.put(ns, "pending", {"text": "a pending row to stack"})  # the next search rebuilds
    paused, resume = threading.Event(), threading.Event()
    reader_id: list[int] = []
    real_np = vector_cache.np

    class PausingNumpy:
        def __getattr__(self, name: str) -> Any:
            return getattr(real_np, name)

        def vstack(self, *args: Any, **kwargs: Any) -> Any:
            if reader_id and threading.get_ident() == reader_id[0] and not paused.is_set():
                paused.set()
                resume.wait(PAUSE_S)
            return real_np.vstack(*args, **kwargs)

    def search() -> Any:
        reader_id.append(threading.get_ident())
        return store.search(ns, query="ordinary memory")

    vector_cache.np = PausingNumpy()  # type: ignore[assignment]  # a test hook
    try:
        reader = run_in_thread(search)
        fired = paused.wait(5)
        writer = run_in_thread(
            lambda: store.put(ns, "late", {"text": "zebra crossing at midnight"})
        )
        concurrent.futures.wait([writer], timeout=PAUSE_S / 2)
        resume.set()
        result(reader)
        result(writer)
    finally:
        vector_cache.np = real_np
    assert fired or store.get(ns, "late") is not None
    hits = store.search(ns, query="zebra crossing at midnight", limit=1)
    assert [h.key for h in hits] == ["late"], "the put is lost from dense search"
    assert len(store.search(ns, query="memory", limit=100)) == 7


# --- check-then-act on the registry (two stores as two processes on one server) -------------


def _shared_pair() -> tuple[ChromaStore, ChromaStore]:
    name = f"race-{uuid.uuid4().hex[:12]}"
    a = ChromaStore.ephemeral(collection=name, index=_index(), shared=True)
    b = ChromaStore.ephemeral(collection=name, index=_index(), shared=True)
    return a, b


def _empty_check(name: str) -> Callable[[Collection, dict[str, Any]], bool]:
    """The "does this namespace still hold items?" read of the item records (an item with one
    text is its own vector record, in ``__vec``)."""
    return lambda col, kw: (
        col.name in (name, f"{name}__vec") and kw.get("where") is not None and not kw.get("ids")
    )


def test_delete_of_the_last_item_racing_a_put_leaves_the_put_listed_and_findable() -> None:
    a, b = _shared_pair()
    ns = ("users", "bob")
    a.put(ns, "old", {"text": "old memory"})
    pause = Pause(_empty_check(a.collection_name))
    with pausing(pause):

        def delete() -> None:
            pause.reader = threading.get_ident()
            a.delete(ns, "old")

        deleter = run_in_thread(delete)
        assert pause.paused.wait(10), "the delete never checked the namespace"
        writer = run_in_thread(lambda: b.put(ns, "new", {"text": "fresh memory of bob"}))
        concurrent.futures.wait([writer], timeout=PAUSE_S / 2)
        pause.resume()
        result(deleter)
        result(writer)
    for store in (a, b):
        assert ns in store.list_namespaces(prefix=("users",)), "the item exists but is unlisted"
        assert [i.key for i in store.search(ns, query="fresh memory of bob")] == ["new"]
        assert [i.key for i in store.search(("users",))] == ["new"]
    report = forget_user("bob", store=a)
    assert report.items_deleted == 1, "forget_user missed the item"
    assert b.get(ns, "new") is None


def test_deletes_racing_each_other_never_raise_on_an_emptied_namespace() -> None:
    """Two deletes emptying one namespace at once (before: ``max() arg is an empty sequence``
    on a delete that did apply)."""
    a, b = _shared_pair()
    ns = ("users", "carol")
    a.put(ns, "x", {"text": "x"}, ttl=60)
    a.put(ns, "y", {"text": "y"}, ttl=60)
    pause = Pause(_empty_check(a.collection_name))
    with pausing(pause):

        def delete() -> None:
            pause.reader = threading.get_ident()
            a.delete(ns, "x")

        deleter = run_in_thread(delete)
        assert pause.paused.wait(10)
        other = run_in_thread(lambda: b.delete(ns, "y"))
        concurrent.futures.wait([other], timeout=PAUSE_S / 2)
        pause.resume()
        result(deleter)
        result(other)
    assert a.search(ns) == [] and b.search(ns) == []
    assert ns not in a.list_namespaces() and ns not in b.list_namespaces()


@pytest.mark.parametrize("backend", [backend_param(HTTP)])
def test_a_sweep_never_deletes_an_item_another_process_just_put_again(
    make_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a server, a sweep reads the expired items, then deletes them; another process that
    puts one of them again (no TTL now) in between must keep it, with its vectors."""
    later = [0.0]
    sweeper = make_store(index=_index(), clock=lambda: time.time() + later[0])
    writer = make_store.twin(sweeper, clock=time.time)
    ns = ("users", "alice")
    sweeper.put(ns, "note", {"text": "an expiring draft about basalt"}, ttl=1)
    later[0] = 120.0  # the sweeper's clock: the item has expired
    gateway = gateway_of(sweeper)
    read_items = type(gateway).read_items

    def read_then_let_the_other_process_write(self: Any, where: Any) -> Any:
        got = read_items(self, where)
        if self is gateway:
            writer.put(ns, "note", {"text": "the final text about granite"})
        return got

    monkeypatch.setattr(type(gateway), "read_items", read_then_let_the_other_process_write)
    assert sweeper.sweep_ttl() == 0
    monkeypatch.undo()
    item = writer.get(ns, "note")
    assert item is not None and item.value == {"text": "the final text about granite"}
    assert [r.key for r in writer.search(ns, query="final text about granite")] == ["note"]
    assert writer.verify().ok


def test_a_search_merging_a_namespace_s_keyword_index_holds_no_lock_others_need(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past ``DELTA_LIMIT`` documents written since a namespace's keyword base, a search merges
    them into a new base, which takes time in proportion to the namespace. With that search
    paused inside the merge, a search of another namespace, a write into the same one and a
    search that sees the write still answer; then the paused search answers too."""
    from langgraph_episodic.chroma.ranking import lexical

    monkeypatch.setattr(lexical, "DELTA_LIMIT", 2)
    store = ChromaStore.ephemeral(collection=f"merge-kw-{uuid.uuid4().hex[:8]}", index=_index())
    big, other = ("users", "big"), ("users", "other")
    store.batch([PutOp(big, f"k{i}", {"text": f"harbour crane {i} lifts"}) for i in range(200)])
    store.put(other, "o", {"text": "the lighthouse keeper"})
    assert len(store.search(big, query="harbour crane", limit=5)) == 5  # packs big's shard
    assert store.search(other, query="lighthouse", limit=1)
    for i in range(3):  # past the limit: big's next search merges
        store.put(big, f"w{i}", {"text": f"a seagull {i} on the crane"})
    inside, resume = threading.Event(), threading.Event()
    original = lexical._merge

    def paused_merge(*args: Any) -> Any:
        if not inside.is_set():  # the first merge only
            inside.set()
            resume.wait(PAUSE_S * 4)
        return original(*args)

    monkeypatch.setattr(lexical, "_merge", paused_merge)
    searcher = run_in_thread(lambda: store.search(big, query="seagull", limit=5))
    try:
        assert inside.wait(10), "the search did not merge"
        answered = run_in_thread(
            lambda: (
                store.search(other, query="lighthouse", limit=1),
                store.put(big, "new", {"text": "a seagull nests on the crane"}),
                store.search(big, query="seagull nests", limit=1),
            )
        )
        lighthouse, _, nests = answered.result(timeout=PAUSE_S * 2)
    except concurrent.futures.TimeoutError:
        pytest.fail("others waited for a search's merge (it holds the state's lock)")
    finally:
        resume.set()
    assert [h.key for h in lighthouse] == ["o"] and [h.key for h in nests] == ["new"]
    assert {"w0", "w1", "w2"} <= {h.key for h in result(searcher)}
    assert {"w0", "w1", "w2", "new"} <= {
        h.key for h in store.search(big, query="seagull", limit=10)
    }
    store.close()


def test_a_write_merging_a_namespace_s_ids_holds_no_lock_readers_need(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A write that brings a namespace's set of item ids past its merge point merges it (time
    in proportion to the namespace: tens of milliseconds at 100,000 items). With the writer
    paused inside that merge, gets and searches of another namespace and of the same one still
    answer (the write already visible), and the set is then exact."""
    from langgraph_episodic.chroma import id_sets
    from langgraph_episodic.chroma.record_format import item_id

    store = ChromaStore.ephemeral(collection=f"merge-{uuid.uuid4().hex[:8]}", index=_index())
    big, other = ("users", "big"), ("users", "other")
    store.batch([PutOp(big, f"k{i}", {"text": f"harbour crane {i} lifts"}) for i in range(200)])
    store.put(other, "o", {"text": "the lighthouse keeper"})
    assert len(store.search(big, query="harbour crane", limit=5)) == 5
    inside, resume = threading.Event(), threading.Event()

    def paused_merge() -> None:
        inside.set()
        resume.wait(PAUSE_S * 4)

    monkeypatch.setattr(id_sets, "merge_hook", paused_merge)
    new = [PutOp(big, f"new{i}", {"text": f"a seagull {i} on the crane"}) for i in range(30)]
    writer = run_in_thread(lambda: store.batch(new))  # 30 changes: past an eighth of 200
    try:
        assert inside.wait(10), "the write did not merge"
        answered = run_in_thread(
            lambda: (
                store.get(other, "o"),
                store.search(other, query="lighthouse", limit=1),
                store.get(big, "new7"),
                store.search(big, query="seagull", limit=3),
            )
        )
        got, lighthouse, new7, seagulls = answered.result(timeout=PAUSE_S * 2)
    except concurrent.futures.TimeoutError:
        pytest.fail("readers waited for the writer's merge (it holds the state's lock)")
    finally:
        resume.set()
    assert got is not None and [h.key for h in lighthouse] == ["o"]
    assert new7 is not None and len(seagulls) == 3
    result(writer)
    monkeypatch.setattr(id_sets, "merge_hook", None)
    held = known_item_ids(store, big)
    assert held is not None
    keys = [f"k{i}" for i in range(200)] + [f"new{i}" for i in range(30)]
    assert len(held) == 230 and not held.missing(item_id(big, k) for k in keys)
    store.delete(big, "k3")  # a key it holds, after the merge
    assert item_id(big, "k3") not in held and len(held) == 229
    store.close()


@pytest.mark.parametrize("step", ["sort", "id set"])
def test_a_listing_read_sorts_and_sets_its_ids_holding_no_lock_readers_need(
    monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """A namespace's first listing (a search without a query) sorts the items it read and,
    in an embedded store, makes the set of their ids: time in proportion to the namespace.
    With the reader paused in either step, a get and a search of another namespace answer,
    and the listing and its set are then kept."""
    from langgraph_episodic.chroma import caches, id_sets
    from langgraph_episodic.chroma.record_format import item_id

    store = ChromaStore.ephemeral(collection=f"list-{uuid.uuid4().hex[:8]}", index=_index())
    big, other = ("users", "big"), ("users", "other")
    store.batch([PutOp(big, f"k{i}", {"text": f"harbour crane {i} lifts"}) for i in range(50)])
    store.put(other, "o", {"text": "the lighthouse keeper"})
    forget_process_state(store)  # as a new process sees the folder: nothing listed, no id sets
    assert store.search(other, limit=1)  # (other is listed; big is not)
    inside, resume = threading.Event(), threading.Event()

    def pause() -> None:
        if threading.current_thread() is not threading.main_thread() and not inside.is_set():
            inside.set()
            resume.wait(PAUSE_S * 4)

    if step == "sort":
        build = caches.Listing.build.__func__  # type: ignore[attr-defined]

        def paused_build(cls: Any, version: str, rows: Any) -> Any:
            if len(rows) == 50:
                pause()
            return build(cls, version, rows)

        monkeypatch.setattr(caches.Listing, "build", classmethod(paused_build))
    else:
        init = id_sets.IdSet.__init__

        def paused_init(self: Any, rids: Any = ()) -> None:
            rids = list(rids)
            if len(rids) == 50:
                pause()
            init(self, rids)

        monkeypatch.setattr(id_sets.IdSet, "__init__", paused_init)
    reader = run_in_thread(lambda: store.search(big, limit=100))
    try:
        assert inside.wait(10), f"the listing did not reach its {step}"
        answered = run_in_thread(
            lambda: (store.get(other, "o"), store.search(other, query="lighthouse", limit=1))
        )
        got, lighthouse = answered.result(timeout=PAUSE_S * 2)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"readers waited for another reader's {step} (it holds the state's lock)")
    finally:
        resume.set()
    assert got is not None and [h.key for h in lighthouse] == ["o"]
    assert len(result(reader)) == 50
    held = known_item_ids(store, big)
    assert held is not None and len(held) == 50
    assert not held.missing(item_id(big, f"k{i}") for i in range(50))
    store.close()
