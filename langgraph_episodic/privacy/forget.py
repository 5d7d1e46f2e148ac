"""Forget a user: delete their store namespaces and checkpoint threads, then purge the files.

:func:`forget_user` deletes every item of each namespace that has the user's label *at the
user's place* of a namespace shape (:mod:`.shapes`), the user's checkpoint threads
(``"<user_id>:<session>"``), then purges the files (:mod:`.purge`), so no copy is left in a
write-ahead log, free database pages or the checkpoint file. It uses only the ``BaseStore`` API
(a store with a TTL sweeper is swept first, so expired items still on disk go too), plus, on a
``ChromaStore``, the raw records a crash left that no listing reaches.

The label is :func:`~langgraph_episodic._config.namespace_label` of the user id and matches whole:
forgetting ``"alice"`` never touches ``"alice2"``, ``"ａlice"``, a ``"*"`` label, or
``("working_memory", "bob", "alice")``. A user id that is also a namespace kind of this library
is refused when a shape puts the user first (:data:`PROTECTED_LABELS`).

Sync and async share one plan (:mod:`langgraph_episodic._effects`). In-process caches of user data
subscribe with :func:`on_forget` and drop what they hold about ``report.user_id``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import (
    BaseStore,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
)

from .._config import namespace_label
from .._effects import Effect, Plan, call, twins
from .._keylock import arun_locked, formation_key, run_locked
from .._types import Namespace
from .._user_threads import adelete_user_threads, delete_user_threads, user_thread_ids
from ..errors import InvalidValueError, OperationError
from .purge import Purge, apurge_checkpoints, purge_checkpoints, purge_store
from .report import ForgetReport, notify
from .shapes import (
    DEFAULT_SHAPES,
    PROTECTED_LABELS,
    USER,
    Shape,
    check_shapes,
    fill,
    matches,
    user_label,
)

if TYPE_CHECKING:
    from ..chroma import RawRecords

logger = logging.getLogger(__name__)

PAGE_SIZE = 500
"""Namespaces listed and items deleted per store round trip."""

Purging = bool | Literal["defer"]
"""``True``: purge the files, rebuilding vector indexes that hold deleted vectors; ``"defer"``:
purge the rest, leave the rebuilds to a later :func:`~.purge.purge_store`; ``False``: none."""

Scan = Literal["store", "user"]
"""Where a dry run looks for a crash's leftovers of the user: ``"store"`` reads the raw
collections whole (it finds every leftover, and takes longer the larger the store);
``"user"`` reads only the user's namespaces of the kinds the registry or this library knows
(its time grows with the user; a lost namespace of a kind nobody else has is not seen). Forgetting
itself always reads the collections whole."""


def _batch(store: BaseStore, ops: list[Op]) -> Effect:
    return Effect(store.batch, store.abatch, (ops,))


def _threaded(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Effect:
    """An effect calling ``function``, in a worker thread when run async."""
    return Effect(function, functools.partial(asyncio.to_thread, function), args, kwargs)


def _paged(store: BaseStore, op: Callable[[Any, int], Op], keys: Iterable[Any]) -> Plan[list[Any]]:
    """Every result of ``op(key, offset)`` for each of ``keys``, page by page, a batch a round."""
    found: list[Any] = []
    offsets = dict.fromkeys(keys, 0)
    while offsets:
        pages = yield _batch(store, [op(key, offset) for key, offset in offsets.items()])
        found.extend(result for page in pages for result in page)
        offsets = {key: offset + PAGE_SIZE
                   for (key, offset), page in zip(offsets.items(), pages, strict=True)
                   if len(page) >= PAGE_SIZE}
    return found


def _roots(namespaces: Iterable[Namespace]) -> list[Namespace]:
    """The namespaces not under another one of the set (a prefix search covers the rest)."""
    roots: list[Namespace] = []
    for ns in sorted(set(namespaces), key=len):
        if not any(ns[: len(r)] == r for r in roots):
            roots.append(ns)
    return roots


def _delete_items(
    store: BaseStore, label: str, shapes: Sequence[Shape], roots: Sequence[Namespace]
) -> Plan[Counter[Namespace]]:
    """Delete every item under ``roots``, page by page; return items deleted per namespace."""
    counts: Counter[Namespace] = Counter()
    previous: set[tuple[Namespace, str]] = set()
    while roots:
        searches: list[Op] = [
            SearchOp(namespace_prefix=ns, limit=PAGE_SIZE, refresh_ttl=False) for ns in roots
        ]
        pages = yield _batch(store, searches)
        batch = {(tuple(item.namespace), item.key): None for page in pages for item in page
                 if matches(tuple(item.namespace), shapes, label)}
        if not batch:
            break
        if set(batch) == previous:
            raise OperationError(
                f"{type(store).__name__} still returns {len(batch)} items after deleting them; "
                "its deletes (put(namespace, key, None)) do not take effect."
            )
        previous = set(batch)
        yield _batch(store, [PutOp(ns, key, None) for ns, key in batch])
        counts.update(ns for ns, _ in batch)
        roots = [ns for ns, page in zip(roots, pages, strict=True) if len(page) >= PAGE_SIZE]
    return counts


def _known_labels(store: BaseStore, prefix: Namespace) -> set[str]:
    """The labels that follow ``prefix`` in the store's namespace registry (paged)."""
    labels: set[str] = set()
    offset = 0
    while True:
        page = store.list_namespaces(
            prefix=prefix or None, max_depth=len(prefix) + 1, limit=PAGE_SIZE, offset=offset
        )
        labels.update(ns[len(prefix)] for ns in page if len(ns) > len(prefix))
        if len(page) < PAGE_SIZE:
            return labels
        offset += PAGE_SIZE


