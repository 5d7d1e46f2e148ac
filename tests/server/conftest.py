"""``LangGraphServer``: the example app under ``langgraph dev`` on a free loopback port.

The example (``examples/langgraph_server``) is copied into a fresh folder (the dev server keeps
its threads in ``./.langgraph_api`` there) and started with the ``langgraph`` CLI installed
beside this Python. Nothing is installed and nothing leaves 127.0.0.1: the CLI's analytics, its
PyPI version check and LangSmith tracing are turned off by their environment variables.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "langgraph_server"

START_TIMEOUT_S = 120.0
"""Longest wait for ``langgraph dev`` to answer ``/ok`` (it takes 5-30 s on a busy machine)."""

STOP_TIMEOUT_S = 30.0
"""Longest wait for a clean shutdown after SIGTERM."""

OFFLINE_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",  # the CLI posts usage analytics otherwise
    "LANGGRAPH_NO_VERSION_CHECK": "true",  # the server asks PyPI for a newer version otherwise
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "NO_COLOR": "1",
}

TOKENS = {"alice": "token-a", "bob": "token-b"}
"""The bearer token of each test user (``EPISODIC_API_TOKENS`` of the example's auth, as in
docs/server.md)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def langgraph_cli() -> str:
    beside_python = Path(sys.executable).with_name("langgraph")
    found = str(beside_python) if beside_python.exists() else shutil.which("langgraph")
    if found is None:
        pytest.fail('The `langgraph` CLI is missing: pip install -e ".[dev]" installs it.')
    return found


class LangGraphServer:
    """``langgraph dev`` running the example app with the given ``EPISODIC_*`` settings."""

    host = "127.0.0.1"

    def __init__(self, app_dir: Path, settings: Mapping[str, str]) -> None:
        self.app_dir = app_dir
        self.settings = dict(settings)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log = app_dir / "server.log"
        self.children: list[psutil.Process] = []

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def _ok(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/ok", timeout=2.0) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False

    def start(self) -> LangGraphServer:
        """Start on a fresh free port and wait for ``/ok``; fail with the log if it does not."""
        tokens = ",".join(f"{token}:{user}" for user, token in TOKENS.items())
        pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, **OFFLINE_ENV, **self.settings,
               "EPISODIC_API_TOKENS": tokens, "PYTHONPATH": pythonpath}  # fmt: skip
        for key in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_CLOUD_LICENSE_KEY"):
            env.pop(key, None)
        self.port = free_port()
        cmd = [langgraph_cli(), "dev", "--no-browser", "--no-reload", "--host", self.host,
               "--port", str(self.port), "--n-jobs-per-worker", "10"]  # fmt: skip
        with self.log.open("ab") as log:
            log.write(f"\n===== start on port {self.port}\n".encode())
            log.flush()
            self.process = subprocess.Popen(
                cmd, cwd=self.app_dir, stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                env=env, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and self.process.poll() is None:
            if self._ok():
                self.children = psutil.Process(self.process.pid).children(recursive=True)
                return self
            time.sleep(0.2)
        code = self.process.poll()
        self.kill()
        pytest.fail(
            f"`langgraph dev` did not answer on {self.url}/ok within {START_TIMEOUT_S:.0f} s "
            f"(exit code {code}):\n{self.log_text()[-5000:]}"
        )

    def remote_hosts(self) -> set[str]:
        """Hosts the server and its children have sockets connected to right now."""
        assert self.process is not None, "not started"
        procs = [psutil.Process(self.process.pid), *self.children]
        hosts = set()
        for proc in procs:
            try:
                conns = proc.net_connections(kind="inet")
            except psutil.NoSuchProcess:
                continue
            hosts |= {c.raddr.ip for c in conns if c.raddr}
        return hosts

    def stop(self) -> int:
        """SIGTERM, as a supervisor stops it; return the exit code. Fails the test if the server
        or a process it started is still alive afterwards."""
        assert self.process is not None, "not started"
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"`langgraph dev` ignored SIGTERM for {STOP_TIMEOUT_S:.0f} s")
        _, alive = psutil.wait_procs(self.children, timeout=10)
        leaked = [p.pid for p in alive]
        self.process = None
        assert not leaked, f"processes left behind by langgraph dev: {leaked}"
        return code

    def kill(self) -> None:
        """Kill the server's own process group (teardown after a failure)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None


@pytest.fixture
def app_dir(fast_tmp_path: Path) -> Path:
    """A fresh copy of the example app."""
    target = fast_tmp_path / "app"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    return target


@pytest.fixture
def langgraph_server(app_dir: Path) -> Iterator[type[LangGraphServer]]:
    """``langgraph_server(app_dir, settings)`` builds servers; any left running are killed."""
    made: list[LangGraphServer] = []

    class Tracked(LangGraphServer):
        def __init__(self, app_dir: Path, settings: Mapping[str, str]) -> None:
            super().__init__(app_dir, settings)
            made.append(self)

    yield Tracked
    for server in made:
        server.kill()
