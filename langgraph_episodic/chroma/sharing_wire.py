"""What the processes sharing one folder send each other (:mod:`.sharing`): frames of JSON.

A frame is 4 bytes of length (big-endian) and a UTF-8 JSON object. :func:`send` and
:func:`receive` carry the values a request or an answer holds as they are, through one codec
(:func:`encoded`): JSON's own values as themselves, and numpy arrays (base64 of their bytes,
with dtype and shape), datetimes, tuples, dicts whose keys JSON cannot hold and instances of
the classes in :data:`SENT` (by their fields) as objects tagged ``"__"``. Nothing else crosses,
and only those classes are built from a frame: nothing is unpickled from another process. A
batch crosses as its :class:`.plans.BatchPlan` (validated, redacted and planned by the sending
process, which also embeds and ranks its questions' calibration: :class:`.search.Method`), so
the serving process only executes it on its own store.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib
import inspect
import json
import os
import socket
import struct
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)

from ..errors import (
    AccessDeniedError,
    ConnectionFailedError,
    Error,
    InvalidTypeError,
    InvalidValueError,
)
from ..language.baseline import Calibration, SecondReading
from .explain import Explanation, ScoreBreakdown
from .plans import BatchPlan, PutPlan
from .search import Method
from .verify import VerifyReport

SOCKET_FILE = "langgraph-episodic.sock"
SECRET_FILE = "langgraph-episodic.secret"

MAX_FRAME = 1 << 30
"""The largest frame read (1 GiB): a corrupt length cannot make a process allocate more."""


class OwnerGone(Error, ConnectionError):
    """The process serving the folder went away (closed, exited or was killed). A store's calls
    recover from it themselves; the Chroma reads of export and checks raise it."""

    def __init__(self, sent: bool) -> None:
        super().__init__(
            "the process serving the folder went away during a read of its Chroma "
            "collections; run the call again (another process serves the folder by then)"
        )
        self.sent = sent
        """Whether the request was sent whole (it may have run before the process went)."""


class ProtocolMismatchError(Error, RuntimeError):
    """The process serving the folder runs another version of the package, whose requests this
    one cannot read or make: every process that shares a folder runs the same version."""


class LanguageMismatchError(Error, ValueError):
    """The process serving the folder opened its store with another lexical ``language`` than
    the one this process asks for; the stores of one folder must agree."""


# --- frames ---------------------------------------------------------------------------------


def send(sock: socket.socket, message: Mapping[str, Any]) -> None:
    data = json.dumps(encoded(message), separators=(",", ":")).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def receive(sock: socket.socket, *, plain: bool = False) -> dict[str, Any] | None:
    """The next frame, or None when the other side closed the connection. ``plain``: JSON
    alone, no tagged values built (a hello, before the secret is checked)."""
    head = _exactly(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">I", head)
    if size > MAX_FRAME:
        raise ConnectionFailedError(f"a frame of {size} bytes: not a langgraph-episodic peer")
    body = _exactly(sock, size)
    if body is None:
        return None
    message = json.loads(body, object_hook=None if plain else _decoded)
    if not isinstance(message, dict):
        raise ConnectionFailedError("a frame that is not a JSON object")
    return message


def _exactly(sock: socket.socket, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


# --- values ---------------------------------------------------------------------------------


SENT: dict[str, tuple[type, tuple[str, ...]]] = {
    cls.__name__: (cls, tuple(inspect.signature(cls).parameters))
    for cls in (
        GetOp, PutOp, SearchOp, ListNamespacesOp, MatchCondition, Item, SearchItem, BatchPlan,
        PutPlan, Method, Calibration, SecondReading, Explanation, ScoreBreakdown, VerifyReport,
    )
}  # fmt: skip
"""The classes whose instances cross, by name, with the fields they cross with (the
parameters of their constructor)."""

REVISION = 2
"""Raised when the requests change in a way the fields of :data:`SENT` do not show."""
PROTOCOL = hashlib.sha256(
    json.dumps([REVISION, sorted([name, list(f)] for name, (_, f) in SENT.items())]).encode()
).hexdigest()[:16]
"""What two processes must share to understand each other: :data:`REVISION` and every field
that crosses. Both sides of a hello check it (:func:`check_protocol`)."""


def check_protocol(theirs: object, folder: str, pid: object) -> None:
    """Raise :class:`ProtocolMismatchError` unless ``theirs`` (the other side's
    :data:`PROTOCOL`; None from a version before the check) is this process's."""
    if theirs != PROTOCOL:
        raise ProtocolMismatchError(
            f"The process serving {folder} (pid {pid}) and this one run different versions of "
            f"langgraph-episodic (wire protocol {theirs or 'unversioned'} and {PROTOCOL}): "
            "the processes that share a folder must run the same version. Upgrade them "
            "together, or let them share a Chroma server (ChromaStore.http)."
        )


