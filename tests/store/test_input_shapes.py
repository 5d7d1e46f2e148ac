"""Input shapes LangGraph users actually send: TTL bounds, operator dicts, namespace types.

Each was found loose (issue 13): ``ttl=1e308`` overflowed into an expiry Chroma cannot store;
``{"a": {"$eq": 5, "zz": 9}}`` treated ``zz`` as an operator; ``put("alice", ...)`` stored the
namespace ``('a','l','i','c','e')``; a namespace given as a list crashed in the registry; and
``batch([PutOp(("langgraph", ...), ...)])`` was refused although LangGraph's own base-store
test requires it (only the public ``put``/``aput`` check the reserved root).
"""

from __future__ import annotations

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

from langgraph_episodic.chroma.plans import MAX_TTL_MINUTES

from ._support import EPHEMERAL, ONE_CHROMA, REFERENCE_AND_ONE_CHROMA, backend_param, key_set

NS = ("shapes",)


def _usable(store: BaseStore) -> None:
    store.put(NS, "after", {"text": "still works"})
    item = store.get(NS, "after")
    assert item is not None and item.value == {"text": "still works"}
    assert "after" in key_set(store.search(NS))


# --- TTL --------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ONE_CHROMA)
@pytest.mark.parametrize(
    "ttl",
    [1e308, MAX_TTL_MINUTES * 1.0001, 10**30, float("inf")],
    ids=["1e308", "just-past-100-years", "huge-int", "inf"],
)
def test_ttl_past_100_years_is_refused(store: BaseStore, ttl: Any) -> None:
    store.put(NS, "k", {"v": "original"})
    with pytest.raises((TypeError, ValueError)) as exc:
        store.put(NS, "k", {"v": "changed"}, ttl=ttl)
    message = str(exc.value)
    assert "ttl" in message.lower() and "None" in message, message
    item = store.get(NS, "k")
    assert item is not None and item.value == {"v": "original"}
    _usable(store)


@pytest.mark.parametrize("backend", ONE_CHROMA)
async def test_ttl_bound_applies_to_batch_and_abatch(store: BaseStore) -> None:
    ops = [PutOp(NS, "k", {"v": 1}), PutOp(NS, "t", {"v": 2}, ttl=1e308)]
    with pytest.raises(ValueError, match="100 years"):
        store.batch(ops)
    with pytest.raises(ValueError, match="100 years"):
        await store.abatch(ops)
    assert store.get(NS, "k") is None, "a refused batch writes nothing"


@pytest.mark.parametrize("backend", [backend_param(EPHEMERAL), backend_param("chroma-persistent")])
def test_ttl_of_100_years_is_kept_and_survives_a_reopen(make_store: Any) -> None:
    store = make_store()
    store.put(NS, "long", {"text": "a very long memory"}, ttl=MAX_TTL_MINUTES)
    if make_store.backend != EPHEMERAL:
        store = make_store.reopen(store)
    item = store.get(NS, "long")
    assert item is not None and item.value == {"text": "a very long memory"}
    assert key_set(store.search(NS)) == {"long"}
    assert store.list_namespaces() == [NS]
    store.put(NS, "other", {"text": "next"})
    store.delete(NS, "long")
    assert key_set(store.search(NS)) == {"other"}


# --- operator dicts ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", REFERENCE_AND_ONE_CHROMA)
@pytest.mark.parametrize(
    "condition",
    [{"$eq": 5, "zz": 9}, {"zz": 9, "$gt": 1}, {"$ne": 1, "nested": {"$eq": 2}}],
    ids=["eq-and-key", "key-and-gt", "ne-and-nested"],
)
def test_unknown_keys_inside_an_operator_dict_raise(store: BaseStore, condition: Any) -> None:
    store.put(NS, "k", {"a": 5})
    with pytest.raises(ValueError) as exc:
        store.search(NS, filter={"a": condition})
    assert "zz" in str(exc.value) or "nested" in str(exc.value), str(exc.value)
    _usable(store)


@pytest.mark.parametrize("backend", REFERENCE_AND_ONE_CHROMA)
def test_a_plain_nested_dict_is_still_an_exact_match(store: BaseStore) -> None:
    store.put(NS, "k", {"a": {"zz": 9}})
    store.put(NS, "j", {"a": {"zz": 8}})
    assert key_set(store.search(NS, filter={"a": {"zz": 9}})) == {"k"}


