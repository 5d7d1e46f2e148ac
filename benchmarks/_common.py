"""Shared pieces of the throughput benchmark: corpus, cached embedder, timers, server, tables.

The corpus is built at run time from the LoCoMo development turns (read from the shared data
folder, never copied into the repository): the real turns first, then synthetic sentences that
join one turn with a clause of another, until every item has its own distinct text. Queries
are LoCoMo questions.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _locomo_data import DEFAULT_DATA, format_table, load_conversations

DIMS = 384
"""Vector size of the packaged all-MiniLM-L6-v2 (precomputed vectors use the same size)."""

ITEMS_PER_USER = 100
"""Items per user namespace: 1k items = 10 users, 100k items = 1,000 users."""

KINDS = ("fact", "event", "preference", "plan")
"""Values of the ``kind`` field, cycled; the filter ``{"kind": "event"}`` keeps a quarter."""

FILTER = {"kind": "event"}


@dataclass(frozen=True)
class Corpus:
    """Items to store (namespace, key, value) and the queries to search with."""

    items: list[tuple[tuple[str, ...], str, dict[str, Any]]]
    queries: list[str]
    n_real: int
    """How many item texts are real LoCoMo turns (the rest are recombined)."""

    @property
    def texts(self) -> list[str]:
        """The indexed text of every item, in order."""
        return [value["text"] for _, _, value in self.items]

    def users(self) -> int:
        """Number of user namespaces."""
        return max(1, len(self.items) // ITEMS_PER_USER)


def user_ns(user: int) -> tuple[str, str, str]:
    """The namespace of one user's memories."""
    return ("users", f"u{user}", "memories")


