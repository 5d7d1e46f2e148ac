"""Forget a user: delete every store namespace and every checkpoint thread that belongs to them.

:func:`forget_user` finds each namespace that has the user's label as one of its labels (in any
position: ``("memories", uid)``, ``("episodes", uid)``, ``("working_memory", uid, "s1")``,
``(uid, "notes")``), deletes all its items, and deletes the user's checkpoint threads
(``"<user_id>:<session>"``, see :func:`langgraph_episodic.graph.threads.thread_id_for`). It uses
only the ``BaseStore`` API, so it works on any LangGraph store; a store with a TTL sweeper is
swept first, so items that have expired but are still on disk go too.

The user's label is :func:`~langgraph_episodic._config.namespace_label` of the user id, the
encoding every helper of this library uses (``"a.b@x.org"`` is stored as ``"a%2Eb@x%2Eorg"``).
Labels match whole and exactly: forgetting ``"alice"`` never touches ``"alice2"``, ``"ａlice"``
or a namespace whose label is the wildcard ``"*"``. A user id that is also a namespace kind of
this library (``"memories"``, ``"episodes"`` ...) is refused, because it would match every
user's namespaces of that kind; see :data:`PROTECTED_LABELS`.

Sync and async share one plan (a generator of effects); :func:`aforget_user` is the async twin.

Objects that cache user data in process (say, a per-user memory with a short-term window) can
subscribe with :func:`on_forget`; each listener gets the :class:`ForgetReport` after the data is
deleted and should drop what it holds about ``report.user_id``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import (
    BaseStore,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchItem,
    SearchOp,
)

from .._config import namespace_label
from .._effects import Effect, Plan, arun, run

logger = logging.getLogger(__name__)

Namespace = tuple[str, ...]
T = TypeVar("T")

PAGE_SIZE = 500
"""Namespaces listed and items deleted per store round trip."""

POSITIONS_PER_ROUND = 8
"""Label positions probed per listing batch (deeper namespaces take more batches)."""

PROTECTED_LABELS: frozenset[str] = frozenset(
    {"memories", "episodes", "entities", "user_profiles", "working_memory", "output_log", "langgraph"}
)
"""The first labels of this library's per-user namespaces (the tools' ``"memories"`` and
``graph.namespaces.USER_LABELS``). A user whose label is one of them cannot be forgotten by label
match: it would delete that kind for every user. Pass ``protected_labels=`` to change."""


@dataclass(frozen=True)
class ForgetReport:
    """What :func:`forget_user` deleted.

    ``deleted`` pairs each namespace with the number of items deleted from it (sorted by
    namespace); ``thread_ids`` are the deleted checkpoint threads (empty without a checkpointer).
    """

    user_id: str
    deleted: tuple[tuple[Namespace, int], ...]
    thread_ids: tuple[str, ...]

    @property
    def namespaces(self) -> tuple[Namespace, ...]:
        """The namespaces items were deleted from."""
        return tuple(ns for ns, _ in self.deleted)

    @property
    def items_deleted(self) -> int:
        """Total number of store items deleted."""
        return sum(n for _, n in self.deleted)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe summary (namespaces as lists), e.g. for an audit log."""
        return {
            "user_id": self.user_id,
            "deleted": [{"namespace": list(ns), "items": n} for ns, n in self.deleted],
            "thread_ids": list(self.thread_ids),
            "items_deleted": self.items_deleted,
        }


# --- listeners: in-process caches that must drop a forgotten user ----------------------------

ForgetListener = Callable[[ForgetReport], None]
_listeners: list[ForgetListener] = []
_listeners_lock = threading.Lock()


def on_forget(listener: ForgetListener) -> Callable[[], None]:
    """Call ``listener(report)`` after every :func:`forget_user` in this process.

    Returns a function that unsubscribes it. A listener that raises is logged and skipped; the
    data is deleted either way. Listeners run in the thread (or event loop) that forgets.
    """
    with _listeners_lock:
        _listeners.append(listener)

    def unsubscribe() -> None:
        with _listeners_lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return unsubscribe


