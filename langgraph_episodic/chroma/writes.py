"""The write side of ``ChromaStore``: puts, deletes, TTL refreshes, sweeps and restored times.

Writes of one process are serialised by the state's ``write_lock``; each reaches Chroma in an
order that a kill at any moment leaves safe, then is applied to the in-process state in one
step (:meth:`.caches.StoreState.commit`):

1. The registry record of every namespace receiving an item, so an item is never unlisted
   (an embedded store skips it when the registry already covers the item, also when it kept
   the record of the emptied namespace).
2. The vector collection: items with one indexed text (each *is* its record, so such a put
   takes effect here) and the new vector records of items with several, under a new tag.
3. The item collection: the item records of items with no text or several, naming their tag;
   from now on searches accept only the new vectors. A killed move's leftover goes first.
4. Item records of deleted items and of items now in the vector collection, then the vector
   records of deleted items, of items that moved to the item collection, and old vectors.
5. Namespaces left empty: an embedded store keeps their registry record, marked ``_kept``
   (once; :mod:`.registry`), and knows in process that they are empty; on a server the
   record is removed, checked again after and re-registered if another process put an item
   meanwhile. The latest expiry of the others is recomputed.
6. On a server, each written namespace gets a new registry version last, so other processes'
   caches reload after the data is there.

A crash leaves at most vector records no item names (any more), an item record shadowed by
the vector collection's (reads skip them and :func:`.verify.verify` removes them) or a
record of an empty namespace (a kept one is checked when a store reads the registry).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from . import record_format
from .backend import Backend
from .caches import Commit
from .gateway import Gateway
from .index_paths import is_ranked
from .plans import BatchPlan, PutPlan
from .registry import Namespace, NamespaceInfo, record_id, records


def apply_puts(b: Backend, plan: BatchPlan, doc_vectors: Mapping[str, Any], now: float) -> None:
    """Apply the batch's puts and deletes (last write wins per key, already deduplicated)."""
    puts = list(plan.puts.values())
    if not puts:
        return
    with b.state.write_lock:
        gw = b.gateway  # (read under the lock: a rebuild swaps collections under it)
        b.claim_for_writing()
        ids = [record_format.item_id(p.op.namespace, p.op.key) for p in puts]
        empty = b.empty_namespaces(list(dict.fromkeys(p.op.namespace for p in puts)))
        old = b.fetch(ids, {rid: p.op.namespace for rid, p in zip(ids, puts, strict=True)}, empty)
        w = _Writes(record_format.new_tag(now), record_format.to_micros(now))
        commit = Commit()
        for p, rid in zip(puts, ids, strict=True):
            _gather_put(w, commit, gw, p, rid, old.get(rid), doc_vectors, now)
        _write(b, gw, w, commit, empty)


