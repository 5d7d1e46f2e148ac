"""An item record holds its key, times and text path in ``_value``'s first line.

Every metadata key is a row and an index entry in Chroma's SQLite, and an upsert's time grows
with their number, so the keys no ``where`` names (:data:`.record_format.IN_HEADER`) are folded
into ``_value``, and a record holds no prefix key of its whole namespace (``_ns`` is it).
Records written before hold them as keys of their own. These tests hold the write side
(:func:`.record_format.stored_metadata`) to the read side (:func:`.record_format.unfold`)
through a model of Chroma's upsert, which merges the new metadata into the old and drops keys
given as None; and a real store over records of both layouts.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.caches import slim
from langgraph_episodic.chroma.testing import forget_cached_items

from ._support import CHROMA_BACKENDS, hash_index

NS = ("users", "alice", "notes")


def chroma_upsert(held: dict[str, Any] | None, given: dict[str, Any]) -> dict[str, Any]:
    """What Chroma holds after an upsert of ``given`` over ``held``: merged, None drops."""
    out = dict(held or {})
    for k, v in given.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def legacy_record(view: dict[str, Any]) -> dict[str, Any]:
    """``view`` as the previous layout stored it: every key its own, the value without a
    header, and the whole-namespace prefix key."""
    out = {k: v for k, v in view.items() if k != record_format.HEADED_FLAG}
    out["_value"] = record_format.value_body(view["_value"])
    ns = record_format.ns_from_str(view["_ns"])
    out[f"_p{len(ns)}"] = view["_ns"]
    return out


_labels = st.text("abcxyz", min_size=1, max_size=3)
_namespaces = st.lists(_labels, min_size=1, max_size=4).map(tuple)
_scalars = st.one_of(st.text(max_size=40), st.integers(-5, 5), st.booleans())
_values = st.dictionaries(
    st.sampled_from(["text", "kind", "note", "n"]),
    st.one_of(_scalars, st.dictionaries(st.sampled_from(["a", "b"]), _scalars, max_size=2)),
    max_size=4,
)


@st.composite
def views(draw: st.DrawFn, namespace: tuple[str, ...] | None = None) -> dict[str, Any]:
    """An item record's view as a put makes it, with keys at and off their defaults."""
    ns = namespace if namespace is not None else draw(_namespaces)
    updated = draw(st.integers(1, 10**15))
    own = draw(st.booleans())
    return record_format.item_metadata(
        ns,
        draw(st.text(max_size=8)),
        draw(_values),
        created_us=draw(st.sampled_from([updated, updated - 1])),
        updated_us=updated,
        expires_at=draw(st.sampled_from([record_format.NO_EXPIRY, 1.7e9])),
        ttl=draw(st.sampled_from([None, 5.0])),
        n_vectors=1 if own else draw(st.integers(0, 2)),
        tag=record_format.ITEM_TAG if own else draw(st.sampled_from(["", "19ab12cd"])),
        no_text=draw(st.sampled_from([(), ("title",)])),
        path=draw(st.one_of(st.sampled_from(["text", "body.text"]), st.text(max_size=12)))
        if own
        else None,
    )


def comparable(view: dict[str, Any]) -> dict[str, Any]:
    """A view without what only says how it was stored (the header, the cache's flag), and
    with the leaves its value reads strings from resolved."""
    out = {k: v for k, v in view.items() if k != record_format.HEADED_FLAG and k != "_value"}
    out["value"] = record_format.value_of(view)
    return out


@settings(max_examples=300, deadline=None)
@given(data=st.data(), old_layout=st.sampled_from(["none", "legacy", "headed", "headed-then"]),
       cached=st.booleans())  # fmt: skip
