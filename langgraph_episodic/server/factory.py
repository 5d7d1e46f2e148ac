"""The store factory a LangGraph server loads from ``langgraph.json``
(``"store": {"path": "langgraph_episodic.server.store"}``): :func:`store` opens one
``ChromaStore`` at startup for every run and the HTTP store API, runs its TTL sweeper (the server
runs none for a custom store) and closes it at shutdown. Settings: :mod:`.settings`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from ..chroma import ChromaStore
from .settings import StoreSettings

logger = logging.getLogger(__name__)


def open_store(settings: StoreSettings) -> ChromaStore:
    """Open the ``ChromaStore`` ``settings`` describe (no sweeper started).

    With ``EPISODIC_EMBEDDINGS=auto`` (the default) the store picks its embedder by the vectors
    it holds, as ``ChromaStore`` does with no ``index=``: a new store gets the two-language
    default, one written with the packaged MiniLM alone (384-d) keeps it. ``EPISODIC_INDEX_FIELDS``
    applies to the embedder it picks. With ``auto``, ``model`` or ``multilingual`` the model is
    loaded here, so the server pays for it at startup rather than on its first request.
    """
    options = settings.store_options()
    opened = _open(settings, options)
    fields = list(settings.index_fields)
    picked = opened.index_config
    if settings.auto and picked is not None and picked.get("fields") != fields:
        chosen = {**picked, "fields": fields}
        opened.close()
        opened = _open(settings, {**options, "index": chosen})
    embeddings = opened.embeddings
    if settings.embeddings in ("auto", "model", "multilingual") and embeddings is not None:
        load = getattr(embeddings, "load", None)  # every model: BilingualEmbeddings has two
        if callable(load):
            load()
        else:
            embeddings.embed_query("warm up")
    return opened


def _open(settings: StoreSettings, options: dict[str, Any]) -> ChromaStore:
    if settings.chroma_url:
        return ChromaStore.from_url(settings.chroma_url, timeout=settings.timeout_s,
                                    headers=dict(settings.chroma_headers), **options)
    return ChromaStore.persistent(settings.path, **options)


@asynccontextmanager
async def store(settings: StoreSettings | None = None) -> AsyncIterator[ChromaStore]:
    """Open the deployment's store once, sweep expired items in the background, close it at exit.

    ``settings`` defaults to :meth:`StoreSettings.from_env` over ``os.environ``. Opening and
    closing run in a worker thread, so the server's event loop never blocks on Chroma.

    >>> import asyncio, tempfile
    >>> from langgraph_episodic.server import StoreSettings, store
    >>> folder = tempfile.mkdtemp()
    >>> async def main():
    ...     async with store(StoreSettings(path=folder, embeddings="hash")) as s:
    ...         await s.aput(("notes", "alice"), "k", {"text": "hello"})
    ...         return (await s.aget(("notes", "alice"), "k")).value
    >>> asyncio.run(main())
    {'text': 'hello'}
    """
    settings = settings or StoreSettings.from_env(os.environ)
    opened = await asyncio.to_thread(open_store, settings)
    sweeping = "TTL sweeper off"
    if settings.sweep_minutes > 0:
        opened.start_ttl_sweeper(settings.sweep_minutes)
        sweeping = f"TTL sweeper every {settings.sweep_minutes:g} min"
    logger.info("langgraph-episodic: opened ChromaStore (%s; %s)", settings.describe(), sweeping)
    try:
        yield opened
    finally:
        await asyncio.to_thread(opened.close)
        logger.info("langgraph-episodic: closed ChromaStore (%s)", settings.describe())
