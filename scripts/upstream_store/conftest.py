"""Our fixture layer for LangGraph's own store tests, run against ``ChromaStore``.

``scripts/upstream_store_tests.py`` unpacks the store tests of the pinned ``langgraph-checkpoint``,
``langgraph-checkpoint-sqlite`` and ``langgraph-checkpoint-postgres`` source distributions into a
temporary folder and copies this file next to them as ``tests/conftest.py``. Their test bodies run
unchanged; only the names they build stores from are rebound, when pytest imports each module:

* ``InMemoryStore(index=..., ...)`` builds an ephemeral ``ChromaStore`` (a subclass, so
  ``mocker.spy(InMemoryStore, "batch")`` spies on ChromaStore's ``batch``).
* ``SqliteStore.from_conn_string(conn, index=..., ttl=...)`` / ``AsyncSqliteStore`` (and the
  Postgres twins) yield a ChromaStore: ephemeral for ``":memory:"``, else persistent in a fresh
  folder. ``setup()`` has nothing to create. SQLite's ``text_fields`` index key is read as
  ``fields``; ``distance_type`` and ``ann_index_config`` are ignored (Chroma scores cosine).
* The async twins' lifecycle methods (``setup``, ``sweep_ttl``, ``start_ttl_sweeper``,
  ``stop_ttl_sweeper``) are awaitable, as on ``AsyncSqliteStore``; they run ChromaStore's.
* Postgres: the ``store`` fixture and ``_create_vector_store`` (which create a database through
  psycopg) are replaced by ours; ``VECTOR_TYPES`` is ``["vector"]`` (``halfvec`` is a pgvector
  storage type, the same store for us).

Search mode: ``dense`` (cosine scores, as LangGraph's stores), unless ``UPSTREAM_SEARCH_MODE``
says ``hybrid`` or ``lexical``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings

from langgraph_episodic import ChromaStore

SEARCH_MODE: Any = os.environ.get("UPSTREAM_SEARCH_MODE", "dense")
DEFAULT_URI = "chroma://ephemeral"
"""Stand-in for the Postgres tests' database URI (our fixtures never connect to it)."""
VECTOR_TYPES = ["vector"]
"""The Postgres tests' vector storage types: one is enough, Chroma stores float32 vectors."""

if (Path(__file__).parent / "embed_test_utils.py").exists():
    from tests.embed_test_utils import CharacterEmbeddings  # their fake embedder

    @pytest.fixture
    def fake_embeddings() -> CharacterEmbeddings:
        """As their own conftest defines it (500 dims)."""
        return CharacterEmbeddings(dims=500)


def _client_settings() -> Settings:
    return Settings(anonymized_telemetry=False)


def _index(config: Any) -> Any:
    """Their index config as a LangGraph IndexConfig: SQLite's ``text_fields`` is ``fields``."""
    if config is None:
        return None
    out = dict(config)
    if out.get("fields") is None:
        out.pop("fields", None)
        if out.get("text_fields") is not None:
            out["fields"] = list(out["text_fields"])
    return out


def _scratch_dir() -> Path:
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    return Path(tempfile.mkdtemp(prefix="upstream-chroma-", dir=base))


def _build(cls: type[ChromaStore], conn_string: str, index: Any, ttl: Any) -> tuple[Any, Any]:
    """A store of class ``cls`` for ``conn_string`` and the folder to remove afterwards."""
    folder = None
    if conn_string == ":memory:" or "://" in conn_string:
        client = chromadb.EphemeralClient(settings=_client_settings())
    else:
        folder = _scratch_dir()
        client = chromadb.PersistentClient(path=str(folder), settings=_client_settings())
    store = cls(
        client,
        collection=f"up-{uuid.uuid4().hex[:16]}",
        index=_index(index),
        ttl=ttl,
        search_mode=SEARCH_MODE,
    )
    return store, folder


class ChromaAsInMemory(ChromaStore):
    """``InMemoryStore(index=..., ttl=...)``: an ephemeral ChromaStore."""

    def __init__(self, *, index: Any = None, ttl: Any = None, **_: Any) -> None:
        super().__init__(
            chromadb.EphemeralClient(settings=_client_settings()),
            collection=f"up-{uuid.uuid4().hex[:16]}",
            index=_index(index),
            ttl=ttl,
            search_mode=SEARCH_MODE,
        )


def _dispose(store: ChromaStore, folder: Any) -> None:
    """Close a store built by :func:`_build` and remove its folder, if it has one."""
    store.close()
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


class ChromaAsSqlStore(ChromaStore):
    """``SqliteStore`` / ``PostgresStore``: ``from_conn_string`` yields a ChromaStore."""

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conn_string: str, *, index: Any = None, ttl: Any = None, **_: Any
    ) -> Iterator[Any]:
        store, folder = _build(cls, conn_string, index, ttl)
        try:
            yield store
        finally:
            _dispose(store, folder)

    def setup(self) -> None:
        """Nothing to create: the collections exist once the store is built."""


