"""Helpers for this package's own tests: what a test must see or do inside a ``ChromaStore``
that no public method offers (its in-process caches, the maps its ranking keeps, the gateway it
reads Chroma through, the records a crash leaves).

For tests only: these functions may change or go away in any release, and nothing outside the
test suite should call them. They are the one place that knows the store's private attributes
(and the record layout a crash leaves), so a test goes through the store's public methods
(``get``, ``search``, ``collections``, ``raw_records``, ``item_extras``, ``verify``, ...) where
they say what it checks, and through a function here where they cannot. A change of the
store's internals then changes this module, not every test that looks inside.

It is not part of the package's public API (not in ``langgraph_episodic.__all__``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..errors import InvalidValueError
from . import record_format
from .id_sets import IdSet
from .ranking.shared_fields import FieldKey
from .store import ChromaStore

Namespace = tuple[str, ...]

__all__ = [
    "backend_of",
    "bm25_k1",
    "cache_capacities",
    "cached_item_records",
    "count_runs",
    "field_groups",
    "field_values_held",
    "forget_cached_items",
    "forget_process_state",
    "gateway_of",
    "holds_unranked",
    "known_item_ids",
    "known_namespaces",
    "lexical_loaded",
    "lose_namespace_record",
    "namespace_record_ids",
    "namespace_texts",
    "plant_orphan_vector",
    "record_namespace",
    "served_by_another_process",
    "ttl_sweeper",
    "vectors_held",
    "wrap_collections",
]


def _state(store: ChromaStore) -> Any:
    return backend_of(store).state


def backend_of(store: ChromaStore) -> Any:
    """The store's backend (:class:`langgraph_episodic.chroma.backend.Backend`): Chroma's
    collections and the in-process state. For white-box tests of the modules behind the store;
    prefer a named function of this module."""
    if served_by_another_process(store):
        raise InvalidValueError("a store served by another process has no backend in this process")
    return store._backend


def gateway_of(store: ChromaStore) -> Any:
    """The :class:`langgraph_episodic.chroma.gateway.Gateway` the store reads and writes
    Chroma through (to patch or pause one of its reads)."""
    return backend_of(store).gateway


def served_by_another_process(store: ChromaStore) -> bool:
    """Whether the store sends its calls to the process holding its folder."""
    return store._remote is not None


# --- the in-process state ---------------------------------------------------------------


def forget_cached_items(store: ChromaStore) -> None:
    """Empty the item cache: the next read of an item reads its record from Chroma."""
    _state(store).clear_items()


def forget_process_state(store: ChromaStore) -> None:
    """Forget everything the store holds in process (caches, listings, lexical and field maps,
    the sets of the ids each namespace holds): what a new process knows of the folder."""
    _state(store).reset()


def cached_item_records(store: ChromaStore) -> dict[str, dict[str, Any]]:
    """The item cache's records by item id, as the store reads them back."""
    state = _state(store)
    with state.lock:
        records, _ = state.cached_items(list(state._items))
    return dict(records)


def cache_capacities(store: ChromaStore) -> tuple[int, int]:
    """(most vectors, most item records) the store's in-process caches hold."""
    state = _state(store)
    return int(state.vectors.max_vectors), int(state.item_cache_size)


def vectors_held(store: ChromaStore, namespace: Namespace) -> bool:
    """Whether the vector cache holds the vectors of ``namespace`` (a search prefix) for
    exact ranking in process; when not, Chroma's index ranks them."""
    return _state(store).vectors.get(tuple(namespace)) is not None


def known_item_ids(store: ChromaStore, namespace: Namespace) -> IdSet | None:
    """The ids of every item of ``namespace`` as the store knows them (None: it does not know
    them all and asks Chroma; see :mod:`langgraph_episodic.chroma.id_sets`)."""
    known: IdSet | None = _state(store)._ids.get(tuple(namespace))
    return known


def known_namespaces(store: ChromaStore) -> set[Namespace]:
    """The namespaces whose item ids the store knows (:func:`known_item_ids`)."""
    return set(_state(store)._ids)


def lexical_loaded(store: ChromaStore, namespace: Namespace) -> bool:
    """Whether the keyword index of ``namespace`` is loaded in process."""
    return bool(_state(store).lexical.has_namespace(tuple(namespace)))


def bm25_k1(store: ChromaStore) -> float:
    """The term-frequency saturation ``k1`` of the store's BM25 ranking."""
    return float(_state(store).lexical.k1)


