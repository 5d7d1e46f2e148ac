"""A ``ChromaStore``'s embedder: which one a store opens with, and the vectors of one batch.

A store opened without ``index=`` takes the two-language default, or, when the vectors it holds
were written by one of the packaged models alone, that model (:func:`default_index`). A batch's
texts are embedded in one ``embed_documents`` call and each distinct question once
(:func:`embed`, :func:`aembed`); what the embedder returns is checked (one vector per text, of
``index['dims']`` numbers) and kept as float32 arrays, the form the ranking uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig

from ..errors import Error, InvalidValueError
from ..language.analysis import Language
from .gateway import Gateway

Vectors = dict[str, np.ndarray]
"""Text -> its vector."""


class EmbedderMismatchError(Error, ValueError):
    """A store opened with the default embedder holds vectors no default model makes.

    ``stored`` is their dimension count; the message names the fix (``index=``)."""

    def __init__(self, stored: int, message: str) -> None:
        super().__init__(message)
        self.stored = stored


def default_index(stored: int | None = None) -> IndexConfig:
    """The default index: the two-language embedder (:mod:`..bilingual`), or for a store written
    with the packaged MiniLM (384-d) or the multilingual model (512-d) alone, that model."""
    from ..bilingual import BILINGUAL_DIMS, NAMED_DIMS, named_index

    dims = BILINGUAL_DIMS if stored is None else stored
    name = {d: n for n, d in NAMED_DIMS.items()}.get(dims)
    if name is None:
        raise EmbedderMismatchError(
            dims,
            f"This store holds {dims}-d vectors, written with an embedder of your own; the "
            f"default embedder makes {BILINGUAL_DIMS}-d ones. Open it with the embedder it was "
            "written with: index={'dims': ..., 'embed': ...}.",
        )
    return named_index(name, ["$"])


def stored_dims(client: Any, collection: str) -> int | None:
    """Dimensions of the vectors store ``collection`` holds (None: none)."""
    name = Gateway.names(collection)[1]
    if name not in {c if isinstance(c, str) else c.name for c in client.list_collections()}:
        return None
    vectors = client.get_collection(name, embedding_function=None)
    got = vectors.get(limit=1, include=["embeddings"])
    embeddings = got.get("embeddings")
    if embeddings is None or len(embeddings) == 0:
        return None
    return len(embeddings[0])


def routed(embeddings: Embeddings, language: Language) -> Embeddings:
    """``embeddings`` routed to ``language`` when it routes questions (the two-language default)."""
    route = getattr(embeddings, "routed", None)
    if not callable(route):
        return embeddings
    chosen: Embeddings = route(language)
    return chosen


def embed(
    embeddings: Embeddings, dims: int | None, texts: list[str], queries: list[str]
) -> tuple[Vectors, Vectors]:
    """The vectors of ``texts`` (one call) and of each query, checked against ``dims``."""
    docs = embeddings.embed_documents(texts) if texts else []
    qvecs = [embeddings.embed_query(q) for q in queries]
    return _documents(texts, docs, dims), _questions(queries, qvecs, dims)


async def aembed(
    embeddings: Embeddings, dims: int | None, texts: list[str], queries: list[str]
) -> tuple[Vectors, Vectors]:
    """Async version of :func:`embed` (the queries embedded concurrently)."""
    docs = await embeddings.aembed_documents(texts) if texts else []
    qvecs = list(await asyncio.gather(*(embeddings.aembed_query(q) for q in queries)))
    return _documents(texts, docs, dims), _questions(queries, qvecs, dims)


def _documents(texts: Sequence[str], vectors: Sequence[Any], dims: int | None) -> Vectors:
    """Document vectors as rows of one float32 matrix, converted in one step (row by row
    costs a Python float per number)."""
    _check_count(texts, vectors)
    if not texts:
        return {}
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise InvalidValueError(
            "The embedder returned vectors that are not one list of numbers per text, all "
            f"of one length ({exc}). Fix the embedder's embed_documents."
        ) from exc
    if matrix.ndim != 2:
        raise InvalidValueError(f"The embedder returned vectors of shape {matrix.shape}.")
    _check_dims(matrix.shape[1], dims)
    return dict(zip(texts, matrix, strict=True))


def _questions(queries: Sequence[str], vectors: Sequence[Any], dims: int | None) -> Vectors:
    """Query vectors as float32 arrays."""
    _check_count(queries, vectors)
    out = {}
    for text, vec in zip(queries, vectors, strict=True):
        arr = np.asarray(vec, dtype=np.float32)
        if arr.ndim != 1:
            raise InvalidValueError(f"The embedder returned a vector of shape {arr.shape}.")
        _check_dims(len(arr), dims)
        out[text] = arr
    return out


def _check_count(texts: Sequence[str], vectors: Sequence[Any]) -> None:
    if len(vectors) != len(texts):
        raise InvalidValueError(
            f"The embedder returned {len(vectors)} vectors for {len(texts)} texts."
        )


def _check_dims(got: int, dims: int | None) -> None:
    if dims and got != dims:
        raise InvalidValueError(
            f"The embedder returned {got}-d vectors but index['dims'] is {dims}. "
            "Fix index['dims'] to match the model."
        )
