"""What the LangGraph ``BaseStore`` API cannot reach, read from a ``ChromaStore``'s own records.

Readers of the record collections (:mod:`.record_format`), behind ``ChromaStore`` methods so
that no caller parses the record format: :func:`item_extras` (TTL, expiry and indexed fields,
for an export), :func:`vector_dims`, and :func:`scan` / :func:`delete_vectors` (what a crash
left out of the namespace registry, for forgetting a user).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal

from . import record_format
from .gateway import Gateway, read_pages
from .record_format import ns_from_str

Namespace = tuple[str, ...]

_EXPANDED = re.compile(r"^(?P<base>.*[*{].*)\.\d+$")
"""A wildcard or multi-field path expanded per text (``tags[*].0``, ``{a,b}.1``); the index
re-expands it."""

SCAN_PAGE = 2000
"""Records per page when :func:`scan` reads the raw collections."""


@dataclass(frozen=True)
class ItemExtras:
    """What ``ChromaStore.item_extras`` says of one item beside its five public fields: its
    indexed fields, TTL and expiry."""

    index: list[str] | Literal[False]
    """The field paths that were embedded (or asked for, when none held text), or False when
    the item was put without an index."""
    ttl: float | None
    """TTL in minutes, or None."""
    expires_at: datetime | None
    """When the item expires, or None."""


@dataclass(frozen=True)
class RawRecords:
    """What ``ChromaStore.raw_records`` found in the raw collections: items and vector
    records of some namespaces (``ChromaStore.delete_vector_records`` deletes the latter)."""

    items: tuple[tuple[Namespace, str], ...]
    """(namespace, key) of each item record."""
    vector_ids: tuple[str, ...]
    """The ids of the vector records that are not items themselves."""

    def vector_ids_outside(self, keys: Iterable[tuple[Namespace, str]]) -> list[str]:
        """The :attr:`vector_ids` of none of the items ``keys`` (namespace, key)."""
        known = {record_format.item_id(ns, key) for ns, key in keys}
        return [rid for rid in self.vector_ids if record_format.item_of_vector(rid) not in known]


NO_RECORDS = RawRecords((), ())


def item_extras(
    items: Any, vectors: Any, batch_size: int, keys: Sequence[tuple[Namespace, str]]
) -> dict[tuple[Namespace, str], ItemExtras]:
    """TTL, expiry and indexed fields of the items ``(namespace, key)``, read from the
    collections ``items`` and ``vectors``; missing ones are absent."""
    by_id = {record_format.item_id(ns, key): (ns, key) for ns, key in keys}
    metas = Gateway(items, vectors, None, max(1, batch_size)).get_items(list(by_id))
    paths: dict[str, list[tuple[int, str]]] = {}
    vector_ids = [vid for rid, meta in metas.items() for vid in record_format.vector_ids(rid, meta)]
    for got in read_pages(vectors, None, ["metadatas"], max(1, batch_size), "paths", vector_ids):
        for vid, vmeta in zip(got["ids"], got["metadatas"] or [], strict=True):
            key, _, j = record_format.split_vector_id(vid)
            rid = record_format.split_entry_key(key)[0]
            paths.setdefault(rid, []).append((j, record_format.path_of(vmeta) or "$"))
    out = {}
    for rid, meta in metas.items():
        expires = record_format.expiry_of(meta)
        out[by_id[rid]] = ItemExtras(
            index=_index_spec([p for _, p in sorted(paths.get(rid, []))], meta.get("_notext")),
            ttl=record_format.ttl_of(meta),
            expires_at=(
                None
                if expires >= record_format.NO_EXPIRY
                else datetime.fromtimestamp(expires, tz=timezone.utc)
            ),
        )
    return out


def _index_spec(paths: Sequence[str], no_text: Any = None) -> list[str] | Literal[False]:
    """The ``index=`` list that re-creates these vector paths; with none, the paths asked
    for that held no text (``no_text``, JSON), else False."""
    if not paths:
        return list(json.loads(no_text)) if no_text else False
    spec: list[str] = []
    for path in paths:
        match = _EXPANDED.match(path)
        base = match.group("base") if match else path
        if base not in spec:
            spec.append(base)
    return spec


def vector_dims(vectors: Any) -> int | None:
    """Dimensions of the vectors in the collection ``vectors`` (None when it holds none)."""
    got = vectors.get(limit=1, include=["embeddings"])
    embeddings = got.get("embeddings")
    if embeddings is None or len(embeddings) == 0:
        return None
    return len(embeddings[0])


def scan(
    items: Any,
    vectors: Any,
    match: Callable[[Namespace], bool],
    prefixes: Collection[Namespace] | None = None,
) -> RawRecords:
    """The records of the collections ``items`` and ``vectors`` whose namespace ``match``
    accepts, read page by page (:data:`SCAN_PAGE`): all of them, or (``prefixes``) only those
    under one of the namespace prefixes."""
    if prefixes is not None and not prefixes:
        return NO_RECORDS
    where = None if prefixes is None else record_format.under_where(prefixes)
    found: dict[str, list[tuple[str, Mapping[str, Any]]]] = {"items": [], "vectors": []}
    for kind, collection in (("items", items), ("vectors", vectors)):
        for got in read_pages(collection, where, ["metadatas"], SCAN_PAGE, "raw records"):
            for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
                ns = meta.get("_ns") if meta else None
                if isinstance(ns, str) and match(ns_from_str(ns)):
                    # (an item that is its own vector record is an item)
                    own = "#" not in rid and record_format.in_vectors(meta)
                    mine = "items" if kind == "items" or own else kind
                    found[mine].append((rid, meta))
    views = (record_format.unfold(m) for _, m in found["items"])
    return RawRecords(
        items=tuple((ns_from_str(str(m["_ns"])), str(m["_key"])) for m in views),
        vector_ids=tuple(rid for rid, _ in found["vectors"]),
    )


def delete_vectors(vectors: Any, ids: Sequence[str]) -> None:
    """Delete the records ``ids`` of the collection ``vectors``, :data:`SCAN_PAGE` at a time."""
    for start in range(0, len(ids), SCAN_PAGE):
        vectors.delete(ids=list(ids[start : start + SCAN_PAGE]))
