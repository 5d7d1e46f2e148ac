"""Work on the files of a live embedded ``ChromaStore``: what a purge needs of the store.

:meth:`~.store.ChromaStore.maintenance` hands out a :class:`Maintenance` for one call: the
folder is claimed for this process (another process writing it gets ``FolderInUseError`` and
nothing is touched), and the store cannot close until the call ends. Through it a caller reads
the ids of the store's collections, rebuilds collections while the store stays in use
(:func:`.rebuild.rebuild_live`) and holds the store's writes while it works on the files.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .rebuild import Rebuilt, rebuild_live

KINDS = ("items", "vectors", "namespaces")
"""The store's collections: items, vector records and the namespace registry."""


class Maintenance:
    """What ``ChromaStore.maintenance()`` yields: collection ids, live rebuilds and held
    writes, for work on the files of an embedded store (a purge)."""

    def __init__(self, backend: Rebuilt, client: Any, folder: Path) -> None:
        self._backend = backend
        self._client = client
        self.folder = folder
        """The store's embedded Chroma folder."""

    def collection_ids(self) -> dict[str, str]:
        """The Chroma id of each of the store's collections, by kind (:data:`KINDS`); a
        rebuild changes them."""
        gateway = self._backend.gateway
        return {kind: str(getattr(gateway, kind).id) for kind in KINDS}

    def rebuild(self, kinds: Iterable[str]) -> list[str]:
        """Rebuild the collections ``kinds`` (of :data:`KINDS`) while the store stays in use:
        copy the live records, swap, drop the old collection and its vector index folder.
        Returns the names rebuilt."""
        return rebuild_live(self._backend, self._client, self.folder, kinds)

    @contextlib.contextmanager
    def writes_held(self) -> Iterator[dict[str, str]]:
        """Hold the store's writes (no vector index flush either) while the block runs; yields
        :meth:`collection_ids`."""
        with self._backend.state.write_lock:
            yield self.collection_ids()
