"""A client of the process serving an embedded folder (:mod:`.sharing`): :class:`RemoteFolder`
stands where a ``ChromaStore`` keeps its chromadb client, sends each batch to the owner, and
after the owner went takes the folder over or reconnects (the rules: :mod:`.sharing`).
"""

from __future__ import annotations

import dataclasses
import logging
import socket
import threading
import time
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import GetOp

from ..errors import ConnectionFailedError
from . import sharing_wire as wire
from .folder_lock import FolderInUseError, FolderLock
from .plans import BatchPlan

logger = logging.getLogger(__name__)

OWNER_WAIT_S = 10.0
"""How long an opener, or a client whose owner went, waits for a process to serve the folder
(a process holding it alone, e.g. ``purge``, serves nobody) before ``FolderInUseError``."""
POLL_S = 0.02
RECOVERIES = 5
"""How many times one call recovers from its owner going before it gives up (each recovery
finds a new owner: more means owners die as fast as they come)."""


def claim_or_dial(
    folder: str, collection: str, language: str
) -> FolderLock | tuple[socket.socket, dict[str, Any]]:
    """Wait up to :data:`OWNER_WAIT_S` for the folder's lock (returned, counted as a store) or a
    process serving the folder (a connection to it and its hello)."""
    lock = FolderLock.of_folder(folder)
    deadline = time.monotonic() + OWNER_WAIT_S
    while True:
        lock.open_store(None)
        try:
            lock.claim(wait=0.0)
        except FolderInUseError as exc:
            lock.close_store()
            refused = exc
        else:
            return lock
        dialed = _dial(folder, collection, language)
        if dialed is not None:
            return dialed
        if time.monotonic() > deadline:
            raise FolderInUseError(
                f"{refused} It does not share the folder (it holds it alone, as purge and "
                "verify --repair do, or opened it without ChromaStore.persistent)."
            )
        time.sleep(POLL_S)


# --- a client ---------------------------------------------------------------------------------


class RemoteFolder:
    """A client of the process serving a folder, where a ``ChromaStore`` keeps its chromadb
    client; answers the few Chroma reads of the command line through the owner."""

    def __init__(
        self,
        folder: str,
        collection: str,
        language: str,
        sock: socket.socket,
        owner: Mapping[str, Any],
    ) -> None:
        self.folder = folder
        self.collection = collection
        self.language = language
        self.owner = owner
        self.description = f"The store on the folder {folder} (served by process {owner['pid']})"
        self._idle = [sock]
        self._lock = threading.Lock()
        self._recovering = threading.Lock()
        self._closed = False

    def call(self, store: Any, do: str, *args: Any, **kwargs: Any) -> Any:
        """``store.<do>(*args, **kwargs)``, run on the owner's store, or here once this process
        took the folder over. A batch (``_execute``) sent again after its owner went leaves out
        the puts that may have run (the retries: :mod:`.sharing`)."""
        started = store.clock()
        for _ in range(RECOVERIES):
            message: dict[str, Any] = {"do": do, "args": args, "kwargs": kwargs}
            if store.clock is not time.time:  # (the owner runs it at this store's time)
                message["now"] = float(started)
            try:
                return self._round_trip(message)
            except wire.OwnerGone as gone:
                self._recover(store)
                if gone.sent and do == "_execute" and args[0].puts:
                    args = (_unapplied(store, args[0], started), *args[1:])
                if store._remote is not self:
                    return getattr(store, do)(*args, **kwargs)
        raise ConnectionFailedError(
            f"The processes serving the folder {self.folder} went away {RECOVERIES} times "
            "during one call; check what ends them, or share a Chroma server instead."
        )

    def _round_trip(self, message: Mapping[str, Any]) -> Any:
        sock = self._take()
        sent = False
        try:
            wire.send(sock, message)
            sent = True
            reply = wire.receive(sock)
        except OSError:
            reply = None
        if reply is None:
            sock.close()
            raise wire.OwnerGone(sent)
        with self._lock:
            if self._closed:
                sock.close()
            else:
                self._idle.append(sock)
        if "error" in reply:
            raise wire.error_in(reply["error"])
        return reply["ok"]

    def _take(self) -> socket.socket:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        dialed = _dial(self.folder, self.collection, self.language)
        if dialed is None or dialed[1]["owner"] != self.owner["owner"]:
            if dialed is not None:
                dialed[0].close()
            raise wire.OwnerGone(sent=False)
        return dialed[0]

    def _recover(self, store: Any) -> None:
        """The owner went: take the folder over, or reconnect to the process that did."""
        with self._recovering:
            if store._remote is not self:
                return  # another thread of this process took it over
            with self._lock:
                idle, self._idle = self._idle, []
            for sock in idle:
                sock.close()
            got = claim_or_dial(self.folder, self.collection, self.language)
            if not isinstance(got, FolderLock):
                sock, self.owner = got
                with self._lock:
                    self._idle.append(sock)
                return
            try:
                store._take_over()
            finally:
                got.close_store()
            self.close()
            logger.info("took over serving the folder %s", self.folder)

    def needs_the_folder(self, call: str, command: str) -> str:
        """Why ``call``, which needs the folder alone, cannot run here, and what to do instead."""
        return (
            f"the folder {self.folder} is held by process {self.owner['pid']}, which serves it "
            f"to this one; {call} needs the folder alone: call it in that process, or run "
            f"`langgraph-episodic {command} --path {self.folder}` once that process has closed "
            "the folder"
        )

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for sock in idle:
            sock.close()

    # what a ChromaStore asks of its chromadb client ------------------------------------------

    def list_collections(self) -> list[str]:
        return list(self._round_trip({"do": "collections"}))

    def get_collection(self, name: str, **_: Any) -> RemoteCollection:
        return RemoteCollection(self, name)

    def get_max_batch_size(self) -> int:
        return int(self._round_trip({"do": "max_batch"}))