def _user_prefixes(store: BaseStore, shape: Shape, label: str) -> list[Namespace]:
    """Every namespace prefix ending in the user's label that ``shape`` allows, each ``"*"``
    filled with the labels the registry knows there (first place: also :data:`PROTECTED_LABELS`)."""
    prefixes: list[Namespace] = [()]
    for place, part in enumerate(fill(shape, label)[: shape.index(USER) + 1]):
        if part != "*":
            prefixes = [(*p, part) for p in prefixes]
            continue
        grown: list[Namespace] = []
        for p in prefixes:
            known = _known_labels(store, p) | (set(PROTECTED_LABELS) if place == 0 else set())
            grown.extend((*p, other) for other in sorted(known) if other != "*")
        prefixes = grown
    return prefixes


def _raw_records(
    store: BaseStore, label: str, shapes: Sequence[Shape], scoped: bool = False
) -> RawRecords | None:
    """The user's records no namespace listing reaches (``ChromaStore.raw_records``: items of
    namespaces the registry lost, vector records whose item a crash removed); None for other
    stores. ``scoped`` (a dry run) reads only the user's namespaces of known kinds (:data:`Scan`)."""
    scan = getattr(store, "raw_records", None)
    if not callable(scan):
        return None
    prefixes = None  # (a superset of the user's namespaces: exact matching follows)
    if scoped:
        prefixes = [prefix for shape in shapes for prefix in _user_prefixes(store, shape, label)]
    found: RawRecords = scan(lambda ns: matches(ns, shapes, label), prefixes=prefixes)
    return found


def _delete_vector_records(store: Any, ids: Sequence[str]) -> None:
    """On a store with ``raw_records`` (a ``ChromaStore``, maybe wrapped)."""
    if ids:
        store.delete_vector_records(ids)
    store.drop_empty_namespaces()  # (a ChromaStore keeps the records of namespaces it emptied)


def _delete_leftovers(
    store: BaseStore, label: str, shapes: Sequence[Shape]
) -> Plan[tuple[dict[Namespace, int], int]]:
    """Delete what :func:`_raw_records` finds: items through the store (its caches follow),
    then the user's remaining vector records; return items per namespace, vector records."""
    found = yield _threaded(_raw_records, store, label, shapes)
    if found is None:
        return {}, 0
    if found.items:
        yield _batch(store, [PutOp(ns, key, None) for ns, key in found.items])
    counts = Counter(ns for ns, _key in found.items)
    found = yield _threaded(_raw_records, store, label, shapes)
    vector_ids = list(found.vector_ids)
    yield _threaded(_delete_vector_records, store, vector_ids)
    return counts, len(vector_ids)


