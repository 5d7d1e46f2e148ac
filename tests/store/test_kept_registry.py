"""The registry record of a namespace an embedded store empties stays, marked ``_kept``
(:mod:`langgraph_episodic.chroma.registry`): a namespace emptied and filled again on every key
costs no registry write, listings still name exactly the namespaces holding items, and the
folder a store closes holds the registry as earlier versions wrote it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from chromadb.api.models.Collection import Collection

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma import writes
from langgraph_episodic.chroma.testing import forget_process_state

from ._support import FakeClock, hash_index

A, B, C = ("users", "a"), ("users", "b"), ("users", "c")


@contextmanager
def registry_writes(store: ChromaStore) -> Iterator[list[str]]:
    """The writes (``upsert``, ``delete``) to the store's registry collection while inside."""
    name = store.collections["namespaces"].name
    seen: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        for method in ("upsert", "delete", "update"):
            real = getattr(Collection, method)

            def spy(self: Collection, *args: Any, _real: Any = real, _m: str = method,
                    **kwargs: Any) -> Any:  # fmt: skip
                if self.name == name:
                    seen.append(_m)
                return _real(self, *args, **kwargs)

            patch.setattr(Collection, method, spy)
        yield seen


def registry_in_chroma(registry: Collection) -> dict[str, dict[str, Any]]:
    """Namespace (as stored) -> its registry record's metadata, read from Chroma."""
    got = registry.get(include=["metadatas"])
    return {str(m["_ns"]): dict(m) for m in got["metadatas"] or []}


@pytest.mark.parametrize("index", [None, "hash"])
def test_a_namespace_emptied_and_filled_again_writes_no_registry_record(
    index: str | None,
) -> None:
    store = ChromaStore.ephemeral(
        collection=f"kept-{uuid.uuid4().hex[:10]}",
        index=hash_index(fields=["text"]) if index else None,
    )
    registry = store.collections["namespaces"]
    try:
        store.put(A, "stays", {"text": "an apple a day"})
        store.put(B, "k", {"text": "an apple a day"})
        store.delete(B, "k")  # B's record is marked once
        assert store.list_namespaces() == [A]
        with registry_writes(store) as seen:
            for i, word in enumerate(["pear", "plum", "fig", "lime", "kiwi"]):
                store.put(B, f"k{i}", {"text": f"a {word} a day"})
                assert store.list_namespaces() == [A, B]
                assert [item.key for item in store.search(B)] == [f"k{i}"]
                hits = store.search(("users",), query=f"a {word} a day", limit=1)
                assert [(h.namespace, h.key) for h in hits] == [(B, f"k{i}")]
                store.delete(B, f"k{i}")
                assert store.list_namespaces() == [A]
                assert store.search(B) == []
                assert [h.key for h in store.search(("users",), query=f"a {word} a day")] == [
                    "stays"
                ]
        assert seen == []
        assert registry_in_chroma(registry)["users.b"]["_kept"] is True
        assert store.verify().ok
    finally:
        store.close()
    # Closed: the records of empty namespaces are gone and none is marked, as earlier
    # versions of the store write the registry (they read a closed folder unchanged).
    assert list(registry_in_chroma(registry)) == ["users.a"]
    assert "_kept" not in registry_in_chroma(registry)["users.a"]


def test_marked_records_are_checked_by_a_store_that_did_not_write_them(tmp_path: Path) -> None:
    """What a writer killed before it closed leaves: records of empty namespaces, marked. A new
    process (its state forgotten) and a store on a server over the same records list only
    the namespaces that hold items."""
    name = f"kept-{uuid.uuid4().hex[:10]}"
    clock = FakeClock()
    store = ChromaStore.persistent(tmp_path / "store", collection=name, index=None, clock=clock)
    try:
        store.put(A, "k", {"v": 1})
        for ns in (B, C):
            store.put(ns, "k", {"v": 1})
            store.delete(ns, "k")
        registry = registry_in_chroma(store.collections["namespaces"])
        assert registry["users.b"]["_kept"] is True and registry["users.c"]["_kept"] is True
        forget_process_state(store)  # as the next process, after a kill
        assert store.list_namespaces() == [A]
        assert store.search(("users",)) != []
        assert store.verify().ok
        # A kept record serves a put that fills its namespace again: with the expiry it
        # holds, it is not rewritten; with a shorter one, it is, so the namespace is no
        # longer listed once that item expires, in this process or the next.
        store.put(B, "k", {"v": 2})
        store.put(C, "short", {"v": 2}, ttl=1.0)
        assert store.list_namespaces() == [A, B, C]
        clock.advance(minutes=2)
        assert store.list_namespaces() == [A, B]
        forget_process_state(store)
        assert store.list_namespaces() == [A, B]
    finally:
        store.close()


def test_a_store_on_a_server_checks_marked_records() -> None:
    """A store on a server reads the registry from Chroma on every listing: a marked record
    counts only if its namespace holds an item."""
    name = f"kept-{uuid.uuid4().hex[:10]}"
    writer = ChromaStore.ephemeral(collection=name, index=None)
    server = ChromaStore.ephemeral(collection=name, index=None, shared=True)
    try:
        writer.put(A, "k", {"v": 1})
        writer.put(B, "k", {"v": 1})
        writer.delete(B, "k")
        assert registry_in_chroma(server.collections["namespaces"])["users.b"]["_kept"] is True
        assert server.list_namespaces() == [A]
        writer.put(B, "again", {"v": 2})
        assert server.list_namespaces() == [A, B]
    finally:
        server.close()
        writer.close()


def test_past_the_limit_of_marked_records_the_registry_is_made_plain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A store marks at most ``MARKED_LIMIT`` records: a restart after a kill checks each."""
    monkeypatch.setattr(writes, "MARKED_LIMIT", 2)
    store = ChromaStore.ephemeral(collection=f"kept-{uuid.uuid4().hex[:10]}", index=None)
    try:
        registry = store.collections["namespaces"]
        store.put(A, "k", {"v": 1})
        store.delete(A, "k")
        store.put(A, "k", {"v": 1})  # A: marked, holding an item
        for ns in (B, C):
            store.put(ns, "k", {"v": 1})
            store.delete(ns, "k")
        records = registry_in_chroma(registry)  # the third mark made all plain
        assert list(records) == ["users.a"] and "_kept" not in records["users.a"]
        assert store.list_namespaces() == [A]
        store.put(C, "k", {"v": 1})
        assert store.list_namespaces() == [A, C]
    finally:
        store.close()


def test_forgetting_a_user_without_a_purge_leaves_no_record_naming_them() -> None:
    """A namespace's name holds the user id: the record kept for an emptied namespace goes
    when the user is forgotten, also when the files are not purged."""
    from langgraph_episodic import forget_user

    store = ChromaStore.ephemeral(collection=f"kept-{uuid.uuid4().hex[:10]}")
    registry = store.collections["namespaces"]
    try:
        store.put(("memories", "alice"), "k", {"text": "x"})
        store.put(("memories", "bob"), "k", {"text": "y"})
        store.delete(("memories", "alice"), "k")
        store.put(("memories", "alice"), "k2", {"text": "z"})
        forget_user("alice", store=store, purge=False)
        assert [ns for ns in registry_in_chroma(registry) if "alice" in ns] == []
        assert store.list_namespaces() == [("memories", "bob")]
    finally:
        store.close()
