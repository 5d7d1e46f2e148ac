"""A record holds each longer string once: in its ``v.<path>`` leaf, not again in ``_value``.

Chroma keeps every metadata string as a row and indexes it. A value's string leaves are pushed
down for filters; ``_value`` (the value as JSON) leaves those of ``HELD_ONCE_FROM`` characters
or more to them. Whatever the value's shape (keys holding ".", dotted paths two keys share,
strings in lists, strings too long to push down), what comes back is what was put: from the
cache, from Chroma after the cache is gone, from a search and after a reopen.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.testing import cached_item_records, forget_cached_items

from ._support import CHROMA_BACKENDS, ONE_CHROMA, PERSISTENT, backend_param, hash_index

NS = ("users", "alice", "notes")
TEXT = "Alice moved to Lisbon in May and works at the harbour office there now."


def raw_records(store: Any) -> list[dict[str, Any]]:
    """The metadata of every raw record in the store's item and vector collections."""
    out: list[dict[str, Any]] = []
    for kind in ("items", "vectors"):
        out.extend(store.collections[kind].get(include=["metadatas"])["metadatas"])
    return out


def copies(store: Any, text: str) -> int:
    """How many metadata strings of the raw records hold ``text``."""
    return sum(
        text in value for meta in raw_records(store) for value in meta.values() if isinstance(value, str)
    )


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
@pytest.mark.parametrize("index", [None, False], ids=["own-record", "item-record"])
def test_a_text_is_held_once_and_read_back_whole(make_store: Any, index: Any) -> None:
    store = make_store(index=hash_index(fields=["text"]))
    value = {"text": TEXT, "kind": "fact", "nested": {"note": TEXT.upper()}}
    store.put(NS, "k", value, index=index)
    assert copies(store, TEXT) == 1 and copies(store, TEXT.upper()) == 1
    (meta,) = raw_records(store)
    assert meta["v.text"] == TEXT and meta["v.nested.note"] == TEXT.upper()
    assert record_format.value_body(meta["_value"]).startswith(record_format.HELD_IN_LEAVES)
    assert store.get(NS, "k").value == value  # type: ignore[union-attr]
    forget_cached_items(store)  # read from Chroma
    assert store.get(NS, "k").value == value  # type: ignore[union-attr]
    (hit,) = store.search(NS, filter={"nested.note": TEXT.upper()})
    assert hit.value == value


@pytest.mark.parametrize("backend", ONE_CHROMA)
def test_short_strings_stay_in_the_json(make_store: Any) -> None:
    """Below ``HELD_ONCE_FROM`` the note of where a leaf goes costs more than the string."""
    store = make_store(index=hash_index(fields=["text"]))
    short = "x" * (record_format.HELD_ONCE_FROM - 1)
    store.put(NS, "k", {"text": short})
    (meta,) = raw_records(store)
    assert record_format.value_body(meta["_value"]) == json.dumps(
        {"text": short}, separators=(",", ":")
    )
    assert store.get(NS, "k").value == {"text": short}  # type: ignore[union-attr]


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
@pytest.mark.parametrize("index", [None, False], ids=["own-record", "item-record"])
def test_an_overwrite_between_the_two_forms_leaves_no_stale_leaf(make_store: Any, index: Any) -> None:
    store = make_store(index=hash_index(fields=["text"]))
    for cached in (True, False):
        store.put(NS, "k", {"text": TEXT, "old": TEXT + " (old)"}, index=index)
        if not cached:
            forget_cached_items(store)
        store.put(NS, "k", {"text": "short", "tags": [TEXT]}, index=index)
        (meta,) = raw_records(store)
        assert "v.old" not in meta
        assert store.get(NS, "k").value == {"text": "short", "tags": [TEXT]}  # type: ignore[union-attr]
        assert store.search(NS, filter={"old": TEXT + " (old)"}) == []
        forget_cached_items(store)
        assert store.get(NS, "k").value == {"text": "short", "tags": [TEXT]}  # type: ignore[union-attr]
        store.put(NS, "k", {"text": TEXT, "old": TEXT + " (new)"}, index=index)
        assert store.search(NS, filter={"old": TEXT + " (new)"})[0].key == "k"


