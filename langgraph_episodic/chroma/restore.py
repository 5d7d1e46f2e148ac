"""A search's namespaces from their kept files (:mod:`.persisted`): loaded before the search
reads Chroma (:func:`warm`), and written after a search built them from Chroma (:func:`keep`).

:func:`warm` picks the namespaces :meth:`.backend.Backend.scope` would read from Chroma
(:func:`.backend.stale`) and keeps in the state what their files hold, with the records added
since (:func:`_add`); the scope then reads only the others. Either way the state holds the same
shards and blocks. :func:`keep` writes the file of each namespace the search built or added to
(of at least :data:`.persisted.MIN_DOCS` documents) when nothing was written to the collection
since the search began.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import persisted, record_format
from .backend import Backend, block_version, stale
from .gateway import _rows_of, read_pages
from .index_paths import is_ranked
from .persisted import Kept, Loaded, PersistedIndex, field_parts
from .ranking.lexical import packed_parts
from .ranking.shared_fields import field_key
from .ranking.vectors import NamespaceVectors
from .registry import Namespace

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pending:
    """Namespaces a search builds from Chroma, to keep after it (:func:`keep`)."""

    kept: PersistedIndex
    collection: str
    language: str
    seq: int
    """The collection's last sequence number before the search read anything."""
    namespaces: tuple[tuple[Namespace, str, int], ...]
    """(namespace, its version, :meth:`.PersistedIndex.discards` before the search)."""


def warm(b: Backend, prefix: Namespace, *, vectors: bool, lexical: bool) -> Pending | None:
    """Load the kept files of the namespaces this search would read from Chroma; return those to
    :func:`keep` after it (no usable file, or one that lacked records or the vectors)."""
    state = b.state
    kept = state.persisted
    language = state.lexical.language
    if kept is None or b.shared or language is None:
        return None
    infos = b.namespaces(prefix)
    with state.lock:  # (the choices of :meth:`.backend.Backend.scope`)
        _, stale_vec, stale_lex = stale(state, prefix, infos, vectors, lexical)
    if not stale_vec and not stale_lex:
        return None
    collection = str(b.gateway.vectors.id)
    try:
        found = kept.chroma.segment_seq(collection)
    except sqlite3.Error as e:  # (Chroma's file unreadable: build from Chroma, keep nothing)
        logger.warning("Cannot read Chroma's records for kept indexes (%s).", e)
        return None
    if found is None:
        return None
    pending: list[tuple[Namespace, str, int]] = []
    for ns, version in {**stale_lex, **stale_vec}.items():
        loaded = kept.load(ns, collection, language)
        if loaded is not None and loaded.appended:
            loaded = _add(b, ns, loaded)
            if loaded is None:  # (what was added cannot be added to it: built from Chroma)
                kept.discard([ns])
        discards = kept.discards(ns)
        # (a file without vectors holding more documents than the vector cache holds vectors:
        # each document has a vector at least, so they do not fit)
        unfit = (
            ns in stale_vec
            and loaded is not None
            and loaded.vectors is None
            and loaded.lexical.n_docs() > state.vectors.max_vectors
        )
        if loaded is None or loaded.appended or (
            ns in stale_vec and loaded.vectors is None and not unfit
        ):
            pending.append((ns, version, discards))  # (kept again after the search)
        if loaded is not None:
            _install(b, prefix, ns, version, loaded, ns in stale_lex, ns in stale_vec, unfit)
    if not pending:
        return None
    return Pending(kept, collection, language, found[1], tuple(pending))


