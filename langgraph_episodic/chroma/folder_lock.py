"""One process at a time writes an embedded Chroma folder.

Chroma's embedded mode keeps indexes in the memory of the process that opened the folder, and
a ``ChromaStore`` keeps its caches exact by being the folder's only writer. So the first write
takes an advisory lock (``flock``) on ``<folder>/langgraph-episodic.lock`` and holds it until
every store of that folder in the process is closed (or the process ends, even by SIGKILL).

* A second process that writes gets :class:`FolderInUseError` naming the fix.
* A second process that only reads gets the same error while a writer holds the folder, and
  also when a writer came and went since it opened the folder (its caches and Chroma's
  in-memory indexes may be stale: reopen the store). Each batch checks this with two
  ``flock`` calls and one small read (a few microseconds).

Many processes share a store through a Chroma server: ``chroma run --path <folder>`` and
``ChromaStore.http(...)`` (the command line: ``--url``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

LOCK_FILE = "langgraph-episodic.lock"
CLAIM_WAIT_S = 2.0
"""How long a write waits for readers of another process to finish their batch."""


class FolderInUseError(RuntimeError):
    """Another process writes (or wrote) the embedded Chroma folder this store uses."""


_HELD: dict[str, tuple[int, str]] = {}
"""Folder -> (file descriptor holding the exclusive lock, this process's token)."""
_HELD_LOCK = threading.Lock()


class FolderLock:
    """The write lock of one embedded folder, as seen by one backend."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = str(folder / LOCK_FILE)
        self._key = os.path.realpath(folder)
        self._seen = self._read_token()
        """The writer token on file when this process opened the folder (or last wrote it)."""
        self.open_stores = 0

    @classmethod
    def of_client(cls, client: Any) -> FolderLock | None:
        """The lock of a persistent embedded client's folder; None for other clients."""
        try:
            settings = client.get_settings()
        except AttributeError:
            return None
        if not getattr(settings, "is_persistent", False):
            return None
        if str(getattr(settings, "chroma_api_impl", "")).endswith("FastAPI"):
            return None  # a server: it serialises its writers itself
        return cls(Path(settings.persist_directory))

    # writers -------------------------------------------------------------------------

    def claim(self) -> None:
        """Make this process the folder's writer (no-op if it is); raise if another is."""
        with _HELD_LOCK:
            if self._key in _HELD:
                self._seen = _HELD[self._key][1]
                return
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                deadline = time.monotonic() + CLAIM_WAIT_S
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if time.monotonic() > deadline:
                            raise self._in_use(fd) from None
                        time.sleep(0.02)
                on_file = _read(fd)
                if on_file.split(" ")[-1] != self._seen.split(" ")[-1]:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    raise self._changed(on_file)
                token = f"{os.getpid()} {uuid.uuid4().hex}"
                os.ftruncate(fd, 0)
                os.pwrite(fd, token.encode(), 0)
                os.fsync(fd)
            except BaseException:
                os.close(fd)
                raise
            _HELD[self._key] = (fd, token)
            self._seen = token

    def release(self) -> None:
        """Give the folder up (when the last store of it in this process closes)."""
        with _HELD_LOCK:
            held = _HELD.pop(self._key, None)
            if held is not None:
                fcntl.flock(held[0], fcntl.LOCK_UN)
                os.close(held[0])

    # readers -------------------------------------------------------------------------

    def check_readable(self) -> None:
        """Raise unless this process may trust what it reads from the folder: it is the
        writer, or no other process writes it and none did since this process opened it."""
        if self._key in _HELD:
            return
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return  # never written through a ChromaStore
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise self._in_use(fd) from None
            try:
                on_file = _read(fd)
                if on_file.split(" ")[-1] != self._seen.split(" ")[-1]:
                    raise self._changed(on_file)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    # messages ------------------------------------------------------------------------

    def _in_use(self, fd: int) -> FolderInUseError:
        pid = _read(fd).split(" ")[0] or "unknown"
        return FolderInUseError(
            f"The embedded store folder {self.folder} is being written by another process "
            f"(pid {pid}). An embedded folder belongs to one process at a time: stop that "
            "process first, or share the data through a Chroma server: run "
            f"`chroma run --path {self.folder}` and open it with ChromaStore.http(...) "
            "(on the command line: --url http://127.0.0.1:8000)."
        )

    def _changed(self, on_file: str) -> FolderInUseError:
        pid = on_file.split(" ")[0] or "unknown"
        return FolderInUseError(
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


def _read(fd: int) -> str:
    return os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
