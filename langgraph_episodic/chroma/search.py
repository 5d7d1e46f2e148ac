"""The read side of ``ChromaStore.search``: one entry, :func:`run`, for every search.

* Dense: the namespaces under the prefix are ranked exactly in process (:mod:`.ranking.vectors`);
  a scope larger than the cache, or with many namespaces not loaded yet, goes to Chroma's index
  (restricted to the prefix only). Either way the filter is checked on each candidate.
* Lexical: BM25 over the same namespaces (:mod:`.ranking.lexical`).
* Hybrid: both rankings fused by the pure stages of :mod:`.ranking.hybrid`, then re-ranked by
  the shared-field lift (:mod:`.ranking.shared_fields`).
* Each of the three fills a short page with the items that have no vectors (``score=None``),
  newest first, as ``InMemoryStore`` does (:func:`filled`).
* No query: live items under the prefix that match the filter, newest first: a walk over the
  namespaces' listings held in process (:meth:`.Backend.listings`, kept sorted on write) that
  stops after the page, or a read of Chroma.

This module does the I/O around the ranking: it takes the snapshot of the scope
(:meth:`.Backend.scope`), reads the cosines the snapshot lacks from Chroma, and checks ranked
candidates against their records in :func:`resolve`. Every candidate is checked exactly (expiry,
filter) before it is returned, and a ranked candidate only if the vectors or text it was ranked
by carry its item's current tag (``_vtag``): a vector left behind by a crashed or concurrent
write never answers a search. A candidate can also fail that check because its item was
rewritten after the ranking's snapshot was taken; :func:`run` then ranks again, so a search
racing an update finds the item (old or new value) instead of missing it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
from langgraph.store.base import SearchItem, SearchOp

from ..language.baseline import Calibration
from . import record_format, restore
from .backend import Backend, Scope
from .caches import Listing
from .filters import combine, matches, value_where
from .nearest import nearest
from .ranking import shared_fields
from .ranking.hybrid import Fused, Question, aligned, analyse, candidates, complete
from .ranking.vectors import BlockView, NamespaceVectors, QueryCosines, rank, similarities

MIN_DEPTH = 20
"""How deep each ranking goes before its candidates are checked, at least. On LoCoMo deeper
rankings gave nearly the same recall at a higher cost (the fusion study and the store runs in
``docs/benchmarks.md``, "Retrieval quality")."""

RERANKS = 3
"""How many times :func:`run` ranks again when items were rewritten during a search."""

Missed = Mapping[str, tuple[str, tuple[str, ...]]]
"""``{record id: (ranked tag, namespace)}`` of candidates :func:`resolve` dropped because their
item names another tag now, and did not find under it."""


@dataclass(frozen=True)
class Method:
    """How a search ranks: its kind, the question's calibration
    (:class:`~langgraph_episodic.language.baseline.Calibration`; the plain cosine by default)
    and the primary field's path when the shared-field lift acts (``EACH_FIRST``: each
    memory's own first field)."""

    kind: Literal["hybrid", "dense", "lexical", "scan"]
    calibration: Calibration = field(default_factory=Calibration)
    lift: str | None = None


class Hit(NamedTuple):
    """A search result with its record id, TTL and collection (for refreshing it on read)."""

    item: SearchItem
    rid: str
    ttl: float | None
    own: bool = False
    """Whether the item is its own vector record (:func:`.record_format.in_vectors`)."""


@dataclass(frozen=True)
class Ranked:
    """One search's page with the stages' products (for :meth:`.ChromaStore.explain`)."""

    page: list[Hit]
    missed: Missed
    keys: list[str] = field(default_factory=list)
    """The entry key each ranked hit of the page was ranked by."""
    fused: Fused | None = None
    """The hybrid stages' fusion (None for other kinds)."""


def run(b: Backend, op: SearchOp, qvec: np.ndarray | None, now: float, method: Method) -> Ranked:
    """One search (:func:`ranked`), with the namespaces' kept files loaded before it and those it
    built kept after it, in a store on a folder (:mod:`.restore`)."""
    loads = _LOADS.get(method.kind)
    pending = None
    if loads is not None:
        pending = restore.warm(b, op.namespace_prefix, vectors=loads[0], lexical=loads[1])
    found = ranked(b, op, qvec, now, method)
    restore.keep(b, pending)
    return found


_LOADS = {"hybrid": (True, True), "dense": (True, False), "lexical": (False, True)}
"""(vectors, lexical) as each kind asks :meth:`.Backend.scope` (a scan loads neither)."""


