"""Bad input: a clear error naming the offending thing, nothing written, the store still usable.

Value, filter and paging checks are ChromaStore's (InMemoryStore accepts most of these
silently); namespace checks made by ``BaseStore`` itself run on every backend.
"""

from __future__ import annotations

import re
from collections import ChainMap
from types import MappingProxyType
from typing import Any

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from ._support import CHROMA_BACKENDS, ONE_CHROMA, REFERENCE_AND_ONE_CHROMA, key_set

# Validation runs in the core shared by every ChromaStore before any client call, so the long
# parametrized lists run on the ephemeral store; whole-batch failures run on every client kind.

NS = ("bad",)


class Widget:
    """Not JSON."""


BAD_VALUES: list[tuple[str, Any, type[Exception], str]] = [
    # (id, value, exception type, a word the message must contain)
    ("str", "just a string", TypeError, "str"),
    ("list", ["a", "b"], TypeError, "list"),
    ("int", 42, TypeError, "int"),
    ("set", {"tags": {"a", "b"}}, TypeError, "set"),
    ("object", {"thing": Widget()}, TypeError, "Widget"),
    ("bytes", {"raw": b"\x00\x01"}, TypeError, "bytes"),
    ("nested-object", {"a": [{"b": Widget()}]}, TypeError, "Widget"),
    ("nan", {"x": float("nan")}, ValueError, "nan"),
    ("inf", {"x": float("inf")}, ValueError, "inf"),
    ("neg-inf", {"deep": {"list": [1.0, float("-inf")]}}, ValueError, "inf"),
    ("nan-in-list", {"xs": [0.5, float("nan")]}, ValueError, "nan"),
    ("int-key", {12345: "v"}, TypeError, "12345"),
    ("nested-int-key", {"a": {42424: "v"}}, TypeError, "42424"),
    ("tuple-key", {"a": {(1, 2): "v"}}, TypeError, "(1, 2)"),
    # mappings that are not dicts: JSON cannot write them, the error names the conversion
    ("mappingproxy", MappingProxyType({"a": 1}), TypeError, "dict()"),
    ("nested-mappingproxy", {"a": MappingProxyType({"b": 1})}, TypeError, "dict()"),
    ("chainmap", {"a": [ChainMap({"b": "text"})]}, TypeError, "dict()"),
]


def _mentions(exc: pytest.ExceptionInfo[Exception], word: str) -> None:
    assert word.lower() in str(exc.value).lower(), f"{word!r} not in message: {exc.value}"


def _usable(store: BaseStore) -> None:
    store.put(NS, "after", {"text": "still works"})
    item = store.get(NS, "after")
    assert item is not None and item.value == {"text": "still works"}
    assert "after" in key_set(store.search(NS, query="still works"))


@pytest.mark.parametrize("backend", ONE_CHROMA)
@pytest.mark.parametrize(("value", "exc_type", "word"),
                         [pytest.param(*case[1:], id=case[0]) for case in BAD_VALUES])  # fmt: skip
def test_bad_values_are_rejected(
    store: BaseStore, value: Any, exc_type: type[Exception], word: str
) -> None:
    store.put(NS, "k", {"v": "original"})
    with pytest.raises(exc_type) as exc:
        store.put(NS, "k", value)
    _mentions(exc, word)
    with pytest.raises(exc_type):
        store.put(NS, "new", value)
    item = store.get(NS, "k")
    assert item is not None and item.value == {"v": "original"}
    assert store.get(NS, "new") is None
    _usable(store)


@pytest.mark.parametrize("backend", ONE_CHROMA)
def test_errors_name_the_fix(store: BaseStore) -> None:
    with pytest.raises(TypeError) as not_dict:
        store.put(NS, "k", "text")
    assert "dict" in str(not_dict.value)
    with pytest.raises(ValueError) as nan:
        store.put(NS, "k", {"score": float("nan")})
    assert "score" in str(nan.value), "the message should point at the field"


@pytest.mark.parametrize("backend", REFERENCE_AND_ONE_CHROMA)
@pytest.mark.parametrize(
    "namespace",
    [(), ("a.b",), ("ok", "a.b"), ("",), ("ok", ""), ("ok", 7), (None,), ("langgraph",),
     ("langgraph", "x"), ("nul\x00",)],
    ids=["empty", "dot", "nested-dot", "empty-label", "nested-empty-label", "int-label",
         "none-label", "root-langgraph", "root-langgraph-deep", "nul"],
)  # fmt: skip
def test_invalid_namespaces_are_rejected_on_put(store: BaseStore, namespace: Any) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(namespace, "k", {"v": 1})
    assert store.list_namespaces() == []
    _usable(store)


@pytest.mark.parametrize("backend", REFERENCE_AND_ONE_CHROMA)
@pytest.mark.parametrize(
    "namespace", [("a.b",), ("",), ("ok", 3)], ids=["dot", "empty-label", "int-label"]
)
def test_invalid_namespaces_are_rejected_on_reads(store: BaseStore, namespace: Any) -> None:
    with pytest.raises(InvalidNamespaceError) as exc:
        store.get(namespace, "k")
    assert repr(namespace) in str(exc.value) or str(namespace) in str(exc.value)
    with pytest.raises(InvalidNamespaceError):
        store.search(namespace)
    with pytest.raises(InvalidNamespaceError):
        store.delete(namespace, "k")
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(prefix=namespace)
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(suffix=namespace)
    _usable(store)


