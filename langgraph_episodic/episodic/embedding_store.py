"""``EmbeddingStore``: the seed's name for "add episodes, find the most similar ones".

A thin class over :class:`~.memory.EpisodicMemory`: ``add`` records an episode, ``search``
returns the ``top_k`` episodes whose task text is most similar to the query, as
:class:`~.priority.SearchResult` ``(episode, similarity)``, most similar first. For ranking by
similarity, recency, reward and outcome together, use ``EpisodicMemory.recall``.

>>> from langgraph_episodic import HashEmbeddings
>>> from langgraph_episodic.episodic import (
...     Episode, Feedback, OutcomeStatus, TaskDescription)
>>> memory = EmbeddingStore(embeddings=HashEmbeddings())
>>> memory.add(Episode("e1", TaskDescription("fix the login bug"), "patched", Feedback(1.0),
...                    OutcomeStatus.SUCCESS))
True
>>> [r.episode.episode_id for r in memory.search("login bug", top_k=3)]
['e1']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore

from .._config import EPISODES
from .memory import EpisodicMemory
from .priority import ReplayWeights, SearchResult
from .records import Episode, TaskDescription

SIMILARITY_ONLY = ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0)
"""Replay weights that rank by similarity alone."""


class EmbeddingStore:
    """Episodes with their embeddings, searchable by similarity.

    Args:
        store: Any LangGraph store; by default a new ``InMemoryStore`` (this process only).
        namespace: Where the episodes live in ``store``.
        embeddings: A LangChain ``Embeddings`` or a ``str -> vector`` function, used when the
            store has no semantic index of its own (as the default store). ``None`` uses the
            packaged all-MiniLM-L6-v2 (:func:`~langgraph_episodic.default_embeddings`).
    """

    def __init__(
        self,
        store: BaseStore | None = None,
        *,
        namespace: tuple[str, ...] = (EPISODES, "default"),
        embeddings: Embeddings | Callable[..., Any] | None = None,
    ) -> None:
        if store is None:
            from langgraph.store.memory import InMemoryStore

            store = InMemoryStore()
        if embeddings is None:
            from ..embeddings import default_embeddings

            embeddings = default_embeddings()
        self.memory = EpisodicMemory(store, namespace, candidate_factor=1, embeddings=embeddings)

    def add(self, episode: Episode) -> bool:
        """Store ``episode``; False if the very same episode is stored already."""
        return self.memory.record(episode)

    def search(self, query: str | TaskDescription, top_k: int = 3) -> tuple[SearchResult, ...]:
        """The ``top_k`` stored episodes most similar to ``query``, most similar first."""
        results = self.memory.recall(query, top_k, weights=SIMILARITY_ONLY, min_score=None)
        return tuple(sorted(results, key=lambda r: -r.similarity))

    def __len__(self) -> int:
        return self.memory.count()
