"""Bad input, fuzzed: each gets a clear ValueError/TypeError naming what to fix, and nothing
stored before changes (the raw Chroma records are compared before and after every call)."""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.episodic import (
    Episode,
    EpisodeConflictError,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    TaskDescription,
)

from .conftest import all_items, hash_index, raw_records

FUZZ = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
NS = ("fuzz", "alice")


@pytest.fixture
def seeded(chroma: Any) -> Iterator[Any]:
    """A Chroma store with a few items (nested values, a TTL, an unindexed one) to protect."""
    chroma.put(NS, "a", {"text": "likes coffee", "n": 1, "deep": {"x": [1, 2, {"y": "z"}]}})
    chroma.put(NS, "b", {"text": "plays chess", "n": 2.5}, index=False)
    chroma.put(("fuzz", "bob"), "c", {"text": "bob's item"}, ttl=60.0)
    yield chroma


def snapshot(store: Any) -> dict[tuple[str, str], str]:
    """Every raw record, normalised (metadata key order is not stable across reads)."""
    return {
        (r["collection"], r["id"]): json.dumps([r["meta"], r["doc"]], sort_keys=True)
        for r in raw_records(store)
    }


def assert_refused(store: Any, call: Callable[[], Any], *words: str) -> None:
    """``call`` raises ValueError/TypeError mentioning one of ``words``; nothing changed."""
    before = snapshot(store)
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    message = str(info.value)
    assert any(w.casefold() in message.casefold() for w in words), (
        f"{type(info.value).__name__}: {message!r} names none of {words}"
    )
    assert snapshot(store) == before, "a refused call changed the stored data"


def assert_usable(store: Any) -> None:
    store.put(NS, "after", {"text": "still works"})
    assert store.get(NS, "after").value == {"text": "still works"}
    store.delete(NS, "after")


# --- namespaces and keys ---------------------------------------------------------------------

bad_labels = st.one_of(
    st.sampled_from(["", ".", "a.b", "x\x00y", "..", "a."]),
    st.text(min_size=0, max_size=5).map(lambda t: f"{t}.{t}"),
    st.integers(),
    st.none(),
    st.binary(max_size=4),
    st.floats(allow_nan=True),
)


@st.composite
def bad_namespaces(draw: st.DrawFn) -> tuple[Any, ...]:
    good = draw(st.lists(st.sampled_from(["fuzz", "alice", "x"]), max_size=3))
    kind = draw(st.sampled_from(["empty", "label", "langgraph"]))
    if kind == "empty":
        return ()
    if kind == "langgraph":
        return ("langgraph", *good)
    at = draw(st.integers(0, len(good)))
    return (*good[:at], draw(bad_labels), *good[at:])


@FUZZ
@given(ns=bad_namespaces(), op=st.sampled_from(["put", "get", "search", "delete", "list"]))
def test_bad_namespaces(seeded: Any, ns: tuple[Any, ...], op: str) -> None:
    if op in ("get", "search", "list"):
        # Reads accept the empty namespace (the root) and the reserved "langgraph" label: only
        # writes are refused those, as LangGraph defines it.
        assume(len(ns) > 0 and ns[0] != "langgraph")
    if op == "delete":
        # delete goes straight to batch (as in BaseStore), which accepts the reserved root:
        # LangGraph's own base-store test writes and deletes under it through batch/abatch.
        assume(ns[:1] != ("langgraph",))
    calls = {
        "put": lambda: seeded.put(ns, "k", {"text": "x"}),
        "get": lambda: seeded.get(ns, "k"),
        "search": lambda: seeded.search(ns, query="x"),
        "delete": lambda: seeded.delete(ns, "k"),
        "list": lambda: seeded.list_namespaces(prefix=ns),
    }
    assert_refused(seeded, calls[op], "namespace", "label")


@FUZZ
@given(key=st.one_of(st.integers(), st.none(), st.binary(max_size=3), st.tuples(st.text())))
def test_keys_that_are_not_strings(seeded: Any, key: Any) -> None:
    """BaseStore.put/get turn keys into str; ops sent to batch directly must be checked."""
    assert_refused(seeded, lambda: seeded.batch([PutOp(NS, key, {"text": "x"})]), "key")


