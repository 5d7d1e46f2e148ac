"""What the store keeps, in Chroma and in process: slim records, exact caches.

An item with one indexed text is one Chroma record: its vector record, with the item's
metadata. An item with several texts has slim vector records (namespace, item id and path)
and its item record in the item collection; value leaves live on item records alone. The
item cache keeps a few keys per item, so an update must still clear the leaves the new value
no longer has, in either collection and when an item moves between them. The vector cache
holds each vector once, as a matrix row.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.ranking.vectors import NamespaceVectors, rank, similarities
from langgraph_episodic.chroma.testing import forget_cached_items

from ._support import CHROMA_BACKENDS, hash_index

NS = ("users", "alice", "notes")


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_vector_records_hold_namespace_item_and_path_only(make_store: Any) -> None:
    store = make_store(index=hash_index(fields=["title", "body.text"]))
    store.put(NS, "k", {"title": "deploy", "body": {"text": "port 5432"}, "kind": "event"})
    got = store.collections["vectors"].get(include=["metadatas", "documents"])
    assert sorted(got["documents"]) == ["deploy", "port 5432"]
    for meta in got["metadatas"]:
        assert set(meta) == {"_ns", "_p1", "_p2", "_item", "_path"}  # (_p3 would repeat _ns)
        assert meta["_ns"] == "users.alice.notes"
    assert sorted(m["_path"] for m in got["metadatas"]) == ["body.text", "title"]


def records(store: Any) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """Every raw record of the store's item and vector collections: (id, metadata)."""
    out = {}
    for kind in ("items", "vectors"):
        got = store.collections[kind].get(include=["metadatas"])
        out[kind] = list(zip(got["ids"], got["metadatas"], strict=True))
    return out


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_an_item_with_one_text_is_one_record(make_store: Any) -> None:
    store = make_store(index=hash_index(fields=["text"]))
    store.put(NS, "k", {"text": "port 5432", "kind": "event"})
    held = records(store)
    assert held["items"] == []
    ((rid, meta),) = held["vectors"]
    assert rid == record_format.item_id(NS, "k")
    assert meta["_vtag"] == record_format.ITEM_TAG and record_format.n_vectors(meta) == 1
    view = record_format.unfold(meta)
    assert (view["_key"], view["v.kind"], view["_path"]) == ("k", "event", "text")
    assert store.get(NS, "k").value == {"text": "port 5432", "kind": "event"}  # type: ignore[union-attr]


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_keys_at_their_default_are_not_stored(make_store: Any) -> None:
    """Every metadata key is a row and an index entry in Chroma: ``_flat`` (all leaves pushed
    down), ``_ttl`` (none) and an own record's ``_nvec`` (one) are left out, the key, times
    and path are in ``_value``'s header, and the whole-namespace prefix key is ``_ns``."""
    store = make_store(index=hash_index(fields=["text"]))
    store.put(NS, "k", {"text": "port 5432", "kind": "event"})
    ((_, meta),) = records(store)["vectors"]
    assert set(meta) == {
        "_ns", "_p1", "_p2", "v.text", "v.kind", "_value", "_expires", "_vtag",
    }  # fmt: skip
    assert set(record_format.unfold(meta)) - set(meta) == {"_key", "_updated", "_path"}
    store.put(NS, "none", {"kind": "event"}, index=False)
    ((_, meta),) = records(store)["items"]
    assert meta["_nvec"] == 0 and "_flat" not in meta and "_ttl" not in meta


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
@pytest.mark.parametrize("index", [None, False], ids=["own-record", "item-record"])
def test_an_overwrite_clears_keys_now_at_their_default(make_store: Any, index: Any) -> None:
    """A TTL and a value too long to push down leave ``_ttl`` and ``_flat``; a put without
    them must clear both (Chroma merges metadata on upsert), also over a cache-less read."""
    store = make_store(index=hash_index(fields=["text"]))
    long = "x" * (record_format.MAX_FLAT_STRING + 1)
    kind = "items" if index is False else "vectors"
    for cached in (True, False):
        store.put(NS, "k", {"text": "port 5432", "note": long}, index=index, ttl=5.0)
        ((_, meta),) = records(store)[kind]
        assert meta["_flat"] is False and record_format.unfold(meta)["_ttl"] == 5.0
        if not cached:
            forget_cached_items(store)  # the overwrite reads the record from Chroma
        store.put(NS, "k", {"text": "port 5433"}, index=index)
        ((_, meta),) = records(store)[kind]
        assert "_flat" not in meta and "v.note" not in meta
        assert "_ttl" not in record_format.unfold(meta)
        assert store.search(NS, filter={"text": "port 5433"})[0].key == "k"
        assert store.search(NS, filter={"note": long}) == []


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
@pytest.mark.parametrize(
    "first, second",
    [
        ("one", "one"),
        ("one", "two"),  # out of the vector collection into the item collection
        ("two", "one"),  # and back
        ("two", "two"),
        ("one", "none"),
        ("none", "one"),
    ],
)
def test_an_update_clears_leaves_the_new_value_lacks(
    make_store: Any, first: str, second: str
) -> None:
    texts = {"one": ["title"], "two": ["title", "body"], "none": False}
    store = make_store(index=hash_index(fields=["title", "body"]))
    store.put(NS, "k", {"title": "a", "body": "x", "kind": "event", "meta": {"n": 3}},
              index=texts[first])  # fmt: skip
    store.get(NS, "k")  # the previous record now comes from the item cache
    store.put(NS, "k", {"title": "b", "body": "y"}, index=texts[second])
    held = records(store)
    item_records = [m for _, m in held["items"]] + [
        m for _, m in held["vectors"] if m.get("_vtag") == record_format.ITEM_TAG
    ]
    (meta,) = item_records  # one record per item, in one collection
    assert sorted(k for k in meta if k.startswith("v.")) == ["v.body", "v.title"]
    own = second == "one"
    assert (meta.get("_vtag") == record_format.ITEM_TAG) == own
    assert len(held["vectors"]) == {"one": 1, "two": 2, "none": 0}[second]
    assert store.search(NS, filter={"kind": "event"}) == []
    assert store.search(NS, filter={"meta.n": 3}) == []
    assert [r.value for r in store.search(NS, filter={"title": "b"})] == [
        {"title": "b", "body": "y"}
    ]
    if second != "none":
        (hit,) = store.search(NS, query="b y", limit=5)
        assert hit.key == "k"
    assert store.verify().ok