def _notify(report: ForgetReport) -> None:
    with _listeners_lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(report)
        except Exception:  # one broken cache must not hide that the data is gone
            logger.exception("a forget listener failed; the data was deleted anyway")


def _batch(store: BaseStore, ops: list[Op]) -> Effect:
    return Effect(store.batch, store.abatch, (ops,))


# --- the plan ----------------------------------------------------------------------------------


def _user_label(user_id: Any, protected: Collection[str]) -> str:
    """The user's namespace label, refusing ids that would match other users' namespaces."""
    if not isinstance(user_id, str) or not user_id:
        raise ValueError(f"user_id must be a non-empty string, got {user_id!r}.")
    label = namespace_label(user_id)
    if label in protected:
        raise ValueError(
            f"Refusing to forget user {user_id!r}: it is also a namespace kind, so every "
            f"namespace like ({label!r}, <other user>) would match. Rename the user, or pass "
            "protected_labels=... without it if your namespaces never use it as a kind."
        )
    return label


def _sweep(store: BaseStore) -> Effect | None:
    """An effect running the store's TTL sweep, or None when it has none."""
    sweep = getattr(store, "sweep_ttl", None)
    if not callable(sweep):
        return None
    asweep = getattr(store, "asweep_ttl", None)
    if not callable(asweep):

        async def asweep() -> Any:
            return await asyncio.to_thread(sweep)

    return Effect(sweep, asweep)


def _listing(position: int, label: str, offset: int) -> ListNamespacesOp:
    path = ("*",) * position + (label,)
    return ListNamespacesOp(
        match_conditions=(MatchCondition(match_type="prefix", path=path),),
        limit=PAGE_SIZE,
        offset=offset,
    )


def _deeper_probe(position: int) -> ListNamespacesOp:
    """Lists one namespace with more than ``position`` labels, if any exists."""
    path = ("*",) * (position + 1)
    return ListNamespacesOp(
        match_conditions=(MatchCondition(match_type="prefix", path=path),), limit=1
    )


def _find_namespaces(store: BaseStore, label: str) -> Plan[set[Namespace]]:
    """Every namespace with ``label`` as one of its labels, found with ``*``-wildcard listings."""
    found: set[Namespace] = set()
    start = 0
    while True:
        positions = range(start, start + POSITIONS_PER_ROUND)
        offsets = dict.fromkeys(positions, 0)
        more_depth = False
        while offsets:
            ops: list[Op] = [_listing(p, label, off) for p, off in offsets.items()]
            ops.append(_deeper_probe(positions[-1] + 1))
            results = yield _batch(store, ops)
            more_depth = bool(results[-1])
            for (p, off), page in zip(list(offsets.items()), results[:-1], strict=True):
                # Wildcards are a superset: keep labels equal to the user's, exactly.
                found.update(tuple(ns) for ns in page if len(ns) > p and ns[p] == label)
                if len(page) < PAGE_SIZE:
                    del offsets[p]
                else:
                    offsets[p] = off + PAGE_SIZE
        if not more_depth:
            return found
        start += POSITIONS_PER_ROUND


def _roots(namespaces: Iterable[Namespace]) -> list[Namespace]:
    """The namespaces not under another one of the set (a prefix search covers the rest)."""
    ordered = sorted(set(namespaces), key=len)
    roots: list[Namespace] = []
    for ns in ordered:
        if not any(ns[: len(r)] == r for r in roots):
            roots.append(ns)
    return roots


def _owned(item: SearchItem, label: str) -> bool:
    return label in tuple(item.namespace)