def test_an_upsert_over_any_record_reads_back_as_the_new_view(
    data: st.DataObject, old_layout: str, cached: bool
) -> None:
    ns = data.draw(_namespaces)
    new = data.draw(views(ns))
    held: dict[str, Any] | None = None
    old_view: dict[str, Any] | None = None
    if old_layout != "none":
        before = data.draw(views(ns))
        held = (
            legacy_record(before)
            if old_layout == "legacy"
            else record_format.stored_metadata(before, None)
        )
        if old_layout == "headed-then":  # the header's prefix when the text was a document
            held["_value"] = record_format.HEADED + held["_value"][1:]
        # The old record's view: as a read gives it, or as the item cache keeps it.
        old_view = record_format.unfold(held)
        if cached:
            old_view = slim(old_view)
    given_meta = record_format.stored_metadata(new, old_view)
    now = chroma_upsert(held, given_meta)

    # Each key given costs Chroma a row: a None only for a key the record holds.
    assert {k for k, v in given_meta.items() if v is None} <= set(held or {})
    assert comparable(record_format.unfold(now)) == comparable(new)
    # Nothing is left of the old record: Chroma holds exactly what a fresh write holds.
    assert now == record_format.stored_metadata(new, None)
    assert not set(now) & set(record_format.IN_HEADER)
    assert f"_p{len(ns)}" not in now
    assert record_format.HEADED_FLAG not in now


@settings(max_examples=200, deadline=None)
@given(view=views())
def test_a_cached_view_rebuilds_the_same_item_as_the_record(view: dict[str, Any]) -> None:
    stored = record_format.stored_metadata(view, None)
    read = record_format.unfold(stored)
    cached = slim(read)
    assert not cached["_value"].startswith(record_format.HEADS)
    assert record_format.is_headed(cached) and record_format.is_headed(read)
    for meta in (read, cached):
        assert record_format.item_from_metadata(meta) == record_format.item_from_metadata(view)
        assert record_format.ttl_of(meta) == record_format.ttl_of(view)
        assert record_format.n_vectors(meta) == record_format.n_vectors(view)
    assert record_format.path_of(stored) == str(view.get("_path") or "")


@pytest.mark.parametrize("key", ["k", '"_path":"x"', 'a\n"_path":"y"\n'])
@pytest.mark.parametrize("path", ["text", 'we"ird', ""])
def test_the_path_is_read_from_the_header_whatever_the_key_holds(key: str, path: str) -> None:
    """A vector record's path is found in the header without parsing it whole: a key that
    spells the path's JSON key must not be taken for it."""
    view = record_format.item_metadata(
        NS, key, {"text": "t"}, created_us=1, updated_us=1, expires_at=3.0, ttl=None,
        n_vectors=1, tag=record_format.ITEM_TAG, path=path,
    )  # fmt: skip
    stored = record_format.stored_metadata(view, None)
    assert record_format.path_of(stored) == path
    assert record_format.unfold(stored)["_key"] == key


@settings(max_examples=200, deadline=None)
@given(
    view=views(),
    layout=st.sampled_from(["legacy", record_format.TEXT_IN_VALUE, record_format.HEADED]),
    cached=st.booleans(),
    created=st.integers(1, 10**15),
    updated=st.integers(1, 10**15),
    expires=st.one_of(st.none(), st.floats(1.0, 1e10)),
)
def test_a_patch_of_the_times_reads_back_in_either_layout(
    view: dict[str, Any],
    layout: str,
    cached: bool,
    created: int,
    updated: int,
    expires: float | None,
) -> None:
    """Restored times (the CLI's import) change keys a record may hold in its header, and
    keep its prefix (which says whether the record holds a document)."""
    legacy = layout == "legacy"
    held = legacy_record(view) if legacy else record_format.stored_metadata(view, None)
    if not legacy:
        held["_value"] = layout + held["_value"][1:]
    old = record_format.unfold(held)
    if cached:
        old = slim(old)
    patch: dict[str, Any] = {"_created": created, "_updated": updated}
    if expires is not None:
        patch["_expires"] = expires
    given, new_view = record_format.patched(old, patch)
    now = record_format.unfold(chroma_upsert(held, given))  # (update merges as upsert does)
    for meta in (now, new_view):
        item = record_format.item_from_metadata(meta)
        assert item.value == record_format.value_of(view)
        assert (record_format.created_of(meta), meta["_updated"]) == (created, updated)
        assert record_format.expiry_of(meta) == (expires or view["_expires"])
        assert record_format.ttl_of(meta) == record_format.ttl_of(view)
        assert record_format.path_of(meta) == str(view.get("_path") or "")
        assert record_format.head_of(meta) == record_format.head_of(held)
    assert legacy or not set(given) & set(record_format.IN_HEADER)


