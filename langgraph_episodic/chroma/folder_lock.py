"""One process at a time writes an embedded Chroma folder.

Chroma's embedded mode keeps indexes in the memory of the process that opened the folder, and
a ``ChromaStore`` keeps its caches exact by being the folder's only writer. So the first write
takes a ``flock`` on ``<folder>/langgraph-episodic.lock``, held until the process's last store
of the folder closes (one lock object per folder, by real path).

* Another process that writes gets :class:`FolderInUseError`; one that reads gets it too
  while a writer holds the folder, or when one came and went since it opened the folder.
* A command that changes files takes the lock before Chroma opens the folder
  (:func:`hold_folder`); ``ChromaStore.persistent`` takes it as it opens and serves the folder
  to later openers (:mod:`.sharing`).
* A forked child closes its copy of the descriptor (never unlocks: that would free the
  parent's folder); the parent's stores refuse to work there (:mod:`.lifecycle`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import Error, InvalidValueError

LOCK_FILE = "langgraph-episodic.lock"
CLAIM_WAIT_S = 2.0
"""How long a write waits for readers of another process to finish their batch."""


class FolderInUseError(Error, RuntimeError):
    """Another process writes (or wrote) the embedded Chroma folder this store uses."""


class FolderLock:
    """The write lock of one embedded folder in this process (one object per real path).

    ``claim`` and ``check_readable`` run under one lock, so a read check never meets this
    process's own claim half-way (and names this process as "another").
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = str(folder / LOCK_FILE)
        self._lock = threading.Lock()
        self._fd: int | None = None  # holds the exclusive ``flock`` while this process writes
        self._seen = ""  # the writer token on file when this process opened (or last wrote) it
        self._stores = 0
        self._system: int | None = None  # the chromadb system (``id``) of the open stores

    @classmethod
    def of_client(cls, client: Any) -> FolderLock | None:
        """The lock of a persistent embedded client's folder; None for other clients."""
        folder = folder_of(client)
        return None if folder is None else cls.of_folder(folder)

    @classmethod
    def of_folder(cls, folder: str | Path) -> FolderLock:
        """The lock of ``folder`` (any spelling of its path) in this process."""
        key = os.path.realpath(folder)
        with _LOCKS_LOCK:
            return _LOCKS.setdefault(key, cls(Path(key)))

    # stores ----------------------------------------------------------------------------

    def open_store(self, system: int | None, spelled: str = "") -> None:
        """Count a store opened through the chromadb system ``system`` (None: no client)."""
        with self._lock:
            if self._system is not None and system is not None and system != self._system:
                raise InvalidValueError(
                    f"The folder {self.folder} is already open in this process through "
                    f"another chromadb client (this one names it {spelled!r}). Two clients "
                    "of one folder keep separate in-memory indexes that disagree: open every "
                    "store of the folder with ChromaStore.persistent(path) (any spelling of "
                    "the path), or pass them all the same client."
                )
            if not self._stores:
                self._seen = self._read_token()
            if system is not None:
                self._system = system
            self._stores += 1

    def close_store(self) -> bool:
        """A store of the folder closed; True when it was the last (the folder is given up)."""
        with self._lock:
            self._stores -= 1
            if self._stores > 0:
                return False
            self._stores = 0
            self._system = None
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
                os.close(self._fd)
                self._fd = None
            return True

    # writers -------------------------------------------------------------------------

    def claim(self, wait: float = CLAIM_WAIT_S) -> None:
        """Make this process the folder's writer; raise if another is (after ``wait`` seconds)."""
        with self._lock:
            if self._fd is not None:
                return
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                self._lock_unchanged(fd, fcntl.LOCK_EX, wait)
                token = f"{os.getpid()} {uuid.uuid4().hex}"
                os.ftruncate(fd, 0)
                os.pwrite(fd, token.encode(), 0)
                os.fsync(fd)
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
            self._seen = token

    @property
    def writing(self) -> bool:
        """Whether this process is the folder's writer."""
        return self._fd is not None

    # readers -------------------------------------------------------------------------

    def check_readable(self) -> None:
        """Raise unless this process may trust what it reads from the folder: it is the
        writer, or no other process writes it and none did since this process opened it."""
        with self._lock:
            if self._fd is not None:
                return
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except FileNotFoundError:
                return  # never written through a ChromaStore
            try:
                self._lock_unchanged(fd, fcntl.LOCK_SH, wait=0.0)
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    # a forked child --------------------------------------------------------------------

    def _forget_in_child(self) -> None:
        """In a forked child: close (never unlock: the ``flock`` is shared with the parent) the
        copy of the parent's lock file descriptor."""
        if self._fd is not None:
            os.close(self._fd)
        self._fd = None
        self._lock = threading.Lock()  # (the parent's may have been held by one of its threads)
        self._stores = 0
        self._system = None

    # the lock file ---------------------------------------------------------------------

    def _lock_unchanged(self, fd: int, kind: int, wait: float) -> None:
        """``flock`` the lock file (``kind``: shared or exclusive), waiting up to ``wait``
        seconds for another process, and raise unless no other process wrote the folder since
        this one opened it (or last wrote it): the writer token on file is the one it saw."""
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, kind | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    pid = _read(fd).split(" ")[0] or "unknown"
                    raise FolderInUseError(
                        f"The embedded store folder {self.folder} is being written by another "
                        f"process (pid {pid}). An embedded folder belongs to one process at a "
                        "time: stop that process first, or share the data through a Chroma "
                        f"server: run `chroma run --path {self.folder}` and open it with "
                        "ChromaStore.http(...) (on the command line: --url http://127.0.0.1:8000)."
                    ) from None
                time.sleep(0.02)
        on_file = _read(fd)
        if on_file.split(" ")[-1] != self._seen.split(" ")[-1]:
            fcntl.flock(fd, fcntl.LOCK_UN)
            pid = on_file.split(" ")[0] or "unknown"
            raise FolderInUseError(
                f"The embedded store folder {self.folder} was written by another process (pid "
                f"{pid}) after this process opened it, so what this process holds may be stale. "
                "Open the store again (in a new process), or share the data through a Chroma "
                f"server: `chroma run --path {self.folder}` and ChromaStore.http(...) / --url."
            )

    def _read_token(self) -> str:
        with contextlib.suppress(FileNotFoundError):
            fd = os.open(self.path, os.O_RDONLY)
            try:
                return _read(fd)
            finally:
                os.close(fd)
        return ""


