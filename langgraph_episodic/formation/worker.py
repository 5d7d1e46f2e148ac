"""The background worker of deferred formation: a few threads, fed from the store's queue.

A deferred turn writes its :class:`~.pending.PendingTurn` to the store and calls
:meth:`DeferredFormation.notify`; the turn then returns. The worker thread forms a user's
pending turns once the user has been quiet for ``debounce`` seconds (or the oldest has waited
``max_wait``), all of them in one batch, oldest first (:class:`~.former.Former`), and deletes
them from the queue only after they are formed. ``workers`` threads form different users at
once; a user is formed by one thread at a time, so a user's turns are always formed in the
order they were answered.

When it starts (:meth:`DeferredFormation.bind`, on the first deferred turn or when the store is
known up front) it schedules every user that still has pending turns in the store: what a
killed process left is formed by the next one. :meth:`DeferredFormation.close` forms what is
pending, ignoring the debounce, for up to ``timeout`` seconds, then stops; what it did not
reach stays in the store for the next start.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from .._config import namespace_label
from .._keylock import formation_key, locked
from ..errors import InvalidTypeError, InvalidValueError, OperationError
from . import lease
from .former import Formed, Former
from .pending import pending_turns, pending_users, remove, still_pending

logger = logging.getLogger(__name__)

RETRY_S = (1.0, 60.0)
"""First and longest pause before a user's failed formation is tried again."""
LEASED_ELSEWHERE_S = 0.2
"""Pause before trying a user again whose formation lease another process holds."""


@dataclass
class _Due:
    first: float
    last: float
    failures: int = 0