def _forget_plan(
    user_id: str, store: BaseStore | None, checkpointer: BaseCheckpointSaver[Any] | None,
    shapes: Sequence[Shape], protected: Collection[str], purge: Purging, dry_run: bool, scan: Scan,
) -> Plan[ForgetReport]:
    shapes = check_shapes(shapes)
    label = user_label(user_id, shapes, protected)
    if store is None and checkpointer is None:
        raise InvalidValueError(
            "Pass store=..., checkpointer=... or both: there is nothing to forget in."
        )
    counts: Counter[Namespace] = Counter()
    orphan_vectors = 0
    purges: list[Purge] = []
    if store is not None:
        sweep, asweep = getattr(store, "sweep_ttl", None), getattr(store, "asweep_ttl", None)
        if callable(sweep) and not dry_run:
            yield Effect(sweep, asweep) if callable(asweep) else _threaded(sweep)
        # "*" in a listing is a wildcard, a superset: keep exact matches only.
        listing = yield from _paged(store, lambda shape, offset: ListNamespacesOp(
            (MatchCondition("prefix", fill(shape, label)),), limit=PAGE_SIZE, offset=offset,
        ), shapes)
        roots = _roots(tuple(ns) for ns in listing if matches(tuple(ns), shapes, label))
        if dry_run:
            items = yield from _paged(store, lambda root, offset: SearchOp(
                root, limit=PAGE_SIZE, offset=offset, refresh_ttl=False), roots)
            listed = {(tuple(i.namespace), i.key) for i in items
                      if matches(tuple(i.namespace), shapes, label)}
            counts.update(ns for ns, _key in listed)
            # What the leftovers' deletion would take beside the listed items:
            found = yield _threaded(_raw_records, store, label, shapes, scan == "user")
            if found is not None:
                counts.update(ns for ns, key in found.items if (ns, key) not in listed)
                orphan_vectors = len(found.vector_ids_outside((*listed, *found.items)))
        else:
            counts = yield from _delete_items(store, label, shapes, roots)
            leftovers, orphan_vectors = yield from _delete_leftovers(store, label, shapes)
            counts.update(leftovers)
        if purge and not dry_run:
            purges.append((yield _threaded(purge_store, store, rebuild=purge != "defer")))
    thread_ids: list[str] = []
    if checkpointer is not None:
        thread_ids = yield (user_thread_ids(checkpointer, user_id) if dry_run else
                            call(delete_user_threads, adelete_user_threads, checkpointer, user_id))
        if purge and not dry_run:
            purges.append((yield call(purge_checkpoints, apurge_checkpoints, checkpointer)))
    report = ForgetReport(
        user_id=user_id, deleted=tuple(sorted(counts.items())),
        thread_ids=tuple(sorted(thread_ids)), purges=tuple(purges), dry_run=dry_run,
        orphan_vectors=orphan_vectors,
    )
    if dry_run:
        return report
    logger.info("forgot a user: %d items in %d namespaces, %d threads; files purged: %s",
                report.items_deleted, len(report.deleted), len(report.thread_ids), report.purged)
    notify(report)
    return report


def _forget_user(
    user_id: str,
    *,
    store: BaseStore | None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    shapes: Sequence[Shape] = DEFAULT_SHAPES,
    purge: Purging = True,
    dry_run: bool = False,
    protected_labels: Collection[str] = PROTECTED_LABELS,
    scan: Scan = "store",
) -> Plan[ForgetReport]:
    """Delete everything stored about ``user_id``, purge it from the files; return what was done.

    Deletes every item of every store namespace that matches one of ``shapes`` with the user's
    label in the user's place (by default ``(kind, user, ...)``, every namespace this library
    writes) and, with a ``checkpointer``, every thread ``"<user_id>:<session>"``.

    With ``purge=True`` (the default) the files are purged afterwards (:func:`.purge_store`,
    :func:`.purge_checkpoints`; the store stays usable while vector indexes are rebuilt);
    ``report.purges`` says what was purged and what could not be (a Chroma server, Postgres:
    ``docs/privacy.md``). ``purge="defer"`` skips the rebuilds (``report.purged`` is then False
    until ``purge_store(store)`` or ``langgraph-episodic purge`` runs, e.g. nightly). A second
    run reports nothing. Writes made concurrently for the same user may survive; stop the
    user's sessions first.
    Deferred formation in this process (:mod:`langgraph_episodic.formation`) is held off while
    it runs, and a batch read before it writes nothing afterwards.
    ``dry_run=True`` deletes nothing and reports what would go; ``scan="user"`` bounds its
    search for crash leftovers to the user's known namespaces (:data:`Scan`), as the inspector's
    preview does.

    Raises:
        ValueError: an empty user id, a malformed shape, or a user id listed in
            ``protected_labels`` when a shape puts the user first.

    >>> from langgraph.store.memory import InMemoryStore
    >>> store = InMemoryStore()
    >>> store.put(("memories", "alice"), "m1", {"text": "likes tea"})
    >>> store.put(("memories", "alice2"), "m1", {"text": "likes coffee"})
    >>> store.put(("working_memory", "bob", "alice"), "t1", {"text": "bob's session 'alice'"})
    >>> report = forget_user("alice", store=store)
    >>> report.namespaces, report.items_deleted
    ((('memories', 'alice'),), 1)
    >>> store.get(("memories", "alice2"), "m1").value
    {'text': 'likes coffee'}
    """
    plan = functools.partial(_forget_plan, user_id, store, checkpointer, shapes,
                             protected_labels, purge, dry_run, scan)
    if dry_run or not isinstance(user_id, str) or not user_id.strip():
        return (yield from plan())
    # Deferred formation of this user writes nothing meanwhile.
    report: ForgetReport = yield call(
        run_locked, arun_locked, formation_key(namespace_label(user_id)), plan)
    return report


forget_user, aforget_user = twins(_forget_user, "forget_user")