@contextlib.contextmanager
def hold_folder(folder: str | Path) -> Iterator[None]:
    """Make this process the writer of ``folder`` before a store of it opens, and hold it
    while the block runs (a store opened in the block keeps it until its ``close()``).

    What a command that changes files does first: Chroma writes to its database as soon as a
    client opens the folder, so a command refused later would already have written.
    """
    lock = FolderLock.of_folder(folder)
    lock.open_store(None)
    try:
        lock.claim()
        yield
    finally:
        lock.close_store()


def folder_of(client: Any) -> str | None:
    """The real path of a persistent embedded client's folder; None for other clients."""
    try:
        settings = client.get_settings()
    except AttributeError:
        return None
    if not getattr(settings, "is_persistent", False):
        return None
    if str(getattr(settings, "chroma_api_impl", "")).endswith("FastAPI"):
        return None  # a server: it serialises its writers itself
    return os.path.realpath(settings.persist_directory)


def _read(fd: int) -> str:
    return os.pread(fd, 200, 0).decode("utf-8", "replace").strip()


_LOCKS: dict[str, FolderLock] = {}
"""Folder real path -> its lock in this process."""
_LOCKS_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    global _LOCKS_LOCK
    _LOCKS_LOCK = threading.Lock()
    for lock in _LOCKS.values():
        lock._forget_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)
