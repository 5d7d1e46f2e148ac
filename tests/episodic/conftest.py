"""Fixtures for the episodic-memory tests.

``store``: a fresh store with the 64-dim ``HashEmbeddings`` index, parametrized over
``InMemoryStore`` (the reference) and ``ChromaStore.ephemeral`` in its default hybrid mode and in
dense mode. ``make_store(kind, indexed=True)`` builds more stores of a kind (``indexed=False``:
no semantic index); ChromaStores are closed at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from langgraph.store.base import BaseStore, IndexConfig
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.episodic import (
    Episode,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)

STORE_KINDS = ("memory", "chroma-hybrid", "chroma-dense")

DAY = 86_400.0
HOUR = 3_600.0


def hash_index() -> IndexConfig:
    """The test index: deterministic 64-dim hash embeddings, instant, no model."""
    return IndexConfig(dims=64, embed=HashEmbeddings(64))


@pytest.fixture
def make_store() -> Iterator[Callable[..., BaseStore]]:
    opened: list[BaseStore] = []

    def make(kind: str, *, indexed: bool = True) -> BaseStore:
        index = hash_index() if indexed else None
        if kind == "memory":
            return InMemoryStore(index=index)
        from langgraph_episodic import ChromaStore

        mode = "dense" if kind == "chroma-dense" else "hybrid"
        store = ChromaStore.ephemeral(index=index, search_mode=mode)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()  # type: ignore[attr-defined]


@pytest.fixture(params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(make_store: Callable[..., BaseStore], store_kind: str) -> BaseStore:
    return make_store(store_kind)


def make_episode(
    episode_id: str,
    description: str = "Fix the failing parser test",
    *,
    category: TaskCategory = TaskCategory.DEBUGGING,
    complexity: float = 0.5,
    outcome: OutcomeStatus = OutcomeStatus.SUCCESS,
    reward: float = 0.8,
    timestamp: float = 0.0,
    strategy: str = "iterative",
    solution: str = "a solution",
    message: str = "",
) -> Episode:
    """An episode with sensible defaults; tests override what they check."""
    return Episode(
        episode_id=episode_id,
        task=TaskDescription(description, category, complexity),
        solution=solution,
        feedback=Feedback(reward, message),
        outcome=outcome,
        timestamp=timestamp,
        strategy_used=strategy,
    )