@dataclasses.dataclass
class _Writes:
    """What one batch's puts write to Chroma, gathered put by put in the batch's order."""

    tag: str
    """The tag of this batch's new vector records (items with several texts)."""
    now_us: int
    vectors: list[tuple[str, Sequence[float], dict[str, Any], str | None]] = field(
        default_factory=list
    )
    """(id, embedding, metadata, document) of each vector record to upsert."""
    stale_vecs: list[str] = field(default_factory=list)
    item_ids: list[str] = field(default_factory=list)
    item_metas: list[dict[str, Any]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    """Item records in the item collection."""
    gone_from_vectors: list[str] = field(default_factory=list)
    """Items' own vector records (deleted or moved)."""
    moved_in: list[str] = field(default_factory=list)
    """Items moving into the item collection."""
    expiries: dict[Namespace, float] = field(default_factory=dict)
    unindexed: set[Namespace] = field(default_factory=set)
    item_records: set[Namespace] = field(default_factory=set)
    """Namespaces receiving records in the item collection."""
    emptied: dict[Namespace, None] = field(default_factory=dict)


def _gather_put(
    w: _Writes,
    commit: Commit,
    gw: Gateway,
    p: PutPlan,
    rid: str,
    prev: Mapping[str, Any] | None,
    doc_vectors: Mapping[str, Any],
    now: float,
) -> None:
    """Add one put or delete (``prev``: the item's record before it) to ``w`` and ``commit``."""
    op = p.op
    was_vector = record_format.in_vectors(prev)
    commit.namespaces[rid] = op.namespace
    w.stale_vecs.extend(_vector_ids(rid, prev))
    commit.old_keys[rid] = _entry_key(rid, prev)
    if op.value is None:
        if prev is not None:
            (w.gone_from_vectors if was_vector else w.deleted).append(rid)
            w.emptied[op.namespace] = None
            commit.items[rid] = None
            commit.vectors.setdefault(op.namespace, {})[rid] = []
        return
    own = len(p.texts) == 1  # the item is its own vector record: one Chroma write
    item_tag = record_format.ITEM_TAG if own else (w.tag if p.texts else "")
    rows: list[tuple[str, str, Any]] = [
        (record_format.vector_id(rid, j, item_tag), text, doc_vectors[text])
        for j, (_, text) in enumerate(p.texts)
    ]
    ranked = [n for n, (path, _) in enumerate(p.texts) if is_ranked(path)]
    if len(ranked) < len(p.texts) and not own:
        gw.unranked.written = True  # searches through Chroma's index leave them out
    commit.vectors.setdefault(op.namespace, {})[rid] = [rows[n] for n in ranked]
    commit.paths[rid] = tuple(p.texts[n][0] for n in ranked)
    alive = prev is not None and not record_format.expired(record_format.expiry_of(prev), now)
    expires = record_format.NO_EXPIRY if op.ttl is None else now + float(op.ttl) * 60.0
    meta = record_format.item_metadata(
        op.namespace,
        op.key,
        op.value,
        created_us=record_format.created_of(prev) if prev is not None and alive else w.now_us,
        updated_us=w.now_us,
        expires_at=expires,
        ttl=op.ttl,
        n_vectors=len(p.texts),
        tag=item_tag,
        no_text=() if p.texts else p.asked,
        path=p.texts[0][0] if own else None,
    )
    if own:
        _gather_own_record(w, rid, rows[0], meta, prev, was_vector)
    else:
        _gather_item_record(w, op.namespace, rid, p.texts, rows, meta, prev, was_vector)
    commit.items[rid] = meta
    w.expiries[op.namespace] = max(expires, w.expiries.get(op.namespace, 0.0))
    if prev is not None and record_format.expiry_of(prev) > expires:
        # The expiry went down: the namespace's latest expiry may have too, and the
        # registry only ever raises it on a put. Recompute it after the writes.
        w.emptied[op.namespace] = None
    if not p.texts:
        w.unindexed.add(op.namespace)
    if not own:
        w.item_records.add(op.namespace)


def _gather_own_record(
    w: _Writes,
    rid: str,
    row: tuple[str, str, Any],
    meta: dict[str, Any],
    prev: Mapping[str, Any] | None,
    was_vector: bool,
) -> None:
    """An item with one text: its record in the vector collection is the item."""
    vid, _, vec = row
    stored = record_format.stored_metadata(meta, prev if was_vector else None)
    # No document (the text is read from the value); one an earlier version wrote is cleared.
    held = prev is not None and was_vector and record_format.holds_document(prev)
    w.vectors.append((vid, vec, stored, "" if held else None))
    if prev is not None and not was_vector:
        w.deleted.append(rid)  # its record in the item collection goes


def _gather_item_record(
    w: _Writes,
    namespace: Namespace,
    rid: str,
    texts: Sequence[tuple[str, str]],
    rows: Sequence[tuple[str, str, Any]],
    meta: dict[str, Any],
    prev: Mapping[str, Any] | None,
    was_vector: bool,
) -> None:
    """An item with no text or several: a record in the item collection naming its vectors."""
    for (path, text), (vid, _, vec) in zip(texts, rows, strict=True):
        w.vectors.append((vid, vec, record_format.vector_metadata(namespace, rid, path), text))
    w.item_ids.append(rid)
    if was_vector:
        w.moved_in.append(rid)
        w.gone_from_vectors.append(rid)
    w.item_metas.append(record_format.stored_metadata(meta, None if was_vector else prev))


def _write(b: Backend, gw: Gateway, w: _Writes, commit: Commit, empty: set[Namespace]) -> None:
    """Write the gathered records in the safe order (the module docstring's steps), then commit."""
    commit.registry.update(_register(b, w))  # 1
    commit.created = {ns for ns in empty if ns in w.expiries}
    columns = [list(column) for column in zip(*w.vectors, strict=True)] or [[], [], [], []]
    gw.upsert_vectors(*columns)  # 2
    gw.delete_items(w.moved_in, in_vectors=False)  # (a killed move's leftover, if any)
    gw.upsert_items(w.item_ids, w.item_metas)  # 3
    gw.delete_items(w.deleted, in_vectors=False)
    gw.delete_vectors([*w.gone_from_vectors, *w.stale_vecs])  # 4
    commit.deleted_any = bool(w.deleted) or bool(w.gone_from_vectors)
    _finish(b, commit, list(w.emptied), keep=True)  # 5, 6
    if len(b.state.registry.marked) > MARKED_LIMIT:
        unmark(b)


def _vector_ids(rid: str, prev: Mapping[str, Any] | None) -> list[str]:
    """The vector record ids the item record ``prev`` names, other than its own record."""
    if prev is None or record_format.in_vectors(prev):
        return []
    return record_format.vector_ids(rid, prev)


def _entry_key(rid: str, prev: Mapping[str, Any] | None) -> str | None:
    if prev is None or not record_format.n_vectors(prev):
        return None
    return record_format.entry_key(rid, record_format.vector_tag(prev))


def _register(b: Backend, w: _Writes) -> dict[Namespace, NamespaceInfo]:
    """Give every namespace receiving items a registry record covering their expiry and flags;
    return each one's new info (new version)."""
    expiries = w.expiries
    if not expiries:
        return {}
    known = b.known(list(expiries))
    with b.state.lock:
        kept = {ns: info for ns in expiries if (info := b.state.registry.empty.get(ns))}
    out: dict[Namespace, NamespaceInfo] = {}
    changed: dict[Namespace, NamespaceInfo] = {}
    for ns, exp in expiries.items():
        old = known.get(ns)
        held = old if old is not None else kept.get(ns)  # the record Chroma holds
        info = NamespaceInfo(
            uuid.uuid4().hex,
            max(exp, old.expires) if old is not None else exp,
            ns in w.unindexed or (held.unindexed if held is not None else False),
            ns in w.item_records or (held.item_records if held is not None else False),
            held is not None and held.kept,
        )
        out[ns] = info
        if held is None or dataclasses.replace(held, version=info.version) != info:
            # (An embedded store skips unchanged records: only it reads versions, and a registry
            # upsert is a large share of a single put's time.)
            changed[ns] = info
    b.gateway.upsert_registry(*records(changed))
    return out


def _settle(
    b: Backend, namespaces: Sequence[Namespace], change: Commit, *, keep: bool = False
) -> tuple[dict[Namespace, NamespaceInfo], set[Namespace]]:
    """After deletes (or a shortened expiry): remove the registry records of empty namespaces
    (``keep``: an embedded store keeps them, marked), recompute the others' latest expiry.
    Returns the new infos and the namespaces removed. ``change``: the uncommitted write."""
    gw = b.gateway
    known = b.known(list(namespaces))
    infos: dict[Namespace, NamespaceInfo] = {}
    removed: set[Namespace] = set()
    for ns in namespaces:
        expires = None if b.state.empty_after(ns, change) else gw.latest_expiry(ns)
        old = known.get(ns)
        if expires is None and keep and not b.shared:
            # Only this process writes here: the record is kept (marked once) for a later put.
            if old is not None:
                change.kept[ns] = dataclasses.replace(old, version=uuid.uuid4().hex, kept=True)
                if not old.kept:
                    gw.upsert_registry(*records({ns: change.kept[ns]}))
            removed.add(ns)
            continue
        if expires is None:
            gw.delete_registry([record_id(ns)])
            # On a server another process may have put an item into it since the check:
            # look again after the removal, and register it again if so.
            expires = gw.latest_expiry(ns) if b.shared else None
            if expires is None:
                removed.add(ns)
                continue
        info = (
            dataclasses.replace(old, version=uuid.uuid4().hex, expires=expires)
            if old is not None
            else NamespaceInfo(uuid.uuid4().hex, expires)
        )
        gw.upsert_registry(*records({ns: info}))
        infos[ns] = info
    return infos, removed


def _finish(b: Backend, commit: Commit, emptied: list[Namespace], *, keep: bool = False) -> None:
    """Steps 5 and 6 of the module docstring for namespaces that may be ``emptied`` (or whose
    latest expiry may have gone down), then the commit."""
    infos, commit.removed = _settle(b, emptied, commit, keep=keep)
    commit.registry.update(infos)
    _bump(b, commit.registry)
    b.state.commit(commit)


def _bump(b: Backend, infos: Mapping[Namespace, NamespaceInfo]) -> None:
    """On a server: give every written namespace a new version after its data, so other
    processes' caches reload (keeping what another process raised or flagged meanwhile)."""
    if not b.shared or not infos:
        return
    current = b.known(list(infos))
    bumped = dict(infos)
    for ns, info in infos.items():
        now = current.get(ns)
        if now is not None:
            bumped[ns] = dataclasses.replace(
                info,
                expires=max(info.expires, now.expires),
                unindexed=info.unindexed or now.unindexed,
                item_records=info.item_records or now.item_records,
            )
    b.gateway.upsert_registry(*records(bumped))


MARKED_LIMIT = 1000
"""Marked registry records an embedded store lets stand before it unmarks them: a store that
finds them after a kill checks each namespace for items (two reads)."""


def unmark(b: Backend) -> None:
    """Delete the records an embedded store keeps for empty namespaces and unmark the others
    (before it lets its folder go, or past :data:`MARKED_LIMIT`)."""
    if b.shared or (b.folder is not None and not b.folder.writing):
        return
    with b.state.write_lock:
        with b.state.lock:
            mirror = b.state.registry
            empty = list(mirror.empty)
            plain = {
                ns: dataclasses.replace(info, kept=False)
                for ns in mirror.marked
                if (info := mirror.get(ns)) is not None
            }
        if not empty and not plain:
            return
        b.gateway.delete_registry([record_id(ns) for ns in empty])
        b.gateway.upsert_registry(*records(plain))
        b.state.commit(Commit(registry=dict(plain), removed=set(empty)))


def refresh_ttl(b: Backend, refresh: Mapping[str, tuple[Namespace, float, bool]]) -> None:
    """Move the expiry of items read with ``refresh_ttl`` (id -> (namespace, expiry, own))."""
    ids = list(refresh)
    with b.state.write_lock:
        b.claim_for_writing()
        b.gateway.update_items(
            ids, [{"_expires": refresh[r][1]} for r in ids], [refresh[r][2] for r in ids]
        )
        latest: dict[Namespace, float] = {}
        for ns, exp, _ in refresh.values():
            latest[ns] = max(exp, latest.get(ns, 0.0))
        known = b.known(list(latest))
        raised = {
            ns: dataclasses.replace(old, expires=exp)
            for ns, exp in latest.items()
            if (old := known.get(ns)) is not None and exp > old.expires
        }
        b.gateway.upsert_registry(*records(raised))
        commit = Commit(registry=raised if not b.shared else {})
        for rid, (ns, expires, _) in refresh.items():
            commit.namespaces[rid] = ns
            commit.patches[rid] = {"_expires": expires}
        b.state.commit(commit)


def sweep(b: Backend, now: float) -> int:
    """Delete expired items with their vectors and lexical entries; return how many."""
    with b.state.write_lock:
        b.check_readable()
        cutoff = record_format.expiry_cutoff(now)
        got = b.gateway.read_items({"_expires": {"$lt": cutoff}})
        if not got:
            return 0
        b.claim_for_writing()
        # Delete only what is still expired: on a server another process may have put or
        # refreshed an item since it was read, and that item (and its vectors) must stay.
        b.gateway.delete_items([rid for rid, _ in got], where={"_expires": {"$lt": cutoff}})
        kept = b.gateway.existing_items([rid for rid, _ in got]) if b.shared else set()
        got = [(rid, meta) for rid, meta in got if rid not in kept]
        ids = [rid for rid, _ in got]
        b.gateway.delete_vectors([vid for rid, meta in got for vid in _vector_ids(rid, meta)])
        commit = Commit(deleted_any=True)
        for rid, meta in got:
            ns = record_format.ns_from_str(str(meta["_ns"]))
            commit.items[rid] = None
            commit.namespaces[rid] = ns
            commit.old_keys[rid] = _entry_key(rid, meta)
            commit.vectors.setdefault(ns, {})[rid] = []
        _finish(b, commit, list(dict.fromkeys(commit.namespaces.values())))
    return len(ids)


def restore_times(
    b: Backend,
    times: Mapping[tuple[Namespace, str], tuple[float, float, float | None]],
) -> int:
    """Set (created, updated, expiry) epoch seconds of existing items (expiry None: kept);
    return how many exist."""
    with b.state.write_lock:
        b.claim_for_writing()
        ids = {record_format.item_id(ns, key): (ns, key) for ns, key in times}
        old = b.fetch(list(ids))
        commit = Commit()
        given: dict[str, dict[str, Any]] = {}
        changed: dict[Namespace, None] = {}
        for rid, (ns, key) in ids.items():
            if rid not in old:
                continue
            created, updated, expires = times[(ns, key)]
            patch: dict[str, Any] = {
                "_created": record_format.to_micros(created),
                "_updated": record_format.to_micros(updated),
            }
            if expires is not None:
                patch["_expires"] = float(expires)
                changed[ns] = None
            given[rid], commit.items[rid] = record_format.patched(old[rid], patch)
            commit.namespaces[rid] = ns
        rids = list(given)
        b.gateway.update_items(
            rids, list(given.values()), [record_format.in_vectors(old[rid]) for rid in rids]
        )
        _finish(b, commit, list(changed))
    return len(rids)
