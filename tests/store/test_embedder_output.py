"""What the store does with what an embedder returns: lists or numpy rows are stored alike, and
a wrong answer is refused with an error naming the fix before anything is written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langgraph_episodic import ChromaStore, HashEmbeddings

NS = ("users", "alice")


class Returning(Embeddings):
    """HashEmbeddings(8) whose ``embed_documents`` answer goes through ``shape``."""

    def __init__(self, shape: Any) -> None:
        self.inner, self.shape = HashEmbeddings(8), shape

    def embed_documents(self, texts: list[str]) -> Any:
        return self.shape(self.inner.embed_documents(texts))

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def _store(shape: Any) -> ChromaStore:
    return ChromaStore.ephemeral(index={"dims": 8, "embed": Returning(shape), "fields": ["text"]})


@pytest.mark.parametrize(
    "shape",
    [
        lambda v: np.asarray(v, dtype=np.float64),
        lambda v: [np.asarray(x, dtype=np.float32) for x in v],
        lambda v: [tuple(x) for x in v],
    ],
    ids=["float64-matrix", "float32-rows", "tuples"],
)
def test_numpy_and_sequences_are_stored_as_lists_are(shape: Any) -> None:
    plain, other = _store(lambda v: v), _store(shape)
    try:
        for store in (plain, other):
            for i, t in enumerate(["green tea", "black coffee", "port 5432"]):
                store.put(NS, f"k{i}", {"text": t})
        got = other.collections["vectors"].get(include=["embeddings"])
        want = plain.collections["vectors"].get(include=["embeddings"])
        assert dict(zip(got["ids"], got["embeddings"].tolist(), strict=True)) == dict(
            zip(want["ids"], want["embeddings"].tolist(), strict=True)
        )
        for q in ("tea", "coffee", "port"):
            a = [(h.key, h.score) for h in plain.search(NS, query=q)]
            b = [(h.key, h.score) for h in other.search(NS, query=q)]
            assert a == b
    finally:
        plain.close()
        other.close()


@pytest.mark.parametrize(
    "shape, message",
    [
        (lambda v: [x[:4] for x in v], r"4-d vectors but index\['dims'\] is 8\. Fix index\['dims'\]"),
        (lambda v: [v[0], v[1][:3]], r"not one list of numbers per text.*Fix the embedder's embed_documents"),
        (lambda v: v[:1], r"returned 1 vectors for 2 texts"),
        (lambda v: [["x"] * 8 for _ in v], r"not one list of numbers per text"),
    ],
    ids=["wrong-dims", "ragged", "too-few", "not-numbers"],
)
def test_a_wrong_answer_is_refused_and_nothing_is_written(shape: Any, message: str) -> None:
    store = ChromaStore.ephemeral(index={"dims": 8, "embed": HashEmbeddings(8), "fields": ["text"]})
    store.put(NS, "kept", {"text": "stored before"})
    store.embeddings = Returning(shape)  # the embedder starts answering wrong
    try:
        from langgraph.store.base import PutOp

        with pytest.raises(ValueError, match=message):
            store.batch([PutOp(NS, "a", {"text": "first"}), PutOp(NS, "b", {"text": "second"})])
        assert store.get(NS, "a") is None and store.get(NS, "b") is None
        assert store.get(NS, "kept").value == {"text": "stored before"}  # type: ignore[union-attr]
        assert store.verify().ok
    finally:
        store.close()
