"""Fixtures for the reliability, privacy and security tests.

* ``store``: a fresh store with the 64-dim ``HashEmbeddings`` index, once as LangGraph's
  ``InMemoryStore`` (the reference) and once as ``ChromaStore.ephemeral`` (hybrid search).
* ``chroma``: a fresh ``ChromaStore.ephemeral`` only (for raw-collection checks).
* ``ServerProcess``: a ``chroma run`` server the test owns (start, kill, freeze, restart on the
  same port and path), for outage and multi-process tests.
* ``run_python(code, ...)``: run a Python snippet in a fresh interpreter (no shared Chroma
  client cache), bounded by a timeout.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic.embeddings import HashEmbeddings

DIMS = 64
REPO = Path(__file__).resolve().parents[2]
SUBPROCESS_TIMEOUT_S = 120.0
"""Longest a helper interpreter may run before the test fails (a bound, not a speed check)."""
SERVER_START_TIMEOUT_S = 60.0


def hash_index(embed: Embeddings | None = None) -> dict[str, Any]:
    """The deterministic test index (optionally with another embedder)."""
    return {"dims": DIMS, "embed": embed or HashEmbeddings(DIMS)}


def make_store(kind: str, **options: Any) -> BaseStore:
    """A fresh store: ``"memory"`` (InMemoryStore) or ``"chroma"`` (ChromaStore.ephemeral)."""
    if kind == "memory":
        return InMemoryStore(index=options.pop("index", hash_index()))  # type: ignore[arg-type]  # IndexConfig is a TypedDict
    from langgraph_episodic import ChromaStore

    options.setdefault("index", hash_index())
    return ChromaStore.ephemeral(**options)


@pytest.fixture(params=["memory", "chroma"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(kind: str) -> Iterator[BaseStore]:
    s = make_store(kind)
    yield s
    close = getattr(s, "close", None)
    if callable(close):
        close()


@pytest.fixture
def chroma() -> Iterator[Any]:
    from langgraph_episodic import ChromaStore

    s = ChromaStore.ephemeral(index=hash_index())
    yield s
    s.close()


def store_collections(store: Any) -> list[Any]:
    """Every Chroma collection a ChromaStore keeps (``<name>`` and ``<name>__*``), read
    straight from its client, so the check does not depend on the store's internals."""
    base = store.collection_name
    out = []
    for col in store.client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name == base or name.startswith(base + "__"):
            out.append(store.client.get_collection(name, embedding_function=None))
    assert out, f"no collections named {base!r} on the store's client"
    official = {col.name for col in store.collections.values()}
    assert official <= {col.name for col in out}, "store.collections names other collections"
    return out


def raw_records(store: Any) -> list[dict[str, Any]]:
    """Every record of a ChromaStore's collections: collection, id, metadata, document and
    the indexed text (a record that is its item reads it from the value, not a document)."""
    from langgraph_episodic.chroma import record_format

    out = []
    for collection in store_collections(store):
        got = collection.get(include=["metadatas", "documents"])
        docs = got["documents"] or [None] * len(got["ids"])
        for rid, meta, doc in zip(got["ids"], got["metadatas"] or [], docs, strict=True):
            text = record_format.text_of(meta or {}, doc, record_format.path_of(meta or {}))
            out.append(
                {"collection": collection.name, "id": rid, "meta": meta, "doc": doc, "text": text}
            )
    return out


def all_items(store: BaseStore) -> dict[tuple[tuple[str, ...], str], Any]:
    """Every live item of a store, read through the BaseStore API: {(namespace, key): value}."""
    out = {}
    for ns in store.list_namespaces(limit=100_000):
        offset = 0
        while True:
            page = store.search(ns, limit=500, offset=offset)
            for item in page:
                if tuple(item.namespace) == tuple(ns):
                    out[(tuple(ns), item.key)] = item.value
            if len(page) < 500:
                break
            offset += 500
    return out


# --- subprocesses -----------------------------------------------------------------------------


def python_env() -> dict[str, str]:
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return env


def run_python(code: str, *args: str, timeout: float = SUBPROCESS_TIMEOUT_S) -> str:
    """Run ``code`` in a fresh interpreter with ``args`` in ``sys.argv[1:]``; return stdout.

    Fails the test (with stderr) on a non-zero exit or when ``timeout`` passes.
    """
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=python_env(),
        cwd=REPO,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"helper interpreter failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc.stdout


