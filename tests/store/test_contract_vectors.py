"""The store contract for semantic search: scores equal InMemoryStore's cosine similarity.

Every backend indexes with the same deterministic ``HashEmbeddings``; ChromaStores run in
``search_mode="dense"``. Each test puts the same items into the store under test and into an
InMemoryStore reference, and compares keys, order and scores (to 1e-5).
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from ._support import (
    CountingEmbeddings,
    assert_ranked,
    assert_scores_close,
    hash_cosine,
    hash_index,
    key_set,
    scores,
)

NS = ("docs",)

DOCS = {
    "pizza": "I love pizza with extra cheese",
    "pasta": "pasta carbonara is my favourite dinner",
    "hiking": "we went hiking in the alps last summer",
    "python": "python is a programming language",
    "rust": "rust is a systems programming language",
    "weather": "the weather today is cold and rainy",
    "cheese": "cheese and wine tasting on friday",
    "alps": "the alps are mountains in europe",
    "bug": "fix the bug in the parser",
    "parser": "the parser handles nested brackets",
}

QUERIES = ["pizza cheese", "programming language", "mountains alps hiking", "parser bug", "zzz"]


def _put_both(store: BaseStore, reference: BaseStore, items: dict[str, Any], **kw: Any) -> None:
    for key, value in items.items():
        store.put(NS, key, value, **kw)
        reference.put(NS, key, value, **kw)


def _compare(store: BaseStore, reference: BaseStore, query: str, **kw: Any) -> None:
    got = store.search(NS, query=query, limit=100, **kw)
    want = reference.search(NS, query=query, limit=100, **kw)
    assert_ranked(got)
    assert_scores_close(scores(got), scores(want))


def test_query_scores_equal_the_reference_cosine(
    store: BaseStore, reference: InMemoryStore
) -> None:
    _put_both(store, reference, {k: {"text": t} for k, t in DOCS.items()})
    for query in QUERIES:
        _compare(store, reference, query)


def test_query_results_are_ranked_by_similarity(make_store: Any) -> None:
    store = make_store(index=hash_index(fields=["text"]))
    for key, text in DOCS.items():
        store.put(NS, key, {"text": text})
    for query in QUERIES:
        results = store.search(NS, query=query, limit=100)
        expected = {key: hash_cosine(query, text) for key, text in DOCS.items()}
        assert_ranked(results)
        assert_scores_close(scores(results), dict(expected))
        top = store.search(NS, query=query, limit=3)
        assert [r.key for r in top] == [r.key for r in results[:3]]


def test_exact_text_scores_one(make_store: Any) -> None:
    store = make_store(index=hash_index(fields=["text"]))
    for key, text in DOCS.items():
        store.put(NS, key, {"text": text})
    best = store.search(NS, query=DOCS["rust"], limit=1)
    assert [r.key for r in best] == ["rust"]
    assert best[0].score == pytest.approx(1.0, abs=1e-5)


def test_item_with_several_vectors_scores_by_its_best(make_store: Any) -> None:
    index = hash_index(fields=["title", "body"])
    store, reference = make_store(index=index), InMemoryStore(index=index)
    items = {
        "both": {"title": "rust borrow checker", "body": "ownership and lifetimes explained"},
        "title_only": {"title": "weather report", "body": "cold and rainy all week"},
        "other": {"title": "cooking", "body": "pasta recipes"},
    }
    _put_both(store, reference, items)
    for query in ["ownership lifetimes", "rust borrow", "cold rainy", "pasta"]:
        results = store.search(NS, query=query, limit=100)
        assert len(results) == len({r.key for r in results}), "an item must appear once"
        expected = {
            key: max(hash_cosine(query, v["title"]), hash_cosine(query, v["body"]))
            for key, v in items.items()
        }
        assert_scores_close(scores(results), dict(expected))
        _compare(store, reference, query)


def test_unindexed_items_have_no_score_but_are_found(
    store: BaseStore, reference: InMemoryStore
) -> None:
    _put_both(store, reference, {k: {"text": t} for k, t in DOCS.items()})
    store.put(NS, "raw", {"text": "I love pizza with extra cheese"}, index=False)
    reference.put(NS, "raw", {"text": "I love pizza with extra cheese"}, index=False)
    results = store.search(NS, query="pizza cheese", limit=100)
    assert_ranked(results)
    assert all(r.score is None for r in results if r.key == "raw")
    assert_scores_close(
        {r.key: r.score for r in results if r.score is not None},
        {r.key: r.score for r in reference.search(NS, query="pizza cheese", limit=100) if r.score is not None},
    )  # fmt: skip
    assert "raw" in key_set(store.search(NS, limit=100))
    assert key_set(store.search(NS, filter={"text": DOCS["pizza"]})) == {"pizza", "raw"}
    item = store.get(NS, "raw")
    assert item is not None and item.value == {"text": DOCS["pizza"]}


def test_reindexing_an_item_replaces_its_vectors(
    store: BaseStore, reference: InMemoryStore
) -> None:
    _put_both(store, reference, {"k": {"text": "python programming"}, "o": {"text": "other"}})
    _put_both(store, reference, {"k": {"text": "mountain weather"}})
    _compare(store, reference, "python programming")
    _compare(store, reference, "mountain weather")


def test_per_put_field_list_overrides_the_store_fields(make_store: Any) -> None:
    index = hash_index(fields=["text"])
    store, reference = make_store(index=index), InMemoryStore(index=index)
    value = {"text": "the weather is cold", "title": "rust compiler errors"}
    _put_both(store, reference, {"by_title": value}, index=["title"])
    _put_both(store, reference, {"by_text": value})
    results = {r.key: r.score for r in store.search(NS, query="rust compiler errors", limit=10)}
    assert results["by_title"] == pytest.approx(1.0, abs=1e-5)
    assert results["by_text"] == pytest.approx(
        hash_cosine("rust compiler errors", "the weather is cold"), abs=1e-5
    )
    _compare(store, reference, "rust compiler errors")
    _compare(store, reference, "the weather is cold")


@pytest.mark.parametrize(
    ("fields", "value", "texts"),
    [
        (["chunks[*]"], {"chunks": ["alpha beta", "gamma delta", "epsilon"]},
         ["alpha beta", "gamma delta", "epsilon"]),
        (["items[*].text"], {"items": [{"text": "red apple"}, {"text": "green pear"}]},
         ["red apple", "green pear"]),
        (["meta.summary"], {"meta": {"summary": "quarterly sales report"}, "x": "noise words"},
         ["quarterly sales report"]),
        (["chunks[1]"], {"chunks": ["alpha beta", "gamma delta"]}, ["gamma delta"]),
        (["chunks[-1]"], {"chunks": ["alpha beta", "gamma delta"]}, ["gamma delta"]),
        (["a.b", "c"], {"a": {"b": "nested text"}, "c": "top text"}, ["nested text", "top text"]),
        (["$"], {"text": "whole document", "n": 1}, None),
    ],
    ids=["array-wildcard", "array-of-objects", "nested", "array-index", "array-negative",
         "two-fields", "whole-doc"],
)  # fmt: skip
def test_field_paths(
    make_store: Any, fields: list[str], value: dict[str, Any], texts: list[str] | None
) -> None:
    index = hash_index(fields=fields)
    store, reference = make_store(index=index), InMemoryStore(index=index)
    _put_both(store, reference, {"doc": value, "decoy": {"unrelated": "zebra"}})
    for query in (texts or []) + ["whole document", "nothing matches here"]:
        _compare(store, reference, query)
    if texts:
        for text in texts:
            best = store.search(NS, query=text, limit=1)
            assert best[0].key == "doc" and best[0].score == pytest.approx(1.0, abs=1e-5)


def test_per_put_field_paths_with_arrays(store: BaseStore, reference: InMemoryStore) -> None:
    value = {"notes": [{"body": "first note about cats"}, {"body": "second note about dogs"}]}
    _put_both(store, reference, {"n": value}, index=["notes[*].body"])
    _put_both(store, reference, {"m": {"text": "dogs and cats"}})
    for query in ["cats", "dogs", "second note about dogs"]:
        _compare(store, reference, query)


def test_semantic_search_off(make_store: Any) -> None:
    store = make_store(index=None)
    store.put(NS, "a", {"text": "pizza"})
    store.put(NS, "b", {"text": "weather"})
    results = store.search(NS, query="pizza", limit=10)
    assert key_set(results) == {"a", "b"}
    assert all(r.score is None for r in results)
    assert key_set(store.search(NS, query="pizza", filter={"text": "weather"})) == {"b"}


def test_embeddings_of_a_batch_are_computed_in_one_call(make_store: Any) -> None:
    embedder = CountingEmbeddings(hash_index()["embed"])
    store = make_store(index={"dims": 64, "embed": embedder, "fields": ["text"]})
    from langgraph.store.base import PutOp

    store.batch([PutOp(NS, f"k{i}", {"text": f"text number {i}"}) for i in range(6)])
    assert len(embedder.document_calls) == 1
    assert sorted(embedder.document_calls[0]) == sorted(f"text number {i}" for i in range(6))
    store.put(NS, "raw", {"text": "not embedded"}, index=False)
    assert len(embedder.document_calls) == 1


def test_query_with_offset_pages_by_score(store: BaseStore, reference: InMemoryStore) -> None:
    _put_both(store, reference, {k: {"text": t} for k, t in DOCS.items()})
    full = store.search(NS, query="programming language cheese", limit=100)
    for offset in range(0, len(DOCS), 3):
        page = store.search(NS, query="programming language cheese", limit=3, offset=offset)
        assert [r.key for r in page] == [r.key for r in full[offset : offset + 3]]
        want = reference.search(NS, query="programming language cheese", limit=3, offset=offset)
        assert [r.score for r in page] == pytest.approx([r.score for r in want], abs=1e-5)
