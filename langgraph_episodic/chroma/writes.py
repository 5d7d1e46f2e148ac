"""The write side of ``ChromaStore``: puts, deletes, TTL refreshes and sweeps.

A put writes its vector records first, then drops vectors the new value no longer has, then
upserts the item record, so a reader never sees an item whose vectors are missing. Chroma merges
metadata on upsert, so keys an item no longer has are cleared explicitly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import layout
from .backend import Backend, Namespace
from .core import Plan

Change = list[tuple[str, str, Sequence[float]]]
"""An item's new (vector id, text, vector) rows; empty when it was deleted."""


def apply_puts(
    b: Backend, plan: Plan, doc_vectors: Mapping[str, Sequence[float]], now: float
) -> None:
    """Apply the batch's puts and deletes (last write wins per key, already deduplicated)."""
    puts = list(plan.puts.values())
    ids = [layout.item_id(p.op.namespace, p.op.key) for p in puts]
    now_us = layout.to_micros(now)
    with b.lock:
        old = b.fetch(ids)
        vec_ids: list[str] = []
        vec_embs: list[Sequence[float]] = []
        vec_metas: list[dict[str, Any]] = []
        vec_docs: list[str] = []
        stale_vecs: list[str] = []
        item_ids: list[str] = []
        item_metas: list[dict[str, Any]] = []
        deleted: list[str] = []
        expiries: dict[Namespace, float] = {}
        unindexed: set[Namespace] = set()
        emptied: list[Namespace] = []
        changes: dict[Namespace, dict[str, Change]] = {}
        listed: dict[Namespace, dict[str, dict[str, Any] | None]] = {}
        for p, rid in zip(puts, ids, strict=True):
            op, prev = p.op, old.get(rid)
            n_old = int(prev.get("_nvec", 0)) if prev else 0
            if op.value is None:
                if prev is not None:
                    deleted.append(rid)
                    stale_vecs.extend(layout.vector_id(rid, j) for j in range(n_old))
                    emptied.append(op.namespace)
                    changes.setdefault(op.namespace, {})[rid] = []
                    listed.setdefault(op.namespace, {})[rid] = None
                continue
            rows: Change = []
            for j, (path, text) in enumerate(p.texts):
                vid = layout.vector_id(rid, j)
                vec_ids.append(vid)
                vec_embs.append(doc_vectors[text])
                vec_metas.append(layout.vector_metadata(op.namespace, rid, path))
                vec_docs.append(text)
                rows.append((vid, text, doc_vectors[text]))
            changes.setdefault(op.namespace, {})[rid] = rows
            stale_vecs.extend(layout.vector_id(rid, j) for j in range(len(p.texts), n_old))
            alive = prev is not None and float(prev["_expires"]) >= now
            expires = layout.NO_EXPIRY if op.ttl is None else now + float(op.ttl) * 60.0
            meta = layout.item_metadata(
                op.namespace,
                op.key,
                op.value,
                created_us=int(prev["_created"]) if prev is not None and alive else now_us,
                updated_us=now_us,
                expires_at=expires,
                ttl=op.ttl,
                n_vectors=len(p.texts),
            )
            item_ids.append(rid)
            item_metas.append(layout.clear_stale(meta, prev))
            listed.setdefault(op.namespace, {})[rid] = meta
            expiries[op.namespace] = max(expires, expiries.get(op.namespace, 0.0))
            if not p.texts:
                unindexed.add(op.namespace)
        _write(b, vec_ids, vec_embs, vec_metas, vec_docs, stale_vecs, item_ids, item_metas)
        for rid, meta in zip(item_ids, item_metas, strict=True):
            b.remember(rid, meta)
        if deleted:
            b.chunked(b.items.delete, deleted)
            for rid in deleted:
                b.remember(rid, None)
        versions = b.registry.touch(expiries, unindexed=unindexed)
        settle = [ns for ns in dict.fromkeys(emptied)]
        versions.update(b.settle(settle) if settle else {})
        b.apply_to_caches(changes, versions)
        b.update_scans(listed, versions)