def popen_python(code: str, *args: str, stdin: Any = subprocess.DEVNULL) -> subprocess.Popen[str]:
    """Start ``code`` in a fresh interpreter, stdout piped (line-buffered text)."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=stdin,
        text=True,
        bufsize=1,
        env=python_env(),
        cwd=REPO,
    )


def reap(proc: subprocess.Popen[Any]) -> None:
    """Make sure a helper process is gone (kill it if needed)."""
    if proc.poll() is None:
        proc.kill()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
        pytest.fail(f"helper process {proc.pid} did not exit after SIGKILL")


# --- a Chroma server the test owns --------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _chroma_cli() -> str:
    beside = Path(sys.executable).with_name("chroma")
    found = str(beside) if beside.exists() else shutil.which("chroma")
    if not found:
        pytest.fail("The `chroma` CLI is not installed; install chromadb.")
    return found


class ServerProcess:
    """One ``chroma run`` on 127.0.0.1 with a fixed port and data path, restartable."""

    host = "127.0.0.1"

    def __init__(self, path: Path, port: int | None = None) -> None:
        self.path = path
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log = path.parent / f"chroma-{self.port}-{uuid.uuid4().hex[:6]}.log"

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def heartbeat(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=1.0) as r:
                return bool(r.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False

    def start(self) -> ServerProcess:
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
        cmd = [_chroma_cli(), "run", "--path", str(self.path), "--host", self.host,
               "--port", str(self.port)]  # fmt: skip
        deadline = time.monotonic() + SERVER_START_TIMEOUT_S
        while True:
            with self._log.open("ab") as log:
                self.process = subprocess.Popen(
                    cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=env
                )
            while time.monotonic() < deadline and self.process.poll() is None:
                if self.heartbeat():
                    return self
                time.sleep(0.1)
            # The port of a just-killed server can take a moment to be free again: retry.
            self.stop()
            if time.monotonic() >= deadline:
                tail = self._log.read_text(errors="replace")[-3000:]
                pytest.fail(f"`chroma run` did not come up on {self.url}:\n{tail}")
            time.sleep(0.5)

    def kill(self) -> None:
        """SIGKILL the server (it goes away without a goodbye)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    def freeze(self) -> None:
        """SIGSTOP the server: connections are accepted by the kernel but never answered."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.thaw()
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A Chroma server owned by this test (killed and restarted at will), stopped afterwards."""
    srv = ServerProcess(tmp_path / "chroma-data").start()
    try:
        yield srv
    finally:
        srv.stop()


class LineReader:
    """Collects a helper process's stdout lines in a background thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._pump, args=(proc.stdout,), daemon=True)
        self._thread.start()

    def _pump(self, stream: Any) -> None:
        for line in stream:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float) -> list[str]:
        """Wait until ``count`` lines arrived, the stream ended, or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.lines) < count and self._thread.is_alive():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return list(self.lines)

    def finish(self, timeout: float = 30.0) -> list[str]:
        """Wait for the end of the stream (the process exited) and return every line."""
        self._thread.join(timeout)
        with self._cond:
            return list(self.lines)


def stderr_of(proc: subprocess.Popen[str]) -> str:
    if proc.stderr is None or proc.poll() is None:
        return "<still running>"
    return proc.stderr.read()[-4000:]


def require_all(found: Sequence[Any], expected: Sequence[Any]) -> None:
    missing = [e for e in expected if e not in found]
    assert not missing, f"missing: {missing[:10]} (of {len(missing)})"


def _find(obj: Any, cls: type, depth: int = 3) -> Any:
    """The first attribute of ``obj`` (or of its attributes, ``depth`` levels down) that is a
    ``cls`` instance."""
    level = [obj]
    for _ in range(depth):
        for holder in level:
            for value in vars(holder).values():
                if isinstance(value, cls):
                    return value
        level = [
            value
            for holder in level
            for value in vars(holder).values()
            if hasattr(value, "__dict__") and not isinstance(value, type)
        ]
    pytest.fail(f"{type(obj).__name__} holds no {cls.__name__}; update this test helper")


def lexical_doc_count(store: Any, namespace: tuple[str, ...]) -> int:
    """Documents a ChromaStore's in-process BM25 index holds for ``namespace``."""
    from langgraph_episodic.chroma.ranking.lexical import LexicalIndex

    index: LexicalIndex = _find(store, LexicalIndex)
    return index.doc_count([namespace])


def cached_vector_rows(store: Any, namespace: tuple[str, ...]) -> int:
    """Vectors a ChromaStore's in-process vector cache holds for ``namespace``."""
    from langgraph_episodic.chroma.ranking.vectors import VectorCache

    cache: VectorCache = _find(store, VectorCache)
    entry = cache.get(namespace)
    return 0 if entry is None else len(entry)



def strings_held(store: Any, limit: int = 2_000_000) -> list[str]:
    """Every string a ChromaStore holds in process (caches, indexes, mirrors), found by walking
    its object graph, Chroma's own client objects excepted. Robust to refactors of the caches."""
    found: list[str] = []
    seen: set[int] = set()
    stack: list[Any] = [vars(store)]
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            found.append(obj)
            continue
        module = type(obj).__module__ or ""
        if module.startswith(("chromadb", "numpy", "threading", "_thread", "langchain", "httpx")):
            continue
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        elif hasattr(obj, "__dict__") and not callable(obj):
            stack.extend(vars(obj).values())
        elif hasattr(obj, "__slots__"):
            stack.extend(getattr(obj, s) for s in obj.__slots__ if hasattr(obj, s))
    return found
