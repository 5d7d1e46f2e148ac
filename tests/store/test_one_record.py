"""An item with one indexed text is one Chroma record; a put that moves an item between the
two collections and is killed half-way leaves the item whole, and ``verify`` repairs the rest.

A put's kill is simulated by making the Chroma call after the cut raise; the store is then
reopened on the same collection with no caches (a new process's view), as after a SIGKILL.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.gateway import Gateway
from langgraph_episodic.chroma.testing import forget_cached_items, forget_process_state

NS = ("users", "alice")
OTHER = ("users", "bob")
ONE = {"title": "the first title", "kind": "old"}
TWO = {"title": "a second title", "body": "and a body", "kind": "new"}


def _open(name: str, *, fresh: bool = False) -> ChromaStore:
    """The store of collection ``name``; ``fresh``: as a new process sees it (stores of one
    collection share their caches in a process, so it is opened as a server's store is,
    reading every record from Chroma)."""
    index = {"dims": 64, "embed": HashEmbeddings(64), "fields": ["title", "body"]}
    return ChromaStore.ephemeral(collection=name, index=index, shared=fresh)


class Killed(RuntimeError):
    """Stands for the process being killed at this Chroma call."""


def _kill_at(monkeypatch: pytest.MonkeyPatch, method: str, when: Any = None) -> None:
    real = getattr(Gateway, method)

    def cut(self: Gateway, *args: Any, **kwargs: Any) -> Any:
        if when is None or when(*args, **kwargs):
            raise Killed(method)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Gateway, method, cut)


def _item_records(store: ChromaStore) -> list[tuple[str, str]]:
    """(collection kind, record id) of every item record, in either collection."""
    out = [("items", rid) for rid in store.collections["items"].get(include=[])["ids"]]
    got = store.collections["vectors"].get(include=["metadatas"])
    out += [("vectors", rid) for rid, meta in zip(got["ids"], got["metadatas"], strict=True)
            if record_format.in_vectors(meta)]  # fmt: skip
    return sorted(out)


def _one_value_then_repaired(after: ChromaStore) -> None:
    """After a killed move the item reads, filters and searches as ``ONE`` alone; verify finds
    the leftover item record and the two-text value's vectors, and repair leaves one record."""
    assert after.search(NS, filter={"kind": "new"}) == []
    assert [h.key for h in after.search(NS, query="the first title", limit=1)] == ["k"]
    assert all(h.value == ONE for h in after.search(NS, query="and a body", limit=5))
    report = after.verify()
    assert (report.shadowed_items, report.stale_vectors, report.ok) == (1, 2, False)
    after.verify(repair=True, grace_seconds=0)
    assert after.verify().ok
    assert _item_records(after) == [("vectors", record_format.item_id(NS, "k"))]


def test_a_batch_of_one_text_puts_into_a_known_namespace_is_one_chroma_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = _open(f"one-{uuid.uuid4().hex[:8]}")
    store.put(NS, "first", {"title": "registers the namespace"})
    calls: list[str] = []
    for method in ("upsert_vectors", "upsert_items", "delete_items", "delete_vectors",
                   "upsert_registry", "update_items"):  # fmt: skip
        real = getattr(Gateway, method)

        def spy(self: Gateway, ids: Any, *args: Any, _m: str = method, _r: Any = real,
                **kwargs: Any) -> Any:  # fmt: skip
            if len(ids):
                calls.append(_m)
            return _r(self, ids, *args, **kwargs)

        monkeypatch.setattr(Gateway, method, spy)
    store.batch([PutOp(NS, f"k{i}", {"title": f"memory {i}"}) for i in range(20)])
    store.put(NS, "k3", {"title": "memory three, rewritten"})
    assert calls == ["upsert_vectors", "upsert_vectors"]
    assert store.get(NS, "k3").value == {"title": "memory three, rewritten"}  # type: ignore[union-attr]
    assert [h.key for h in store.search(NS, query="memory three, rewritten", limit=1)] == ["k3"]