@dataclasses.dataclass(frozen=True)
class RemoteCollection:
    """Reads of one Chroma collection of the owner (``get``, ``count``)."""

    folder: RemoteFolder
    name: str

    def _raw(self, method: str, args: Mapping[str, Any]) -> Any:
        message = {"do": "raw", "name": self.name, "method": method, "args": args}
        return self.folder._round_trip(message)

    def get(self, **args: Any) -> dict[str, Any]:
        return dict(self._raw("get", args))

    def count(self) -> int:
        return int(self._raw("count", {}))


def _unapplied(store: Any, plan: BatchPlan, started: float) -> BatchPlan:
    """``plan`` without the puts whose item was written at or after ``started`` (a retry)."""
    keys = list(plan.puts)
    found = store.batch([GetOp(ns, key, refresh_ttl=False) for ns, key in keys])
    keep = {}
    for key, item in zip(keys, found, strict=True):
        put = plan.puts[key]
        if item is None and put.op.value is None:
            continue  # a delete of an item that is not there
        if item is not None and item.updated_at.timestamp() >= started:
            continue  # written since the batch was sent: by this put, or after it
        keep[key] = put
    return dataclasses.replace(plan, puts=keep)


# --- sockets and files ------------------------------------------------------------------------


def _dial(
    folder: str, collection: str, language: str
) -> tuple[socket.socket, dict[str, Any]] | None:
    """A connection to the folder's owner past its secret check, and its hello; None: no owner."""
    secret = wire.read_secret(folder)
    if secret is None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with wire.address(folder) as address:
            sock.connect(address)
        if not wire.same_user(sock):
            raise FolderInUseError(
                f"The socket {folder}/{wire.SOCKET_FILE} is served by another user; not connecting."
            )
        wire.send(sock, {"secret": secret, "collection": collection, "language": language,
                         "protocol": wire.PROTOCOL})
        hello = wire.receive(sock)
    except OSError:  # a dead owner's socket, or an owner going away
        sock.close()
        return None
    if hello is None or "refused" in hello:  # gone, or a new owner wrote a new secret since
        sock.close()
        return None
    if "error" in hello:
        sock.close()
        raise wire.error_in(hello["error"])
    try:  # the owner checked ours; an owner from before the check did not
        wire.check_protocol(hello["ok"].get("protocol"), folder, hello["ok"].get("pid"))
    except wire.ProtocolMismatchError:
        sock.close()
        raise
    return sock, hello["ok"]
