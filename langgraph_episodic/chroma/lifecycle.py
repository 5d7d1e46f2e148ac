"""When a ``ChromaStore`` may be used: from its opening to ``close()``, in the process that
opened it.

* :class:`Calls` counts one store's calls in flight. ``close()`` refuses new calls and waits
  for those in flight before giving the folder up; later calls raise :class:`StoreClosedError`.
* Chroma's embedded engine hangs in a forked child (on a client or folder the parent had
  open), so such a store, or opening one there, raises :class:`StoreForkedError` instead.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from ..errors import Error

FORK_FIX = (
    "Open the store in the child process instead (after the fork: gunicorn without "
    "--preload or in post_fork, celery in worker_process_init), or start the children with "
    "multiprocessing's 'spawn' start method (multiprocessing.get_context('spawn')); several "
    "processes share one store through a Chroma server (`chroma run --path <folder>` and "
    "ChromaStore.http(...))."
)


EPHEMERAL = "ephemeral"
"""The name of the process's in-memory Chroma system (Chroma has one per process)."""


class StoreClosedError(Error, RuntimeError):
    """A call on a ``ChromaStore`` after its ``close()``."""


class StoreForkedError(Error, RuntimeError):
    """A call in a forked child on an embedded store its parent opened (Chroma would hang)."""


def forked_error(what: str, parent: int) -> StoreForkedError:
    return StoreForkedError(
        f"{what} was opened by process {parent}, and this process ({os.getpid()}) is a copy "
        "of it made by fork: Chroma's embedded engine does not work in a forked copy (its "
        f"calls would wait forever), and the folder belongs to process {parent}. {FORK_FIX}"
    )


class Calls:
    """The calls of one store in flight, and the store's end (see the module docstring)."""

    def __init__(self, what: str, *, fork_checked: bool) -> None:
        self._what = what
        self._pid = os.getpid() if fork_checked else None
        self._cond = threading.Condition()
        self._active = 0
        self._closed = False

    def check(self) -> None:
        """Raise if the store may not be used here (closed, or forked); takes no lock."""
        if self._pid is not None and os.getpid() != self._pid:
            raise forked_error(self._what, self._pid)
        if self._closed:
            raise StoreClosedError(
                f"{self._what} was closed; open a new store (e.g. ChromaStore.persistent(path)) "
                "to go on using its data."
            )

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """One call of the store: raises once it is closed; ``close()`` waits for it."""
        self.check()  # (first, without the lock: a forked child may have inherited it held)
        with self._cond:
            self.check()  # (again: close() may have begun meanwhile)
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                if not self._active:
                    self._cond.notify_all()

    def close(self) -> bool:
        """Refuse new calls and wait for those in flight; True the first time, in the process
        that opened the store (only then may it give up what it holds)."""
        if self._pid is not None and os.getpid() != self._pid:
            self._closed = True  # a forked copy: the parent's calls and lock are not its own
            return False
        with self._cond:
            if self._closed:
                return False
            self._closed = True
            self._cond.wait_for(lambda: not self._active)
        return True


# --- what a forked child inherited ------------------------------------------------------------

_opened: set[str] = set()
"""Embedded Chroma systems (folder real paths, ``"ephemeral"``) this process opened a store on."""
_inherited: dict[str, int] = {}
"""In a forked child: the systems its parent (or an earlier ancestor) had open, with its pid."""


def refuse_inherited(system: str, what: str) -> None:
    """Raise if this process is a forked copy of one that had ``system`` open (call it before
    creating a chromadb client of it: creating one already waits forever there)."""
    parent = _inherited.get(system)
    if parent is not None:
        raise forked_error(what, parent)


def opening(system: str, what: str) -> None:
    """Note that this process opens a store on ``system``; raise if it inherited it by fork."""
    refuse_inherited(system, what)
    _opened.add(system)


def _after_fork_in_child() -> None:
    parent = os.getppid()
    for system in _opened:
        _inherited.setdefault(system, parent)
    _opened.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)