@pytest.mark.parametrize("backend", ONE_CHROMA)
def test_two_keys_sharing_a_dotted_path_keep_their_own_strings(make_store: Any) -> None:
    """``{"a.b": s1}`` and ``{"a": {"b": s2}}`` are both ``v.a.b``: one is pushed down, and the
    other string must come back from the JSON, not from that leaf."""
    store = make_store(index=hash_index(fields=["text"]))
    value = {"a.b": TEXT, "a": {"b": TEXT.upper()}, "text": TEXT.lower()}
    store.put(NS, "k", value)
    assert store.get(NS, "k").value == value  # type: ignore[union-attr]
    forget_cached_items(store)
    assert store.get(NS, "k").value == value  # type: ignore[union-attr]


def test_a_value_written_as_plain_json_reads_as_before() -> None:
    """Records written before strings were held once hold the whole value as JSON."""
    plain = json.dumps({"text": TEXT, "kind": "fact"}, separators=(",", ":"))
    meta = {"_value": plain, "v.text": "not read from here"}
    assert record_format.value_of(meta) == {"text": TEXT, "kind": "fact"}
    assert record_format.held_leaf_keys(meta) == []


_long = st.text(min_size=record_format.HELD_ONCE_FROM - 2, max_size=record_format.HELD_ONCE_FROM + 8)
_strings = st.one_of(
    _long,
    st.text(max_size=4),
    st.just("y" * (record_format.MAX_FLAT_STRING + 1)),  # too long to push down: stays in JSON
)
_keys = st.sampled_from(["text", "a", "b", "a.b", "c.d", "x"])
_leaves = st.one_of(_strings, st.integers(), st.none(), st.lists(_strings, max_size=2))
_values = st.dictionaries(
    _keys,
    st.recursive(_leaves, lambda inner: st.dictionaries(_keys, inner, max_size=3), max_leaves=8),
    max_size=5,
)


@pytest.mark.parametrize("backend", [backend_param(PERSISTENT)])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(_values, min_size=1, max_size=4))
def test_any_value_comes_back_as_put(make_store: Any, reopen: Any, values: list[dict[str, Any]]) -> None:
    """Keys with "." make dotted paths two keys share ("a.b"/"c" and "a"/"b.c"); only one of
    them is pushed down, and the other's string must come back from the JSON."""
    store = make_store(index=hash_index(fields=["text"]))
    for i, value in enumerate(values):
        store.put(NS, f"k{i % 2}", value)
    want = {f"k{i % 2}": value for i, value in enumerate(values)}
    for fresh in (False, True):
        got = {item.key: item.value for item in store.search(NS, limit=10)}
        assert got == want
        assert {k: store.get(NS, k).value for k in want} == want  # type: ignore[union-attr]
        forget_cached_items(store)
        assert {k: store.get(NS, k).value for k in want} == want  # type: ignore[union-attr]
        if not fresh:
            store = reopen(store)


@pytest.mark.parametrize("backend", ONE_CHROMA)
def test_cached_records_share_one_copy_of_each_leaf_key(make_store: Any) -> None:
    """The item cache keeps a held leaf under its key (``"v.text"``): every cached record
    shares one string for it, whether the record was written or read back from Chroma."""
    store = make_store(index=hash_index(fields=["text"]))
    for n in range(3):
        store.put(NS, f"k{n}", {"text": f"{TEXT} ({n})"})

    def leaf_keys() -> list[str]:
        cached = cached_item_records(store)
        return [k for meta in cached.values() for k in meta if k.startswith("v.")]

    written = leaf_keys()
    assert len(written) == 3 and len({id(k) for k in written}) == 1
    forget_cached_items(store)
    assert [store.get(NS, f"k{n}").value["text"] for n in range(3)] == [  # type: ignore[union-attr]
        f"{TEXT} ({n})" for n in range(3)
    ]
    read = leaf_keys()
    assert len(read) == 3 and len({id(k) for k in read}) == 1