def _delete_items(
    store: BaseStore, label: str, roots: Sequence[Namespace]
) -> Plan[dict[Namespace, int]]:
    """Delete every item under ``roots``, page by page; return items deleted per namespace."""
    counts: dict[Namespace, int] = {}
    previous: set[tuple[Namespace, str]] = set()
    while roots:
        searches: list[Op] = [
            SearchOp(namespace_prefix=ns, limit=PAGE_SIZE, refresh_ttl=False) for ns in roots
        ]
        pages = yield _batch(store, searches)
        batch: dict[tuple[Namespace, str], None] = {}
        for page in pages:
            for item in page:
                if _owned(item, label):
                    batch[(tuple(item.namespace), item.key)] = None
        if not batch:
            break
        if set(batch) == previous:
            raise RuntimeError(
                f"{type(store).__name__} still returns {len(batch)} items after deleting them; "
                "its deletes (put(namespace, key, None)) do not take effect."
            )
        previous = set(batch)
        yield _batch(store, [PutOp(ns, key, None) for ns, key in batch])
        for ns, _ in batch:
            counts[ns] = counts.get(ns, 0) + 1
        roots = [ns for ns, page in zip(roots, pages, strict=True) if len(page) >= PAGE_SIZE]
    return counts


def _threads(checkpointer: BaseCheckpointSaver[Any], user_id: str) -> Effect:
    from ..graph.threads import adelete_user_threads, delete_user_threads

    return Effect(delete_user_threads, adelete_user_threads, (checkpointer, user_id))


def _forget_plan(
    user_id: str,
    store: BaseStore | None,
    checkpointer: BaseCheckpointSaver[Any] | None,
    protected: Collection[str],
) -> Plan[ForgetReport]:
    label = _user_label(user_id, protected)
    if store is None and checkpointer is None:
        raise ValueError("Pass store=..., checkpointer=... or both: there is nothing to forget in.")
    counts: dict[Namespace, int] = {}
    if store is not None:
        sweep = _sweep(store)
        if sweep is not None:
            yield sweep
        namespaces = yield from _find_namespaces(store, label)
        counts = yield from _delete_items(store, label, _roots(namespaces))
    thread_ids: list[str] = []
    if checkpointer is not None:
        thread_ids = yield _threads(checkpointer, user_id)
    report = ForgetReport(
        user_id=user_id,
        deleted=tuple(sorted(counts.items())),
        thread_ids=tuple(sorted(thread_ids)),
    )
    logger.info(
        "forgot a user: %d items in %d namespaces, %d threads",
        report.items_deleted,
        len(report.deleted),
        len(report.thread_ids),
    )
    _notify(report)
    return report


def forget_user(
    user_id: str,
    *,
    store: BaseStore | None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    protected_labels: Collection[str] = PROTECTED_LABELS,
) -> ForgetReport:
    """Delete everything stored about ``user_id``; return what was deleted.

    Deletes every item of every store namespace that has the user's label (the user id as the
    library's helpers store it, see :func:`~langgraph_episodic._config.namespace_label`) as a
    whole label, and,
    with a ``checkpointer``, every thread ``"<user_id>:<session>"`` (all checkpoints and
    pending writes). Run it again to make sure: a second run reports nothing. Writes made
    concurrently for the same user may survive; stop the user's sessions first.

    Raises:
        ValueError: an empty user id, or one listed in ``protected_labels``.

    >>> from langgraph.store.memory import InMemoryStore
    >>> store = InMemoryStore()
    >>> store.put(("memories", "alice"), "m1", {"text": "likes tea"})
    >>> store.put(("memories", "alice2"), "m1", {"text": "likes coffee"})
    >>> report = forget_user("alice", store=store)
    >>> report.namespaces, report.items_deleted
    ((('memories', 'alice'),), 1)
    >>> store.get(("memories", "alice2"), "m1").value
    {'text': 'likes coffee'}
    """
    return run(_forget_plan(user_id, store, checkpointer, protected_labels))


async def aforget_user(
    user_id: str,
    *,
    store: BaseStore | None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    protected_labels: Collection[str] = PROTECTED_LABELS,
) -> ForgetReport:
    """Async version of :func:`forget_user`."""
    return await arun(_forget_plan(user_id, store, checkpointer, protected_labels))