def ranked(b: Backend, op: SearchOp, qvec: np.ndarray | None, now: float, method: Method) -> Ranked:
    """One search, ranked again while it missed items rewritten after its snapshot (an item
    updated between ranking and reading names a new tag and fails :func:`resolve`; a crash's
    leftover vectors fail it for good):

    * in one process, it ranks again if this process committed a write meanwhile, holding the
      write lock so that no write can overtake it a second time; else the miss is a leftover;
    * on a shared store, the missed namespaces are dropped from the in-process state and it
      ranks again until a ranking misses nothing new (a leftover).
    """
    if qvec is not None and method.calibration.first is not None:
        qvec = method.calibration.first  # the embedding also carries a second reading
    state = b.state
    before: dict[str, tuple[str, tuple[str, ...]]] = {}
    for _ in range(RERANKS):
        generation = state.generation
        found = _once(b, op, qvec, now, method)
        missed = found.missed
        if not missed:
            return found
        if b.shared:
            if missed.items() <= before.items():
                return found
            before.update(missed)
            with state.lock:
                for _, ns in missed.values():
                    state.forget_namespace(ns)
            continue
        with state.write_lock:  # a write in flight commits before the generations are compared
            if state.generation == generation:
                return found
            # Rank again holding the write lock: no write of this process can overtake it.
            return _once(b, op, qvec, now, method)
    return _once(b, op, qvec, now, method)


def _once(b: Backend, op: SearchOp, qvec: np.ndarray | None, now: float, method: Method) -> Ranked:
    """One ranked page: ranked four times deeper while the checked hits leave it short and a
    deeper ranking could add more, then filled (:func:`filled`); a scan without a query. The
    first ranking goes deep enough that the candidates :func:`resolve` drops rarely leave the
    page short."""
    if method.kind == "scan":
        return Ranked(scan(b, op, now), {})
    need = op.offset + op.limit
    depth = max(2 * need + 10, MIN_DEPTH)
    missed: Missed = {}
    while True:
        found = _ranking(b, op, qvec, now, method, depth)
        hits, keys, missed = resolve(b, found.ranking, op, now, need, missed)
        if len(hits) >= need or not found.more:
            break
        depth *= 4
    page = filled(b, op, hits, found.scope, now)
    return Ranked(page, missed, keys[op.offset : need], found.fused)


class Ranking(NamedTuple):
    """Entry keys by score at one depth, over ``scope`` (:func:`_ranking`)."""

    scope: Scope
    ranking: list[tuple[str, float]]
    more: bool
    """Whether a deeper ranking could add candidates."""
    fused: Fused | None = None


def _ranking(
    b: Backend, op: SearchOp, qvec: np.ndarray | None, now: float, method: Method, depth: int
) -> Ranking:
    """BM25 (lexical), the cosine scaled by the calibration (dense), or both fused and lifted by
    shared field values (hybrid, :func:`hybrid`)."""
    if method.kind == "lexical":
        scope = b.scope(op.namespace_prefix, vectors=False)
        assert scope.lexical is not None
        ranked = scope.lexical.search(op.query or "", scope.namespaces, depth)
        return Ranking(scope, ranked, len(ranked) >= depth)
    assert qvec is not None
    if method.kind == "hybrid":
        return hybrid(b, op, qvec, now, method, depth)
    scope = b.scope(op.namespace_prefix, vectors=True, lexical=False)
    ranked, more = dense_ranking(b, op, qvec, depth, scope.vectors, lambda: _loaded_items(b, op))
    scale = method.calibration.scale
    if scale != 1.0:
        ranked = [(key, cosine * scale) for key, cosine in ranked]
    return Ranking(scope, ranked, more)


def scan(
    b: Backend, op: SearchOp, now: float, *, unscored_in: Scope | None = None
) -> list[Hit]:
    """The page of live items under the prefix matching the filter, newest first.
    ``unscored_in``: only the items without vectors, from that scope's flagged namespaces."""
    only: list[tuple[str, ...]] | None = None
    spot = record_format.prefix_where(op.namespace_prefix)
    if unscored_in is not None:
        only = list(unscored_in.unindexed)
        if not only:
            return []
        if len(only) < len(unscored_in.namespaces):
            spot = record_format.namespaces_where(only)
    listings = b.listings(op.namespace_prefix, only)
    need = op.offset + op.limit
    if listings is not None:
        hits: list[Hit] = []
        for rid, meta in _newest_first(listings):
            if only is not None and record_format.n_vectors(meta):
                continue
            hit = _hit(rid, meta, None, op, now)
            if hit is not None:
                hits.append(hit)
                if len(hits) >= need:
                    break
        return hits[op.offset : need]
    # Expiry is checked here, not in the ``where``: a range condition makes Chroma's get
    # markedly slower (docs/benchmarks.md, "Throughput").
    where = combine(spot, value_where(op.filter), {"_nvec": 0} if only is not None else None)
    read = (_hit(rid, meta, None, op, now) for rid, meta in b.gateway.read_items(where))
    found = [hit for hit in read if hit is not None]
    found.sort(key=lambda h: (h.item.namespace, h.item.key))
    found.sort(key=lambda h: h.item.updated_at, reverse=True)  # newest first, then ns and key
    return found[op.offset : need]