@pytest.mark.parametrize("backend", ONE_CHROMA)
@pytest.mark.parametrize(
    "op",
    [
        GetOp(("a.b",), "k"),
        GetOp(("",), "k"),
        SearchOp(("x.y",)),
        SearchOp(("ok", "")),
        PutOp(("a.b",), "k", {"v": 1}),
        PutOp(("ok", 5), "k", {"v": 1}),
        PutOp(("a.b",), "k", None),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("a.b",)),)),
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("",)),)),
    ],
    ids=["get-dot", "get-empty", "search-dot", "search-empty", "put-dot", "put-int",
         "delete-dot", "list-prefix-dot", "list-suffix-empty"],
)  # fmt: skip
async def test_ops_with_bad_namespaces_fail_the_whole_batch(store: BaseStore, op: Any) -> None:
    store.put(NS, "k", {"v": "original"})
    good = PutOp(NS, "k", {"v": "changed"})
    fresh = PutOp(NS, "fresh", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([good, fresh, op])
    with pytest.raises(InvalidNamespaceError):
        await store.abatch([op, good, fresh])
    item = store.get(NS, "k")
    assert item is not None and item.value == {"v": "original"}
    assert store.get(NS, "fresh") is None
    _usable(store)


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
async def test_a_bad_value_fails_the_whole_batch(store: BaseStore) -> None:
    store.put(NS, "k", {"v": "original"})
    ops = [
        PutOp(NS, "k", {"v": "changed"}),
        PutOp(NS, "fresh", {"v": 1}),
        PutOp(NS, "poison", {"v": float("nan")}),
        PutOp(NS, "later", {"v": 2}),
    ]
    with pytest.raises(ValueError):
        store.batch(ops)
    with pytest.raises(ValueError):
        await store.abatch(ops)
    item = store.get(NS, "k")
    assert item is not None and item.value == {"v": "original"}
    assert key_set(store.search(NS)) == {"k"}
    _usable(store)


@pytest.mark.parametrize("backend", ONE_CHROMA)
@pytest.mark.parametrize(
    ("filter", "word"),
    [
        ({"x": {"$foo": 1}}, "$foo"),
        ({"x": {"$in": [1, 2]}}, "$in"),
        ({"$or": [{"x": 1}]}, "$or"),
        ({"x": {"$gt": 1, "$regex": "a"}}, "$regex"),
        ({"a": {"b": {"$nope": 1}}}, "$nope"),
    ],
    ids=["foo", "in", "top-level-or", "regex", "nested"],
)
def test_unknown_filter_operators_are_rejected(
    store: BaseStore, filter: dict[str, Any], word: str
) -> None:
    store.put(NS, "k", {"x": 1, "a": {"b": 1}})
    for kwargs in ({}, {"query": "anything"}):
        with pytest.raises(ValueError) as exc:
            store.search(NS, filter=filter, **kwargs)
        _mentions(exc, word)
        assert re.search(r"\$eq|\$gt|\$ne", str(exc.value)), "name the supported operators"
    with pytest.raises(ValueError):
        store.batch([PutOp(NS, "new", {"x": 2}), SearchOp(NS, filter=filter)])
    assert store.get(NS, "new") is None
    _usable(store)


@pytest.mark.parametrize("backend", ONE_CHROMA)
@pytest.mark.parametrize(
    ("kwargs", "word"),
    [({"limit": -1}, "limit"), ({"offset": -2}, "offset"), ({"limit": -5, "query": "q"}, "limit")],
    ids=["limit", "offset", "limit-with-query"],
)
def test_negative_limit_or_offset_is_rejected(
    store: BaseStore, kwargs: dict[str, Any], word: str
) -> None:
    store.put(NS, "k", {"v": 1})
    with pytest.raises(ValueError) as exc:
        store.search(NS, **kwargs)
    _mentions(exc, word)
    with pytest.raises(ValueError) as exc:
        store.list_namespaces(**{k: v for k, v in kwargs.items() if k != "query"})
    _mentions(exc, word)
    _usable(store)


@pytest.mark.parametrize("backend", ONE_CHROMA)
@pytest.mark.parametrize("ttl", [0, -1, float("nan"), "10"], ids=["zero", "negative", "nan", "str"])
def test_bad_ttl_is_rejected(store: BaseStore, ttl: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as exc:
        store.put(NS, "k", {"v": 1}, ttl=ttl)
    _mentions(exc, "ttl")
    assert store.get(NS, "k") is None
    _usable(store)


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
async def test_every_client_kind_rejects_bad_batches_before_writing(store: BaseStore) -> None:
    store.put(NS, "k", {"v": "original"})
    bad_batches: list[list[Any]] = [
        [PutOp(NS, "k", {"v": "changed"}), PutOp(NS, "poison", {"s": {1, 2}})],
        [PutOp(NS, "k", {"v": "changed"}), GetOp(("a.b",), "k")],
        [PutOp(NS, "k", {"v": "changed"}), SearchOp(NS, filter={"v": {"$foo": 1}})],
        [PutOp(NS, "k", {"v": "changed"}), SearchOp(NS, limit=-1)],
        [PutOp(NS, "k", {"v": "changed"}), PutOp(NS, "t", {"v": 1}, ttl=-1)],
    ]
    for ops in bad_batches:
        with pytest.raises((TypeError, ValueError)):
            store.batch(ops)
        with pytest.raises((TypeError, ValueError)):
            await store.abatch(ops)
    item = store.get(NS, "k")
    assert item is not None and item.value == {"v": "original"}
    assert key_set(store.search(NS)) == {"k"}
    _usable(store)
