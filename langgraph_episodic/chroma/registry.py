"""The namespace registry: one small Chroma record per namespace, mirrored in process.

Listing namespaces by scanning items costs a metadata read per item; a registry record holds
the namespace's prefix keys, a version that changes on every write to it (caches reload) and
``_exp``, the latest expiry of its items. :class:`RegistryMirror` is the in-process copy
(no locking, no I/O: the store's state owns it). An embedded store reads it once and keeps it
current; a store on a server re-reads what it needs. Between processes, a record is written
before its namespace's first item and removed only after re-checking it is empty
(:mod:`.writes`); ``_exp`` may lag behind, so a server store checks before hiding a namespace.

An embedded store keeps the record of a namespace it empties, marked ``_kept``, so that a
put refilling it writes no record; it knows in process which namespaces are empty, and gives
the registry its plain form back (records of empty namespaces deleted, marks removed) before
it lets its folder go, or when many are marked. A store that finds marked records when it
reads the registry (a writer was killed) checks their namespaces for items.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import ListNamespacesOp, MatchCondition

from .._types import Namespace
from ..errors import InvalidValueError
from . import record_format


@dataclass(frozen=True)
class NamespaceInfo:
    """What the registry knows of one namespace."""

    version: str
    expires: float
    unindexed: bool = True
    """Whether the namespace may hold items without vectors (sticky; True when unknown)."""
    item_records: bool = True
    """Whether the namespace may hold records in the item collection (sticky; True when
    unknown). Without them an embedded store reads the vector collection alone."""
    kept: bool = False
    """Whether the record may outlive the namespace's items (marked ``_kept``)."""


def info_of(meta: Mapping[str, Any]) -> NamespaceInfo:
    """The info a registry record holds."""
    return NamespaceInfo(
        str(meta["_ver"]),
        record_format.expiry_of(meta, "_exp"),
        bool(meta.get("_unidx", True)),
        bool(meta.get("_irec", True)),
        bool(meta.get("_kept", False)),
    )


def record_id(namespace: Namespace) -> str:
    """The Chroma record id of a namespace's registry record."""
    return record_format.item_id(namespace, "")


def record(namespace: Namespace, info: NamespaceInfo) -> dict[str, Any]:
    """The metadata of a namespace's registry record."""
    meta: dict[str, Any] = {
        "_ns": record_format.ns_str(namespace),
        "_ver": info.version,
        "_exp": info.expires,
        "_unidx": info.unindexed,
        "_irec": info.item_records,
        "_kept": True if info.kept else None,  # (None: Chroma drops a key an upsert had)
    }
    for depth in range(1, len(namespace) + 1):
        meta[f"_p{depth}"] = record_format.ns_str(namespace[:depth])
    return meta


def records(infos: Mapping[Namespace, NamespaceInfo]) -> tuple[list[str], list[dict[str, Any]]]:
    """The ids and metadata of the registry records holding ``infos`` (for an upsert)."""
    return [record_id(ns) for ns in infos], [record(ns, info) for ns, info in infos.items()]


def records_by_namespace(metas: Iterable[Mapping[str, Any]]) -> dict[Namespace, NamespaceInfo]:
    """Registry record metadata keyed by namespace."""
    return {record_format.ns_from_str(str(m["_ns"])): info_of(m) for m in metas}


class RegistryMirror:
    """Namespaces with their info, indexed by every prefix (not thread-safe: the state's lock
    guards it)."""

    def __init__(self) -> None:
        self._info: dict[Namespace, NamespaceInfo] = {}
        self._under: dict[Namespace, dict[Namespace, None]] = {}
        """Prefix -> the namespaces under it (a search reads one user's namespace without
        scanning every namespace)."""
        self.empty: dict[Namespace, NamespaceInfo] = {}
        """Namespaces known to hold no item whose record Chroma keeps (marked), as it holds it;
        not among the namespaces above."""
        self.marked: set[Namespace] = set()
        """The namespaces whose record in Chroma is marked ``_kept`` (empty or not)."""
        self.loaded = False

    def under(self, prefix: Namespace) -> dict[Namespace, NamespaceInfo]:
        """A new dict of the namespaces starting with ``prefix`` (whole labels)."""
        info = self._info
        return {ns: info[ns] for ns in self._under.get(prefix, ())}

    def get(self, namespace: Namespace) -> NamespaceInfo | None:
        return self._info.get(namespace)

    def __len__(self) -> int:
        return len(self._info)

    def set(self, ns: Namespace, info: NamespaceInfo) -> None:
        if ns not in self._info:
            for depth in range(len(ns) + 1):
                self._under.setdefault(ns[:depth], {})[ns] = None
        self._info[ns] = info
        self.empty.pop(ns, None)
        if info.kept:
            self.marked.add(ns)
        else:
            self.marked.discard(ns)

    def keep(self, ns: Namespace, info: NamespaceInfo) -> None:
        """``ns`` holds no item any more; Chroma keeps its record ``info`` (marked)."""
        self.drop(ns)
        self.empty[ns] = info
        self.marked.add(ns)

    def drop(self, ns: Namespace) -> None:
        self.empty.pop(ns, None)
        self.marked.discard(ns)
        if self._info.pop(ns, None) is None:
            return
        for depth in range(len(ns) + 1):
            below = self._under.get(ns[:depth])
            if below is not None:
                below.pop(ns, None)
                if not below:
                    del self._under[ns[:depth]]

    def sync_under(self, prefix: Namespace, fresh: Mapping[Namespace, NamespaceInfo]) -> None:
        """Make the namespaces under ``prefix`` exactly ``fresh`` (read from Chroma)."""
        for ns in [ns for ns in self._under.get(prefix, ()) if ns not in fresh]:
            self.drop(ns)
        for ns, info in fresh.items():
            self.set(ns, info)


def namespace_matches(ns: Namespace, conditions: Sequence[MatchCondition] | None) -> bool:
    """Whether ``ns`` satisfies every prefix/suffix condition (``*`` matches any one label)."""
    for cond in conditions or ():
        path = tuple(cond.path)
        if len(ns) < len(path):
            return False
        pairs = (
            zip(ns, path, strict=False)
            if cond.match_type == "prefix"
            else zip(reversed(ns), reversed(path), strict=False)
        )
        if cond.match_type not in ("prefix", "suffix"):
            raise InvalidValueError(
                f"Unsupported match type {cond.match_type!r}: use prefix or suffix."
            )
        if any(p != "*" and n != p for n, p in pairs):
            return False
    return True


def list_namespaces(namespaces: Iterable[Namespace], op: ListNamespacesOp) -> list[Any]:
    """Filter, truncate to ``max_depth``, sort and page namespaces as ``InMemoryStore`` does."""
    conditions = op.match_conditions
    found = sorted({ns[: op.max_depth] for ns in namespaces if namespace_matches(ns, conditions)})
    return found[op.offset : op.offset + op.limit]


def fixed_prefix(conditions: Sequence[MatchCondition] | None) -> Namespace:
    """The longest wildcard-free leading labels of a prefix condition (for push-down)."""
    for cond in conditions or ():
        if cond.match_type == "prefix":
            return tuple(itertools.takewhile(lambda label: label != "*", cond.path))
    return ()