def _newest_first(
    listings: Sequence[tuple[tuple[str, ...], Listing]],
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """(record id, metadata) of every listed item, newest first, then namespace and key."""
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
    b: Backend,
    ranked: Sequence[tuple[str, float]],
    op: SearchOp,
    now: float,
    need: int,
    earlier: Missed | None = None,
) -> tuple[list[Hit], list[str], Missed]:
    """Live items matching the filter, in rank order, until ``need`` are found, with the entry
    keys they were ranked by and the misses (:data:`Missed`): ``earlier`` ones it did not
    accept, and its own. Candidates are fetched in chunks, each twice the last; the first is
    ``need + 2`` (a page of 10 reads about 12 records), or more with a filter, which may reject
    many."""
    out: list[Hit] = []
    keys: list[str] = []
    accepted: set[str] = set()
    missed = dict(earlier or {})
    chunk = max(2 * need, MIN_DEPTH) if op.filter else need + 2
    start = 0
    while start < len(ranked) and len(out) < need:
        part = [
            (key, *record_format.split_entry_key(key), score)
            for key, score in ranked[start : start + chunk]
        ]
        metas = b.fetch([rid for _, rid, _, _ in part])
        for key, rid, tag, score in part:
            meta = metas.get(rid)
            if meta is None or record_format.vector_tag(meta) != tag:
                if meta is not None and rid not in accepted:  # see run()
                    missed[rid] = (tag, record_format.ns_from_str(str(meta["_ns"])))
                continue  # no item, or ranked by vectors / text of another value
            accepted.add(rid)
            missed.pop(rid, None)
            hit = _hit(rid, meta, score, op, now)
            if hit is not None:
                out.append(hit)
                keys.append(key)
                if len(out) >= need:
                    break
        start += chunk
        chunk *= 2
    return out, keys, missed


def _hit(
    rid: str, meta: Mapping[str, Any], score: float | None, op: SearchOp, now: float
) -> Hit | None:
    """The record as a result, or None if it has expired or does not match the filter."""
    if record_format.expired(record_format.expiry_of(meta), now):
        return None
    value = record_format.value_of(meta)
    if not matches(value, op.filter):
        return None
    return Hit(
        record_format.search_item_from_metadata(meta, score, value),
        rid,
        record_format.ttl_of(meta),
        record_format.in_vectors(meta),
    )


def dense_ranking(
    b: Backend,
    op: SearchOp,
    qvec: np.ndarray,
    depth: int,
    views: list[BlockView] | None,
    held: Callable[[], AbstractSet[str] | None] | None = None,
) -> tuple[list[tuple[str, float]], bool]:
    """Entry keys by best cosine, and whether a deeper ranking could add more. ``views``: the
    cached vectors, or None for Chroma's index; ``held``: then gives the ids the scope's
    lexical shards hold, so Chroma is asked without a filter when that answers the same."""
    if views is not None:
        ranked = rank(views, qvec, depth)
        return ranked, len(ranked) >= depth
    # The value filter is not pushed down: both paths rank the same candidates and
    # :func:`resolve` checks the filter, so the answer does not depend on the cache.
    where = b.scope_where(op.namespace_prefix)
    found = nearest(b, qvec, depth, where, held() if held is not None and where else None)
    best: dict[str, float] = {}
    for vid, dist in found:
        key = record_format.split_vector_id(vid)[0]
        score = 1.0 - dist
        if score > best.get(key, -2.0):
            best[key] = score
    return sorted(best.items(), key=lambda kv: -kv[1]), len(found) >= depth


def _loaded_items(b: Backend, op: SearchOp) -> AbstractSet[str] | None:
    """The ids the lexical shards under the prefix hold, when all are loaded (else None)."""
    current = b.current_lexical(op.namespace_prefix)
    return None if current is None else current[1].held_items(current[0])


def filled(b: Backend, op: SearchOp, scored: list[Hit], scope: Scope, now: float) -> list[Hit]:
    """The page ``[offset, offset + limit)`` of the ranked hits followed by the items without
    vectors (``score=None``), newest first, as ``InMemoryStore`` fills a short page.

    ``scored``: all ranked hits when fewer than ``offset + limit``. The page is a slice of one
    list, scored then unscored, so pages never repeat an item (``InMemoryStore`` starts its
    unscored items again on every page past its scored ones).
    """
    page = scored[op.offset : op.offset + op.limit]
    if len(page) < op.limit:
        rest = op._replace(offset=max(0, op.offset - len(scored)), limit=op.limit - len(page))
        page.extend(scan(b, rest, now, unscored_in=scope))
    return page