def test_vector_cache_matches_a_brute_force_reference() -> None:
    rng = random.Random(7)
    gen = np.random.default_rng(7)
    entry = NamespaceVectors("v1")
    reference: dict[str, tuple[str, np.ndarray]] = {}
    for step in range(300):
        iid = f"i{rng.randrange(25)}"
        action = rng.random()
        if action < 0.5:
            rows = [(f"{iid}#{j}", gen.normal(size=8)) for j in range(rng.randrange(0, 3))]
            entry.replace_item(iid, rows)
            for vid in [v for v, (owner, _) in reference.items() if owner == iid]:
                del reference[vid]
        else:
            rows = [(f"{iid}#{rng.randrange(3)}", gen.normal(size=8))]
            entry.replace_item_rows(iid, rows)
        for vid, vec in rows:
            reference[vid] = (iid, vec / np.linalg.norm(vec))
        assert len(entry) == len(reference)
        if step % 7 == 0 and reference:
            query = gen.normal(size=8)
            q = query / np.linalg.norm(query)
            best: dict[str, float] = {}
            for owner, vec in reference.values():
                best[owner] = max(best.get(owner, -2.0), float(vec @ q))
            expected = sorted(best.items(), key=lambda kv: -kv[1])
            got = rank([entry.current_view()], query, depth=len(best))
            assert [i for i, _ in got] == [i for i, _ in expected]
            assert np.allclose([s for _, s in got], [s for _, s in expected], atol=1e-5)
            some = [i for i, _ in expected[::2]]
            sims = similarities([entry.current_view()], query, some)
            assert set(sims) == set(some)
            assert all(abs(sims[i] - best[i]) < 1e-5 for i in some)
            matrix, owners, _ = entry.current_view()
            assert matrix.shape[0] == len(owners) == len(reference)


EDGE_VALUES = [
    {"big": 2**70, "neg": -(2**64), "u64": 2**64 - 1, "i64": 2**63 - 1},
    {"float": 0.1 + 0.2, "tiny": 5e-324, "huge": 1e308, "zero": -0.0, "third": 1 / 3},
    {"digits": "12345678901234567890", "text": "B", "nul": "\x00\u2028", "nested": [1, {"n": None}]},
]


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
@pytest.mark.parametrize("value", EDGE_VALUES, ids=["big-ints", "floats", "strings"])
def test_values_come_back_exactly(make_store: Any, value: dict[str, Any]) -> None:
    store = make_store()
    store.put(NS, "k", value, index=False)
    for got in (store.get(NS, "k").value, store.search(NS)[0].value):
        assert got == value
        assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in value.items()}
        if "zero" in value:  # -0.0 == 0.0, so compare the sign
            assert math.copysign(1.0, got["zero"]) == -1.0


@pytest.mark.parametrize("fields", [["text"], ["text", "kind"]], ids=["own-record", "item-record"])
def test_a_loaded_namespace_forgets_a_ttl_the_new_value_lacks(fields: list[str]) -> None:
    """The namespace's listing in memory must take a new record whole, not merged into the
    old one: a TTL left over there would be refreshed on the next search and the item swept."""
    from langgraph_episodic import ChromaStore

    clock = [1_000_000.0]
    store = ChromaStore.ephemeral(index=hash_index(fields=fields), clock=lambda: clock[0],
                                  ttl={"default_ttl": 600.0, "refresh_on_read": True})  # fmt: skip
    try:
        store.put(NS, "k", {"text": "port 5432", "kind": "event"}, ttl=1.0)
        assert [h.key for h in store.search(NS)] == ["k"]  # loads the namespace's listing
        store.put(NS, "k", {"text": "port 5432", "kind": "event"}, ttl=None)
        assert [h.key for h in store.search(NS)] == ["k"]  # a read from it: must not refresh
        clock[0] += 3600.0
        assert store.sweep_ttl() == 0
        assert store.get(NS, "k") is not None
    finally:
        store.close()


@settings(max_examples=200, deadline=None)
@given(
    key=st.text(min_size=1, max_size=12),
    index=st.integers(0, 10_000),
    tag=st.sampled_from(["", record_format.ITEM_TAG, "1733370000123-ab12"]),
    own=st.booleans(),
)
def test_the_item_of_a_vector_id_is_read_off_the_id(key: str, index: int, tag: str, own: bool) -> None:
    iid = record_format.item_id(("users", "u1", "notes"), key)
    vid = iid if own else record_format.vector_id(iid, index, tag)
    parsed = record_format.split_entry_key(record_format.split_vector_id(vid)[0])[0]
    assert record_format.item_of_vector(vid) == parsed == iid