# --- values ------------------------------------------------------------------------------------

bad_leaves = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.builds(set),
    st.binary(min_size=1, max_size=3),
    st.builds(object),
    st.complex_numbers(allow_nan=False, allow_infinity=False),
    st.just(datetime.datetime(2024, 1, 1)),
)
VALUE_WORDS = ("dict", "json", "finite", "nan", "nest", "string", "str", "key",
               "surrogate", "utf-8", "serialis", "serializ")  # fmt: skip


@st.composite
def bad_values(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["leaf", "key", "deep", "top"]))
    if kind == "top":
        return draw(st.one_of(st.lists(st.integers(), max_size=2), st.text(), st.integers(),
                              st.tuples(st.integers())))  # fmt: skip
    if kind == "deep":
        depth = draw(st.integers(70, 400))
        node: Any = "bottom"
        for _ in range(depth):
            node = draw(st.sampled_from([lambda n: {"d": n}, lambda n: [n]]))(node)
        return {"text": "deep", "d": node}
    if kind == "key":
        bad_key = draw(st.one_of(st.integers(), st.none(), st.tuples(st.integers()),
                                 st.floats(allow_nan=False)))  # fmt: skip
        return {"text": "x", "nested": {bad_key: 1}}
    leaf = draw(bad_leaves)
    path = draw(st.lists(st.sampled_from(["a", "b", 0]), max_size=3))
    node = leaf
    for step in reversed(path):
        node = [node] if step == 0 else {step: node}
    return {"text": "x", "field": node}


@FUZZ
@given(value=bad_values(), index=st.sampled_from([None, False, ["text"]]))
def test_bad_values(seeded: Any, value: Any, index: Any) -> None:
    put = (lambda: seeded.put(NS, "a", value)) if index is None else (
        lambda: seeded.put(NS, "a", value, index=index)
    )
    assert_refused(seeded, put, *VALUE_WORDS)


def test_a_huge_value_is_stored_exactly_or_refused_cleanly(seeded: Any) -> None:
    value = {"text": "huge " + "x" * 1_000_000, "list": list(range(5_000))}
    items = all_items(seeded)  # a read refreshes TTLs: the snapshot is taken after it
    before = snapshot(seeded)
    try:
        seeded.put(NS, "huge", value)
    except (ValueError, TypeError):
        assert snapshot(seeded) == before
    else:
        assert seeded.get(NS, "huge").value == value
        after = all_items(seeded)
        assert after.pop((NS, "huge")) == value
        assert after == items
    assert_usable(seeded)


@pytest.mark.parametrize(
    "value",
    [{"text": "lone \ud800 surrogate"}, {"text": "fine", "other": ["\udfff"]}],
    ids=["indexed", "unindexed"],
)
def test_strings_that_are_not_valid_unicode_are_refused_clearly(seeded: Any, value: Any) -> None:
    """A lone surrogate cannot be encoded as UTF-8, so it cannot be stored; say so."""
    assert_refused(seeded, lambda: seeded.put(NS, "s", value, index=["text"]),
                   "surrogate", "utf-8", "unicode")


# --- filters, queries, paging, ttl --------------------------------------------------------------

unknown_ops = st.text(min_size=1, max_size=8).map(lambda t: "$" + t).filter(
    lambda op: op not in {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"}
)
wrong_operands = st.one_of(st.none(), st.booleans(), st.lists(st.integers(), max_size=2),
                           st.dictionaries(st.text(max_size=2), st.integers(), max_size=1))  # fmt: skip


@st.composite
def bad_filters(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["op", "top", "operand", "type", "key"]))
    if kind == "op":
        return {"text": {draw(unknown_ops): "x"}}
    if kind == "top":
        return {draw(unknown_ops): [{"text": "x"}]}
    if kind == "operand":
        return {"n": {draw(st.sampled_from(["$gt", "$gte", "$lt", "$lte"])): draw(wrong_operands)}}
    if kind == "key":
        return {draw(st.one_of(st.integers(), st.none())): "x"}
    return draw(st.one_of(st.lists(st.text(), max_size=2), st.text(min_size=1), st.integers()))


