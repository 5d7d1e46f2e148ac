"""A file cache in front of the packaged embedder, so repeated benchmark runs skip the model.

Vectors are kept per text (sha1 of the text) in ``.cache/embeddings-minilm.npz`` (gitignored).
The first run embeds and saves; later runs read the vectors back, so an experiment costs only
the store and the ranking. Query timings with a warm cache therefore leave out the model: the
benchmarks say so where they report queries per second.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

CACHE_DIR = Path(__file__).resolve().parents[1] / ".cache"


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class CachedEmbeddings(Embeddings):
    """Wraps an embedder; texts seen before (in this run or a saved cache) are not re-embedded."""

    def __init__(self, inner: Any, name: str = "minilm") -> None:
        self.inner = inner
        self.path = CACHE_DIR / f"embeddings-{name}.npz"
        self._vectors: dict[str, np.ndarray] = {}
        self._dirty = False
        if self.path.exists():
            with np.load(self.path) as data:
                keys, vecs = data["keys"], data["vectors"]
            self._vectors = {str(k): v for k, v in zip(keys, vecs, strict=True)}

    @property
    def is_packaged(self) -> bool:
        """Passed on from the wrapped embedder (see ``langgraph_episodic.language.baseline``)."""
        return getattr(self.inner, "is_packaged", False) is True

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if _key(t) not in self._vectors))
        if missing:
            for text, vec in zip(missing, self.inner.embed_documents(missing), strict=True):
                self._vectors[_key(text)] = np.asarray(vec, dtype=np.float32)
            self._dirty = True
        return [self._vectors[_key(t)].tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def save(self) -> None:
        """Write the cache file if anything new was embedded."""
        if not self._dirty:
            return
        CACHE_DIR.mkdir(exist_ok=True)
        keys = np.array(list(self._vectors))
        vecs = np.stack(list(self._vectors.values()))
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vecs)
        tmp.replace(self.path)
        self._dirty = False
