"""Fixtures for the memory tools: stores of each backend, configs per user, sync/async calls.

* ``store``: a fresh store with the 64-dim ``HashEmbeddings`` index, once as LangGraph's
  ``InMemoryStore`` (the reference) and once as our ``ChromaStore.ephemeral``.
* ``mode``: "sync" or "async"; ``call(tool, args, config)`` invokes the tool that way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.tools import GERMAN, ToolTexts

DIMS = 64

Call = Callable[[BaseTool, dict[str, Any], RunnableConfig], Awaitable[Any]]


def hash_index() -> dict[str, Any]:
    """The deterministic test index: 64-dim hash embeddings."""
    return {"dims": DIMS, "embed": HashEmbeddings(DIMS)}


def make_store(backend: str) -> BaseStore:
    """A fresh, empty store of ``backend`` ("memory" or "chroma")."""
    if backend == "memory":
        return InMemoryStore(index=hash_index())  # type: ignore[arg-type]
    from langgraph_episodic import ChromaStore

    return ChromaStore.ephemeral(index=hash_index())


def bullets(answer: str, texts: ToolTexts = GERMAN) -> list[str]:
    """The memories of a recall answer: its header line, then ``- ...`` lines (their texts are
    returned); fails on anything else."""
    header, *lines = answer.splitlines()
    assert header == texts.recall_header, answer
    assert lines and all(line.startswith("- ") for line in lines), answer
    return [line[2:] for line in lines]


def user(user_id: str, thread_id: str = "t1") -> RunnableConfig:
    """A run config for ``user_id`` in thread ``thread_id``."""
    return {"configurable": {"user_id": user_id, "thread_id": thread_id}}


@pytest.fixture(params=["memory", "chroma"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(backend: str) -> BaseStore:
    return make_store(backend)


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def call(mode: str) -> Call:
    """Invoke a tool sync (``invoke``) or async (``ainvoke``) depending on ``mode``."""

    async def run(tool: BaseTool, args: dict[str, Any], config: RunnableConfig) -> Any:
        if mode == "sync":
            return tool.invoke(args, config)
        return await tool.ainvoke(args, config)

    return run