@FUZZ
@given(flt=bad_filters(), query=st.sampled_from([None, "coffee"]))
def test_bad_filters(seeded: Any, flt: Any, query: Any) -> None:
    assert_refused(seeded, lambda: seeded.search(NS, filter=flt, query=query), "filter", "$")


@FUZZ
@given(query=st.one_of(st.integers(), st.binary(max_size=3), st.lists(st.text(), max_size=2)))
def test_queries_that_are_not_strings(seeded: Any, query: Any) -> None:
    assert_refused(seeded, lambda: seeded.batch([SearchOp(NS, query=query)]), "query")


@pytest.mark.parametrize(
    "query", ["", " ", "\x00", "coffee " * 15_000, "ü" * 100_000, "lone \ud800 surrogate"],
    ids=["empty", "blank", "nul", "100kB-words", "100kB-one-word", "surrogate"],
)
def test_odd_queries_answer_or_refuse_cleanly(seeded: Any, query: str) -> None:
    before = snapshot(seeded)
    try:
        found = seeded.search(NS, query=query, limit=5)
    except (ValueError, TypeError) as exc:
        assert "query" in str(exc).casefold() or "surrogate" in str(exc).casefold(), str(exc)
    else:
        assert {i.key for i in found} <= {"a", "b"}
    assert snapshot(seeded) == before


@FUZZ
@given(
    name=st.sampled_from(["limit", "offset"]),
    bad=st.one_of(st.integers(max_value=-1), st.floats(allow_nan=True), st.text(max_size=3)),
)
def test_bad_paging(seeded: Any, name: str, bad: Any) -> None:
    assume(not (isinstance(bad, float) and bad.is_integer() and bad >= 0))
    assert_refused(seeded, lambda: seeded.search(NS, **{name: bad}), name)


@FUZZ
@given(ttl=st.one_of(st.floats(max_value=0.0), st.sampled_from([math.nan, math.inf]),
                     st.text(max_size=3), st.booleans()))  # fmt: skip
def test_bad_ttl(seeded: Any, ttl: Any) -> None:
    assert_refused(seeded, lambda: seeded.put(NS, "a", {"text": "x"}, ttl=ttl), "ttl")


def test_the_store_still_works_after_all_that(seeded: Any) -> None:
    for call in (
        lambda: seeded.put(NS, "a", {"x": math.nan}),
        lambda: seeded.search(NS, filter={"x": {"$regex": "."}}),
        lambda: seeded.put(("a.b",), "k", {"x": 1}),
    ):
        with pytest.raises((ValueError, TypeError)):
            call()
    assert_usable(seeded)
    assert {i.key for i in seeded.search(NS, query="coffee")} >= {"a"}


# --- episodes with out-of-range fields -----------------------------------------------------------

out_of_unit = st.one_of(st.floats(max_value=-1e-9), st.floats(min_value=1.000001),
                        st.sampled_from([math.nan, math.inf, -math.inf]))  # fmt: skip
not_numbers = st.one_of(st.text(max_size=3), st.none(), st.booleans(), st.lists(st.integers()))
bad_counts = st.one_of(st.integers(max_value=-1), st.floats(), st.text(max_size=2), st.booleans())


