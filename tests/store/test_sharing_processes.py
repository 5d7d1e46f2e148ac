"""One folder, many processes, all at once and by its path only (real processes).

An agent process writes in a loop, printing each key once its put returned. Meanwhile the
command line's ``stats`` and ``export``, the inspector (``ui``, an HTTP request listing the
agent's namespace), an MCP server over stdio (save and recall) and a second Python process
(search and put) work on the same folder, given nothing but its path. Then the agent, which
holds the folder, is SIGKILLed: the others go on (one of them takes the folder over, the rest
reconnect), and afterwards a fresh opener reads every write any of them had acknowledged.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.testing import served_by_another_process

from .test_sharing import OPEN, REPO, TIMEOUT_S, _cli, _env, _line, _say, _start, _stop

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
"""Seven processes start on a shared 2-core machine: a bound against hangs, not a speed check."""

AGENT = (
    OPEN
    + """
store = open_store()
store.put(("agent", "alice"), "first", {"text": "alice drinks green tea"})
print("ready", flush=True)
i = 0
while True:  # until SIGKILLed
    store.put(("agent", "alice"), f"a{i}", {"text": f"agent note {i} about green tea"})
    print(f"acked a{i}", flush=True)
    i += 1
    time.sleep(0.05)
"""
)

PEER = (
    OPEN
    + """
import json
store = open_store()
print("ready", flush=True)
for line in sys.stdin:
    n = line.strip()
    if n == "done":
        break
    store.put(("peer", "bob"), f"p{n}", {"text": f"bob note {n} about green tea"})
    hits = store.search(("agent",), query="green tea", limit=5)
    got = store.get(("peer", "bob"), f"p{n}")
    print(json.dumps({"acked": f"p{n}", "hits": [h.key for h in hits],
                      "read back": got is not None}), flush=True)
store.close()
print("closed", flush=True)
"""
)

KEY = re.compile(r'class="key" href="[^"]*key=([^"&]+)"')
"""An item's key in the inspector's listing of a namespace."""


class Acked:
    """The keys the agent printed as acknowledged, read from its stdout by a thread."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.keys: list[str] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("acked "):
                with self._lock:
                    self.keys.append(line.split()[1])

    def count(self) -> int:
        with self._lock:
            return len(self.keys)

    def wait_for(self, n: int) -> None:
        """Until the agent has acknowledged ``n`` writes (a bound against hangs only)."""
        _wait(lambda: self.count() >= n, f"the agent acknowledged {n} writes")

    def finish(self) -> list[str]:
        """All keys, once the agent's stdout ended."""
        self._thread.join(timeout=TIMEOUT_S)
        assert not self._thread.is_alive()
        return list(self.keys)


def _wait(done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {TIMEOUT_S:.0f} s: {what}")
        time.sleep(0.1)


def _start_ui(path: Path, errors: Path) -> tuple[subprocess.Popen[str], httpx.Client, str]:
    """The inspector on ``path``, a logged-in HTTP client and its base URL."""
    with errors.open("w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "langgraph_episodic",
                "ui",
                "--path",
                str(path),
                "--embeddings",
                "hash",
                "--port",
                "0",
            ],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=_env(),
            cwd=REPO,
        )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip().startswith("http://"):
            url = line.strip()
            break
    else:
        proc.wait(timeout=TIMEOUT_S)
        pytest.fail(f"the inspector ended: {errors.read_text()[-2000:]}")
    client = httpx.Client(timeout=TIMEOUT_S, follow_redirects=True)
    assert client.get(url).status_code == 200  # the token in the URL logs the client in
    return proc, client, url.split("/?token=")[0]


def _listed(client: httpx.Client, base: str) -> list[str]:
    """The keys the inspector lists in the agent's namespace (its first page, newest first)."""
    page = client.get(
        f"{base}/namespace", params=[("ns", "agent"), ("ns", "alice"), ("sort", "updated")]
    )
    assert page.status_code == 200, page.text[-2000:]
    return KEY.findall(page.text)


