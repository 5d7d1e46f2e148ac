"""langgraph-episodic: a memory that learns, for LangGraph agents.

Names are imported lazily, so ``import langgraph_episodic`` does not load torch, the model or
Chroma until they are used; importing the package itself imports nothing (the command line's
``--help`` starts as fast as Python).
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing.TYPE_CHECKING`` without importing typing (see the end)

__version__ = "0.1.0"

# name -> module that defines it (relative to this package). The product's names only; the
# rest is public in its subpackage (``langgraph_episodic.graph``, ``.episodic``, ``.privacy``,
# ``.tools``, ``.chroma``, ``.facts``, ``.server``), listed in docs/api.md.
_EXPORTS: dict[str, str] = {
    # --- the store ---
    "ChromaStore": ".chroma",
    # --- embeddings ---
    "default_embeddings": ".embeddings",
    "HashEmbeddings": ".embeddings",
    "MultilingualEmbeddings": ".multilingual",
    "multilingual_index": ".multilingual",
    # --- episodic memory ---
    "EpisodicMemory": ".episodic",
    "Episode": ".episodic",
    "TaskDescription": ".episodic",
    "TaskCategory": ".episodic",
    "OutcomeStatus": ".episodic",
    "Feedback": ".episodic",
    "build_replay_context": ".episodic",
    "format_replay_prompt": ".episodic",
    "select_strategy": ".episodic",
    # --- graph nodes and the graph builder ---
    "add_memory_nodes": ".graph",
    "build_memory_graph": ".graph",
    "MemoryNodeNames": ".graph",
    "EpisodicState": ".graph",
    "thread_config": ".graph",
    "open_checkpointer": ".graph",
    "WindowOptions": ".graph",
    "SummaryOptions": ".graph",
    "EntityOptions": ".graph",
    "EpisodeOptions": ".graph",
    "TurnOptions": ".graph",
    # --- create_agent middleware ---
    "EpisodicMemoryMiddleware": ".middleware",
    "explain_recall": ".graph",
    # --- tools ---
    "create_memory_tools": ".tools.memory_tools",
    "create_vectorstore_memory_tools": ".tools.vectorstore_tools",
    "memory_speichern": ".tools.memory_tools",
    "memory_abrufen": ".tools.memory_tools",
    # --- privacy ---
    "forget_user": ".privacy",
    "aforget_user": ".privacy",
    "RedactingStore": ".privacy",
    "Redactor": ".privacy",
    # --- errors ---
    "Error": ".errors",
    "MissingConfigError": "._config",
    "UserIdError": "._config",
    "FolderInUseError": ".chroma",
    "IndexReadError": ".chroma",
    "StoreClosedError": ".chroma",
    "StoreForkedError": ".chroma",
    "EpisodeConflictError": ".episodic",
    "EpisodeSchemaError": ".episodic",
    "MemoryStoreMissingError": ".tools.memory_tools",
}

__all__ = ("__version__", *sorted(_EXPORTS))
"""Derived from ``_EXPORTS``, the one list of public names; ``tests/test_public_api.py`` checks
that the ``TYPE_CHECKING`` imports below name exactly these."""


def __getattr__(name: str) -> object:
    from importlib import import_module

    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langgraph_episodic' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    # ``X as X`` marks each name as re-exported for strict type checkers (``__all__`` is not a
    # literal they can read). The names are those of ``_EXPORTS``; a test keeps them equal.
    from ._config import MissingConfigError as MissingConfigError
    from ._config import UserIdError as UserIdError
    from .chroma import ChromaStore as ChromaStore
    from .chroma import FolderInUseError as FolderInUseError
    from .chroma import IndexReadError as IndexReadError
    from .chroma import StoreClosedError as StoreClosedError
    from .chroma import StoreForkedError as StoreForkedError
    from .embeddings import HashEmbeddings as HashEmbeddings
    from .embeddings import default_embeddings as default_embeddings
    from .episodic import Episode as Episode
    from .episodic import EpisodeConflictError as EpisodeConflictError
    from .episodic import EpisodeSchemaError as EpisodeSchemaError
    from .episodic import EpisodicMemory as EpisodicMemory
    from .episodic import Feedback as Feedback
    from .episodic import OutcomeStatus as OutcomeStatus
    from .episodic import TaskCategory as TaskCategory
    from .episodic import TaskDescription as TaskDescription
    from .episodic import build_replay_context as build_replay_context
    from .episodic import format_replay_prompt as format_replay_prompt
    from .episodic import select_strategy as select_strategy
    from .errors import Error as Error
    from .graph import EntityOptions as EntityOptions
    from .graph import EpisodeOptions as EpisodeOptions
    from .graph import EpisodicState as EpisodicState
    from .graph import MemoryNodeNames as MemoryNodeNames
    from .graph import SummaryOptions as SummaryOptions
    from .graph import TurnOptions as TurnOptions
    from .graph import WindowOptions as WindowOptions
    from .graph import add_memory_nodes as add_memory_nodes
    from .graph import build_memory_graph as build_memory_graph
    from .graph import explain_recall as explain_recall
    from .graph import open_checkpointer as open_checkpointer
    from .graph import thread_config as thread_config
    from .middleware import EpisodicMemoryMiddleware as EpisodicMemoryMiddleware
    from .multilingual import MultilingualEmbeddings as MultilingualEmbeddings
    from .multilingual import multilingual_index as multilingual_index
    from .privacy import RedactingStore as RedactingStore
    from .privacy import Redactor as Redactor
    from .privacy import aforget_user as aforget_user
    from .privacy import forget_user as forget_user
    from .tools.memory_tools import MemoryStoreMissingError as MemoryStoreMissingError
    from .tools.memory_tools import create_memory_tools as create_memory_tools
    from .tools.memory_tools import memory_abrufen as memory_abrufen
    from .tools.memory_tools import memory_speichern as memory_speichern
    from .tools.vectorstore_tools import (
        create_vectorstore_memory_tools as create_vectorstore_memory_tools,
    )
