"""langgraph-episodic: a memory that learns, for LangGraph agents.

Names are imported lazily, so ``import langgraph_episodic`` does not load torch, the model or
Chroma until they are used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> module that defines it (relative to this package)
_EXPORTS: dict[str, str] = {
    # --- store (issue 2) ---
    "ChromaStore": ".chroma.store",
    "default_embeddings": ".embeddings",
    "simple_hash_embedding": ".embeddings",
    "HashEmbeddings": ".embeddings",
    "SentenceTransformerEmbeddings": ".embeddings",
    "as_embeddings": ".embeddings",
    # --- shared helpers ---
    "MissingConfigError": "._config",
    "is_worth_storing": ".relevance",
    # --- episodic (issue 3) ---
    # --- graph nodes and threads (issue 4) ---
    # --- tools (issue 5) ---
    # --- privacy (issue 9) ---
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langgraph_episodic' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .chroma.store import ChromaStore
    from .embeddings import (
        HashEmbeddings,
        SentenceTransformerEmbeddings,
        as_embeddings,
        default_embeddings,
        simple_hash_embedding,
    )