def test_a_move_out_of_the_vector_collection_killed_before_it_took_effect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = f"move-{uuid.uuid4().hex[:8]}"
    store = _open(name)
    store.put(NS, "k", ONE)  # one text: its own vector record
    with monkeypatch.context() as patch:
        _kill_at(patch, "delete_vectors")  # after the item record, before the old one goes
        with pytest.raises(Killed):
            store.put(NS, "k", TWO)
    after = _open(name, fresh=True)
    assert after.get(NS, "k").value == ONE  # type: ignore[union-attr]  # the put never took effect
    _one_value_then_repaired(after)
    assert after.get(NS, "k").value == ONE  # type: ignore[union-attr]
    after.put(NS, "k", TWO)  # the move made again lands whole
    assert after.get(NS, "k").value == TWO  # type: ignore[union-attr]
    assert [h.key for h in after.search(NS, filter={"kind": "new"})] == ["k"]
    assert _item_records(after) == [("items", record_format.item_id(NS, "k"))]
    assert after.verify().ok


def test_a_move_into_the_vector_collection_killed_after_it_took_effect(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = f"move-{uuid.uuid4().hex[:8]}"
    store = _open(name)
    store.put(NS, "k", TWO)  # two texts: an item record and two vector records
    with monkeypatch.context() as patch:
        _kill_at(patch, "delete_items", lambda ids, *a, **kw: kw.get("in_vectors") is False)
        with pytest.raises(Killed):
            store.put(NS, "k", ONE)
    after = _open(name, fresh=True)
    assert after.get(NS, "k").value == ONE  # type: ignore[union-attr]  # whole, in one record
    _one_value_then_repaired(after)


def test_deletes_and_expiry_remove_an_item_that_is_its_own_vector_record() -> None:
    store = _open(f"del-{uuid.uuid4().hex[:8]}")
    store.put(NS, "gone", ONE)
    store.put(NS, "short", {"title": "lives briefly"}, ttl=0.0001)
    store.put(NS, "kept", {"title": "stays"})
    store.delete(NS, "gone")
    time.sleep(0.05)
    assert store.sweep_ttl() == 1
    assert store.get(NS, "gone") is None and store.get(NS, "short") is None
    assert [i.key for i in store.search(NS)] == ["kept"]
    assert _item_records(store) == [("vectors", record_format.item_id(NS, "kept"))]
    assert store.verify().ok


@pytest.mark.parametrize("value", [ONE, TWO], ids=["own record", "item record"])
def test_a_ttl_refreshed_on_read_moves_the_expiry_in_the_collection_holding_the_item(
    value: dict[str, Any],
) -> None:
    name = f"ttl-{uuid.uuid4().hex[:8]}"
    store = _open(name)
    store.put(NS, "k", value, ttl=5.0)
    ((kind, rid),) = _item_records(store)
    expiry = store.collections[kind].get(ids=[rid], include=["metadatas"])["metadatas"][0]["_expires"]
    time.sleep(0.05)
    assert store.get(NS, "k", refresh_ttl=True) is not None
    assert store.search(NS, query="title", refresh_ttl=True)
    meta = store.collections[kind].get(ids=[rid], include=["metadatas"])["metadatas"][0]
    assert meta["_expires"] > expiry
    assert _item_records(store) == [(kind, rid)]  # nothing written to the other collection


def _count_item_collection_reads(monkeypatch: pytest.MonkeyPatch, store: ChromaStore) -> list[int]:
    """A one-element list counting the reads of ``store``'s item collection from now on."""
    items = store.collections["items"]
    count = [0]
    real = type(items).get

    def spy(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.name == items.name:
            count[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(items), "get", spy)
    return count


def test_a_put_reads_the_item_collection_only_where_a_namespace_has_item_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An embedded store's registry knows which namespaces ever received a record in the item
    collection (no text or several); a new item elsewhere costs one read, and an item that
    is there is still found (its record is replaced, not shadowed). (The state is reset as a
    new process has it: one that saw the namespace created knows its items, :mod:`.id_sets`,
    and reads nothing for a new one.)"""
    store = _open(f"irec-{uuid.uuid4().hex[:8]}")
    store.put(NS, "first", {"title": "registers the namespace"})
    forget_process_state(store)
    reads = _count_item_collection_reads(monkeypatch, store)
    store.put(NS, "second", {"title": "a new item"})
    assert reads == [0]
    store.put(NS, "unindexed", {"title": "kept in the item collection"}, index=False)
    reads[0] = 0
    store.put(NS, "third", {"title": "another new item"})
    assert reads[0] >= 1
    forget_cached_items(store)
    store.put(NS, "unindexed", {"title": "now its own vector record"})
    assert _item_records(store) == sorted(
        ("vectors", record_format.item_id(NS, k)) for k in ("first", "second", "third", "unindexed")
    )
    assert store.verify().ok
    assert store.get(NS, "unindexed").value == {"title": "now its own vector record"}  # type: ignore[union-attr]


@pytest.mark.parametrize("old_registry", [False, True], ids=["flag-kept", "registry-before-the-flag"])
def test_item_records_are_found_after_reopening(
    tmp_path: Any, old_registry: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flag is stored in the namespace's registry record, so a new process finds an item
    of the item collection too (and skips the read where there are none); a registry record
    written before the flag existed means "may hold some"."""
    index = {"dims": 64, "embed": HashEmbeddings(64), "fields": ["title", "body"]}
    store = ChromaStore.persistent(path=tmp_path, index=index)
    store.put(OTHER, "own", ONE)
    store.put(NS, "two", TWO)
    store.put(NS, "none", {"kind": "none"}, index=False)
    if old_registry:
        registry = store.collections["namespaces"]
        ids = registry.get(include=[])["ids"]
        registry.update(ids=ids, metadatas=[{"_irec": None}] * len(ids))
        assert all("_irec" not in m for m in registry.get(include=["metadatas"])["metadatas"])
    store.close()
    store = ChromaStore.persistent(path=tmp_path, index=index)
    reads = _count_item_collection_reads(monkeypatch, store)
    store.put(OTHER, "new", ONE)
    assert reads == [1 if old_registry else 0]
    store.put(NS, "two", ONE)
    store.put(NS, "none", {"title": "now indexed"})
    assert _item_records(store) == sorted(
        ("vectors", record_format.item_id(ns, k))
        for ns, k in ((NS, "two"), (NS, "none"), (OTHER, "own"), (OTHER, "new"))
    )
    assert store.verify().ok
    assert store.get(NS, "two").value == ONE  # type: ignore[union-attr]
    assert store.search(NS, filter={"kind": "new"}) == []
    store.close()


def test_a_flag_another_writer_sets_between_register_and_bump_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a server, a put registers its namespaces first and gives them a new version last.
    Another process's put of an unindexed item landing in between sets the namespace's sticky
    flags; the version bump must not write them back to what the first put read, or searches
    stop filling pages with the unindexed item."""
    name = f"bump-{uuid.uuid4().hex[:8]}"
    a, b = _open(name, fresh=True), _open(name, fresh=True)
    a.put(NS, "seed", {"title": "registers the namespace"})
    real = Gateway.upsert_vectors
    between = [True]

    def other_writer_lands(self: Gateway, *args: Any, **kwargs: Any) -> Any:
        out = real(self, *args, **kwargs)
        if between:
            between.clear()
            b.put(NS, "plain", {"kind": "no text"}, index=False)
        return out

    monkeypatch.setattr(Gateway, "upsert_vectors", other_writer_lands)
    a.put(NS, "second", {"title": "a second title"})
    assert not between, "the other writer did not land between the two registry writes"
    registry = a.collections["namespaces"].get(include=["metadatas"])["metadatas"]
    assert [(m["_unidx"], m["_irec"]) for m in registry] == [(True, True)]
    index = {"dims": 64, "embed": HashEmbeddings(64), "fields": ["title", "body"]}
    dense = ChromaStore.ephemeral(collection=name, index=index, shared=True, search_mode="dense")
    keys = [h.key for h in dense.search(NS, query="a second title", limit=10)]
    assert "plain" in keys, keys  # a short dense page is filled with unindexed items
