"""Fixtures shared by the whole suite.

``chroma_server``: a real Chroma server (``chroma run``) on 127.0.0.1, started once per test
session (under pytest-xdist: once per worker) on a free port, the first time a test asks for
it, and stopped at the end of the session.

``fast_tmp_path``: a fresh directory on a RAM file system (``/dev/shm``) when there is one, else
``tmp_path``. Chroma flushes to disk on every write; on this machine's virtual disk a put takes
~140 ms against ~15 ms on tmpfs. The server keeps its data there too.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER_START_TIMEOUT_S = 60.0
"""Longest wait for a starting Chroma server to answer its heartbeat."""

SERVER_START_ATTEMPTS = 3
"""Start attempts (each on a fresh free port) before giving up."""


@dataclass(frozen=True)
class ChromaServer:
    """A running ``chroma run`` server: where it listens and where it keeps its data."""

    host: str
    port: int
    path: Path

    @property
    def url(self) -> str:
        """Base URL of the server, e.g. ``http://127.0.0.1:8123``."""
        return f"http://{self.host}:{self.port}"


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def _chroma_cli() -> str:
    beside_python = Path(sys.executable).with_name("chroma")
    if beside_python.exists():
        return str(beside_python)
    found = shutil.which("chroma")
    if found is None:
        pytest.fail("The `chroma` CLI is not installed; install chromadb (`pip install chromadb`).")
    return found


def _tail(path: Path, limit: int = 4000) -> str:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return text[-limit:] or "<empty>"


