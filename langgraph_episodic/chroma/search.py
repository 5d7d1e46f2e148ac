"""The read side of ``ChromaStore.search``: dense, lexical and hybrid ranking, and scans.

* Dense: the namespaces under the prefix are ranked exactly in process (:mod:`.vector_cache`);
  a scope larger than the cache, or with many namespaces not loaded yet, goes to Chroma's index
  (restricted to the prefix only). Either way the filter is checked on each candidate.
* Lexical: BM25 over the same namespaces (:mod:`.lexical`).
* Hybrid: both rankings fused (:mod:`.hybrid_ranking`, :mod:`.fusion`).
* No query: live items under the prefix that match the filter, newest first: a walk over the
  namespaces' listings held in process (:meth:`.Backend.listings`, kept sorted on write) that
  stops after the page, or a read of Chroma.

Every candidate is then checked exactly (expiry, filter) before it is returned, and a ranked
candidate only if the vectors or text it was ranked by carry its item's current tag
(``_vtag``): a vector left behind by a crashed or concurrent write never answers a search.
A candidate can also fail that check because its item was rewritten after the ranking's
snapshot was taken; :func:`settled` then ranks again, so a search racing an update finds the
item (old or new value) instead of missing it.
"""

from __future__ import annotations

import heapq
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from langgraph.store.base import SearchItem, SearchOp

from . import layout, shared_fields
from .backend import Backend
from .core import newest_first
from .feedback import FEEDBACK_DOCS, expansion_terms, rescore_arrays
from .filters import combine, matches, value_where
from .fusion import LEXICAL_WEIGHT, fuse_calibrated, lexical_shares
from .hybrid_ranking import aligned_ranking, dense_scores, first_ranking
from .lexical import LexicalIndex, TermScores
from .state import Listing
from .values import loads
from .vector_cache import BlockView, QueryCosines, rank

MIN_DEPTH = 20
"""How deep each ranking goes before fusion (at least; ``2 * (offset + limit) + 10`` for deeper
pages). On LoCoMo deeper rankings gave nearly the same recall at a higher cost (the fusion
study and the store runs in ``docs/benchmarks.md``, "Retrieval quality")."""


RERANKS = 3
"""How many times :func:`settled` ranks again when items were rewritten during a search."""

_missed = threading.local()
"""Per thread, for :func:`settled`: ``{record id: (ranked tag, namespace)}`` of the candidates
:func:`resolve` dropped because their item names another tag now, and did not find under it."""


def settled(b: Backend, run: Callable[[], list[Hit]]) -> list[Hit]:
    """``run()`` (one search), run again while it missed items rewritten after its snapshot.

    A search ranks a snapshot, then reads the ranked items' records; an item updated in between
    names a new tag, fails the check of :func:`resolve` and was dropped: the search answered as
    if it did not exist (1-4 of 600 searches racing 200 updates in one process; 187 of 300 for
    a second store on the same collection, as a second process on a server is). Vectors left
    behind by a crash or by two processes racing on one key fail the same check for good, so:

    * in one process, the search ranks again if this process committed a write during it
      (``generation`` moved; a write in flight is waited for first), else the miss is a
      leftover. It ranks again holding the write lock, so no write of this process can
      overtake it a second time (writers wait for that one ranking);
    * on a shared store (a server), the missed items' namespaces are dropped from the
      in-process state so the next ranking reads them from Chroma again, and the search stops
      when a ranking misses nothing it had not missed before (a leftover).
    """
    state = b.state
    before: dict[str, tuple[str, tuple[str, ...]]] = {}
    for attempt in range(RERANKS + 1):
        generation = state.generation
        _missed.found = {}
        hits = run()
        missed: dict[str, tuple[str, tuple[str, ...]]] = _missed.found
        if not missed or attempt == RERANKS:
            return hits
        if b.shared:
            if missed.items() <= before.items():
                return hits
            before.update(missed)
            with state.lock:
                for _, ns in missed.values():
                    state.forget_namespace(ns)
            continue
        with state.write_lock:  # a write in flight commits before the generations are compared
            if state.generation == generation:
                return hits
            # Rank again holding the write lock: no write of this process can overtake it.
            _missed.found = {}
            return run()
    return hits