def _write(
    b: Backend,
    vec_ids: list[str],
    vec_embs: list[Sequence[float]],
    vec_metas: list[dict[str, Any]],
    vec_docs: list[str],
    stale_vecs: list[str],
    item_ids: list[str],
    item_metas: list[dict[str, Any]],
) -> None:
    step = b.max_batch
    for s in range(0, len(vec_ids), step):
        b.vectors.upsert(
            ids=vec_ids[s : s + step],
            embeddings=[list(v) for v in vec_embs[s : s + step]],
            metadatas=vec_metas[s : s + step],
            documents=vec_docs[s : s + step],
        )
    if stale_vecs:
        b.chunked(b.vectors.delete, stale_vecs)
    for s in range(0, len(item_ids), step):
        chunk = item_ids[s : s + step]
        b.items.upsert(
            ids=chunk,
            embeddings=[[layout.placeholder(r)] for r in chunk],
            metadatas=item_metas[s : s + step],
        )


def refresh_ttl(b: Backend, refresh: Mapping[str, tuple[Namespace, float]]) -> None:
    """Move the expiry of items read with ``refresh_ttl`` (record id -> (namespace, expiry))."""
    ids = list(refresh)
    with b.lock:
        for s in range(0, len(ids), b.max_batch):
            chunk = ids[s : s + b.max_batch]
            b.items.update(ids=chunk, metadatas=[{"_expires": refresh[r][1]} for r in chunk])
        patches: dict[Namespace, dict[str, dict[str, Any] | None]] = {}
        for rid, (ns, expires) in refresh.items():
            b.set_expiry(rid, expires)
            patches.setdefault(ns, {})[rid] = {"_expires": expires}
        b.update_scans(patches, {})
        latest: dict[Namespace, float] = {}
        for ns, exp in refresh.values():
            latest[ns] = max(exp, latest.get(ns, 0.0))
        b.registry.touch(latest, bump=False)


def sweep(b: Backend, now: float) -> int:
    """Delete expired items with their vectors and lexical entries; return how many."""
    with b.lock:
        got = b.items.get(where={"_expires": {"$lt": now}}, include=["metadatas"])
        ids = list(got["ids"])
        if not ids:
            return 0
        metas = got["metadatas"] or []
        stale = [
            layout.vector_id(rid, j)
            for rid, meta in zip(ids, metas, strict=True)
            for j in range(int(meta.get("_nvec", 0)))
        ]
        if stale:
            b.chunked(b.vectors.delete, stale)
        b.chunked(b.items.delete, ids)
        for rid in ids:
            b.remember(rid, None)
        changes: dict[Namespace, dict[str, Change]] = {}
        for rid, meta in zip(ids, metas, strict=True):
            changes.setdefault(layout.ns_from_str(str(meta["_ns"])), {})[rid] = []
        versions = b.settle(list(changes))
        b.apply_to_caches(changes, versions)
        b.update_scans({ns: dict.fromkeys(per_item) for ns, per_item in changes.items()}, versions)
    return len(ids)


def restore_times(
    b: Backend,
    times: Mapping[tuple[Namespace, str], tuple[float, float, float | None]],
) -> int:
    """Set (created, updated, expiry) epoch seconds of existing items; return how many exist.

    ``None`` as expiry keeps the item's current one. Caches and the registry follow.
    """
    with b.lock:
        ids = {layout.item_id(ns, key): (ns, key) for ns, key in times}
        old = b.fetch(list(ids))
        upd_ids: list[str] = []
        upd_metas: list[dict[str, Any]] = []
        expiries: dict[Namespace, float] = {}
        patches: dict[Namespace, dict[str, dict[str, Any] | None]] = {}
        for rid, (ns, key) in ids.items():
            if rid not in old:
                continue
            created, updated, expires = times[(ns, key)]
            patch: dict[str, Any] = {
                "_created": layout.to_micros(created),
                "_updated": layout.to_micros(updated),
            }
            if expires is not None:
                patch["_expires"] = float(expires)
                expiries[ns] = max(float(expires), expiries.get(ns, 0.0))
            upd_ids.append(rid)
            upd_metas.append(patch)
            b.remember(rid, {**old[rid], **patch})
            patches.setdefault(ns, {})[rid] = patch
        for s in range(0, len(upd_ids), b.max_batch):
            b.items.update(ids=upd_ids[s : s + b.max_batch], metadatas=upd_metas[s : s + b.max_batch])
        versions = b.settle(list(expiries)) if expiries else {}
        b.update_scans(patches, versions)
    return len(upd_ids)
