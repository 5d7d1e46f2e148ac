"""The store contract: the same calls give the same answers on every backend.

Runs on InMemoryStore (the reference) and on ChromaStore ephemeral, persistent and over HTTP.
Search without a query is compared order-free here: its order is a documented difference
(see ``test_differences.py``). Vector search, batches, async and graphs: ``test_contract_*.py``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, Item, SearchItem

from ._support import key_set, keys, refs, tick

NS = ("items",)

VALUES: dict[str, dict[str, Any]] = {
    "a": {"n": 1, "status": "open", "owner": "ann", "flag": True,
          "meta": {"lang": "en", "level": 1}, "tags": ["x", "y"]},
    "b": {"n": 2, "status": "done", "owner": "bob", "flag": False,
          "meta": {"lang": "de", "level": 2}, "tags": ["y"]},
    "c": {"n": 3, "status": "open", "owner": "bob", "flag": True,
          "meta": {"lang": "en", "level": 3}, "tags": []},
    "d": {"n": 4.5, "status": "done", "owner": "cy", "flag": False,
          "meta": {"lang": "fr", "level": 2}, "tags": ["x", "y"]},
    "e": {"n": -1, "status": "open", "owner": "ann", "flag": False,
          "meta": {"lang": "en", "level": 1, "extra": "z"}, "tags": ["y", "x"]},
    "f": {"n": 0, "status": "open"},
}  # fmt: skip

_MISSING = object()


def _field(value: dict[str, Any], name: str) -> Any:
    return value.get(name, _MISSING)


def _contains(actual: Any, expected: dict[str, Any]) -> bool:
    return isinstance(actual, dict) and all(
        actual.get(k, _MISSING) == v for k, v in expected.items()
    )


# (filter, the keys of VALUES it selects, written as a plain Python predicate)
FILTER_CASES: list[tuple[dict[str, Any], Any]] = [
    ({"status": "open"}, lambda v: v["status"] == "open"),
    ({"status": {"$eq": "open"}}, lambda v: v["status"] == "open"),
    ({"status": {"$ne": "open"}}, lambda v: v["status"] != "open"),
    ({"status": "no-such-status"}, lambda v: False),
    ({"n": 2}, lambda v: v["n"] == 2),
    ({"n": {"$eq": 4.5}}, lambda v: v["n"] == 4.5),
    ({"n": {"$ne": 2}}, lambda v: v["n"] != 2),
    ({"n": {"$gt": 2}}, lambda v: v["n"] > 2),
    ({"n": {"$gte": 2}}, lambda v: v["n"] >= 2),
    ({"n": {"$lt": 2}}, lambda v: v["n"] < 2),
    ({"n": {"$lte": 2}}, lambda v: v["n"] <= 2),
    ({"n": {"$gt": 1.5}}, lambda v: v["n"] > 1.5),
    ({"n": {"$lt": 4.5}}, lambda v: v["n"] < 4.5),
    ({"n": {"$gte": 4.5}}, lambda v: v["n"] >= 4.5),
    ({"n": {"$gt": -5}}, lambda v: v["n"] > -5),
    ({"n": {"$gt": 1, "$lte": 3}}, lambda v: 1 < v["n"] <= 3),
    ({"status": "open", "owner": "ann"}, lambda v: v["status"] == "open" and _field(v, "owner") == "ann"),
    ({"status": "open", "n": {"$gt": 0}}, lambda v: v["status"] == "open" and v["n"] > 0),
    ({"owner": {"$ne": "bob"}, "n": {"$lte": 1}},
     lambda v: _field(v, "owner") != "bob" and v["n"] <= 1),
    ({"owner": {"$ne": "bob"}}, lambda v: _field(v, "owner") != "bob"),
    ({"flag": True}, lambda v: _field(v, "flag") is True),
    ({"flag": False}, lambda v: _field(v, "flag") is False),
    ({"meta": {"lang": "en"}}, lambda v: _contains(_field(v, "meta"), {"lang": "en"})),
    ({"meta": {"lang": "en", "level": 1}},
     lambda v: _contains(_field(v, "meta"), {"lang": "en", "level": 1})),
    ({"meta": {"$eq": {"lang": "en", "level": 1}}},
     lambda v: _field(v, "meta") == {"lang": "en", "level": 1}),
    ({"tags": ["x", "y"]}, lambda v: _field(v, "tags") == ["x", "y"]),
    ({"tags": []}, lambda v: _field(v, "tags") == []),
    ({"tags": ["x"]}, lambda v: _field(v, "tags") == ["x"]),
]  # fmt: skip


def _put_all(store: BaseStore, values: dict[str, dict[str, Any]], ns: tuple[str, ...] = NS) -> None:
    for key, value in values.items():
        store.put(ns, key, value)


# --- put / get / delete -----------------------------------------------------------------------


def test_put_then_get_returns_the_item(store: BaseStore) -> None:
    value = {
        "text": "héllo wörld ✓ 日本語",
        "int": 7,
        "float": 2.5,
        "whole_float": 3.0,
        "bool": True,
        "none": None,
        "list": [1, "two", {"three": 3}, [4]],
        "nested": {"deep": {"deeper": ["x", {"y": False}]}},
        "empty": {},
    }
    store.put(("users", "alice"), "k1", value)
    item = store.get(("users", "alice"), "k1")
    assert isinstance(item, Item)
    assert item.namespace == ("users", "alice")
    assert item.key == "k1"
    assert item.value == value
    assert type(item.value["int"]) is int
    assert type(item.value["whole_float"]) is float
    assert isinstance(item.created_at, datetime) and item.created_at.tzinfo is not None
    assert isinstance(item.updated_at, datetime) and item.updated_at.tzinfo is not None


def test_get_missing_returns_none(store: BaseStore) -> None:
    store.put(("users", "alice"), "k1", {"x": 1})
    assert store.get(("users", "alice"), "nope") is None
    assert store.get(("users", "bob"), "k1") is None
    assert store.get(("users",), "k1") is None
    assert store.get(("users", "alice", "deeper"), "k1") is None


def test_delete_removes_the_item_everywhere(store: BaseStore) -> None:
    store.put(NS, "gone", {"text": "delete me"})
    store.put(NS, "kept", {"text": "keep me"})
    store.delete(NS, "gone")
    assert store.get(NS, "gone") is None
    assert key_set(store.search(NS)) == {"kept"}
    assert key_set(store.search(NS, query="delete me")) == {"kept"}
    assert store.get(NS, "kept") is not None


def test_delete_missing_item_is_a_no_op(store: BaseStore) -> None:
    store.put(NS, "kept", {"x": 1})
    store.delete(NS, "never-existed")
    store.delete(("elsewhere",), "never-existed")
    assert key_set(store.search(NS)) == {"kept"}


def test_put_after_delete_stores_again(store: BaseStore) -> None:
    store.put(NS, "k", {"v": 1})
    store.delete(NS, "k")
    store.put(NS, "k", {"v": 2})
    item = store.get(NS, "k")
    assert item is not None and item.value == {"v": 2}


def test_update_replaces_the_value_and_moves_updated_at(store: BaseStore) -> None:
    store.put(NS, "k", {"a": 1, "b": 2, "nested": {"c": 3}})
    first = store.get(NS, "k")
    tick()
    store.put(NS, "k", {"a": 10})
    second = store.get(NS, "k")
    assert first is not None and second is not None
    assert second.value == {"a": 10}
    assert second.updated_at > first.updated_at
    # nothing of the old value survives, not even for filters
    assert store.search(NS, filter={"b": 2}) == []
    assert store.search(NS, filter={"a": 1}) == []
    assert key_set(store.search(NS, filter={"a": 10})) == {"k"}


def test_keys_are_exact_strings(store: BaseStore) -> None:
    all_keys = ["k", "K", "k ", " k", "k/1", "k.1", "ключ", "#0", "k:1", "k|1"]
    for key in all_keys:
        store.put(NS, key, {"key": key})
    for key in all_keys:
        item = store.get(NS, key)
        assert item is not None and item.key == key and item.value == {"key": key}
    assert key_set(store.search(NS, limit=100)) == set(all_keys)


def test_value_keys_that_look_like_store_internals(store: BaseStore) -> None:
    weird = {"": 1, "_ns": "fake", "_key": "other", "_p1": "x", "_expires": 0, "#document": "d",
             "$": 2, "v": {"x": 3}, "a.b": 4, "id": "i", "embedding": [0.5]}  # fmt: skip
    store.put(("w",), "k", weird)
    store.put(("w",), "plain", {"x": 1})
    item = store.get(("w",), "k")
    assert item is not None and item.value == weird and item.namespace == ("w",)
    # (a top-level filter key starting with "$" is an operator error in ChromaStore: not tested)
    filters: list[dict[str, Any]] = [{"_ns": "fake"}, {"_key": "other"}, {"_expires": 0},
                                     {"": 1}, {"v": {"x": 3}}, {"a.b": 4}, {"_p1": "x"}]  # fmt: skip
    for filter in filters:
        assert key_set(store.search(("w",), filter=filter)) == {"k"}, filter
    assert store.list_namespaces() == [("w",)]


def test_long_keys_and_labels(store: BaseStore) -> None:
    key, label = "k" * 5000, "l" * 1000
    store.put(("x", label), key, {"v": 1})
    item = store.get(("x", label), key)
    assert item is not None and item.key == key and item.namespace == ("x", label)
    assert [r.key for r in store.search(("x", label))] == [key]
    assert store.list_namespaces(prefix=("x",)) == [("x", label)]


def test_search_in_an_empty_scope(store: BaseStore) -> None:
    assert store.search(("nothing",)) == []
    assert store.search(("nothing",), query="anything") == []
    store.put(("something",), "k", {"text": "hello"})
    assert store.search(("nothing",), query="hello") == []
    assert store.search(("something", "deeper"), query="hello") == []
    assert store.list_namespaces(prefix=("nothing",)) == []


def test_search_returns_search_items_without_scores_when_no_query(store: BaseStore) -> None:
    _put_all(store, VALUES)
    results = store.search(NS, limit=100)
    assert all(isinstance(r, SearchItem) for r in results)
    assert all(r.score is None for r in results)
    assert {r.key: r.value for r in results} == VALUES


# --- namespaces: whole segments ----------------------------------------------------------------


def test_search_prefix_matches_whole_segments(store: BaseStore) -> None:
    layout = {
        ("users", "alice"): "a1",
        ("users", "alice2"): "a2",
        ("users", "alice", "notes"): "a3",
        ("users",): "u",
        ("users2",): "u2",
        ("other", "alice"): "o",
    }
    for ns, key in layout.items():
        store.put(ns, key, {"text": f"item {key}"})
    everything = {(ns, key) for ns, key in layout.items()}
    assert refs(store.search(("users", "alice"), limit=100)) == {
        (("users", "alice"), "a1"),
        (("users", "alice", "notes"), "a3"),
    }
    assert refs(store.search(("users", "alice2"), limit=100)) == {(("users", "alice2"), "a2")}
    assert refs(store.search(("users",), limit=100)) == {
        (ns, key) for ns, key in layout.items() if ns[0] == "users"
    }
    assert refs(store.search(("users", "alice", "notes"), limit=100)) == {
        (("users", "alice", "notes"), "a3")
    }
    assert refs(store.search(("users", "al"), limit=100)) == set()
    assert refs(store.search((), limit=100)) == everything
    # the same with a query
    assert refs(store.search(("users", "alice"), query="item a2", limit=100)) == {
        (("users", "alice"), "a1"),
        (("users", "alice", "notes"), "a3"),
    }


# --- filters -----------------------------------------------------------------------------------


def test_filters_select_what_the_predicate_selects(store: BaseStore) -> None:
    _put_all(store, VALUES)
    _put_all(store, {"decoy": {"n": 2, "status": "open"}}, ns=("elsewhere",))
    failures = []
    for filter, predicate in FILTER_CASES:
        expected = {k for k, v in VALUES.items() if predicate(v)}
        got = key_set(store.search(NS, filter=filter, limit=100))
        if got != expected:
            failures.append(f"filter={filter!r}: expected {sorted(expected)}, got {sorted(got)}")
    assert not failures, "\n".join(failures)


def test_filters_combine_with_a_query(store: BaseStore) -> None:
    values = {k: {**v, "text": f"report number {k}"} for k, v in VALUES.items()}
    _put_all(store, values)
    failures = []
    for filter, predicate in FILTER_CASES:
        expected = {k for k, v in VALUES.items() if predicate(v)}
        results = store.search(NS, query="report number", filter=filter, limit=100)
        if key_set(results) != expected:
            failures.append(
                f"filter={filter!r}: expected {sorted(expected)}, got {sorted(key_set(results))}"
            )
    assert not failures, "\n".join(failures)


def test_filter_on_a_literal_dotted_key(store: BaseStore) -> None:
    store.put(NS, "lit", {"a.b": "x", "a": {"b": "y"}})
    store.put(NS, "other", {"a.b": "z"})
    assert key_set(store.search(NS, filter={"a.b": "x"})) == {"lit"}
    assert key_set(store.search(NS, filter={"a.b": {"$eq": "x"}})) == {"lit"}


def test_filter_on_long_strings(store: BaseStore) -> None:
    long_a, long_b = "a" * 5000, "a" * 4999 + "b"
    store.put(NS, "long_a", {"s": long_a})
    store.put(NS, "long_b", {"s": long_b})
    store.put(NS, "short", {"s": "a"})
    assert key_set(store.search(NS, filter={"s": long_a})) == {"long_a"}
    assert key_set(store.search(NS, filter={"s": {"$ne": long_a}})) == {"long_b", "short"}


def test_filter_on_huge_integers(store: BaseStore) -> None:
    store.put(NS, "huge", {"n": 2**64})
    store.put(NS, "big", {"n": 2**63 - 1})
    store.put(NS, "small", {"n": 7})
    assert key_set(store.search(NS, filter={"n": 2**64})) == {"huge"}
    assert key_set(store.search(NS, filter={"n": {"$gt": 2**63}})) == {"huge"}
    assert key_set(store.search(NS, filter={"n": {"$lt": 2**40}})) == {"small"}
    assert key_set(store.search(NS, filter={"n": {"$gte": 2**63 - 1}})) == {"huge", "big"}


def test_filter_on_many_fields(store: BaseStore) -> None:
    wide = {f"f{i}": i for i in range(400)}
    store.put(NS, "wide", wide)
    store.put(NS, "narrow", {"f399": 0})
    assert key_set(store.search(NS, filter={"f399": 399})) == {"wide"}
    assert key_set(store.search(NS, filter={"f399": {"$gt": 100}})) == {"wide"}
    assert key_set(store.search(NS, filter={"f0": 0, "f399": {"$lt": 1000}})) == {"wide"}


def test_limit_applies_after_filtering(store: BaseStore) -> None:
    # Only every third item matches, and the filter (list equality) cannot go into Chroma's where.
    matching = set()
    for i in range(30):
        tags = ["keep"] if i % 3 == 0 else ["drop"]
        store.put(NS, f"k{i:02d}", {"tags": tags, "text": f"entry {i}"})
        if i % 3 == 0:
            matching.add(f"k{i:02d}")
    first = store.search(NS, filter={"tags": ["keep"]}, limit=4)
    rest = store.search(NS, filter={"tags": ["keep"]}, limit=100, offset=4)
    assert len(first) == 4
    assert key_set(first) | key_set(rest) == matching
    assert not key_set(first) & key_set(rest)
    with_query = store.search(NS, query="entry", filter={"tags": ["keep"]}, limit=4)
    assert len(with_query) == 4 and key_set(with_query) <= matching


# --- limit / offset ----------------------------------------------------------------------------


def test_limit_and_offset_page_through_everything(store: BaseStore) -> None:
    for i in range(7):
        store.put(NS, f"k{i}", {"i": i})
    pages = [store.search(NS, limit=3, offset=offset) for offset in (0, 3, 6)]
    assert [len(p) for p in pages] == [3, 3, 1]
    seen = [key for page in pages for key in key_set(page)]
    assert sorted(seen) == [f"k{i}" for i in range(7)]
    assert store.search(NS, limit=3, offset=7) == []
    assert store.search(NS, limit=0) == []
    assert len(store.search(NS, limit=100)) == 7
    # the default limit is 10
    for i in range(7, 15):
        store.put(NS, f"k{i}", {"i": i})
    assert len(store.search(NS)) == 10


def test_pages_are_consistent_with_the_full_order(store: BaseStore) -> None:
    for i in range(9):
        filler = " ".join(f"filler{j}" for j in range(i))
        store.put(NS, f"k{i}", {"i": i, "text": f"alpha {filler}"})
    for query in (None, "alpha"):
        full = store.search(NS, query=query, limit=100)
        assert len(full) == 9
        paged = [
            r for off in range(0, 9, 2) for r in store.search(NS, query=query, limit=2, offset=off)
        ]
        assert keys(paged) == keys(full), query
        for p, f in zip(paged, full, strict=True):
            assert (p.score is None and f.score is None) or abs(p.score - f.score) < 1e-6


# --- list_namespaces ---------------------------------------------------------------------------

NAMESPACES = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("x", "y"),
    ("users", "alice"),
    ("users", "alice2"),
    ("users", "alice", "f"),
]


def _with_namespaces(store: BaseStore) -> None:
    for ns in NAMESPACES:
        store.put(ns, "k", {"ns": list(ns)})


def test_list_namespaces_lists_all_sorted(store: BaseStore) -> None:
    _with_namespaces(store)
    assert store.list_namespaces() == sorted(NAMESPACES)


def test_list_namespaces_prefix_suffix_and_wildcards(store: BaseStore) -> None:
    _with_namespaces(store)
    cases: list[tuple[dict[str, Any], list[tuple[str, ...]]]] = [
        ({"prefix": ("a", "b")}, [ns for ns in NAMESPACES if ns[:2] == ("a", "b")]),
        ({"prefix": ("users", "alice")}, [("users", "alice"), ("users", "alice", "f")]),
        ({"prefix": ("users", "ali")}, []),
        ({"suffix": ("f",)}, [ns for ns in NAMESPACES if ns[-1] == "f"]),
        ({"suffix": ("d", "e")}, [("a", "b", "d", "e")]),
        ({"prefix": ("a", "*", "f")}, [("a", "b", "f"), ("a", "c", "f")]),
        ({"prefix": ("*", "b")}, [ns for ns in NAMESPACES if ns[1] == "b"]),
        ({"suffix": ("*", "f")}, [ns for ns in NAMESPACES if ns[-1] == "f"]),
        ({"suffix": ("b", "*")}, [("a", "b", "c"), ("a", "b", "f")]),
        ({"prefix": ("a",), "suffix": ("f",)}, [("a", "b", "f"), ("a", "c", "f")]),
        ({"prefix": ("*", "*", "*", "*")}, [("a", "b", "d", "e"), ("a", "b", "d", "i")]),
        ({"prefix": ("nope",)}, []),
        ({"max_depth": 1}, [("a",), ("users",), ("x",)]),
        ({"prefix": ("a", "b"), "max_depth": 3}, [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]),
        ({"prefix": ("a",), "max_depth": 2}, [("a", "b"), ("a", "c")]),
        ({"max_depth": 2, "suffix": ("f",)}, [("a", "b"), ("a", "c"), ("users", "alice")]),
        ({"limit": 3}, sorted(NAMESPACES)[:3]),
        ({"limit": 3, "offset": 3}, sorted(NAMESPACES)[3:6]),
        ({"offset": 8}, sorted(NAMESPACES)[8:]),
        ({"offset": 9}, []),
        ({"max_depth": 1, "limit": 1, "offset": 1}, [("users",)]),
    ]  # fmt: skip
    failures = []
    for kwargs, expected in cases:
        got = store.list_namespaces(**kwargs)
        if got != sorted(expected):
            failures.append(f"list_namespaces({kwargs}): expected {sorted(expected)}, got {got}")
    assert not failures, "\n".join(failures)


def test_list_namespaces_sees_new_namespaces_and_stays_deduplicated(store: BaseStore) -> None:
    store.put(("p", "q"), "k1", {"x": 1})
    store.put(("p", "q"), "k2", {"x": 2})
    assert store.list_namespaces() == [("p", "q")]
    store.put(("p", "r"), "k1", {"x": 1})
    assert store.list_namespaces(prefix=("p",)) == [("p", "q"), ("p", "r")]
