"""Fixtures for the graph tests: the store backends, user configs and checkpointers.

``store`` runs a test on LangGraph's ``InMemoryStore`` and on an ephemeral ``ChromaStore``,
both with the 64-dim ``HashEmbeddings`` index (no model). ``chroma_store`` is the ChromaStore
alone (for TTL, which ``InMemoryStore`` does not support).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.graph.threads import thread_config


def hash_index() -> Any:
    return {"dims": 64, "embed": HashEmbeddings(64)}


def make_chroma() -> Any:
    from langgraph_episodic import ChromaStore

    return ChromaStore.ephemeral(index=hash_index())


@pytest.fixture(autouse=True)
def _quiet_episodic_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="langgraph_episodic.episodic.memory")


@pytest.fixture(params=["memory", "chroma"])
def store(request: pytest.FixtureRequest) -> Iterator[BaseStore]:
    if request.param == "memory":
        yield InMemoryStore(index=hash_index())
        return
    chroma = make_chroma()
    try:
        yield chroma
    finally:
        chroma.close()


@pytest.fixture
def chroma_store() -> Iterator[BaseStore]:
    chroma = make_chroma()
    try:
        yield chroma
    finally:
        chroma.close()


def cfg(user: str = "alice", session: str = "s1", **extra: Any) -> Any:
    """The config of one user's session."""
    return thread_config(user, session, **extra)
