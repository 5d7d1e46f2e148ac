"""Many processes on one embedded folder: the process holding the folder's lock serves it.

``ChromaStore.persistent(path)`` first tries the folder's lock (:mod:`.folder_lock`). The
process that gets it serves the folder (:class:`FolderServer`) on ``<folder>/langgraph-
episodic.sock``; a later opener becomes a client (:mod:`.sharing_client`): its store
validates, redacts, embeds and calibrates as alone and sends each batch's plan
(:mod:`.sharing_wire`) to the owner, which executes it, so the owner's caches stay exact.

* Trust: the socket is 0600, a client must present the secret the owner wrote to a 0600 file
  of its own user, and both sides check the other's user id (``SO_PEERCRED``).
* The owner goes: a client's next request finds the socket dead; it takes the lock itself or
  reconnects to the process that did. A stale socket is told by the lock, never by a pid.
* Time: a client with a ``clock=`` of its own sends its time, and the owner runs that request
  at it (:class:`ServedClock`).
* Retries: a read is sent again. A batch with puts that may have run is sent again without the
  puts whose item was written since the batch was first sent (this put ran, or a later write
  came). A delete by another process between the owner's death and the retry is undone.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import os
import secrets
import socket
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InvalidValueError
from . import sharing_wire as wire
from .folder_lock import FolderLock
from .sharing_client import RemoteFolder, claim_or_dial

logger = logging.getLogger(__name__)


# --- the owner --------------------------------------------------------------------------------


class FolderServer:
    """Serves one folder's stores of this process to other processes, a thread a connection."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.pid = os.getpid()
        self.owner = f"{self.pid} {uuid.uuid4().hex}"
        self.stores: dict[str, list[Any]] = {}  # collection -> its stores here (the first serves)
        self._opened: list[Any] = []  # stores opened to serve a collection none here had open
        self._lock = threading.Lock()
        self._conns: dict[socket.socket, threading.Thread] = {}
        self._secret = secrets.token_hex(32)
        wire.write_private(Path(folder) / wire.SECRET_FILE, self._secret)
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path = os.path.join(folder, wire.SOCKET_FILE)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # a dead owner's: this process holds the lock now
        with wire.address(folder) as address:
            self._listener.bind(address)
        os.chmod(path, 0o600)
        self._listener.listen(64)
        threading.Thread(target=self._accept, name="langgraph-episodic-share", daemon=True).start()

    def attach(self, store: Any) -> None:
        with self._lock:
            self.stores.setdefault(store.collection_name, []).append(store)

    def detach(self, store: Any) -> bool:
        """Stop serving ``store``; True when it was the last store attached: the server has
        stopped (the stores it opened itself are closed by :meth:`stop`)."""
        with self._lock:
            serving = self.stores.get(store.collection_name, [])
            if store in self._opened or store not in serving:
                return False
            serving.remove(store)
            if not serving:
                del self.stores[store.collection_name]
            if any(s not in self._opened for ss in self.stores.values() for s in ss):
                return False
        self.stop()
        return True

    def stop(self) -> None:
        """Refuse new connections, let requests in flight finish and answer, then close."""
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        for name in (wire.SOCKET_FILE, wire.SECRET_FILE):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(self.folder, name))
        with self._lock:
            conns = dict(self._conns)
        for conn, thread in conns.items():
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RD)  # an idle one ends; a busy one answers first
            thread.join()
        for store in self._opened:
            store.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return  # stopped
            thread = threading.Thread(
                target=self._serve, args=(conn,), daemon=True, name="langgraph-episodic-share-conn"
            )
            with self._lock:
                self._conns[conn] = thread
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            hello = wire.receive(conn, plain=True)
            if hello is None:
                return
            if not wire.same_user(conn) or not hmac.compare_digest(
                str(hello.get("secret", "")), self._secret
            ):
                wire.send(conn, {"refused": "wrong secret or another user"})
                return
            try:
                wire.check_protocol(hello.get("protocol"), self.folder, self.pid)
                store = self._store(hello["collection"], hello["language"])
            except (ValueError, TypeError, wire.ProtocolMismatchError) as exc:
                wire.send(conn, {"error": wire.error_out(exc)})
                return
            wire.send(conn, {"ok": {"owner": self.owner, "pid": self.pid,
                                    "protocol": wire.PROTOCOL}})
            while (message := wire.receive(conn)) is not None:
                try:
                    with _at(store, message.get("now")):
                        wire.send(conn, {"ok": _dispatch(store, message)})
                except Exception as exc:  # noqa: BLE001 (the caller's error: sent to it)
                    wire.send(conn, {"error": wire.error_out(exc)})
        except (OSError, ValueError) as exc:
            logger.debug("a connection to the folder %s ended: %s", self.folder, exc)
        finally:
            conn.close()
            with self._lock:
                self._conns.pop(conn, None)

    def _store(self, collection: str, language: str) -> Any:
        with self._lock:
            serving = self.stores.get(collection)
            if serving:
                store = serving[0]
            else:  # a collection no store of this process has open: open one to serve it
                first = next(iter(self.stores.values()))[0]
                store = type(first)(
                    first.client, collection=collection, index=None, language=language
                )
                self._opened.append(store)
                self.stores[collection] = [store]
        if store.language != language:
            raise wire.LanguageMismatchError(
                f"The process serving {self.folder} (pid {self.pid}) opened its store with "
                f"language={store.language!r}, this one asks for {language!r}: the stores of "
                "one folder must agree (open them with the same language)."
            )
        return store


