"""What the LangGraph ``BaseStore`` API cannot say or set, read from a ``ChromaStore`` directly.

Export wants each item's TTL, expiry and indexed fields; import wants to restore the original
``created_at`` / ``updated_at`` / expiry (``put`` always stamps "now"). ``ChromaStore`` keeps all
of these in the metadata of its two collections, as :mod:`langgraph_episodic.chroma.record_format`
documents (``<collection>``: one record per item; ``<collection>__vec``: one per indexed text);
these helpers read and write them there, through the store's Chroma client. Any other store
gets none of this: its export carries the five public fields only, and imported items are
stamped with the import time. ``tests/cli`` checks the exact round trip, so a change of the
layout shows up there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, TypeGuard

from langgraph.store.base import BaseStore

from ..chroma import record_format
from ..chroma.store import ChromaStore

_EXPANDED = re.compile(r"^(?P<base>.*[*{].*)\.\d+$")
"""A wildcard or multi-field path expanded per text (``tags[*].0``, ``{a,b}.1``); the index
re-expands it."""


@dataclass(frozen=True)
class Extras:
    """Store-specific facts about one item."""

    index: list[str] | Literal[False]
    """The field paths that were embedded (or asked for, when none held text), or False when
    the item was put without an index."""
    ttl: float | None
    """TTL in minutes, or None."""
    expires_at: datetime | None
    """When the item expires, or None."""


def supported(store: BaseStore) -> TypeGuard[ChromaStore]:
    """Whether ``store`` is a ``ChromaStore`` (the only store these helpers understand)."""
    return isinstance(store, ChromaStore)


def _chunks(ids: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def _client(store: ChromaStore) -> Any:
    return store._client


def _collections(store: ChromaStore) -> tuple[Any, Any]:
    """The items and vectors collections of ``store``."""
    client = _client(store)
    name = store.collection_name
    return client.get_collection(name), client.get_collection(f"{name}__vec")


def _batch_size(store: ChromaStore) -> int:
    return max(1, int(_client(store).get_max_batch_size()))


def _views(got: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """(id, view) of the item records of one ``get`` answer (:func:`.record_format.unfold`)."""
    for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
        yield rid, record_format.unfold(meta or {})


def read_extras(
    store: ChromaStore, keys: Sequence[tuple[tuple[str, ...], str]]
) -> dict[tuple[tuple[str, ...], str], Extras]:
    """TTL, expiry and indexed fields of the items ``(namespace, key)``; missing ones are absent."""
    by_id = {record_format.item_id(ns, key): (ns, key) for ns, key in keys}
    items, vectors = _collections(store)
    size = _batch_size(store)
    metas: dict[str, Mapping[str, Any]] = {}
    paths: dict[str, list[tuple[int, str]]] = {}
    for chunk in _chunks(list(by_id), size):
        got = vectors.get(ids=list(chunk), include=["metadatas"])  # items that are their vector
        metas.update(_views(got))
        rest = [rid for rid in chunk if rid not in metas]
        if rest:
            metas.update(_views(items.get(ids=rest, include=["metadatas"])))
        vector_ids = [
            record_format.vector_id(rid, j, record_format.vector_tag(metas[rid]))
            for rid in chunk
            if rid in metas
            for j in range(record_format.n_vectors(metas[rid]))
        ]
        for vchunk in _chunks(vector_ids, size):
            vgot = vectors.get(ids=list(vchunk), include=["metadatas"])
            for vid, vmeta in zip(vgot["ids"], vgot["metadatas"] or [], strict=True):
                key, _, j = record_format.split_vector_id(vid)
                rid = record_format.split_entry_key(key)[0]
                paths.setdefault(rid, []).append((j, record_format.path_of(vmeta) or "$"))
    out = {}
    for rid, meta in metas.items():
        expires = float(meta.get("_expires", record_format.NO_EXPIRY))
        out[by_id[rid]] = Extras(
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


def restore_times(
    store: ChromaStore,
    times: Mapping[tuple[tuple[str, ...], str], tuple[datetime, datetime, datetime | None]],
) -> None:
    """Set ``created_at``, ``updated_at`` and the expiry of existing items to the given times."""
    store.restore_times(times)


def stored_dims(store: ChromaStore) -> int | None:
    """Dimensions of the vectors already in ``store`` (None when it holds none)."""
    _, vectors = _collections(store)
    got = vectors.get(limit=1, include=["embeddings"])
    embeddings = got.get("embeddings")
    if embeddings is None or len(embeddings) == 0:
        return None
    return len(embeddings[0])