class Hit(NamedTuple):
    """A search result with its record id and TTL (for refreshing it on read)."""

    item: SearchItem
    rid: str
    ttl: float | None


def scan(b: Backend, op: SearchOp, now: float, *, unscored_only: bool = False) -> list[Hit]:
    """Live items under the prefix matching the filter, newest first: the page
    ``[offset, offset + limit)``."""
    listings = b.listings(op.namespace_prefix)
    need = op.offset + op.limit
    if listings is not None:
        hits: list[Hit] = []
        for rid, meta in _newest_first(listings):
            if unscored_only and meta["_nvec"]:
                continue
            hit = _hit(rid, meta, None, op, now)
            if hit is not None:
                hits.append(hit)
                if len(hits) >= need:
                    break
        return hits[op.offset : need]
    # Expiry is checked here, not in the ``where``: a range condition makes Chroma's get
    # markedly slower (docs/benchmarks.md, "Throughput").
    where = combine(
        layout.prefix_where(op.namespace_prefix),
        value_where(op.filter),
        {"_nvec": 0} if unscored_only else None,
    )
    found = []
    for rid, meta in b.gateway.read_items(where):
        hit = _hit(rid, meta, None, op, now)
        if hit is not None:
            found.append(hit)
    position = {id(it): n for n, it in enumerate(newest_first(h.item for h in found))}
    return sorted(found, key=lambda h: position[id(h.item)])[op.offset : need]


