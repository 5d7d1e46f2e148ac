"""Several stores over the same data agree: no in-process cache serves stale results.

Two ChromaStores open the same collection (the same path, the process's ephemeral system, or
the same server). On a server each has its own caches, as two processes would; every write by
one must be visible to the other's next read, search (dense and hybrid) and listing.
Also: the contract holds when the in-process vector cache is too small and Chroma's own index
answers.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from ._support import CHROMA_BACKENDS, assert_scores_close, hash_index, key_set, scores

pytestmark = pytest.mark.parametrize("backend", CHROMA_BACKENDS)

NS = ("team", "notes")


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_a_second_store_sees_every_write(make_store: Any, mode: str) -> None:
    writer = make_store(index=hash_index(fields=["text"]), search_mode=mode)
    writer.put(NS, "seed", {"text": "seed note about gardening"})
    reader = make_store.twin(writer)
    # warm the reader's caches before the writes it must then see
    assert key_set(reader.search(NS, query="gardening", limit=10)) == {"seed"}
    assert reader.list_namespaces() == [NS]

    writer.put(NS, "new", {"text": "quarterly tax deadline"})
    writer.put(("team", "other"), "x", {"text": "quarterly tax deadline"})
    results = reader.search(NS, query="quarterly tax deadline", limit=10)
    assert key_set(results) == {"seed", "new"}
    assert results[0].key == "new"
    assert reader.list_namespaces() == [("team", "notes"), ("team", "other")]

    writer.put(NS, "new", {"text": "volcano eruption footage"})
    top = reader.search(NS, query="volcano eruption footage", limit=1)
    assert [r.key for r in top] == ["new"]
    item = reader.get(NS, "new")
    assert item is not None and item.value == {"text": "volcano eruption footage"}
    if mode == "dense":
        assert top[0].score == pytest.approx(1.0, abs=1e-5)

    writer.delete(NS, "new")
    writer.delete(("team", "other"), "x")
    assert reader.get(NS, "new") is None
    assert key_set(reader.search(NS, query="volcano eruption footage", limit=10)) == {"seed"}
    assert reader.list_namespaces() == [NS]


def test_writes_from_both_sides_interleave(make_store: Any) -> None:
    a = make_store(index=hash_index(fields=["text"]))
    b = make_store.twin(a)
    for i in range(6):
        (a if i % 2 else b).put(NS, f"k{i}", {"text": f"note number {i}", "i": i})
        assert key_set(a.search(NS, query="note", limit=20)) == {f"k{j}" for j in range(i + 1)}
        assert key_set(b.search(NS, filter={"i": {"$lte": i}}, limit=20)) == {
            f"k{j}" for j in range(i + 1)
        }
    b.delete(NS, "k1")
    a.delete(NS, "k2")
    for store in (a, b):
        assert key_set(store.search(NS, query="note number", limit=20)) == {"k0", "k3", "k4", "k5"}


def test_contract_holds_without_the_vector_cache(make_store: Any) -> None:
    index = hash_index(fields=["text"])
    store, reference = make_store(index=index, vector_cache_size=1), InMemoryStore(index=index)
    texts = {f"k{i}": f"topic {i % 3} detail {i} shared words" for i in range(12)}
    for key, text in texts.items():
        for s in (store, reference):
            s.put(NS, key, {"text": text, "i": int(key[1:])})
    for query in ("topic 1 detail", "shared words", "detail 7"):
        got = store.search(NS, query=query, limit=20)
        want = reference.search(NS, query=query, limit=20)
        assert_scores_close(scores(got), scores(want))
        page = store.search(NS, query=query, limit=3, offset=2)
        assert [r.score for r in page] == pytest.approx([r.score for r in want[2:5]], abs=1e-5)
        filtered = store.search(NS, query=query, filter={"i": {"$gte": 6}}, limit=20)
        assert key_set(filtered) == {f"k{i}" for i in range(6, 12)}
