"""One lock per (store, namespace, key), shared by threads and asyncio tasks of one process.

A read-merge-write on a store item (an entity's description) loses an update when two writers
read the same old value. :func:`locked` serialises them in this process: a thread waits on a
``threading.Lock``; an asyncio task polls it without blocking its event loop (a task cancelled
while waiting holds nothing). Locks are created on first use and freed when unused.
:func:`run_locked` / :func:`arun_locked` run a whole plan under one, as one effect of an
enclosing plan (the entity and fact writers' read-merge-write).

Across processes nothing is serialised: LangGraph's ``BaseStore`` has no compare-and-swap, so
two processes merging the same item at the same moment can still lose one side (last write
wins). Route one user's sessions to one process when that matters.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Hashable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TypeVar

from ._effects import Plan, arun, run

T = TypeVar("T")

_POLL_S = (0.0005, 0.02)
"""First and longest pause of an asyncio task waiting for a lock."""


class _KeyLock:
    __slots__ = ("__weakref__", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()


_locks: weakref.WeakValueDictionary[Hashable, _KeyLock] = weakref.WeakValueDictionary()
_registry = threading.Lock()


def _lock_for(key: Hashable) -> _KeyLock:
    with _registry:
        found = _locks.get(key)
        if found is None:
            found = _KeyLock()
            _locks[key] = found
        return found


def formation_key(user_label: str) -> Hashable:
    """The key of a user's memory-formation writes, shared with forgetting the user: a forget
    never runs between a deferred batch's last check and its writes."""
    return ("episodic-formation", user_label)


@contextmanager
def locked(key: Hashable) -> Iterator[None]:
    """Hold the lock of ``key`` (blocking this thread while another holder has it)."""
    holder = _lock_for(key)  # held here: the registry keeps only a weak reference
    with holder.lock:
        yield


@asynccontextmanager
async def alocked(key: Hashable) -> AsyncIterator[None]:
    """Async version of :func:`locked`: waits without blocking the event loop."""
    holder = _lock_for(key)
    pause = _POLL_S[0]
    while not holder.lock.acquire(blocking=False):
        await asyncio.sleep(pause)
        pause = min(pause * 2, _POLL_S[1])
    try:
        yield
    finally:
        holder.lock.release()


def run_locked(key: Hashable, plan: Callable[[], Plan[T]]) -> T:
    """Run the plan ``plan()`` to its end holding the lock of ``key``: a read-merge-write as
    one effect, ``call(run_locked, arun_locked, key, plan)``."""
    with locked(key):
        return run(plan())


async def arun_locked(key: Hashable, plan: Callable[[], Plan[T]]) -> T:
    """Async version of :func:`run_locked`."""
    async with alocked(key):
        return await arun(plan())