def hybrid(
    b: Backend, op: SearchOp, qvec: np.ndarray, now: float, method: Method, depth: int
) -> Ranking:
    """Dense and BM25 rankings fused (:mod:`.ranking.fusion`), the cosine calibrated by
    ``method.calibration``, then lifted by shared field values when ``method.lift`` names the
    primary field."""
    lift = method.lift
    scope = b.scope(op.namespace_prefix, vectors=True, lexical=True, fields=lift is not None)
    assert scope.lexical is not None
    question = analyse(op.query or "", scope.lexical, scope.namespaces)
    fused = first_ranking(b, scope, question, qvec, method.calibration, op, depth)
    ranking: list[tuple[str, float]] = fused.ranking
    if lift is not None and scope.fields is not None and (
        lift != shared_fields.EACH_FIRST or scope.fields.any_context()
    ):
        hits, keys, _ = resolve(b, ranking, op, now, shared_fields.LIFT_DOCS)
        sources = [(key, hit.item.score or 0.0) for key, hit in zip(keys, hits, strict=True)]
        ranking = shared_fields.lift(ranking, sources, scope.fields, lift)
    more = fused.more_dense or fused.n_lexical >= depth
    return Ranking(scope, ranking, more, fused)


def first_ranking(
    b: Backend,
    scope: Scope,
    question: Question,
    qvec: np.ndarray,
    calibration: Calibration,
    op: SearchOp,
    depth: int,
) -> Fused:
    """The hybrid stages over the scope's snapshot (the dense side and missing cosines from
    Chroma when its vectors are not cached); a question with a second reading adds that
    reading's best candidates and scores every candidate by it too."""
    second = calibration.second
    cosines = other = None
    if scope.vectors is not None:
        # With cached vectors, the cosines are computed once for the ranking and every lookup.
        if second is None:
            cosines = QueryCosines(scope.vectors, qvec)
            found = aligned(cosines, question, calibration, depth)
            if found is not None:
                return found
        else:
            cosines, other = QueryCosines.read_twice(
                scope.vectors, qvec, second.query, second.gate, second.gate_at
            )
        dense_ranked = cosines.top(depth)
        more_dense = len(dense_ranked[0]) >= depth
    else:
        dense_ranked, more_dense = _dense_from_chroma(b, scope, op, qvec, depth)
    lexical_ranked = question.scores.top(depth) if question.terms else []
    second_ranked: list[str] = []
    if other is not None:
        keys, values = other.top(depth)
        second_ranked = [key for key, value in zip(keys, values.tolist(), strict=True)
                         if value > -2]
    elif second is not None:
        second_ranked = _dense_from_chroma(b, scope, op, second.query, depth)[0][0]
    gathered = candidates(dense_ranked, lexical_ranked, more_dense, second_ranked)
    if second is not None and other is None:  # every candidate's vectors, read from Chroma
        cosines, other = QueryCosines.read_twice(
            [_block_from_chroma(b, gathered.ids)], qvec, second.query, second.gate, second.gate_at
        )
    if cosines is not None:
        extra = cosines.at(gathered.need_cosine)
    else:  # the best cosine of each, its vectors read from Chroma
        keys = gathered.need_cosine
        read = similarities([_block_from_chroma(b, keys)], qvec, keys) if keys else {}
        extra = list(read), np.fromiter(read.values(), np.float64, len(read))
    if other is None:
        return complete(gathered, extra, question, calibration, 2 * depth)
    ids, cosine = other.at(gathered.ids)
    kept = cosine > -2.0
    read_second = [key for key, keep in zip(ids, kept.tolist(), strict=True) if keep], cosine[kept]
    return complete(gathered, extra, question, calibration, 2 * depth, read_second)


def _dense_from_chroma(
    b: Backend, scope: Scope, op: SearchOp, qvec: np.ndarray, depth: int
) -> tuple[tuple[list[str], np.ndarray], bool]:
    """The dense side from Chroma's index (the scope's vectors are not cached): (entry keys,
    their cosines) and whether a deeper ranking could add more."""
    lexical = scope.lexical
    held = None if lexical is None else lambda: lexical.held_items(scope.namespaces)
    ranked, more = dense_ranking(b, op, qvec, depth, None, held)
    return ([key for key, _ in ranked], np.array([c for _, c in ranked])), more


def _block_from_chroma(b: Backend, keys: Sequence[str]) -> BlockView:
    """The vectors of the items of the given entry keys, read from Chroma."""
    iids = list(dict.fromkeys(record_format.split_entry_key(k)[0] for k in keys))
    block = NamespaceVectors("")
    for vid, emb in b.gateway.vectors_of_items(iids):
        iid = record_format.item_of_vector(vid)
        block.replace_item_rows(iid, [(vid, emb)])
    return block.current_view()
