"""The read side of ``ChromaStore.search``: dense, lexical and hybrid ranking, and scans.

* Dense: the namespaces under the prefix are ranked exactly in process (:mod:`.vector_cache`);
  a scope larger than the cache, or with many namespaces not loaded yet, goes to Chroma's index
  (restricted to the prefix only). Either way the filter is checked on each candidate.
* Lexical: BM25 over the same namespaces (:mod:`.lexical`).
* Hybrid: both rankings fused (:mod:`.fusion`).
* No query: every live item under the prefix that matches the filter, newest first, from the
  namespaces' item listings held in process (:meth:`.Backend.scan_rows`) or from Chroma.

Every candidate is then checked exactly (expiry, filter) before it is returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from langgraph.store.base import SearchItem, SearchOp

from . import layout
from .backend import Backend, split_vector_id
from .core import newest_first
from .filters import combine, matches, value_where
from .fusion import LEXICAL_WEIGHT, fuse, lexical_share, missing_ids
from .values import loads
from .vector_cache import NamespaceVectors, rank, similarities

MIN_DEPTH = 20
"""How deep each ranking goes before fusion (at least; ``2 * (offset + limit) + 10`` for deeper
pages). The fusion study on LoCoMo found depths 10, 20 and 100 within 0.008 of each other
(``docs/benchmarks.md``), and through the store 30 against 100 gave recall within 0.002 while a
hybrid search over one user's 100 documents took about half the time."""


class Hit(NamedTuple):
    """A search result with its record id and TTL (for refreshing it on read)."""

    item: SearchItem
    rid: str
    ttl: float | None


def scan(b: Backend, op: SearchOp, now: float, *, unscored_only: bool = False) -> list[Hit]:
    """All live items under the prefix matching the filter, newest first."""
    rows = b.scan_rows(op.namespace_prefix)
    if rows is None:
        # Expiry is checked here, not in the ``where``: a range condition made Chroma's get
        # about 1.6x slower (measured: 57 vs 93 ms for one namespace of a 10k-item store).
        where = combine(
            layout.prefix_where(op.namespace_prefix),
            value_where(op.filter),
            {"_nvec": 0} if unscored_only else None,
        )
        got = b.items.get(where=where, include=["metadatas"])
        rows = list(zip(got["ids"], got["metadatas"] or [], strict=True))
    hits = []
    for rid, meta in rows:
        if unscored_only and meta["_nvec"]:
            continue
        hit = _hit(rid, meta, None, op, now)
        if hit is not None:
            hits.append(hit)
    position = {id(it): n for n, it in enumerate(newest_first(h.item for h in hits))}
    return sorted(hits, key=lambda h: position[id(h.item)])


def resolve(
    b: Backend, ranked: Sequence[tuple[str, float]], op: SearchOp, now: float, need: int
) -> list[Hit]:
    """Live items matching the filter, in rank order, until ``need`` are found.

    Candidates are fetched in chunks, so a page of 10 reads about 20 records rather than the
    whole candidate list; a selective filter or expired items make it read further.
    """
    out: list[Hit] = []
    chunk = max(2 * need, 20) if op.filter else need + 2
    start = 0
    while start < len(ranked) and len(out) < need:
        part = ranked[start : start + chunk]
        metas = b.fetch([rid for rid, _ in part])
        for rid, score in part:
            meta = metas.get(rid)
            hit = None if meta is None else _hit(rid, meta, score, op, now)
            if hit is not None:
                out.append(hit)
                if len(out) >= need:
                    break
        start += chunk
        chunk *= 2
    return out


def _hit(
    rid: str, meta: Mapping[str, Any], score: float | None, op: SearchOp, now: float
) -> Hit | None:
    """The record as a result, or None if it has expired or does not match the filter."""
    if float(meta["_expires"]) < now:
        return None
    value = loads(meta["_value"])
    if not matches(value, op.filter):
        return None
    return Hit(layout.search_item_from_metadata(meta, score, value), rid, layout.ttl_of(meta))


def dense_ranking(
    b: Backend, op: SearchOp, qvec: np.ndarray, depth: int
) -> tuple[list[tuple[str, float]], bool]:
    """Item ids by best cosine similarity, and whether a deeper ranking could add more."""
    entries = _cached_scope(b, op)
    if entries is not None:
        ranked = rank(entries, qvec, depth)
        return ranked, len(ranked) >= depth
    # A prefix covering every namespace needs no ``where``: Chroma's filtered query cost
    # 329 ms at 100k items against 3.6 ms unfiltered.
    # The value filter is not pushed down here: both paths then rank the same candidates (by
    # namespace only) and :func:`resolve` checks the filter exactly, so a search gives the same
    # answer whether or not its namespaces are cached.
    prefix = None if b.covers_everything(op.namespace_prefix) else op.namespace_prefix
    where = layout.prefix_where(prefix or ())
    got = b.vectors.query(
        query_embeddings=[np.asarray(qvec, dtype=np.float32)], n_results=depth, where=where, include=["distances"]
    )
    ids = got["ids"][0] if got["ids"] else []
    dists = got["distances"][0] if got["distances"] else []
    best: dict[str, float] = {}
    for vid, dist in zip(ids, dists, strict=True):
        iid, _ = split_vector_id(vid)
        score = 1.0 - float(dist)
        if score > best.get(iid, -2.0):
            best[iid] = score
    return sorted(best.items(), key=lambda kv: -kv[1]), len(ids) >= depth