def _add(b: Backend, ns: Namespace, loaded: Loaded) -> Loaded | None:
    """``loaded`` with the records added since its file was written, as a build from every
    record gives it (new vector rows last, where a read of Chroma puts them). None when an added
    record belongs to a document or an item the file holds (then it is built from Chroma)."""
    embeddings = loaded.vectors is not None
    include = ["documents", "metadatas", *(["embeddings"] if embeddings else [])]
    gw = b.gateway
    pages = read_pages(gw.vectors, None, include, gw.max_batch, f"records of {ns}", loaded.appended)
    texts: dict[str, list[tuple[int, str, str]]] = {}
    rows: list[tuple[str, str, Any]] = []
    for got in pages:
        for vid, _, text, emb, path in _rows_of(got, embeddings):
            if not is_ranked(path):
                continue
            key, _, index = record_format.split_vector_id(vid)
            texts.setdefault(key, []).append((index, text, path))
            if emb is not None:
                rows.append((record_format.item_of_vector(vid), vid, emb))
    lexical, fields = loaded.lexical.thaw(), loaded.fields.thaw()
    if any(key in lexical.base.position for key in texts):
        return None
    for parts in texts.values():
        parts.sort()
    keys = list(texts)
    analyzed = b.state.lexical.analyze_many("\n".join(t for _, t, _ in texts[k]) for k in keys)
    for key, tokens in zip(keys, analyzed, strict=True):
        lexical.add(key, tokens)
        fields.add(key, [field_key(path, t) for _, t, path in texts[key]])
    block = loaded.vectors
    if block is not None and rows:
        held = block.stacked()
        added = NamespaceVectors.loaded("", rows).stacked()
        if held is None or added is None:
            return None
        if {record_format.item_of_vector(v) for v in held[1]} & {iid for iid, _, _ in rows}:
            return None
        matrix = np.concatenate([held[0], added[0]]) if len(held[1]) else added[0]
        block = NamespaceVectors.restored("", matrix, [*held[1], *added[1]])
    return dataclasses.replace(loaded, lexical=lexical, fields=fields, vectors=block)


def _install(
    b: Backend,
    prefix: Namespace,
    ns: Namespace,
    version: str,
    loaded: Loaded,
    lexical: bool,
    vectors: bool,
    unfit: bool = False,
) -> None:
    """Keep what a file holds as the namespace's state at ``version``, unless a write moved the
    namespace on meanwhile (``unfit``: its vectors do not fit the cache)."""
    state = b.state
    with state.lock:
        info = state.registry.get(ns)
        if info is None or info.version != version:
            return
        if lexical and state.lexical_versions.get(ns) != version:
            state.lexical.put_shard(ns, loaded.lexical)
            state.fields.put_shard(ns, loaded.fields)
            state.lexical_versions[ns] = version
        block = loaded.vectors
        if vectors and unfit:
            state.oversized.add(prefix)
        if vectors and block is not None and block_version(state.vectors.get(ns)) != version:
            block.version = version
            if len(block) <= state.vectors.max_vectors:
                state.vectors.put(ns, block)
            else:  # as a read of Chroma finds: the namespace does not fit the cache
                state.oversized.add(prefix)


def keep(b: Backend, pending: Pending | None) -> None:
    """Write the files of the namespaces of ``pending`` that the search built."""
    if pending is None:
        return
    state = b.state
    for ns, version, discards in pending.namespaces:
        with state.lock:
            info = state.registry.get(ns)
            if info is None or info.version != version or state.lexical_versions.get(ns) != version:
                continue
            shard = state.lexical.frozen(ns)
            if shard is None or shard.n_docs() < persisted.MIN_DOCS:
                continue
            view = state.fields.snapshot([ns])  # (frozen: read outside the lock)
            block = state.vectors.get(ns)
            vectors = block.stacked() if block is not None and block.version == version else None
        if len(view._shards) != 1:  # (loaded with the lexical shard: never missing)
            continue
        try:
            stamp = pending.kept.chroma.stamp(pending.collection, ns)
        except sqlite3.Error as e:
            logger.warning("Cannot read Chroma's records for kept indexes (%s).", e)
            return
        if stamp is None or stamp.seq != pending.seq:
            continue  # written since the search began: the next first search builds it again
        kept = Kept(stamp, packed_parts(shard), field_parts(view._shards[0]), vectors)
        pending.kept.save(ns, pending.language, kept, discards)
