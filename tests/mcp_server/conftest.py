"""Helpers for the MCP server tests: the real CLI command in a subprocess, on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason='the MCP tests need the [mcp] extra: pip install -e ".[mcp]"')

ALICE_TOKEN = "alice-token-0123456789abcdef"
BOB_TOKEN = "bob-token-0123456789abcdef0"
TOKENS = f"{ALICE_TOKEN}:alice,{BOB_TOKEN}:bob"
START_TIMEOUT = 60.0


def cli(*args: str) -> list[str]:
    """The command line of ``langgraph-episodic ARGS`` with this checkout's interpreter."""
    return [sys.executable, "-m", "langgraph_episodic", *args]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 10 s; never leaves the process behind."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@dataclass(frozen=True)
class HttpServer:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def start_http(store: Path, log: Path, *extra: str) -> HttpServer:
    """``mcp --http`` on a free loopback port over the embedded ``store`` (hash embeddings),
    with alice's and bob's tokens; returns once the port accepts connections."""
    port = free_port()
    env = {**os.environ, "EPISODIC_MCP_TOKENS": TOKENS}
    argv = cli("mcp", "--http", "--port", str(port), "--path", str(store),
               "--embeddings", "hash", *extra)
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    server = HttpServer(process, port, log)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if not server.alive():
            raise AssertionError(f"the MCP server exited early:\n{server.stderr()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return server
        except OSError:
            time.sleep(0.1)
    stop(process)
    raise AssertionError(f"the MCP server did not listen within {START_TIMEOUT} s:\n{server.stderr()}")


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    server = start_http(tmp_path / "store", tmp_path / "server.log", "--allow-forget")
    try:
        yield server
    finally:
        stop(server.process)
