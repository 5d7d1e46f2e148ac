"""The namespace registry: one small Chroma record per namespace, mirrored in process.

Listing namespaces by scanning items costs Chroma a metadata read per item (seconds at 100k);
the registry answers from one record per namespace. Each record holds the namespace's prefix
keys, a version that changes on every write to the namespace (so caches know when to reload),
and ``_exp``: the latest expiry of its items, so a namespace whose items have all expired is
not listed even before a sweep.

An embedded store is its only writer, so its mirror is read once and then kept current by its
own writes. A store on a server re-reads the records it needs, because other processes write.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import layout


@dataclass(frozen=True)
class NamespaceInfo:
    """What the registry knows of one namespace."""

    version: str
    expires: float
    unindexed: bool = True
    """Whether the namespace may hold items without vectors (sticky; True when unknown)."""


def _info(meta: Mapping[str, Any]) -> NamespaceInfo:
    return NamespaceInfo(str(meta["_ver"]), float(meta["_exp"]), bool(meta.get("_unidx", True)))


class NamespaceRegistry:
    """Namespaces with their versions and latest expiry, in ``<collection>__ns``."""

    def __init__(self, client: Any, name: str, *, shared: bool) -> None:
        self.collection = self._col = client.get_or_create_collection(
            f"{name}__ns", embedding_function=None, metadata={"langgraph_episodic": "namespaces"}
        )
        self.shared = shared
        self._mirror: dict[tuple[str, ...], NamespaceInfo] = {}
        self._under: dict[tuple[str, ...], dict[tuple[str, ...], None]] = {}
        """Prefix -> the mirrored namespaces under it (a search reads one user's namespace
        without scanning every namespace: 18 us of each search with 1,000 users)."""
        self._loaded = False
        self._max_batch = int(client.get_max_batch_size())

    # reading -----------------------------------------------------------------

    def under(self, prefix: tuple[str, ...]) -> dict[tuple[str, ...], NamespaceInfo]:
        """Namespaces starting with ``prefix`` (whole labels), fresh from Chroma when shared."""
        if self.shared:
            got = self._col.get(where=layout.prefix_where(prefix), include=["metadatas"])
            fresh = {
                layout.ns_from_str(str(m["_ns"])): _info(m)
                for m in got["metadatas"] or []
            }
            for ns in [ns for ns in self._under.get(prefix, ()) if ns not in fresh]:
                self._drop(ns)
            for ns, info in fresh.items():
                self._set(ns, info)
            return fresh
        self._load()
        mirror = self._mirror
        return {ns: mirror[ns] for ns in self._under.get(prefix, ())}

    def live(self, prefix: tuple[str, ...], now: float) -> list[tuple[str, ...]]:
        """Namespaces under ``prefix`` holding at least one unexpired item."""
        return [ns for ns, info in self.under(prefix).items() if info.expires >= now]

    def known(self, namespace: tuple[str, ...]) -> NamespaceInfo | None:
        """The mirrored info of ``namespace`` (no Chroma call)."""
        return self._mirror.get(namespace)

    def _load(self) -> None:
        if self._loaded:
            return
        got = self._col.get(include=["metadatas"])
        for m in got["metadatas"] or []:
            self._set(layout.ns_from_str(str(m["_ns"])), _info(m))
        self._loaded = True

    def _set(self, ns: tuple[str, ...], info: NamespaceInfo) -> None:
        if ns not in self._mirror:
            for depth in range(len(ns) + 1):
                self._under.setdefault(ns[:depth], {})[ns] = None
        self._mirror[ns] = info

    def _drop(self, ns: tuple[str, ...]) -> None:
        if self._mirror.pop(ns, None) is None:
            return
        for depth in range(len(ns) + 1):
            below = self._under.get(ns[:depth])
            if below is not None:
                below.pop(ns, None)
                if not below:
                    del self._under[ns[:depth]]

    # writing -----------------------------------------------------------------

    def touch(
        self,
        expiries: Mapping[tuple[str, ...], float],
        *,
        bump: bool = True,
        exact: bool = False,
        unindexed: Iterable[tuple[str, ...]] = (),
    ) -> dict[tuple[str, ...], str]:
        """Record writes: a new version per namespace (if ``bump``), ``_exp`` raised to at
        least the given expiry, and the sticky ``unindexed`` flag for namespaces that received
        an item without vectors. Returns each namespace's version."""
        flagged = set(unindexed)
        if not expiries:
            return {}
        if self.shared:  # other processes write too: start from their latest records
            got = self._col.get(ids=[_rid(ns) for ns in expiries], include=["metadatas"])
            for m in got["metadatas"] or []:
                self._set(layout.ns_from_str(str(m["_ns"])), _info(m))
        else:
            self._load()
        versions: dict[tuple[str, ...], str] = {}
        ids, metas = [], []
        for ns, exp in expiries.items():
            old = self._mirror.get(ns)
            version = uuid.uuid4().hex if bump or old is None else old.version
            expires = max(exp, old.expires) if old and not exact else exp
            unidx = ns in flagged or (old.unindexed if old is not None else False)
            if (
                not self.shared
                and old is not None
                and expires == old.expires
                and unidx == old.unindexed
            ):
                # Only this process reads the versions of an embedded store, and its caches
                # start empty after a restart: the record in Chroma need not change.
                # (Measured: the registry upsert was 9-30 ms of a single put.)
                self._set(ns, NamespaceInfo(version, expires, unidx))
                versions[ns] = version
                continue
            self._set(ns, NamespaceInfo(version, expires, unidx))
            versions[ns] = version
            meta: dict[str, Any] = {
                "_ns": layout.ns_str(ns),
                "_ver": version,
                "_exp": expires,
                "_unidx": unidx,
            }
            for depth in range(1, len(ns) + 1):
                meta[f"_p{depth}"] = layout.ns_str(ns[:depth])
            ids.append(_rid(ns))
            metas.append(meta)
        if not ids:
            return versions
        for s in range(0, len(ids), self._max_batch):
            chunk = ids[s : s + self._max_batch]
            self._col.upsert(
                ids=chunk,
                embeddings=[[layout.placeholder(r)] for r in chunk],
                metadatas=metas[s : s + self._max_batch],
            )
        return versions

    def set_expiry(self, namespace: tuple[str, ...], expires: float) -> str:
        """Set ``_exp`` exactly (after deletes, when the latest expiry may have gone down);
        return the namespace's new version."""
        return self.touch({namespace: expires}, exact=True)[namespace]

    def remove(self, namespaces: Iterable[tuple[str, ...]]) -> None:
        """Forget namespaces that no longer hold any item."""
        gone = list(namespaces)
        for ns in gone:
            self._drop(ns)
        if gone:
            self._col.delete(ids=[_rid(ns) for ns in gone])


def _rid(namespace: tuple[str, ...]) -> str:
    return layout.item_id(namespace, "")