def _newest_first(
    listings: Sequence[tuple[tuple[str, ...], Listing]],
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(record id, metadata) of every listed item: ``updated_at`` descending, then namespace
    and key (as :func:`.core.newest_first`), merging the namespaces lazily."""
    if len(listings) == 1:
        listing = listings[0][1]
        return ((rid, listing.metas[rid]) for _, _, rid in listing.keys)
    streams = [_stream(ns, listing) for ns, listing in listings]
    merged = heapq.merge(*streams, key=lambda row: row[0])
    return ((rid, listing.metas[rid]) for _, rid, listing in merged)


def _stream(
    ns: tuple[str, ...], listing: Listing
) -> Iterator[tuple[tuple[int, tuple[str, ...], str], str, Listing]]:
    return (((neg, ns, key), rid, listing) for neg, key, rid in listing.keys)


def resolve(
    b: Backend, ranked: Sequence[tuple[str, float]], op: SearchOp, now: float, need: int
) -> list[Hit]:
    """Live items matching the filter, in rank order, until ``need`` are found.

    Candidates are fetched in chunks, so a page of 10 reads about 20 records rather than the
    whole candidate list; a selective filter or expired items make it read further.
    """
    out: list[Hit] = []
    accepted: set[str] = set()
    missed: dict[str, tuple[str, tuple[str, ...]]] = getattr(_missed, "found", {})
    chunk = max(2 * need, 20) if op.filter else need + 2
    start = 0
    while start < len(ranked) and len(out) < need:
        part = [(*layout.split_entry_key(key), score) for key, score in ranked[start : start + chunk]]
        metas = b.fetch([rid for rid, _, _ in part])
        for rid, tag, score in part:
            meta = metas.get(rid)
            if meta is None or layout.vector_tag(meta) != tag:
                if meta is not None and rid not in accepted:  # see settled()
                    missed[rid] = (tag, layout.ns_from_str(str(meta["_ns"])))
                continue  # no item, or ranked by vectors / text of another value
            accepted.add(rid)
            missed.pop(rid, None)
            hit = _hit(rid, meta, score, op, now)
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
    if layout.expired(layout.expiry_of(meta), now):
        return None
    value = loads(meta["_value"])
    if not matches(value, op.filter):
        return None
    return Hit(layout.search_item_from_metadata(meta, score, value), rid, layout.ttl_of(meta))


def dense_ranking(
    b: Backend, op: SearchOp, qvec: np.ndarray, depth: int, views: list[BlockView] | None
) -> tuple[list[tuple[str, float]], bool]:
    """Entry keys by best cosine similarity, and whether a deeper ranking could add more.
    ``views``: the scope's cached vectors (:meth:`.Backend.scope`), or None for Chroma's index."""
    if views is not None:
        ranked = rank(views, qvec, depth)
        return ranked, len(ranked) >= depth
    # A prefix covering every namespace needs no ``where``: Chroma's filtered query costs
    # many times its unfiltered one at 100k items (docs/benchmarks.md, "Throughput").
    # The value filter is not pushed down here: both paths then rank the same candidates (by
    # namespace only) and :func:`resolve` checks the filter exactly, so a search gives the same
    # answer whether or not its namespaces are cached.
    prefix = None if b.covers_everything(op.namespace_prefix) else op.namespace_prefix
    where = layout.prefix_where(prefix or ())
    found = b.gateway.query_vectors(np.asarray(qvec, dtype=np.float32), depth, where)
    best: dict[str, float] = {}
    for vid, dist in found:
        key = layout.split_vector_id(vid)[0]
        score = 1.0 - dist
        if score > best.get(key, -2.0):
            best[key] = score
    return sorted(best.items(), key=lambda kv: -kv[1]), len(found) >= depth


def lexical_ranking(
    op: SearchOp, depth: int, namespaces: list[tuple[str, ...]], view: LexicalIndex
) -> list[tuple[str, float]]:
    """Entry keys by BM25 score over ``namespaces`` (a snapshot of their shards)."""
    return view.search(op.query or "", namespaces, depth)


def dense(b: Backend, op: SearchOp, qvec: np.ndarray, now: float) -> list[Hit]:
    """Cosine-ranked page; as ``InMemoryStore``, a short page is filled with unindexed items."""
    need = op.offset + op.limit
    depth = max(2 * need + 10, 20)
    while True:
        _, views = b.scope(op.namespace_prefix, vectors=True, lexical=False)
        ranked, more = dense_ranking(b, op, qvec, depth, views)
        kept = resolve(b, ranked, op, now, need)
        if len(kept) >= need or not more:
            break
        depth *= 4
    page = kept[op.offset : need]
    if len(page) < op.limit and _may_hold_unindexed(b, op.namespace_prefix):
        filler = op._replace(offset=0, limit=op.limit - len(page))
        page.extend(scan(b, filler, now, unscored_only=True))
    return page


def _may_hold_unindexed(b: Backend, prefix: tuple[str, ...]) -> bool:
    """Whether any namespace under ``prefix`` may hold items without vectors (the registry
    flags it on write), so the filler scan is skipped where it cannot find anything."""
    return any(info.unindexed for info in b.namespaces(prefix).values())


def lexical(b: Backend, op: SearchOp, now: float) -> list[Hit]:
    """BM25-ranked page."""
    need = op.offset + op.limit
    depth = max(2 * need + 10, MIN_DEPTH)
    while True:
        namespaces, _ = b.scope(op.namespace_prefix, vectors=False)
        ranked = lexical_ranking(op, depth, namespaces, b.lexical_view(namespaces))
        kept = resolve(b, ranked, op, now, need)
        if len(kept) >= need or len(ranked) < depth:
            break
        depth *= 4
    return kept[op.offset : need]


def hybrid(
    b: Backend,
    op: SearchOp,
    qvec: np.ndarray,
    now: float,
    baseline: float = 0.0,
    *,
    feedback: bool = False,
    lift: str | None = None,
) -> list[Hit]:
    """Dense and BM25 rankings fused; the score is ``0.35 * cosine + 0.65 * lexical share``,
    the same scale for every query and namespace (see :mod:`.fusion` for what it means).
    ``baseline``: the question's baseline cosine (:mod:`.baseline`; ``0`` for embedders without
    one); the cosine enters the score measured from it. ``feedback``: re-rank with
    pseudo-relevance feedback (:mod:`.feedback`). ``lift``: the primary field's path, to lift
    memories sharing another field's value with the best hits (:mod:`.shared_fields`)."""
    need = op.offset + op.limit
    depth = max(2 * need + 10, MIN_DEPTH)
    while True:
        namespaces, views = b.scope(op.namespace_prefix, vectors=True, lexical=True)
        lexical_view = b.lexical_view(namespaces)
        # The question is analyzed and scored once for every lexical step (ranking, the dense
        # candidates' scores, the maximum, and feedback).
        terms = Counter(lexical_view.tokenizer(op.query or ""))
        question = lexical_view.score_terms(terms, namespaces)
        # With cached vectors, the cosines are computed once for the ranking and every lookup.
        cosines = QueryCosines(views, qvec) if views is not None else None
        aligned = aligned_ranking(cosines, question, bool(terms), baseline, depth)
        if aligned is not None:
            fused, more_dense, n_lexical = aligned
        else:
            if cosines is not None:
                dense_ranked = cosines.top(depth)
                more_dense = len(dense_ranked[0]) >= depth
            else:
                ranked, more_dense = dense_ranking(b, op, qvec, depth, None)
                dense_ranked = [key for key, _ in ranked], np.array([c for _, c in ranked])
            lexical_ranked = question.top(depth) if terms else []
            n_lexical = len(lexical_ranked)
            fused = first_ranking(
                b, (qvec, baseline), cosines, dense_ranked, question, lexical_ranked, 2 * depth
            )
        if feedback:
            fused = _with_feedback(
                b,
                op,
                (qvec, baseline),
                now,
                (namespaces, cosines, lexical_view),
                (terms, question),
                fused,
                depth,
            )
        if lift is not None:
            sources = shared_fields.live_best(b.fetch, fused, op, now, shared_fields.LIFT_DOCS)
            fused = shared_fields.lift(fused, sources, b.field_view(namespaces), lift)
        kept = resolve(b, fused, op, now, need)
        if len(kept) >= need or (not more_dense and n_lexical < depth):
            break
        depth *= 4
    return kept[op.offset : need]


