"""The store's methods beyond ``BaseStore``: item extras, vector dimensions, raw records and
maintenance. Export, forgetting a user and purging use these instead of the record format."""

from __future__ import annotations

from pathlib import Path

import pytest

from langgraph_episodic import ChromaStore, HashEmbeddings

DIMS = 64


def _store() -> ChromaStore:
    return ChromaStore.ephemeral(index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})


def test_item_extras_say_what_the_api_does_not() -> None:
    store = _store()
    store.put(("memories", "alice"), "a", {"text": "tea", "note": "x"}, index=["text", "note"])
    store.put(("memories", "alice"), "b", {"text": "coffee"}, index=False, ttl=30)
    extras = store.item_extras([(("memories", "alice"), k) for k in ("a", "b", "missing")])
    assert set(extras) == {(("memories", "alice"), "a"), (("memories", "alice"), "b")}
    a, b = extras[(("memories", "alice"), "a")], extras[(("memories", "alice"), "b")]
    assert (a.index, a.ttl, a.expires_at) == (["text", "note"], None, None)
    assert (b.index, b.ttl) == (False, 30)
    assert b.expires_at is not None


def test_vector_dims_are_those_of_the_stored_vectors() -> None:
    store = _store()
    assert store.vector_dims() is None
    store.put(("memories", "alice"), "a", {"text": "tea"})
    assert store.vector_dims() == DIMS


def test_raw_records_are_those_of_the_matching_namespaces() -> None:
    store = _store()
    store.put(("memories", "alice"), "one", {"text": "tea"})
    store.put(("memories", "alice"), "two", {"a": "x", "b": "y"}, index=["a", "b"])
    store.put(("memories", "alice2"), "one", {"text": "coffee"})
    store.put(("memories", "bob", "alice"), "one", {"text": "juice"})

    def alice(ns: tuple[str, ...]) -> bool:
        return ns[:2] == ("memories", "alice")

    whole = store.raw_records(alice)
    assert sorted(whole.items) == [(("memories", "alice"), "one"), (("memories", "alice"), "two")]
    assert len(whole.vector_ids) == 2  # the two texts of "two"; "one" is its own vector record
    scoped = store.raw_records(alice, prefixes=[("memories", "alice")])
    assert sorted(scoped.items) == sorted(whole.items)
    assert sorted(scoped.vector_ids) == sorted(whole.vector_ids)
    assert store.raw_records(alice, prefixes=[]).items == ()
    assert store.raw_records(alice, prefixes=[("memories", "bob")]).items == ()

    assert whole.vector_ids_outside(whole.items) == []
    assert sorted(whole.vector_ids_outside([(("memories", "alice"), "one")])) == sorted(
        whole.vector_ids
    )
    store.delete_vector_records(list(whole.vector_ids))
    assert store.raw_records(alice).vector_ids == ()
    assert store.get(("memories", "alice2"), "one") is not None


def test_maintenance_needs_an_embedded_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="embedded persistent"), _store().maintenance():
        pass
    store = ChromaStore.persistent(
        tmp_path / "s", index={"dims": DIMS, "embed": HashEmbeddings(DIMS)}
    )
    try:
        store.put(("memories", "alice"), "a", {"text": "tea"})
        with store.maintenance() as work:
            ids = work.collection_ids()
            assert list(ids) == ["items", "vectors", "namespaces"]
            assert work.folder == tmp_path.resolve() / "s"
            rebuilt = work.rebuild(["vectors"])
            with work.writes_held() as held:
                assert held["items"] == ids["items"]
                assert held["vectors"] != ids["vectors"]  # a rebuild makes a new collection
        assert rebuilt == [store.collections["vectors"].name]
        assert store.get(("memories", "alice"), "a") is not None
        assert [r.key for r in store.search(("memories",), query="tea")] == ["a"]
    finally:
        store.close()
