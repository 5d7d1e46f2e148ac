"""The store contract for batches, async twins and LangGraph graphs.

Batch semantics (as ``InMemoryStore``): results in input order; reads see the state before the
batch; puts are applied last, the last write per (namespace, key) wins.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import (
    BaseStore,
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from ._support import assert_scores_close, hash_index, key_set, keys, refs, scores

NS = ("batch",)


def test_results_come_in_input_order(store: BaseStore) -> None:
    store.put(NS, "old", {"text": "existing item"})
    store.put(("other",), "x", {"text": "elsewhere"})
    results = store.batch(
        [
            GetOp(NS, "old"),
            PutOp(NS, "new", {"text": "new item"}),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("other",)),)),
            SearchOp(NS, filter=None, limit=10, offset=0, query=None),
            GetOp(NS, "missing"),
            SearchOp(("other",), filter={"text": "elsewhere"}, limit=10, offset=0, query=None),
        ]
    )
    assert len(results) == 6
    assert results[0] is not None and results[0].key == "old"
    assert results[1] is None
    assert results[2] == [("other",)]
    assert keys(results[3]) == ["old"]
    assert results[4] is None
    assert keys(results[5]) == ["x"]


def test_reads_see_the_state_before_the_batch(store: BaseStore) -> None:
    store.put(NS, "k", {"v": 1, "text": "version one"})
    store.put(NS, "doomed", {"v": 0})
    results = store.batch(
        [
            PutOp(NS, "k", {"v": 2, "text": "version two"}),
            PutOp(NS, "fresh", {"v": 3}),
            PutOp(NS, "doomed", None),
            PutOp(("brand", "new"), "n", {"v": 4}),
            GetOp(NS, "k"),
            GetOp(NS, "fresh"),
            GetOp(NS, "doomed"),
            SearchOp(NS, filter=None, limit=10, offset=0, query=None),
            SearchOp(NS, filter={"v": 2}, limit=10, offset=0, query=None),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=100, offset=0),
        ]
    )
    assert results[4] is not None and results[4].value == {"v": 1, "text": "version one"}
    assert results[5] is None
    assert results[6] is not None and results[6].value == {"v": 0}
    assert key_set(results[7]) == {"k", "doomed"}
    assert results[8] == []
    assert results[9] == [NS]
    # ... and after the batch, the puts are there
    item = store.get(NS, "k")
    assert item is not None and item.value == {"v": 2, "text": "version two"}
    assert store.get(NS, "doomed") is None
    assert key_set(store.search(NS)) == {"k", "fresh"}
    assert store.list_namespaces() == [("batch",), ("brand", "new")]


def test_last_write_wins_per_key(store: BaseStore) -> None:
    store.put(NS, "deleted_last", {"v": 0})
    store.batch(
        [
            PutOp(NS, "a", {"v": 1}),
            PutOp(NS, "b", {"v": 1}),
            PutOp(NS, "a", {"v": 2}),
            PutOp(("other",), "a", {"v": 9}),
            PutOp(NS, "deleted_last", {"v": 5}),
            PutOp(NS, "deleted_last", None),
            PutOp(NS, "revived", None),
            PutOp(NS, "revived", {"v": 7}),
            PutOp(NS, "a", {"v": 3}),
        ]
    )
    got = {k: (it.value if (it := store.get(NS, k)) else None) for k in
           ("a", "b", "deleted_last", "revived")}  # fmt: skip
    assert got == {"a": {"v": 3}, "b": {"v": 1}, "deleted_last": None, "revived": {"v": 7}}
    other = store.get(("other",), "a")
    assert other is not None and other.value == {"v": 9}


def test_last_write_wins_for_vectors_too(make_store: Any) -> None:
    store = make_store(index=hash_index(fields=["text"]))
    store.batch(
        [
            PutOp(NS, "k", {"text": "python programming language"}),
            PutOp(NS, "k", {"text": "mountain hiking trip"}),
        ]
    )
    results = store.search(NS, query="mountain hiking trip", limit=1)
    assert keys(results) == ["k"]
    assert results[0].score is not None and abs(results[0].score - 1.0) < 1e-5


def test_empty_batch(store: BaseStore) -> None:
    assert store.batch([]) == []


async def test_abatch_has_the_same_semantics(store: BaseStore) -> None:
    await store.aput(NS, "k", {"v": 1})
    results = await store.abatch(
        [
            PutOp(NS, "k", {"v": 2}),
            GetOp(NS, "k"),
            PutOp(NS, "k", {"v": 3}),
            SearchOp(NS, filter=None, limit=10, offset=0, query=None),
        ]
    )
    assert results[0] is None and results[2] is None
    assert results[1] is not None and results[1].value == {"v": 1}
    assert [r.value for r in results[3]] == [{"v": 1}]
    item = await store.aget(NS, "k")
    assert item is not None and item.value == {"v": 3}


async def test_async_twins_give_the_same_answers(store: BaseStore) -> None:
    docs = {"a": "red apples and pears", "b": "green pears", "c": "blue sky"}
    for key, text in docs.items():
        await store.aput(("fruit", "basket"), key, {"text": text, "len": len(text)})
    await store.aput(("fruit", "bowl"), "d", {"text": "yellow banana", "len": 13})
    item = await store.aget(("fruit", "basket"), "a")
    assert item is not None and item.value == {"text": docs["a"], "len": len(docs["a"])}
    assert item == store.get(("fruit", "basket"), "a")

    for kwargs in (
        {},
        {"query": "pears"},
        {"filter": {"len": {"$gt": 11}}},
        {"query": "green", "filter": {"len": {"$lt": 20}}},
        {"limit": 1, "offset": 1, "query": "pears"},
    ):
        got = await store.asearch(("fruit",), **kwargs)
        want = store.search(("fruit",), **kwargs)
        assert refs(got) == refs(want), kwargs
        assert_scores_close(scores(got), scores(want))

    assert await store.alist_namespaces() == store.list_namespaces()
    assert await store.alist_namespaces(prefix=("fruit",), max_depth=1) == [("fruit",)]
    assert await store.alist_namespaces(suffix=("bowl",)) == [("fruit", "bowl")]

    await store.adelete(("fruit", "basket"), "a")
    assert await store.aget(("fruit", "basket"), "a") is None
    assert store.get(("fruit", "basket"), "a") is None


class _State(TypedDict):
    user: str
    text: str
    found: list[str]


def _remember(state: _State, config: RunnableConfig) -> dict[str, Any]:
    store = get_store()
    namespace = ("memories", state["user"])
    store.put(namespace, f"m{len(store.search(namespace, limit=100))}", {"text": state["text"]})
    return {"found": [r.value["text"] for r in store.search(namespace, query=state["text"])]}


async def _aremember(state: _State, config: RunnableConfig) -> dict[str, Any]:
    store = get_store()
    namespace = ("memories", state["user"])
    count = len(await store.asearch(namespace, limit=100))
    await store.aput(namespace, f"m{count}", {"text": state["text"]})
    return {"found": [r.value["text"] for r in await store.asearch(namespace, query=state["text"])]}


def _graph(node: Any, store: BaseStore) -> Any:
    builder = StateGraph(_State)
    builder.add_node("remember", node)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    return builder.compile(store=store)


def test_graph_nodes_use_the_store(store: BaseStore) -> None:
    graph = _graph(_remember, store)
    graph.invoke({"user": "alice", "text": "likes tea", "found": []})
    out = graph.invoke({"user": "alice", "text": "likes green tea", "found": []})
    graph.invoke({"user": "bob", "text": "likes coffee", "found": []})
    assert sorted(out["found"]) == ["likes green tea", "likes tea"]
    assert key_set(store.search(("memories", "alice"))) == {"m0", "m1"}
    assert key_set(store.search(("memories", "bob"))) == {"m0"}


async def test_async_graph_nodes_use_the_store(store: BaseStore) -> None:
    graph = _graph(_aremember, store)
    await graph.ainvoke({"user": "carol", "text": "plays chess", "found": []})
    out = await graph.ainvoke({"user": "carol", "text": "plays go", "found": []})
    assert sorted(out["found"]) == ["plays chess", "plays go"]
    assert store.list_namespaces(prefix=("memories",)) == [("memories", "carol")]