def test_a_legacy_record_is_its_own_view() -> None:
    view = record_format.item_metadata(
        NS, "k", {"text": "port 5432"}, created_us=1, updated_us=2, expires_at=3.0, ttl=1.0,
        n_vectors=1, tag=record_format.ITEM_TAG, path="text",
    )  # fmt: skip
    old = legacy_record(view)
    assert record_format.unfold(old) == old
    assert not record_format.is_headed(old)
    assert record_format.path_of(old) == "text"
    assert record_format.item_from_metadata(old) == record_format.item_from_metadata(view)


def _raw(store: Any) -> list[dict[str, Any]]:
    out = []
    for kind in ("items", "vectors"):
        out.extend(store.collections[kind].get(include=["metadatas"])["metadatas"])
    return out


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
@pytest.mark.parametrize("index", [None, False], ids=["own-record", "item-record"])
def test_an_overwrite_of_a_legacy_record_leaves_only_the_new_layout(
    make_store: Any, index: Any
) -> None:
    """A record the previous layout wrote (planted in Chroma, read from Chroma and from the
    cache) is replaced whole: no key of its own layout stays behind."""
    store = make_store(index=hash_index(fields=["text"]))
    kind = "items" if index is False else "vectors"
    for cached in (False, True):
        store.put(NS, "k", {"text": "port 5432", "note": "n"}, index=index, ttl=5.0)
        rid = record_format.item_id(NS, "k")
        (held,) = store.collections[kind].get(ids=[rid], include=["metadatas"])["metadatas"]
        view = record_format.unfold(held)
        store.collections[kind].update(ids=[rid], metadatas=[legacy_record(view)])
        forget_cached_items(store)
        if cached:
            assert store.get(NS, "k") is not None  # the legacy record is now in the cache
        store.put(NS, "k", {"text": "port 5433"}, index=index)
        (now,) = _raw(store)
        assert not set(now) & {*record_format.IN_HEADER, "_p3", "v.note"}, now
        got = store.get(NS, "k")
        assert got is not None and got.value == {"text": "port 5433"}
        assert store.search(NS, filter={"note": "n"}) == []
        forget_cached_items(store)
        assert store.get(NS, "k") == got
        assert store.search(("users", "alice"), filter={"text": "port 5433"})[0].key == "k"
        assert [ns for ns in store.list_namespaces(prefix=NS)] == [NS]


@pytest.mark.parametrize(
    ("known", "shape"),
    [
        (None, "$or"),
        ([("a", "b")], "_ns"),
        ([("a", "b", "c")], "_p2"),
        ([("a", "b"), ("a", "b", "c")], "$or"),
        ([], "$or"),
    ],
)
def test_a_prefix_is_matched_by_what_the_registry_lists_under_it(
    known: list[tuple[str, ...]] | None, shape: str
) -> None:
    """Records hold no ``_pN`` of their whole namespace (records written before do): a
    prefix that is itself a namespace matches by ``_ns``, deeper ones by the prefix key, and
    a ``where`` names only the kind the registry lists (an ``$or`` costs Chroma more)."""
    where = record_format.prefix_where(("a", "b"), known)
    assert where is not None and shape in where
    records = {
        ns: record_format.namespace_metadata(ns)
        for ns in [("a",), ("a", "b"), ("a", "b", "c"), ("a", "bc"), ("a", "bc", "d")]
    }
    old_ns = ("a", "b", "c", "legacy")
    records[old_ns] = legacy_record({**record_format.namespace_metadata(old_ns), "_value": "{}"})
    listed = set(known) if known is not None else set(records)
    matched = {ns for ns, meta in records.items() if _matches(meta, where)}
    wanted = {ns for ns in records if ns[:2] == ("a", "b")}
    assert matched & listed == wanted & listed


def _matches(meta: dict[str, Any], where: dict[str, Any]) -> bool:
    """Chroma's equality and ``$or`` of equalities, for :func:`prefix_where`'s clauses."""
    if "$or" in where:
        return any(_matches(meta, w) for w in where["$or"])
    ((key, value),) = where.items()
    return meta.get(key) == value
