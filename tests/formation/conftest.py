"""``store``: each test on LangGraph's ``InMemoryStore`` and on an ephemeral ``ChromaStore``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore
from langgraph_episodic.embeddings import HashEmbeddings


@pytest.fixture(params=["memory", "chroma"])
def store(request: pytest.FixtureRequest) -> Iterator[BaseStore]:
    index = {"dims": 64, "embed": HashEmbeddings(64)}
    if request.param == "memory":
        yield InMemoryStore(index=index)  # type: ignore[arg-type]
        return
    chroma = ChromaStore.ephemeral(index=index)
    try:
        yield chroma
    finally:
        chroma.close()
