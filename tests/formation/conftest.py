"""``store``: an ephemeral ``ChromaStore`` (deferred formation refuses LangGraph's
``InMemoryStore``, which two threads cannot use at once: ``test_deferred.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langgraph.store.base import BaseStore

from langgraph_episodic import ChromaStore
from langgraph_episodic.embeddings import HashEmbeddings


@pytest.fixture
def store() -> Iterator[BaseStore]:
    chroma = ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})
    try:
        yield chroma
    finally:
        chroma.close()