_JSON = frozenset({str, int, float, bool, type(None)})


def encoded(value: Any) -> Any:
    """``value`` as JSON data: what :func:`_decoded` builds back (see the module docstring)."""
    kind = type(value)
    if kind in _JSON:
        return value
    if isinstance(value, dict):
        if "__" in value or not all(type(k) is str for k in value):
            return {"__": "dict", "items": [[encoded(k), encoded(v)] for k, v in value.items()]}
        return {k: v if type(v) in _JSON else encoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [v if type(v) in _JSON else encoded(v) for v in value]
    sent = SENT.get(kind.__name__)
    if sent is not None and kind is sent[0]:
        return {"__": kind.__name__, **{f: encoded(getattr(value, f)) for f in sent[1]}}
    if isinstance(value, tuple):
        return {"__": "tuple", "items": [encoded(v) for v in value]}
    if isinstance(value, datetime):
        return {"__": "datetime", "iso": value.isoformat()}
    if isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        data = base64.b64encode(a.tobytes()).decode()
        return {"__": "array", "dtype": str(a.dtype), "shape": list(a.shape), "b64": data}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, int, float)):  # (their subclasses: enums)
        return value
    if isinstance(value, Mapping):
        return encoded(dict(value))
    raise InvalidTypeError(f"Cannot send a {kind.__name__} to another process.")


def _decoded(d: dict[str, Any]) -> Any:
    """A JSON object of a frame as the value :func:`encoded` made it of (inner ones first)."""
    tag = d.get("__")
    if tag is None:
        return d
    try:
        if tag == "array":
            raw = base64.b64decode(d["b64"])
            return np.frombuffer(raw, dtype=np.dtype(d["dtype"])).reshape(d["shape"]).copy()
        if tag == "datetime":
            return datetime.fromisoformat(d["iso"])
        if tag == "tuple":
            return tuple(d["items"])
        if tag == "dict":
            return dict(d["items"])
        cls, fields = SENT[tag]
        return cls(**{f: d[f] for f in fields})
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidValueError(f"a frame with a malformed {tag!r}: {exc!r}") from None


def error_out(exc: BaseException) -> dict[str, str]:
    """The exception's class and message (its one text argument: ``str`` of a ``KeyError``
    quotes it, and :func:`error_in` would quote it again)."""
    args = exc.args
    message = args[0] if len(args) == 1 and isinstance(args[0], str) else str(exc)
    return {"type": f"{type(exc).__module__}.{type(exc).__qualname__}", "message": message}


_RAISED_AS_IS = ("builtins", "langgraph_episodic", "langgraph", "chromadb")


def error_in(d: Mapping[str, str]) -> Exception:
    """The owner's exception (:func:`error_out`) as the same class here when it is one of ours,
    LangGraph's, Chroma's or a built-in one, else a ``RuntimeError`` naming it."""
    module, _, name = d["type"].rpartition(".")
    if module.split(".")[0] in _RAISED_AS_IS:
        with contextlib.suppress(ImportError, AttributeError, TypeError):
            cls = getattr(importlib.import_module(module), name)
            if isinstance(cls, type) and issubclass(cls, Exception):
                return cls(d["message"])
    return RuntimeError(f"{d['type']}: {d['message']}")


# --- the socket and the secret ----------------------------------------------------------------


def read_secret(folder: str) -> str | None:
    path = os.path.join(folder, SECRET_FILE)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except (FileNotFoundError, PermissionError):
        return None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise AccessDeniedError(
                f"{path} is not this user's private file (owner uid {info.st_uid}, mode "
                f"{info.st_mode & 0o777:o}): not trusting it to share the folder. Remove it."
            )
        return os.read(fd, 200).decode().strip()
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a 0600 file, replacing it whole."""
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(temp, path)


def same_user(sock: socket.socket) -> bool:
    """Whether the peer runs as this user (True where the system cannot tell: the secret guards)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    creds = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", creds)
    return uid == os.geteuid()


@contextlib.contextmanager
def address(folder: str) -> Iterator[str]:
    """The socket's path, or (too long for a socket address, on Linux) the same file reached
    through an open descriptor of the folder."""
    path = os.path.join(folder, SOCKET_FILE)
    if len(os.fsencode(path)) < 100 or not os.path.isdir("/proc/self/fd"):
        yield path
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        yield f"/proc/self/fd/{fd}/{SOCKET_FILE}"
    finally:
        os.close(fd)
