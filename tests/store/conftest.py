"""Store fixtures: the same tests run on InMemoryStore (the reference) and three ChromaStores.

* ``backend``: "memory", "chroma-ephemeral", "chroma-persistent" or "chroma-http". A test module
  narrows it with ``@pytest.mark.parametrize("backend", CHROMA_BACKENDS)``.
* ``make_store(index=..., ttl=..., ...)``: a fresh store of the current backend (a unique
  collection per store; a fresh path per persistent store, under ``fast_tmp_path`` unless
  ``path=`` is given); closed at teardown.
* ``store``: ``make_store()`` with the 64-dim ``HashEmbeddings`` index.
* ``reopen(store)``: close a persistent store and open its path again with the same options.
* ``reference``: an ``InMemoryStore`` with the same test index, to compare answers against.

ChromaStore is imported only when a Chroma backend is used, so ``-k memory`` runs without it.
ChromaStores get ``search_mode="dense"``: the contract compares cosine scores.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from ._support import (
    ALL_BACKENDS,
    EPHEMERAL,
    HTTP,
    MEMORY,
    PERSISTENT,
    hash_index,
    switching_every_microsecond,
)

HASH_INDEX: Any = object()
"""Sentinel for ``make_store(index=...)``: the default 64-dim HashEmbeddings index."""

OMIT: Any = object()
"""Sentinel for ``make_store(index=...)``: do not pass ``index`` at all (the store's default)."""


class StoreFactory:
    """Builds stores of one backend and remembers how, to reopen and close them."""

    def __init__(self, backend: str, request: pytest.FixtureRequest) -> None:
        self.backend = backend
        self._request = request
        self._counter = itertools.count()
        self._options: dict[int, dict[str, Any]] = {}
        self._open: list[BaseStore] = []

    def __call__(
        self,
        *,
        index: Any = HASH_INDEX,
        ttl: Any = None,
        collection: str | None = None,
        path: Path | None = None,
        search_mode: str | None = "dense",
        **options: Any,
    ) -> BaseStore:
        """A new store. ``search_mode=None`` leaves ChromaStore's default mode."""
        if index is HASH_INDEX:
            index = hash_index()
        if self.backend == MEMORY:
            if ttl is not None or options:
                raise ValueError(f"InMemoryStore takes no ttl/options, got {ttl!r} {options!r}")
            store = InMemoryStore(index=None if index is OMIT else index)
            self._open.append(store)
            return store
        kwargs: dict[str, Any] = dict(options)
        if index is not OMIT:
            kwargs["index"] = index
        if ttl is not None:
            kwargs["ttl"] = ttl
        if search_mode is not None:
            kwargs["search_mode"] = search_mode
        if self.backend == PERSISTENT:
            kwargs["path"] = path or self._fast_tmp_path() / f"db{next(self._counter)}"
        else:
            kwargs["collection"] = collection or f"t-{uuid.uuid4().hex}"
        return self._build(kwargs)

    def _fast_tmp_path(self) -> Path:
        path: Path = self._request.getfixturevalue("fast_tmp_path")
        return path

    def _build(self, kwargs: dict[str, Any]) -> BaseStore:
        from langgraph_episodic import ChromaStore

        if self.backend == EPHEMERAL:
            store = ChromaStore.ephemeral(**kwargs)
        elif self.backend == PERSISTENT:
            store = ChromaStore.persistent(**kwargs)
        elif self.backend == HTTP:
            server = self._request.getfixturevalue("chroma_server")
            store = ChromaStore.http(server.host, server.port, **kwargs)
        else:
            raise ValueError(f"unknown backend {self.backend!r}")
        self._options[id(store)] = kwargs
        self._open.append(store)
        return store

    def twin(self, store: BaseStore, **overrides: Any) -> BaseStore:
        """Another store over the same data (same path or collection) as ``store``."""
        if self.backend == MEMORY:
            raise ValueError("InMemoryStore data cannot be shared between stores")
        return self._build({**self._options[id(store)], **overrides})

    def reopen(self, store: BaseStore, **overrides: Any) -> BaseStore:
        """Close ``store`` and open the same data again with the same options."""
        close(store)
        self._open.remove(store)
        return self.twin(store, **overrides)

    def close_all(self) -> None:
        """Close every store this factory built, newest first."""
        while self._open:
            close(self._open.pop())


def close(store: BaseStore) -> None:
    """Close a store if it can be closed (InMemoryStore cannot)."""
    closer = getattr(store, "close", None)
    if callable(closer):
        closer()


@pytest.fixture(params=ALL_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The backend under test."""
    name: str = request.param
    return name


@pytest.fixture
def make_store(backend: str, request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    """Factory of fresh stores of the current backend."""
    factory = StoreFactory(backend, request)
    yield factory
    factory.close_all()


@pytest.fixture
def store(make_store: StoreFactory) -> BaseStore:
    """A fresh store with the 64-dim HashEmbeddings index."""
    return make_store()


@pytest.fixture
def reopen(make_store: StoreFactory) -> Any:
    """``reopen(store)``: close a (persistent) store and open its data again."""
    return make_store.reopen


@pytest.fixture
def reference() -> InMemoryStore:
    """An InMemoryStore with the same 64-dim HashEmbeddings index (the reference answers)."""
    return InMemoryStore(index=hash_index())


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """The test runs with threads switching every microsecond."""
    with switching_every_microsecond():
        yield
