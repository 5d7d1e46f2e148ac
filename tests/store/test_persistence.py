"""Persistence: close a persistent store, open its folder again, everything is there.

The stores here are built on chromadb clients the test owns, so it can close the client (which
stops Chroma's shared in-process system) and prove the data came back from disk. One test reads
the folder from a fresh Python process. The real packaged model is used where marked ``model``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings
from langgraph.store.base import IndexConfig

from langgraph_episodic import ChromaStore
from langgraph_episodic.embeddings import MODEL_DIMS, default_embeddings

from ._support import (
    PERSISTENT,
    CountingEmbeddings,
    FakeClock,
    assert_scores_close,
    backend_param,
    cosine,
    hash_index,
    scores,
)

NS = ("users", "alice")
MODEL_GROUP = pytest.mark.xdist_group("packaged-model")
"""Runs the model tests on one xdist worker (``--dist loadgroup``): the model loads once."""
FOODS = {
    "pizza": "I love pizza",
    "weather": "It is raining again in Berlin",
    "car": "My car needs new tyres",
    "meeting": "The budget meeting moved to Thursday",
}


def _client(path: Path) -> Any:
    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def _snapshot(store: ChromaStore, query: str) -> dict[str, Any]:
    items, stamps = {}, {}
    for key in FOODS:
        item = store.get(NS, key)
        assert item is not None, key
        items[key] = item.value
        stamps[key] = (item.created_at.timestamp(), item.updated_at.timestamp())
    return {
        "items": items,
        "stamps": stamps,
        "scores": scores(store.search(NS, query=query, limit=10)),
        "namespaces": store.list_namespaces(),
        "filtered": sorted(r.key for r in store.search(NS, filter={"kind": "food"})),
    }


def _write(store: ChromaStore) -> None:
    for key, text in FOODS.items():
        store.put(NS, key, {"text": text, "kind": "food" if key == "pizza" else "other"})
    store.put(("users", "bob"), "x", {"text": "unrelated"})


def _reopen_and_compare(path: Path, index: IndexConfig, query: str) -> None:
    client = _client(path)
    store = ChromaStore(client, index=index, search_mode="dense")
    _write(store)
    before = _snapshot(store, query)
    store.close()
    client.close()

    embedder = CountingEmbeddings(index["embed"])
    client = _client(path)
    try:
        reopened = ChromaStore(client, index={**index, "embed": embedder}, search_mode="dense")
        after = _snapshot(reopened, query)
        assert after["items"] == before["items"]
        for key, stamps in before["stamps"].items():  # exactness: see the test below
            assert after["stamps"][key] == pytest.approx(stamps, abs=2e-6), key
        assert after["namespaces"] == before["namespaces"] == [("users", "alice"), ("users", "bob")]
        assert after["filtered"] == before["filtered"] == ["pizza"]
        assert_scores_close(after["scores"], before["scores"], tol=1e-5)
        assert embedder.document_calls == [], "stored vectors must not be re-embedded"
        assert embedder.query_calls == [query]
        reopened.close()
    finally:
        client.close()


def test_reopen_keeps_items_and_vectors(tmp_path: Path) -> None:
    _reopen_and_compare(tmp_path / "db", hash_index(fields=["text"]), "pizza love")


@pytest.mark.model
@MODEL_GROUP
def test_reopen_keeps_items_and_vectors_with_the_packaged_model(tmp_path: Path) -> None:
    index: IndexConfig = {"dims": MODEL_DIMS, "embed": default_embeddings(), "fields": ["text"]}
    _reopen_and_compare(tmp_path / "db", index, "favourite food")


def test_timestamps_survive_reopen_exactly(fast_tmp_path: Path) -> None:
    # Forty fixed clock readings; Chroma returns some float metadata one ulp off, which must
    # not move a timestamp to the next microsecond.
    stamps = [1_796_010_742.0 + i * 0.1234567 + 0.0000005 for i in range(40)]
    client = _client(fast_tmp_path)
    clock = FakeClock()
    store = ChromaStore(client, index=hash_index(), search_mode="dense", clock=clock)
    before = {}
    for i, stamp in enumerate(stamps):
        clock.now = stamp
        store.put(NS, f"k{i}", {"i": i})
        item = store.get(NS, f"k{i}")
        assert item is not None
        before[f"k{i}"] = (item.created_at, item.updated_at)
    store.close()
    client.close()
    client = _client(fast_tmp_path)
    try:
        reopened = ChromaStore(client, index=hash_index(), search_mode="dense")
        after = {}
        for key in before:
            item = reopened.get(NS, key)
            assert item is not None
            after[key] = (item.created_at, item.updated_at)
        moved = {k: (str(before[k][0]), str(after[k][0])) for k in before if before[k] != after[k]}
        assert not moved, f"timestamps changed on reopen (before, after): {moved}"
    finally:
        client.close()


CHILD = textwrap.dedent(
    """
    import json, sys
    from langchain_core.embeddings import Embeddings
    from langgraph_episodic import ChromaStore
    from langgraph_episodic.embeddings import simple_hash_embedding

    class QueryOnly(Embeddings):
        def embed_documents(self, texts):
            raise AssertionError(f"re-embedded stored texts: {texts}")
        def embed_query(self, text):
            return simple_hash_embedding(text, 64)

    store = ChromaStore.persistent(
        path=sys.argv[1], index={"dims": 64, "embed": QueryOnly(), "fields": ["text"]},
        search_mode="dense",
    )
    ns = ("users", "alice")
    out = {
        "values": {k: store.get(ns, k).value for k in json.loads(sys.argv[2])},
        "scores": {r.key: r.score for r in store.search(ns, query="pizza love", limit=10)},
        "namespaces": [list(n) for n in store.list_namespaces()],
    }
    print(json.dumps(out))
    """
)


def test_a_new_process_reads_the_folder(tmp_path: Path) -> None:
    path = tmp_path / "db"
    client = _client(path)
    store = ChromaStore(client, index=hash_index(fields=["text"]), search_mode="dense")
    _write(store)
    expected = _snapshot(store, "pizza love")
    store.close()
    client.close()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), json.dumps(list(FOODS))],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["values"] == expected["items"]
    assert_scores_close(got["scores"], expected["scores"], tol=1e-5)
    assert got["namespaces"] == [["users", "alice"], ["users", "bob"]]


@pytest.mark.model
@MODEL_GROUP
def test_default_index_is_the_two_language_embedder(tmp_path: Path) -> None:
    """A new store embeds with :class:`~langgraph_episodic.bilingual.BilingualEmbeddings`
    (the packaged MiniLM beside the multilingual model); an English question still finds by
    meaning."""
    from langgraph_episodic.bilingual import BILINGUAL_DIMS, BilingualEmbeddings

    store = ChromaStore.persistent(path=tmp_path / "db")
    try:
        assert store.index_config is not None and store.index_config["dims"] == BILINGUAL_DIMS
        assert isinstance(store.embeddings, BilingualEmbeddings)
        for key, text in FOODS.items():
            store.put(NS, key, {"text": text})
        results = store.search(NS, query="favourite food", limit=4)
        assert results[0].key == "pizza"
    finally:
        store.close()


@pytest.mark.model
@MODEL_GROUP
def test_default_index_dense_scores_are_model_cosines(fast_tmp_path: Path) -> None:
    store = ChromaStore.persistent(path=fast_tmp_path / "db", search_mode="dense")
    try:
        for key, text in FOODS.items():
            store.put(NS, key, {"text": text})
        model = default_embeddings()
        query = model.embed_query("favourite food")
        # the default fields are ["$"]: LangGraph embeds the whole value as sorted JSON
        docs = [
            json.dumps({"text": text}, sort_keys=True, ensure_ascii=False)
            for text in FOODS.values()
        ]
        expected = dict(
            zip(FOODS, (cosine(query, v) for v in model.embed_documents(docs)), strict=True)
        )
        results = store.search(NS, query="favourite food", limit=4)
        assert results[0].key == "pizza"
        assert len(model.embed_query("x")) == MODEL_DIMS
        assert_scores_close(scores(results), expected, tol=1e-5)
    finally:
        store.close()


@pytest.mark.parametrize("backend", [backend_param(PERSISTENT)])
def test_reopen_helper_keeps_items_ttl_and_unindexed_items(make_store: Any, reopen: Any) -> None:
    clock = FakeClock()
    store = make_store(index=hash_index(fields=["text"]), clock=clock)
    _write(store)
    store.put(NS, "raw", {"text": "I love pizza too"}, index=False)
    store.put(NS, "brief", {"text": "short lived"}, ttl=1)
    before = _snapshot(store, "pizza love")
    reopened = reopen(store)  # with the same options, the clock too
    after = _snapshot(reopened, "pizza love")
    assert after["items"] == before["items"]
    assert_scores_close(after["scores"], before["scores"], tol=1e-5)
    raw = [r for r in reopened.search(NS, query="pizza love", limit=20) if r.key == "raw"]
    assert [r.score for r in raw] == [None]
    assert reopened.get(NS, "brief") is not None
    clock.advance(minutes=2)
    assert reopened.get(NS, "brief") is None
    assert reopened.sweep_ttl() == 1