class _Done:
    """An already-finished awaitable holding ``value`` (for the async lifecycle methods)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, None, Any]:
        return self.value
        yield  # pragma: no cover - makes this a generator


class ChromaAsAsyncSqlStore(ChromaStore):
    """``AsyncSqliteStore`` / ``AsyncPostgresStore``: async ``from_conn_string``, awaitable
    ``setup``/``sweep_ttl``/``start_ttl_sweeper``/``stop_ttl_sweeper``."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, conn_string: str, *, index: Any = None, ttl: Any = None, **_: Any
    ) -> AsyncIterator[Any]:
        store, folder = _build(cls, conn_string, index, ttl)
        try:
            yield store
        finally:
            _dispose(store, folder)

    def setup(self) -> Any:
        return _Done(None)

    def sweep_ttl(self) -> Any:
        return _Done(super().sweep_ttl())

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Any:
        return _Done(super().start_ttl_sweeper(sweep_interval_minutes))

    def stop_ttl_sweeper(self, timeout: float | None = None) -> Any:
        return _Done(super().stop_ttl_sweeper(timeout))


# --- the Postgres tests' fixtures (theirs create a database through psycopg) -----------------

_PG_TTL = {"default_ttl": 6 / 60, "refresh_on_read": True, "sweep_interval_minutes": 3 / 60}
"""The TTL config of their ``store`` fixtures (TTL_SECONDS = 6, sweep every 3 s)."""


def pg_store() -> Iterator[Any]:
    """Their sync ``store`` fixture: a store with their TTL config and a running sweeper."""
    with ChromaAsSqlStore.from_conn_string(DEFAULT_URI, ttl=_PG_TTL) as store:
        store.start_ttl_sweeper()
        yield store
        store.stop_ttl_sweeper()


async def pg_async_store() -> AsyncIterator[Any]:
    """Their async ``store`` fixture."""
    async with ChromaAsAsyncSqlStore.from_conn_string(DEFAULT_URI, ttl=_PG_TTL) as store:
        await store.start_ttl_sweeper()
        yield store
        await store.stop_ttl_sweeper()


@contextmanager
def pg_create_vector_store(
    vector_type: str,
    distance_type: str,
    fake_embeddings: Any,
    text_fields: list[str] | None = None,
    enable_ttl: bool = True,
) -> Iterator[Any]:
    """Their sync ``_create_vector_store``: the same index and TTL options, on Chroma."""
    index = {"dims": fake_embeddings.dims, "embed": fake_embeddings, "fields": text_fields}
    ttl = {"default_ttl": 2, "refresh_on_read": True} if enable_ttl else None
    with ChromaAsSqlStore.from_conn_string(DEFAULT_URI, index=index, ttl=ttl) as store:
        yield store


@asynccontextmanager
async def pg_acreate_vector_store(
    vector_type: str,
    distance_type: str,
    fake_embeddings: Any,
    text_fields: list[str] | None = None,
) -> AsyncIterator[Any]:
    """Their async ``_create_vector_store``."""
    index = {"dims": fake_embeddings.dims, "embed": fake_embeddings, "fields": text_fields}
    async with ChromaAsAsyncSqlStore.from_conn_string(DEFAULT_URI, index=index) as store:
        yield store


# --- rebinding the names their modules build stores from ----------------------------------------

_STORE_NAMES = {
    "InMemoryStore": ChromaAsInMemory,
    "SqliteStore": ChromaAsSqlStore,
    "AsyncSqliteStore": ChromaAsAsyncSqlStore,
    "PostgresStore": ChromaAsSqlStore,
    "AsyncPostgresStore": ChromaAsAsyncSqlStore,
}


def adapt(module: Any) -> None:
    """Rebind a test module's store classes (and Postgres fixtures) to ours."""
    for name, replacement in _STORE_NAMES.items():
        if isinstance(getattr(module, name, None), type):
            setattr(module, name, replacement)
    if hasattr(module, "AsyncPostgresStore"):
        module.store = pytest.fixture(pg_async_store, name="store")
        module._create_vector_store = pg_acreate_vector_store
    elif hasattr(module, "PostgresStore"):
        module.store = pytest.fixture(pg_store, name="store")
        module._create_vector_store = pg_create_vector_store


class AdaptedModule(pytest.Module):
    """A test module whose store names are rebound right after import, before collection."""

    def _getobj(self) -> Any:
        module = super()._getobj()
        adapt(module)
        return module


def pytest_pycollect_makemodule(module_path: Path, parent: Any) -> Any:
    if module_path.name.startswith("test_"):
        return AdaptedModule.from_parent(parent, path=module_path)
    return None