class ServedClock:
    """A served store's clock: its own, or the time a request of a client with a ``clock=`` of
    its own brings (:func:`_at`)."""

    def __init__(self, own: Callable[[], float]) -> None:
        self.own = own
        self.pinned = threading.local()

    def __call__(self) -> float:
        now: float | None = getattr(self.pinned, "now", None)
        return self.own() if now is None else now


_CLOCKS = threading.Lock()


@contextlib.contextmanager
def _at(store: Any, now: float | None) -> Iterator[None]:
    """Run a request at ``now``, the time a client with its own clock sent (None: the store's)."""
    if now is None:
        yield
        return
    with _CLOCKS:
        if not isinstance(store.clock, ServedClock):
            store.clock = ServedClock(store.clock)
        pinned = store.clock.pinned
    pinned.now = float(now)
    try:
        yield
    finally:
        pinned.now = None


_STORE_CALLS = frozenset({"_execute", "_explain", "verify", "sweep_ttl", "restore_times"})
"""The calls of a store a client sends (:meth:`.sharing_client.RemoteFolder.call`)."""


def _dispatch(store: Any, m: Mapping[str, Any]) -> Any:
    kind = m["do"]
    if kind in _STORE_CALLS:
        return getattr(store, kind)(*m["args"], **m["kwargs"])
    if kind == "raw":  # Chroma reads for export and checks: never a write
        collection = store.client.get_collection(m["name"])
        return collection.count() if m["method"] == "count" else collection.get(**m["args"])
    if kind == "collections":
        return [c if isinstance(c, str) else c.name for c in store.client.list_collections()]
    if kind == "max_batch":
        return int(store.client.get_max_batch_size())
    raise InvalidValueError(f"unknown request {kind!r}")


_SERVERS: dict[str, FolderServer] = {}
_SERVERS_LOCK = threading.RLock()  # (a stopping server closes the stores it opened)


def serve(store: Any, folder: str) -> None:
    """Serve ``store`` (this process holds its folder's lock) to other processes."""
    with _SERVERS_LOCK:
        server = _SERVERS.get(folder)
        if server is None or server.pid != os.getpid():
            try:
                server = _SERVERS[folder] = FolderServer(folder)
            except OSError as exc:
                logger.warning(
                    "Cannot serve the folder %s to other processes (%s); they will get "
                    "FolderInUseError while this process holds it.",
                    folder,
                    exc,
                )
                return
        server.attach(store)


def stop_serving(store: Any) -> None:
    """``store`` closes: stop serving it (the server stops with the folder's last store)."""
    with _SERVERS_LOCK:
        for folder, server in list(_SERVERS.items()):
            if server.pid == os.getpid() and server.detach(store):
                del _SERVERS[folder]


# --- opening ----------------------------------------------------------------------------------


@contextlib.contextmanager
def opening(folder: str, collection: str, language: str) -> Iterator[RemoteFolder | None]:
    """``None`` when this process holds ``folder``'s lock (the caller opens Chroma in the block),
    else a client of the process serving it."""
    got = claim_or_dial(folder, collection, language)
    if not isinstance(got, FolderLock):
        yield RemoteFolder(folder, collection, language, *got)
        return
    try:
        yield None
    finally:
        got.close_store()
