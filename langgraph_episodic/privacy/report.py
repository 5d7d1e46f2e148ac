"""What a forget deleted (:class:`ForgetReport`), and the in-process listeners told about it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._types import Namespace
from .purge import Purge

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ForgetReport:
    """What :func:`forget_user` deleted.

    ``deleted`` pairs each namespace with the number of items deleted from it (sorted by
    namespace); ``thread_ids`` are the deleted checkpoint threads (empty without a checkpointer).
    """

    user_id: str
    deleted: tuple[tuple[Namespace, int], ...]
    thread_ids: tuple[str, ...]
    purges: tuple[Purge, ...] = ()
    """What was purged from the files (store folder, checkpoint file), or what could not be."""
    dry_run: bool = False
    """True: nothing was deleted; ``deleted``, ``thread_ids`` and ``orphan_vectors`` are what
    would be."""
    orphan_vectors: int = 0
    """Vector records of the user whose item was gone already (a crash leaves them, see
    ``ChromaStore.verify``), deleted with the rest; not counted in ``deleted``."""

    @property
    def purged(self) -> bool:
        """Whether every storage reported its files free of deleted data (False without a
        purge, e.g. ``purge=False`` or a dry run)."""
        return bool(self.purges) and all(p.purged for p in self.purges)

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
            "purged": self.purged,
            "purges": [p.to_dict() for p in self.purges],
            "dry_run": self.dry_run,
            "orphan_vectors": self.orphan_vectors,
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


def notify(report: ForgetReport) -> None:
    with _listeners_lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(report)
        except Exception:  # one broken cache must not hide that the data is gone
            logger.exception("a forget listener failed; the data was deleted anyway")