@st.composite
def bad_episode_fields(draw: st.DrawFn) -> tuple[str, Callable[[], Any]]:
    field = draw(st.sampled_from(
        ["reward", "complexity", "tests_passed", "tests_total", "passed>total", "timestamp",
         "iterations", "outcome", "category", "description", "strategy_used", "episode_id"]
    ))  # fmt: skip
    task = TaskDescription("Fix the parser")
    if field == "reward":
        bad = draw(st.one_of(out_of_unit, not_numbers))
        return "reward", lambda: Feedback(bad)
    if field == "complexity":
        bad = draw(st.one_of(out_of_unit, not_numbers))
        return "complexity", lambda: TaskDescription("t", complexity=bad)
    if field in ("tests_passed", "tests_total"):
        bad = draw(bad_counts)
        return field, lambda: Feedback(0.5, **{field: bad})
    if field == "passed>total":
        total = draw(st.integers(0, 100))
        return "tests_passed", lambda: Feedback(0.5, tests_passed=total + 1, tests_total=total)
    if field == "timestamp":
        bad = draw(st.one_of(st.sampled_from([math.nan, math.inf, -math.inf]), not_numbers))
        return "timestamp", lambda: Episode("e", task, "s", Feedback(1.0), "success", bad)
    if field == "iterations":
        bad = draw(bad_counts)
        return "iterations", lambda: Episode("e", task, "s", Feedback(1.0), "success",
                                             iterations=bad)  # fmt: skip
    if field == "outcome":
        bad = draw(st.text(max_size=8).filter(lambda t: t not in {"success", "partial", "failure"}))
        return "outcome", lambda: Episode("e", task, "s", Feedback(1.0), bad)
    if field == "category":
        bad = draw(st.text(max_size=8).filter(lambda t: t.lower() != t or len(t) < 3))
        return "category", lambda: TaskDescription("t", category=bad)
    if field == "description":
        bad = draw(st.one_of(st.sampled_from(["", "  ", "\n"]), st.integers(), st.none()))
        return "description", lambda: TaskDescription(bad)
    bad = draw(st.one_of(st.just(""), st.integers(), st.none()))
    if field == "strategy_used":
        return field, lambda: Episode("e", task, "s", Feedback(1.0), "success", strategy_used=bad)
    return field, lambda: Episode(bad, task, "s", Feedback(1.0), "success")


@FUZZ
@given(case=bad_episode_fields())
def test_episodes_with_out_of_range_fields_are_refused(case: tuple[str, Callable[[], Any]]) -> None:
    field, build = case
    with pytest.raises((ValueError, TypeError)) as info:
        build()
    assert field.casefold() in str(info.value).casefold(), str(info.value)


@pytest.mark.parametrize("kind", ["memory", "chroma"])
def test_bad_episodes_never_change_a_stored_memory(kind: str) -> None:
    if kind == "memory":
        store: Any = InMemoryStore(index=hash_index())  # type: ignore[arg-type]  # IndexConfig is a TypedDict
    else:
        from langgraph_episodic import ChromaStore

        store = ChromaStore.ephemeral(index=hash_index())
    memory = EpisodicMemory.for_user(store, "alice")
    task = TaskDescription("Fix the parser")
    original = Episode("e1", task, "use a regex", Feedback(0.9), OutcomeStatus.SUCCESS, 10.0)
    memory.record(original)
    store.put(memory.namespace, "corrupt", {**original.to_dict(), "reward": 7.5,
                                            "feedback": {"reward": 7.5}})  # fmt: skip
    store.put(memory.namespace, "future", {**original.to_dict(), "schema_version": 99})
    before = {i.key: i.value for i in store.search(memory.namespace, limit=100)}

    with pytest.raises(EpisodeConflictError, match="new id"):
        memory.record(Episode("e1", task, "something else", Feedback(0.1), "failure", 11.0))
    with pytest.raises(TypeError, match="Episode"):
        memory.record(original.to_dict())  # type: ignore[arg-type]  # the wrong type is the test
    with pytest.raises(ValueError, match="query"):
        memory.recall("   ")
    with pytest.raises(ValueError, match="top_k"):
        memory.recall("parser", top_k=0)

    assert {i.key: i.value for i in store.search(memory.namespace, limit=100)} == before
    assert memory.get("e1") == original
    assert [e.episode_id for e in EpisodicMemory.for_user(store, "alice").episodes()] == ["e1"]
    assert [r.episode.episode_id for r in memory.recall("Fix the parser")] == ["e1"]