def _stats(path: Path) -> Any:
    done = _cli("stats", "--path", str(path), "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _exported(path: Path, out: Path) -> set[tuple[str, ...]]:
    done = _cli("export", str(out), "--path", str(path))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    return {(*line["namespace"], line["key"]) for line in lines}


def _peer_round(peer: subprocess.Popen[str], n: int) -> dict[str, Any]:
    _say(peer, str(n))
    got: dict[str, Any] = json.loads(_line(peer))
    assert got["acked"] == f"p{n}" and got["read back"] is True
    assert got["hits"], "the peer's search found none of the agent's notes"
    return got


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_an_agent_the_command_line_the_inspector_mcp_and_a_peer_share_one_folder(
    tmp_path: Path,
) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    path = tmp_path / "store"
    agent = _start(AGENT, str(path))
    assert _line(agent) == "ready"
    acked = Acked(agent)
    peer = _start(PEER, str(path))
    ui: subprocess.Popen[str] | None = None
    peer_acked: list[str] = []
    try:
        assert _line(peer) == "ready"
        ui, http, base = await asyncio.to_thread(_start_ui, path, tmp_path / "ui.err")
        argv = [
            "-m",
            "langgraph_episodic",
            "mcp",
            "--user",
            "carol",
            "--path",
            str(path),
            "--embeddings",
            "hash",
            "--locale",
            "en",
        ]
        params = StdioServerParameters(command=sys.executable, args=argv, env=_env(), cwd=REPO)
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as mcp,
        ):
            await asyncio.wait_for(mcp.initialize(), TIMEOUT_S)

            async def save_and_recall(fact: str, question: str, word: str) -> None:
                saved = await asyncio.wait_for(
                    mcp.call_tool("save_memory", {"information": fact}), TIMEOUT_S
                )
                assert not saved.isError, saved.content
                recalled = await asyncio.wait_for(
                    mcp.call_tool("recall_memory", {"query": question}), TIMEOUT_S
                )
                assert not recalled.isError and word in _text(recalled), recalled.content

            # 1. All of them at once, while the agent writes.
            await asyncio.to_thread(acked.wait_for, 3)
            stats = await asyncio.to_thread(_stats, path)
            assert "alice" in json.dumps(stats)
            seen = acked.count()
            exported = await asyncio.to_thread(_exported, path, tmp_path / "before.jsonl")
            assert ("agent", "alice", "first") in exported
            assert {("agent", "alice", k) for k in acked.keys[:seen]} <= exported
            listed = await asyncio.to_thread(_listed, http, base)
            assert listed and all(k == "first" or re.fullmatch(r"a\d+", k) for k in listed)
            await save_and_recall("Carol plays the cello.", "Who plays the cello?", "cello")
            peer_acked.append(_peer_round(peer, 1)["acked"])
            written = acked.count()
            await asyncio.to_thread(acked.wait_for, written + 3)  # the agent went on meanwhile

            # 2. The agent, which holds the folder, is killed; the others go on.
            os.kill(agent.pid, signal.SIGKILL)
            agent.wait(timeout=TIMEOUT_S)
            agent_acked = acked.finish()
            peer_acked.append((await asyncio.to_thread(_peer_round, peer, 2))["acked"])
            await save_and_recall(
                "Carol also plays the piano.",
                "Which instrument besides the cello does Carol play?",
                "piano",
            )
            listed = await asyncio.to_thread(_listed, http, base)
            in_flight = f"a{len(agent_acked)}"  # written, maybe, but killed before its ack
            assert set(listed) <= {"first", *agent_acked, in_flight}, listed
            assert agent_acked[-1] in listed, listed  # (newest first: its last acked write)
            exported = await asyncio.to_thread(_exported, path, tmp_path / "after.jsonl")
            missing = {("agent", "alice", k) for k in ["first", *agent_acked]} - exported
            assert missing == set()
            assert {("peer", "bob", k) for k in peer_acked} <= exported
            assert "alice" in json.dumps(await asyncio.to_thread(_stats, path))
            peer_acked.append((await asyncio.to_thread(_peer_round, peer, 3))["acked"])
        _say(peer, "done")
        assert _line(peer) == "closed"
        assert peer.wait(timeout=TIMEOUT_S) == 0
        http.close()
    finally:
        if ui is not None:
            ui.terminate()
            ui.wait(timeout=TIMEOUT_S)
            _stop(ui)
        _stop(peer)
        _stop(agent)

    # 3. A fresh opener, alone on the folder now, reads every acknowledged write.
    with ChromaStore.persistent(path, index={"dims": 64, "embed": HashEmbeddings(64)}) as store:
        assert not served_by_another_process(store)
        lost = [k for k in ["first", *agent_acked] if store.get(("agent", "alice"), k) is None]
        lost += [k for k in peer_acked if store.get(("peer", "bob"), k) is None]
        assert lost == []
        carol = [
            item.value
            for ns in store.list_namespaces()
            if "carol" in ns
            for item in store.search(ns, limit=100)
        ]
        assert all(any(w in json.dumps(v) for v in carol) for w in ("cello", "piano")), carol
        assert store.verify().ok
    assert len(agent_acked) >= 6  # (it wrote before, during and after the others' first round)
