"""The embedders: the packaged model offline, thread settings, function wrapping, hashing."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch

from langgraph_episodic import as_embeddings, default_embeddings, simple_hash_embedding
from langgraph_episodic.embeddings import MODEL_DIMS, HashEmbeddings, SentenceTransformerEmbeddings


@pytest.mark.model
def test_packaged_model_gives_normalised_384_dim_vectors() -> None:
    emb = default_embeddings()
    assert emb is default_embeddings()  # loaded once per process
    vectors = emb.embed_documents(["I love pizza", "The meeting is on Tuesday", "I love pizza"])
    assert len(vectors) == 3 and all(len(v) == MODEL_DIMS for v in vectors)
    assert vectors[0] == vectors[2]
    assert math.isclose(sum(x * x for x in vectors[0]), 1.0, rel_tol=1e-4)
    query = emb.embed_query("favourite food")
    sims = [sum(a * b for a, b in zip(query, v, strict=True)) for v in vectors[:2]]
    assert sims[0] > sims[1]


@pytest.mark.model
def test_small_calls_use_query_threads_and_batches_the_default() -> None:
    emb = SentenceTransformerEmbeddings(num_threads=2, query_threads=1, small_call=4)
    emb.embed_query("one query")
    assert torch.get_num_threads() == 1
    emb.embed_documents([f"text number {i}" for i in range(10)])
    assert torch.get_num_threads() == 2
    emb.embed_query("back to one")
    assert torch.get_num_threads() == 1


def test_hash_embedding_is_deterministic_across_processes() -> None:
    code = "from langgraph_episodic import simple_hash_embedding as h; print(h('fix the bug', 16))"
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    assert len(runs) == 1
    assert runs.pop().strip() == str(simple_hash_embedding("fix the bug", 16))


def test_hash_embedding_relates_texts_that_share_words() -> None:
    def cos(a: str, b: str) -> float:
        x, y = simple_hash_embedding(a), simple_hash_embedding(b)
        return sum(p * q for p, q in zip(x, y, strict=True))

    assert cos("fix the login bug", "login bug fixed") > cos("fix the login bug", "weather is sunny")
    assert simple_hash_embedding("???") == [0.0] * 64
    with pytest.raises(ValueError, match="dim"):
        simple_hash_embedding("x", 0)


def test_as_embeddings_accepts_single_and_batch_functions() -> None:
    single = as_embeddings(lambda text: [float(len(text)), 1.0])
    batch = as_embeddings(lambda texts: [[float(len(t)), 1.0] for t in texts])
    for emb in (single, batch):
        assert emb.embed_documents(["ab", "abc"]) == [[2.0, 1.0], [3.0, 1.0]]
        assert emb.embed_query("abcd") == [4.0, 1.0]
    same = HashEmbeddings(8)
    assert as_embeddings(same) is same
    with pytest.raises(TypeError, match="Embeddings or a function"):
        as_embeddings(42)