def field_groups(store: ChromaStore, namespace: Namespace) -> dict[FieldKey, frozenset[str]]:
    """The shared-field map of ``namespace`` (loaded by a search): each indexed field value
    ``(path, digest)`` with the entries holding it (see
    :mod:`langgraph_episodic.chroma.ranking.shared_fields`); empty when not loaded."""
    groups: dict[FieldKey, frozenset[str]] = _state(store).fields.groups_of(tuple(namespace))
    return groups


def field_values_held(store: ChromaStore) -> set[FieldKey]:
    """Every field value the shared-field maps of all namespaces hold in process."""
    state = _state(store)
    with state.lock:
        return {key for shard in state.fields._shards.values() for key in shard.groups}


# --- reading Chroma as the store does ----------------------------------------------------


def namespace_texts(store: ChromaStore, namespace: Namespace) -> dict[str, str]:
    """The indexed texts of ``namespace`` by vector record id, read from Chroma as the
    namespace's first search reads them."""
    rows = gateway_of(store).namespace_vectors(tuple(namespace), embeddings=False)
    return {row.vid: row.text for row in rows}


def holds_unranked(store: ChromaStore) -> bool:
    """Whether the store's vectors include texts that searches through Chroma's index must
    leave out (written by an older release: see ``Gateway.holds_unranked``)."""
    return bool(gateway_of(store).holds_unranked())


def wrap_collections(store: ChromaStore, wrap: Callable[[Any], Any]) -> None:
    """Replace the ``vectors`` and ``items`` collections the store reads through with
    ``wrap(collection)`` from now on (e.g. a recorder of the calls it makes)."""
    gw = gateway_of(store)
    for name in ("vectors", "items"):
        object.__setattr__(gw, name, wrap(getattr(gw, name)))


def count_runs(store: ChromaStore) -> list[int]:
    """A list the store appends the number of ops of each batch it executes to, from now
    on (gathered async calls run as one batch)."""
    runs: list[int] = []
    run = store._run

    def counting(plan: Any, *args: Any) -> Any:
        runs.append(plan.n_ops)
        return run(plan, *args)

    vars(store)["_run"] = counting  # (an instance attribute: shadows the method)
    return runs


def ttl_sweeper(store: ChromaStore) -> threading.Thread | None:
    """The thread :meth:`ChromaStore.start_ttl_sweeper` started (None: none runs, or it was
    stopped)."""
    sweeper: threading.Thread | None = store._sweeper
    return sweeper


# --- records a crash leaves (what ``verify`` and ``forget_user`` must find) ---------------

OLD_TAG = "deadbeef"
"""A vector tag of long ago (the epoch's first minute): older than any grace period."""


def plant_orphan_vector(
    store: ChromaStore,
    namespace: Namespace,
    key: str = "ghost",
    text: str = "an orphan vector",
    *,
    path: str = "text",
    embedding: list[float] | None = None,
) -> str:
    """Write what a put killed between its vectors and its item record leaves: one vector
    record (with ``text`` as its document, at ``path``) of the item ``key`` of ``namespace``,
    which does not exist, tagged :data:`OLD_TAG`. ``embedding`` defaults to the store's
    embedder's vector of ``text``. Returns the record's id."""
    ns = tuple(namespace)
    if embedding is None:
        if store.embeddings is None:
            raise InvalidValueError("This store has no embedder: pass embedding=[...].")
        embedding = [float(x) for x in store.embeddings.embed_documents([text])[0]]
    iid = record_format.item_id(ns, key)
    vid = record_format.vector_id(iid, 0, OLD_TAG)
    store.collections["vectors"].add(
        ids=[vid],
        embeddings=[list(embedding)],
        metadatas=[record_format.vector_metadata(ns, iid, path)],
        documents=[text],
    )
    return vid


def namespace_record_ids(store: ChromaStore, namespace: Namespace) -> list[str]:
    """The ids of the registry records (``store.collections["namespaces"]``) of
    ``namespace``."""
    got = store.collections["namespaces"].get(include=["metadatas"])
    wanted = record_format.ns_str(tuple(namespace))
    return [
        rid
        for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True)
        if meta and meta.get("_ns") == wanted
    ]


def lose_namespace_record(store: ChromaStore, namespace: Namespace) -> None:
    """Delete the registry record of ``namespace`` while its items stay: what a crash can
    leave (``verify`` reports it)."""
    store.collections["namespaces"].delete(ids=namespace_record_ids(store, namespace))


def record_namespace(meta: Any) -> Namespace | None:
    """The namespace of a raw record of the store's collections, from its metadata (None for
    a record without one)."""
    ns = meta.get("_ns") if meta else None
    return record_format.ns_from_str(ns) if isinstance(ns, str) else None