def _cached_scope(b: Backend, op: SearchOp) -> list[NamespaceVectors] | None:
    """The scope's cached vectors, or None when Chroma's index must answer (more vectors than
    the cache holds). With a value filter the cached ranking is still exact: every candidate
    is checked against the filter in :func:`resolve` (measured: 1.2 s through Chroma's
    filtered query at 100k items against well under 10 ms this way)."""
    _, entries = b.scope(op.namespace_prefix, vectors=True, lexical=False)
    return entries


def dense_scores(
    b: Backend, op: SearchOp, qvec: np.ndarray, item_ids: Sequence[str]
) -> dict[str, float]:
    """Best cosine similarity of each given item (those without vectors are left out)."""
    if not item_ids:
        return {}
    entries = _cached_scope(b, op)
    if entries is not None:
        return similarities(entries, qvec, item_ids)
    got = b.vectors.get(where={"_item": {"$in": list(item_ids)}}, include=["embeddings"])
    entry = NamespaceVectors("")
    embs = got["embeddings"] if got["embeddings"] is not None else []
    for vid, emb in zip(got["ids"], embs, strict=True):
        entry.replace_item_rows(split_vector_id(vid)[0], [(vid, emb)])
    return similarities([entry], qvec, item_ids)


def lexical_ranking(
    b: Backend, op: SearchOp, depth: int
) -> tuple[list[tuple[str, float]], list[tuple[str, ...]]]:
    """Item ids by BM25 score over the namespaces under the prefix, and those namespaces."""
    namespaces, _ = b.scope(op.namespace_prefix, vectors=False)
    with b.lock:
        return b.lexical.search(op.query or "", namespaces, depth), namespaces


def dense(b: Backend, op: SearchOp, qvec: np.ndarray, now: float) -> list[Hit]:
    """Cosine-ranked page; as ``InMemoryStore``, a short page is filled with unindexed items."""
    need = op.offset + op.limit
    depth = max(2 * need + 10, 20)
    while True:
        ranked, more = dense_ranking(b, op, qvec, depth)
        kept = resolve(b, ranked, op, now, need)
        if len(kept) >= need or not more:
            break
        depth *= 4
    page = kept[op.offset : need]
    if len(page) < op.limit and _may_hold_unindexed(b, op.namespace_prefix):
        page.extend(scan(b, op, now, unscored_only=True)[: op.limit - len(page)])
    return page


def _may_hold_unindexed(b: Backend, prefix: tuple[str, ...]) -> bool:
    """Whether any namespace under ``prefix`` may hold items without vectors (the registry
    flags it on write), so the filler scan is skipped where it cannot find anything."""
    return any(info.unindexed for info in b.registry.under(prefix).values())


def lexical(b: Backend, op: SearchOp, now: float) -> list[Hit]:
    """BM25-ranked page."""
    need = op.offset + op.limit
    depth = max(2 * need + 10, MIN_DEPTH)
    while True:
        ranked, _ = lexical_ranking(b, op, depth)
        kept = resolve(b, ranked, op, now, need)
        if len(kept) >= need or len(ranked) < depth:
            break
        depth *= 4
    return kept[op.offset : need]


def hybrid(b: Backend, op: SearchOp, qvec: np.ndarray, now: float) -> list[Hit]:
    """Dense and BM25 rankings fused; the score is ``0.35 * cosine + 0.65 * lexical share``,
    the same scale for every query and namespace (see :mod:`.fusion` for what it means)."""
    need = op.offset + op.limit
    depth = max(2 * need + 10, MIN_DEPTH)
    while True:
        dense_ranked, more_dense = dense_ranking(b, op, qvec, depth)
        lexical_ranked, namespaces = lexical_ranking(b, op, depth)
        # Score every candidate on both sides: a document found by one side only is not
        # the other side's worst (with min-max fusion this lifted LoCoMo recall@1 from 0.27 to 0.31).
        need_dense, need_lexical = missing_ids(dense_ranked, lexical_ranked)
        extra_dense = dense_scores(b, op, qvec, need_dense)
        with b.lock:
            extra_lexical = b.lexical.scores(op.query or "", namespaces, need_lexical)
            top = b.lexical.max_score(op.query or "", namespaces)
        fused = fuse(
            [*dense_ranked, *extra_dense.items()],
            [
                (doc_id, lexical_share(score, top))
                for doc_id, score in [*lexical_ranked, *extra_lexical.items()]
            ],
            limit=2 * depth,
            method="calibrated",
            weight=LEXICAL_WEIGHT,
        )
        kept = resolve(b, fused, op, now, need)
        if len(kept) >= need or (not more_dense and len(lexical_ranked) < depth):
            break
        depth *= 4
    return kept[op.offset : need]