def _heartbeat_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1.0) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def _start(workdir: Path, host: str) -> tuple[subprocess.Popen[bytes], ChromaServer, str]:
    """Start a server and wait for its heartbeat; return (process, server, failure text)."""
    port = _free_port(host)
    data = workdir / f"data-{port}"
    out, err = workdir / f"stdout-{port}.log", workdir / f"stderr-{port}.log"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "NO_COLOR": "1"}
    with out.open("wb") as out_file, err.open("wb") as err_file:
        process = subprocess.Popen(
            [_chroma_cli(), "run", "--path", str(data), "--host", host, "--port", str(port)],
            stdout=out_file,
            stderr=err_file,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    server = ChromaServer(host=host, port=port, path=data)
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if _heartbeat_ok(server.url):
            return process, server, ""
        if process.poll() is not None:
            problem = f"`chroma run` exited with code {process.returncode} before answering"
            break
        time.sleep(0.1)
    else:
        _stop(process)
        problem = f"`chroma run` did not answer within {SERVER_START_TIMEOUT_S:.0f} s"
    failure = (
        f"{problem} ({server.url}/api/v2/heartbeat).\nstderr:\n{_tail(err)}\nstdout:\n{_tail(out)}"
    )
    return process, server, failure


RAM_DIR = Path("/dev/shm")


def _ram_dir(fallback: Path, name: str) -> tuple[Path, bool]:
    """A new directory on tmpfs if possible (and whether the caller must remove it)."""
    if RAM_DIR.is_dir() and os.access(RAM_DIR, os.W_OK):
        return Path(tempfile.mkdtemp(prefix=f"lge-{name}-", dir=RAM_DIR)), True
    return fallback, False


@pytest.fixture
def fast_tmp_path(tmp_path: Path) -> Iterator[Path]:
    """A fresh directory on tmpfs (``/dev/shm``) when available, else ``tmp_path``."""
    path, owned = _ram_dir(tmp_path, "test")
    try:
        yield path
    finally:
        if owned:
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """A real Chroma server on 127.0.0.1 for this session (or xdist worker)."""
    workdir, owned = _ram_dir(tmp_path_factory.mktemp("chroma-server"), "server")
    failures: list[str] = []
    try:
        for _ in range(SERVER_START_ATTEMPTS):
            process, server, failure = _start(workdir, "127.0.0.1")
            if not failure:
                break
            _stop(process)
            failures.append(failure)
        else:
            pytest.fail("Could not start a Chroma server:\n\n" + "\n\n".join(failures))
        try:
            yield server
        finally:
            _stop(process)
    finally:
        if owned:
            shutil.rmtree(workdir, ignore_errors=True)


# --- test tiers ------------------------------------------------------------------------------

SLOW_TESTS = (
    "tests/docs/test_notebooks.py",  # executes every notebook
    "tests/docs/test_readme.py::test_python_blocks_run_in_order_and_clean[README.md]",  # model
    "tests/docs/test_readme.py::test_the_quickstart_",
    "tests/ui/test_browser.py",  # drives Chromium
    "tests/ui/test_views.py::test_the_command_",  # the ui command in a subprocess
    "tests/ui/test_security.py::test_a_folder_another_process_writes",
    "tests/reliability/test_processes.py",  # real processes, SIGKILL
    "tests/store/test_sharing_processes.py",  # agent, CLI, ui, mcp on one folder, SIGKILL
    "tests/store/test_sharing.py",  # owner and client processes, takeover
    "tests/reliability/test_crash.py",
    "tests/reliability/test_deferred_crash.py",  # real processes, SIGKILL
    "tests/formation/test_deferred_concurrency.py",  # ten users racing at a microsecond's switch
    "tests/cli/test_transfer.py::test_values_with_unicode_line_separators_",  # 300 items each way
    "tests/reliability/test_purge_rebuild.py",  # index rebuilds in child processes
    "tests/reliability/test_store_lifecycle.py",  # fork, close under load
    "tests/reliability/test_concurrency.py",  # threads and processes at scale
    "tests/reliability/test_index_race.py",  # Chroma's own read races, provoked with threads
    "tests/reliability/test_forget_on_disk.py",  # the files scanned in child processes
    "tests/reliability/test_server_privacy.py",
    "tests/reliability/test_isolation_attacks.py::test_lookalike_ids_only_see_their_own_items",
    "tests/reliability/test_bad_input.py::test_odd_queries_answer_or_refuse_cleanly",
    "tests/cli/test_first_minutes.py",  # the installed command, as a new user runs it
    "tests/cli/test_cli_attacks.py",  # the command in subprocesses
    "tests/mcp_server/test_stdio.py",  # MCP servers in subprocesses
    "tests/mcp_server/test_http.py",
    "tests/mcp_server/test_adapters_example.py",
    "tests/mcp_server/test_tokens.py::test_option_mistakes_are_named",
    "tests/server/test_concurrent_runs.py",
    "tests/store/test_large_namespace.py",  # 33,000 items
    "tests/store/test_races.py",  # threads racing at a microsecond's switch interval
    "tests/store/test_search_during_update.py",
    "tests/store/test_persistence.py::test_a_new_process_reads_the_folder",
    "tests/store/test_ttl.py::test_namespace_listed_at_the_exact_expiry_of_its_item",
    "tests/store/test_shared_fields.py::test_searches_racing_writes_keep_the_score_rules",
    "tests/reliability/test_ttl.py::test_expired_items_are_never_returned_and_the_sweep_removes",
    "tests/episodic/test_strategy_decay.py::test_memory_profiles_flag_a_change_and_detection_can",
    "tests/test_embeddings.py::test_hash_embedding_is_deterministic_across_processes",
    "tests/episodic/test_similarity.py::test_hash_embedding_is_the_same_in_other_processes",
    "tests/episodic/test_learning.py::test_importing_the_package_and_the_demo_report_never",
    "tests/episodic/test_change_detection.py::test_false_alarms_on_a_stable_stream_are_rare",
)
"""Tests left out of the fast tier (``-m "not slow"``, ``scripts/check-fast``), by node id
prefix (a file, or a file and a test name): each starts processes, a browser or the
notebooks, or plays long simulated streams. See docs/development.md."""


def _slow(item: pytest.Item) -> bool:
    """Whether ``item`` belongs to the full tier only: listed above, a real server, the
    packaged model, the store contract's persistent backend (the fast tier keeps its ephemeral
    and in-memory twins), or a hypothesis property (a hundred examples and more)."""
    if item.nodeid.startswith(SLOW_TESTS):
        return True
    if item.get_closest_marker("server") or item.get_closest_marker("model"):
        return True
    if "chroma_server" in getattr(item, "fixturenames", ()):
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("backend") == "chroma-persistent":
        return True  # the same code as chroma-ephemeral, plus a folder on disk
    return bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not slow"`` the files listed whole in :data:`SLOW_TESTS` are not even
    imported (the fast tier's collection stays short); otherwise pytest decides."""
    if config.getoption("markexpr", "") != "not slow":
        return None
    root = Path(__file__).resolve().parents[1]
    try:
        relative = collection_path.resolve().relative_to(root).as_posix()
    except ValueError:
        return None
    return True if relative in SLOW_TESTS else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the full-tier-only tests ``slow``; ``-m "not slow"`` is the fast tier."""
    for item in items:
        if _slow(item):
            item.add_marker(pytest.mark.slow)