def _with_feedback(
    b: Backend,
    op: SearchOp,
    question_vector: tuple[np.ndarray, float],
    now: float,
    scope: tuple[list[tuple[str, ...]], QueryCosines | None, LexicalIndex],
    question: tuple[Counter[str], TermScores],
    fused: list[tuple[str, float]],
    depth: int,
) -> list[tuple[str, float]]:
    """``fused`` re-ranked with pseudo-relevance feedback from its best live hits (those the
    filter admits, so a filtered-out memory never shapes the answer). ``scope``: the searched
    namespaces, the question's cosines over their cached vectors (None: Chroma's index answers)
    and their lexical snapshot; ``question_vector``: the question's
    vector and baseline cosine; ``question``: the question's terms and their scores."""
    qvec, baseline = question_vector
    namespaces, cosines_of, view = scope
    question_terms, question_scores = question
    hits = resolve(b, fused, op, now, FEEDBACK_DOCS)
    key_of = {layout.split_entry_key(key)[0]: key for key, _ in fused}
    source = [(key_of[h.rid], h.item.score or 0.0) for h in hits if h.rid in key_of]
    if not source:
        return fused
    terms = expansion_terms(view, namespaces, source, exclude=question_terms)
    if not terms:
        return fused
    first = dict(fused)
    expansion = view.score_terms(terms, namespaces)
    found = [key for key, _ in expansion.top(depth) if key not in first]
    if found:  # the new candidates' score for the question itself, as fused above
        cosines = (
            cosines_of.of(found) if cosines_of is not None else dense_scores(b, qvec, found, None)
        )
        shares = question_scores.of(found)
        cosine = np.array([cosines.get(key, 0.0) for key in found], dtype=np.float64)
        if baseline < 1.0:  # as :func:`.baseline.above_baseline`
            cosine = (cosine - baseline) / (1.0 - baseline)
        first.update(
            fuse_calibrated(
                found,
                cosine,
                found,
                lexical_shares([shares.get(key, 0.0) for key in found], question_scores.max_score),
                limit=len(found),
                weight=LEXICAL_WEIGHT,
            )
        )
    of = expansion.of(first)
    return rescore_arrays(
        list(first),
        np.fromiter(first.values(), dtype=np.float64, count=len(first)),
        source[0][1],
        lexical_shares([of.get(key, 0.0) for key in first], expansion.max_score),
    )