# --- namespace types --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ONE_CHROMA)
def test_a_string_namespace_is_refused_naming_the_fix(store: BaseStore) -> None:
    calls = {
        "put": lambda: store.put("alice", "k", {"v": 1}),  # type: ignore[arg-type]
        "get": lambda: store.get("alice", "k"),  # type: ignore[arg-type]
        "delete": lambda: store.delete("alice", "k"),  # type: ignore[arg-type]
        "search": lambda: store.search("alice"),  # type: ignore[arg-type]
        "prefix": lambda: store.list_namespaces(prefix="alice"),  # type: ignore[arg-type]
        "batch": lambda: store.batch([PutOp("alice", "k", {"v": 1})]),  # type: ignore[arg-type]
    }
    for name, call in calls.items():
        with pytest.raises(TypeError) as exc:
            call()
        assert isinstance(exc.value, InvalidNamespaceError), name
        assert "('alice',)" in str(exc.value), f"{name}: {exc.value}"
    assert store.list_namespaces() == []
    assert store.search(()) == []
    _usable(store)


@pytest.mark.parametrize("backend", ONE_CHROMA)
async def test_a_string_namespace_is_refused_by_async_calls(store: BaseStore) -> None:
    with pytest.raises(InvalidNamespaceError, match=r"\('bob',\)"):
        await store.aput("bob", "k", {"v": 1})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"\('bob',\)"):
        await store.asearch("bob")  # type: ignore[arg-type]
    assert await store.alist_namespaces() == []


@pytest.mark.parametrize("backend", ONE_CHROMA)
def test_lists_are_accepted_as_tuples(store: BaseStore) -> None:
    store.put(["users", "alice"], "k", {"text": "hello"})  # type: ignore[arg-type]
    store.put(("users", "bob"), "k", {"text": "hi"})
    item = store.get(["users", "alice"], "k")  # type: ignore[arg-type]
    assert item is not None and item.value == {"text": "hello"}
    assert item.namespace == ("users", "alice")
    assert key_set(store.search(["users", "alice"])) == {"k"}  # type: ignore[arg-type]
    assert len(store.search(["users"])) == 2  # type: ignore[arg-type]
    assert store.list_namespaces(prefix=["users"]) == [  # type: ignore[arg-type]
        ("users", "alice"),
        ("users", "bob"),
    ]
    assert store.list_namespaces(suffix=["bob"]) == [("users", "bob")]  # type: ignore[arg-type]
    results = store.batch(
        [
            GetOp(["users", "bob"], "k"),  # type: ignore[arg-type]
            SearchOp(["users", "bob"]),  # type: ignore[arg-type]
            ListNamespacesOp((MatchCondition("prefix", ["users", "*"]),)),  # type: ignore[arg-type]
        ]
    )
    assert results[0] is not None and results[0].value == {"text": "hi"}
    assert key_set(results[1]) == {"k"}
    assert results[2] == [("users", "alice"), ("users", "bob")]
    store.delete(["users", "alice"], "k")  # type: ignore[arg-type]
    assert store.get(("users", "alice"), "k") is None
    assert store.list_namespaces() == [("users", "bob")]


@pytest.mark.parametrize("backend", ONE_CHROMA)
def test_last_write_wins_across_list_and_tuple_namespaces(store: BaseStore) -> None:
    store.batch([PutOp(["a", "b"], "k", {"v": 1}), PutOp(("a", "b"), "k", {"v": 2})])  # type: ignore[arg-type]
    item = store.get(("a", "b"), "k")
    assert item is not None and item.value == {"v": 2}
    assert len(store.search(("a",))) == 1


# --- the reserved root ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", REFERENCE_AND_ONE_CHROMA)
async def test_batch_accepts_the_reserved_root_put_does_not(store: BaseStore) -> None:
    doc = {"foo": "bar"}
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph", "foo"), "bar", doc)
    with pytest.raises(InvalidNamespaceError):
        await store.aput(("langgraph", "foo"), "bar", doc)
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])
    item = store.get(("langgraph", "foo"), "bar")
    assert item is not None and item.value == doc
    assert store.search(("langgraph", "foo"))[0].value == doc
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None
    await store.abatch([PutOp(("langgraph", "x"), "k", doc)])
    assert ("langgraph", "x") in await store.alist_namespaces()


@pytest.mark.parametrize("backend", ONE_CHROMA)
def test_batch_still_refuses_an_empty_namespace(store: BaseStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp((), "k", {"v": 1})])
    assert store.list_namespaces() == []
