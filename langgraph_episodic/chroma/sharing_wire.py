"""What the processes sharing one folder send each other (:mod:`.sharing`): frames of JSON.

A frame is 4 bytes of length (big-endian) and a UTF-8 JSON object. Everything that crosses is
JSON-safe: namespaces as lists, times as ISO 8601 strings, vectors as base64 of their bytes
(with dtype and shape), so nothing is unpickled from another process. A batch crosses as its
:class:`.plans.Plan` (validated, redacted and planned by the sending process, which also embeds
and ranks its questions' calibration: :class:`.search.Method`), so the serving process only
executes it on its own store.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import os
import socket
import struct
from collections.abc import Iterator, Mapping, Sequence
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
    Result,
    SearchItem,
    SearchOp,
)

from ..errors import Error
from ..language.baseline import Calibration, SecondReading
from .explain import Explanation, ScoreBreakdown
from .plans import Plan, PutPlan
from .search import Method

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


class LanguageMismatchError(Error, ValueError):
    """The process serving the folder opened its store with another lexical ``language`` than
    the one this process asks for; the stores of one folder must agree."""


# --- frames ---------------------------------------------------------------------------------


def send(sock: socket.socket, message: Mapping[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":")).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def receive(sock: socket.socket) -> dict[str, Any] | None:
    """The next frame, or None when the other side closed the connection."""
    head = _exactly(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">I", head)
    if size > MAX_FRAME:
        raise ConnectionError(f"a frame of {size} bytes: not a langgraph-episodic peer")
    body = _exactly(sock, size)
    if body is None:
        return None
    message = json.loads(body)
    if not isinstance(message, dict):
        raise ConnectionError("a frame that is not a JSON object")
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


# --- arrays and times ------------------------------------------------------------------------


def array_out(a: np.ndarray | None) -> dict[str, Any] | None:
    if a is None:
        return None
    a = np.ascontiguousarray(a)
    data = base64.b64encode(a.tobytes()).decode()
    return {"dtype": str(a.dtype), "shape": list(a.shape), "b64": data}


def array_in(d: Mapping[str, Any] | None) -> np.ndarray | None:
    if d is None:
        return None
    raw = base64.b64decode(d["b64"])
    return np.frombuffer(raw, dtype=np.dtype(d["dtype"])).reshape(d["shape"]).copy()


def vectors_out(vectors: Mapping[str, np.ndarray]) -> dict[str, Any]:
    texts = list(vectors)
    matrix = np.stack([vectors[t] for t in texts]) if texts else None
    return {"texts": texts, "matrix": array_out(matrix)}


def vectors_in(d: Mapping[str, Any]) -> dict[str, np.ndarray]:
    matrix = array_in(d["matrix"])
    if matrix is None:
        return {}
    return dict(zip(d["texts"], matrix, strict=True))


# --- ops and plans ---------------------------------------------------------------------------


_OPS = {"get": GetOp, "put": PutOp, "search": SearchOp, "list": ListNamespacesOp}
_WIRE_NAMES = {
    "namespace": "ns",
    "namespace_prefix": "ns",
    "refresh_ttl": "refresh",
    "match_conditions": "match",
}
"""The names the ops' fields cross under where they differ from LangGraph's."""


def op_out(op: Any) -> dict[str, Any]:
    kind = next((k for k, cls in _OPS.items() if isinstance(op, cls)), None)
    if kind is None:
        raise TypeError(f"Cannot send an op of type {type(op).__name__} to another process.")
    out: dict[str, Any] = {"op": kind}
    for name, value in op._asdict().items():
        paths = name == "index" and value is not None and value is not False
        if name in ("namespace", "namespace_prefix") or paths:
            value = list(value)
        elif name == "match_conditions":
            value = [[c.match_type, list(c.path)] for c in value or ()]
        out[_WIRE_NAMES.get(name, name)] = value
    return out


def op_in(d: Mapping[str, Any]) -> Any:
    cls: Any = _OPS.get(d["op"])
    if cls is None:
        raise ValueError(f"unknown op {d['op']!r}")
    args = {name: d[_WIRE_NAMES.get(name, name)] for name in cls._fields}
    for name in ("namespace", "namespace_prefix"):
        if name in args:
            args[name] = tuple(args[name])
    if "match_conditions" in args:
        conditions = tuple(MatchCondition(t, tuple(p)) for t, p in args["match_conditions"])
        args["match_conditions"] = conditions or None
    return cls(**args)


def plan_out(plan: Plan) -> dict[str, Any]:
    return {
        "n": plan.n_ops,
        "gets": [[i, op_out(op)] for i, op in plan.gets],
        "searches": [[i, op_out(op)] for i, op in plan.searches],
        "listings": [[i, op_out(op)] for i, op in plan.listings],
        "puts": [
            {"op": op_out(p.op), "texts": [list(t) for t in p.texts], "asked": list(p.asked)}
            for p in plan.puts.values()
        ],
    }


def plan_in(d: Mapping[str, Any]) -> Plan:
    plan = Plan(n_ops=d["n"])
    plan.gets = [(i, op_in(op)) for i, op in d["gets"]]
    plan.searches = [(i, op_in(op)) for i, op in d["searches"]]
    plan.listings = [(i, op_in(op)) for i, op in d["listings"]]
    for p in d["puts"]:
        op = op_in(p["op"])
        texts = tuple((path, text) for path, text in p["texts"])
        plan.puts[(op.namespace, op.key)] = PutPlan(op, texts, tuple(p["asked"]))
    return plan


# --- how a search ranks ----------------------------------------------------------------------


def method_out(m: Method) -> dict[str, Any]:
    return {"kind": m.kind, "calibration": _calibration_out(m.calibration), "lift": m.lift}


def method_in(d: Mapping[str, Any]) -> Method:
    return Method(d["kind"], _calibration_in(d["calibration"]), d["lift"])


def _calibration_out(c: Calibration) -> dict[str, Any]:
    s, second = c.second, None
    if s is not None:
        second = {"query": array_out(s.query), "gate": array_out(s.gate), "gate_at": s.gate_at}
        second["calibration"] = _calibration_out(s.calibration)
    out = {"baseline": c.baseline, "scale": c.scale, "lexical_weight": c.lexical_weight}
    return {**out, "first": array_out(c.first), "second": second}


def _calibration_in(d: Mapping[str, Any]) -> Calibration:
    s, second = d["second"], None
    if s is not None:
        calibration = _calibration_in(s["calibration"])
        second = SecondReading(_array(s["query"]), _array(s["gate"]), s["gate_at"], calibration)
    first = array_in(d["first"])
    return Calibration(d["baseline"], d["scale"], d["lexical_weight"], first, second)


def _array(d: Mapping[str, Any]) -> np.ndarray:
    a = array_in(d)
    assert a is not None
    return a


# --- results ---------------------------------------------------------------------------------


def item_out(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {"ns": list(item.namespace), "key": item.key, "value": item.value}
    out.update(created_at=item.created_at.isoformat(), updated_at=item.updated_at.isoformat())
    if isinstance(item, SearchItem):
        out["score"] = item.score
    return out


def item_in(d: Mapping[str, Any]) -> Item:
    fields = {"namespace": tuple(d["ns"]), "key": d["key"], "value": d["value"]}
    fields["created_at"] = datetime.fromisoformat(d["created_at"])
    fields["updated_at"] = datetime.fromisoformat(d["updated_at"])
    if "score" in d:
        return SearchItem(score=d["score"], **fields)
    return Item(**fields)


def results_out(results: Sequence[Result]) -> list[Any]:
    out: list[Any] = []
    for r in results:
        if r is None:
            out.append(None)
        elif isinstance(r, Item):
            out.append({"item": item_out(r)})
        elif r and isinstance(r[0], Item):
            out.append({"items": [item_out(i) for i in r if isinstance(i, Item)]})
        else:
            out.append({"namespaces": [list(ns) for ns in r if isinstance(ns, tuple)]})
    return out


def results_in(d: Sequence[Any]) -> list[Result]:
    out: list[Result] = []
    for r in d:
        if r is None:
            out.append(None)
        elif "item" in r:
            out.append(item_in(r["item"]))
        elif "items" in r:
            out.append([item_in(i) for i in r["items"]])
        else:
            out.append([tuple(ns) for ns in r["namespaces"]])
    return out


def explanation_out(e: Explanation) -> dict[str, Any]:
    hits = []
    for h in e.hits:
        parts = {f.name: getattr(h, f.name) for f in dataclasses.fields(h) if f.name != "item"}
        hits.append({**parts, "item": item_out(h.item)})
    out = {name: getattr(e, name) for name in ("mode", "baseline", "lexical_weight", "floor")}
    return {**out, "hits": hits}


def explanation_in(d: Mapping[str, Any]) -> Explanation:
    hits = tuple(ScoreBreakdown(**{**h, "item": item_in(h["item"])}) for h in d["hits"])
    return Explanation(d["mode"], d["baseline"], d["lexical_weight"], d["floor"], hits)


def tuples(value: Any) -> Any:
    """Lists (of lists) back into tuples, as a JSON round trip of tuples needs."""
    if isinstance(value, list):
        return tuple(tuples(v) for v in value)
    return value


def jsonable(value: Any) -> Any:
    """A Chroma ``get`` answer (numpy arrays inside) as plain JSON data."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    return value


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
            raise PermissionError(
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
    return bool(uid == os.geteuid())


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