class DeferredFormation:
    """Forms memory after the turn, in a background thread, from a durable queue.

    Pass one as ``defer=`` to :class:`~langgraph_episodic.EpisodicMemoryMiddleware`,
    :func:`~langgraph_episodic.graph.add_memory_nodes` or
    :func:`~langgraph_episodic.graph.build_memory_graph` (``defer=True`` makes one with the
    defaults and closes it at interpreter exit). One instance serves one store and one
    memory configuration.

    Args:
        debounce: Seconds a user must be quiet before their pending turns are formed, in one
            batch. ``0`` forms at once.
        max_wait: A user who never pauses is formed anyway once their oldest pending turn has
            waited this long.
        close_timeout: Default of :meth:`close`'s ``timeout``.
        workers: Threads forming different users at once (the memory model's calls wait on
            the network, so a few threads keep one slow user from delaying the others).
        on_formed: Called in the worker thread after each batch, with the user's label, the
            number of turns and what was formed (for metrics and tests).
        on_prepared: Called in the worker thread when a batch was read and its model calls
            made, before anything of it is written, with the user's label and the number of
            turns (for tests that forget a user in between).

    Across processes sharing the store, a user is formed by one process at a time: the worker
    takes the user's lease in the store first (:mod:`.lease`) and, when the batch's model calls
    took long enough for it to age, renews it before it writes.
    """

    def __init__(self, *, debounce: float = 1.0, max_wait: float = 30.0,
                 close_timeout: float = 10.0, workers: int = 4,
                 on_formed: Callable[[str, int, Formed], None] | None = None,
                 on_prepared: Callable[[str, int], None] | None = None) -> None:
        if workers < 1:
            raise InvalidValueError(f"workers must be at least 1, got {workers}.")
        if debounce < 0 or max_wait < debounce:
            raise InvalidValueError(
                f"Need 0 <= debounce <= max_wait, got debounce={debounce}, "
                f"max_wait={max_wait}."
            )
        self.debounce, self.max_wait, self.close_timeout = debounce, max_wait, close_timeout
        self.on_formed, self.on_prepared, self.workers = on_formed, on_prepared, workers
        self._owner = lease.new_owner()
        self._store: BaseStore | None = None
        self._former: Former | None = None
        self._due: dict[str, _Due] = {}
        self._busy: set[str] = set()
        self._cond = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._draining = False
        self._closed = False
        self._recovering = False

    # --- wiring ---

    def bind(self, store: BaseStore, former: Former) -> None:
        """Attach the store and the formation, schedule what the store still holds, and start
        the worker (once; later calls with the same store are no-ops)."""
        with self._cond:
            if self._store is not None:
                if self._store is not store:
                    raise InvalidValueError(
                        "This DeferredFormation already forms memory for another store; give "
                        "each store (each graph or middleware with its own store) its own "
                        "DeferredFormation, or defer=True.")
                return
            if self._closed:
                raise OperationError("This DeferredFormation is closed; make a new one.")
            if isinstance(store, InMemoryStore):  # the worker writes while the graph reads, and
                # InMemoryStore iterates its dicts without a lock
                raise InvalidTypeError(
                    "defer= forms memory on a worker thread while your graph runs, and "
                    "LangGraph's InMemoryStore is not safe to use from two threads at once. For a "
                    "store in memory use ChromaStore.ephemeral(...) (e.g. index={'dims': 64, "
                    "'embed': HashEmbeddings(64)} for tests), any other thread-safe BaseStore, or "
                    "defer=False.")
            self._store, self._former = store, former
            self._recovering = True
            self._threads = [threading.Thread(target=self._loop, args=(i == 0,), daemon=True,
                                              name=f"episodic-formation-{i}")
                             for i in range(self.workers)]
        for thread in self._threads:
            thread.start()

    def notify(self, user_id: str) -> None:
        """A turn of ``user_id`` was queued: (re)start the user's debounce."""
        self._schedule(namespace_label(user_id))

    async def anotify(self, user_id: str) -> None:
        """Async version of :meth:`notify` (it does not block)."""
        self.notify(user_id)

    def _schedule(self, user: str, first: float | None = None) -> None:
        now = time.monotonic()
        with self._cond:
            due = self._due.get(user)
            if due is None:
                self._due[user] = _Due(first=now if first is None else first, last=now)
            else:
                due.last = now
            self._cond.notify_all()

    # --- the worker ---

    def _when(self, due: _Due) -> float:
        if self._draining:
            return 0.0
        if due.failures:
            return due.last + min(RETRY_S[0] * 2 ** (due.failures - 1), RETRY_S[1])
        return min(due.last + self.debounce, due.first + self.max_wait)

    def _next(self) -> tuple[str, int] | None:
        """Wait for the next user that is due (and its failures so far); ``None`` once closed."""
        with self._cond:
            while not self._closed:
                free = [(u, d) for u, d in self._due.items() if u not in self._busy]
                if not free:  # nothing due, or only users another worker is forming
                    self._cond.wait()
                    continue
                user, due = min(free, key=lambda pair: self._when(pair[1]))
                wait = self._when(due) - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                del self._due[user]
                self._busy.add(user)
                return user, due.failures
            return None

    def _loop(self, recover: bool) -> None:
        if recover:  # schedule every user the store still has pending turns of (a killed process's)
            try:
                assert self._store is not None
                for user in pending_users(self._store):
                    self._schedule(user, first=0.0)
            except Exception:  # the queue stays in the store; the next start tries again
                logger.exception("deferred formation could not list the pending turns")
            finally:
                with self._cond:
                    self._recovering = False
                    self._cond.notify_all()
        while (picked := self._next()) is not None:
            user, failures = picked
            try:
                if not self._form(user):  # another process holds the user's lease
                    with self._cond:
                        now = time.monotonic()
                        due = self._due.setdefault(user, _Due(now, now))
                        due.last = max(due.last, now + LEASED_ELSEWHERE_S - self.debounce)
            except Exception:  # a failing model or store must not stop the worker
                logger.exception("deferred formation failed for %r; it stays queued and is "
                                 "tried again", user)
                with self._cond:
                    now = time.monotonic()
                    self._due.setdefault(user, _Due(now, now)).failures = failures + 1
            finally:
                with self._cond:
                    self._busy.discard(user)
                    self._cond.notify_all()

    def _form(self, user: str) -> bool:
        """Form ``user``'s pending turns; False when another process holds their lease."""
        store, former = self._store, self._former
        assert store is not None and former is not None
        taken = time.monotonic()  # the lease's record is written after this
        if not lease.acquire(store, user, self._owner):
            return False
        try:
            turns = pending_turns(store, user)
            if not turns:
                return True
            prepared = former.prepare(store, turns)
            if self.on_prepared is not None:
                self.on_prepared(user, len(turns))
            with locked(formation_key(user)):  # forget_user takes it too
                if (time.monotonic() - taken > lease.RENEW_AFTER_S
                        and not lease.renew(store, user, self._owner)):
                    logger.warning("lost the formation lease of %r to another process; it "
                                   "forms these turns", user)
                    return True
                if not still_pending(store, turns):  # forgotten, or formed elsewhere
                    logger.info("the pending turns of %r went while they were formed (the user "
                                "was forgotten); nothing written", user)
                    return True
                formed = former.write(store, prepared)
                remove(store, turns)  # only now: a crash before this replays, harmlessly
        finally:
            lease.release(store, user, self._owner)
        logger.debug("formed %d turns of %r: %s", len(turns), user, formed)
        if self.on_formed is not None:
            self.on_formed(user, len(turns), formed)
        return True

    # --- draining and shutdown ---

    def idle(self) -> bool:
        """True when nothing is scheduled or being formed in this process."""
        with self._cond:
            return not self._due and not self._busy and not self._recovering

    def flush(self, timeout: float | None = None) -> bool:
        """Form everything scheduled now, ignoring the debounce; wait up to ``timeout``
        seconds. Returns True when nothing is left scheduled."""
        if not self._threads:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._draining = True
            self._cond.notify_all()
            try:
                while self._due or self._busy or self._recovering:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(left if left is None else min(left, 0.05))
                return True
            finally:
                self._draining = False
                self._cond.notify_all()

    def close(self, timeout: float | None = None) -> bool:
        """Drain for up to ``timeout`` seconds (default ``close_timeout``), then stop the
        worker. Returns True when everything was formed; otherwise the rest stays in the store
        and the next start forms it. Calling it again does nothing more."""
        if self._closed:
            return self.idle()
        drained = self.flush(self.close_timeout if timeout is None else timeout)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            threads = list(self._threads)
        if drained:
            for thread in threads:
                thread.join(timeout=1.0)
        return drained


class Scheduler(Protocol):
    """What ``defer=`` takes: :class:`DeferredFormation` (a thread in this process) or
    :class:`~langgraph_episodic.formation.server.ServerFormation` (the LangGraph server's
    run queue)."""

    def bind(self, store: BaseStore, former: Former) -> None: ...
    def notify(self, user_id: str) -> None: ...
    async def anotify(self, user_id: str) -> None: ...
    def close(self, timeout: float | None = None) -> bool: ...


def resolve_defer(defer: bool | Scheduler | None) -> Scheduler | None:
    """The ``defer=`` keyword: ``False``/``None`` off, ``True`` a default instance closed at
    exit, or the caller's own instance."""
    if defer is None or defer is False:
        return None
    if defer is True:
        formation = DeferredFormation()
        atexit.register(formation.close)
        return formation
    if all(callable(getattr(defer, name, None)) for name in ("bind", "notify", "anotify")):
        return defer
    raise InvalidTypeError(
        f"defer must be a bool, a DeferredFormation or a ServerFormation, got "
        f"{type(defer).__name__}."
    )