def build_corpus(n: int, data: Path = DEFAULT_DATA) -> Corpus:
    """``n`` items with distinct texts, spread over ``n / 100`` user namespaces."""
    conversations = load_conversations(data)
    turns = [t for c in conversations for t in c.turns]
    queries = [q.question for c in conversations for q in c.questions]
    base = [t.document for t in turns]
    clauses = [t.text.split(".")[0].split(",")[0].strip() for t in turns]
    texts: list[str] = []
    seen: set[str] = set()
    i = 0
    while len(texts) < n:
        if i < len(base):
            text = base[i]
        else:
            a, b = i % len(base), (i * 7919 + i // len(base)) % len(base)
            text = f"{base[a]} Also, {clauses[b].lower()}."
            if text in seen:
                text = f"{text} ({i})"
        if text not in seen:
            seen.add(text)
            texts.append(text)
        i += 1
    users = max(1, n // ITEMS_PER_USER)
    items: list[tuple[tuple[str, ...], str, dict[str, Any]]] = []
    for j, text in enumerate(texts):
        turn = turns[j % len(turns)]
        value = {
            "text": text,
            "speaker": turn.speaker,
            "kind": KINDS[j % len(KINDS)],
            "session": turn.session,
            "turn": j,
        }
        items.append((user_ns(j % users), f"m{j}", value))
    return Corpus(items=items, queries=queries, n_real=min(n, len(base)))


class CachedEmbeddings(Embeddings):
    """Precomputed vectors: a fixed random unit vector per known text (seeded), so the store's
    own cost is measured, not the model's. Unknown texts get a vector from their hash (about
    50 us each, so the throughput cells list their queries as known texts).
    """

    def __init__(self, texts: Sequence[str], *, dims: int = DIMS, seed: int = 7) -> None:
        rng = np.random.default_rng(seed)
        matrix = rng.standard_normal((len(texts), dims)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        self.matrix = matrix
        self.row = {t: i for i, t in enumerate(texts)}
        self.dims = dims
        self.calls = 0

    def vector(self, text: str) -> np.ndarray:
        """The unit vector of ``text`` as float32."""
        row = self.row.get(text)
        if row is not None:
            return self.matrix[row]
        seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        vec = np.random.default_rng(seed).standard_normal(self.dims).astype(np.float32)
        return vec / np.linalg.norm(vec)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Look the texts up (one call per batch, counted)."""
        self.calls += 1
        return [self.vector(t).tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Look one text up."""
        return self.vector(text).tolist()


# ---------------------------------------------------------------------------------- timing


@dataclass
class Samples:
    """Per-op wall and CPU seconds of one benchmark row."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    extra_cpu: float = 0.0
    """CPU seconds spent outside this process (the Chroma server), over the whole row."""

    def summary(self) -> dict[str, float]:
        """p50/p95 wall ms, median CPU ms per op (server CPU spread over the ops)."""
        if not self.wall:
            return {"n": 0}
        n = len(self.wall)
        return {
            "n": n,
            "p50": 1e3 * statistics.median(self.wall),
            "p95": 1e3 * percentile(self.wall, 95),
            "cpu": 1e3 * (statistics.median(self.cpu) + self.extra_cpu / n),
        }


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank)."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


def timed_loop(
    fn: Callable[[int], Any],
    *,
    reps: int,
    max_seconds: float,
    server_cpu: Callable[[], float] | None = None,
) -> Samples:
    """Call ``fn(i)`` for i in range(reps), stopping early after ``max_seconds``."""
    samples = Samples()
    before = server_cpu() if server_cpu else 0.0
    deadline = time.perf_counter() + max_seconds
    for i in range(reps):
        w, c = time.perf_counter(), time.process_time()
        fn(i)
        samples.cpu.append(time.process_time() - c)
        samples.wall.append(time.perf_counter() - w)
        if time.perf_counter() > deadline:
            break
    if server_cpu:
        samples.extra_cpu = server_cpu() - before
    return samples


@contextmanager
def stopwatch() -> Iterator[dict[str, float]]:
    """Measure wall and CPU seconds of a block into the yielded dict."""
    out: dict[str, float] = {}
    w, c = time.perf_counter(), time.process_time()
    try:
        yield out
    finally:
        out["wall"] = time.perf_counter() - w
        out["cpu"] = time.process_time() - c


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (``VmHWM``), MiB.

    Not ``getrusage``: on Linux its ``ru_maxrss`` survives ``exec``, so a child started by a
    big parent would report the parent's peak.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_mb() -> float:
    """Current resident memory of this process, MiB."""
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


# ---------------------------------------------------------------------------------- server


@dataclass
class Server:
    """A ``chroma run`` process on 127.0.0.1 that the benchmark started."""

    process: subprocess.Popen[bytes]
    port: int
    path: Path

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server has used so far."""
        import psutil

        t = psutil.Process(self.process.pid).cpu_times()
        return float(t.user + t.system)

    def peak_rss_mb(self) -> float:
        """The server's peak resident memory (``VmHWM``), MiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
        return float("nan")

    def stop(self) -> None:
        """Terminate the server and wait for it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(workdir: Path, *, timeout: float = 60.0) -> Server:
    """Start ``chroma run --path <workdir>/data --host 127.0.0.1 --port <free>``; wait for it."""
    cli = Path(sys.executable).with_name("chroma")
    exe = str(cli) if cli.exists() else shutil.which("chroma")
    if exe is None:
        raise RuntimeError("The `chroma` CLI is missing: install chromadb (`pip install chromadb`).")
    port = free_port()
    data = workdir / f"server-{port}"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
    log = (workdir / f"server-{port}.log").open("wb")
    process = subprocess.Popen(
        [exe, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    server = Server(process, port, data)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1.0
            ) as response:
                if response.status == 200:
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        if process.poll() is not None:
            break
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"`chroma run` did not answer on port {port}; see {log.name}.")


# ---------------------------------------------------------------------------------- children


def run_child(script: Path, spec: dict[str, Any], *, timeout: float) -> dict[str, Any]:
    """Run ``script --child <spec>`` in a fresh interpreter; return its JSON result."""
    env = {
        **os.environ,
        "ANONYMIZED_TELEMETRY": "False",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    try:
        done = subprocess.run(
            [sys.executable, str(script), "--child", json.dumps(spec)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line[len("RESULT ") :])
            return result
    tail = (done.stderr or done.stdout)[-1500:]
    return {"error": f"exit {done.returncode}: {tail}"}


def emit(result: dict[str, Any]) -> None:
    """Print a child's result for :func:`run_child`."""
    print("RESULT " + json.dumps(result), flush=True)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (floats with three decimals; pre-format where that is too many)."""
    return format_table(headers, rows)


def fmt(x: Any, digits: int = 1) -> str:
    """A number for a table cell; ``-`` when missing."""
    if x is None or (isinstance(x, float) and x != x):
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)
