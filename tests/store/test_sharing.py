"""Many processes on one embedded folder, each opening it by its path (real processes).

* While an owner process writes, a second process searches, gets, puts, explains and verifies
  by path, and the command line's ``stats``, ``export`` and ``mcp`` (over stdio) work on the
  folder (``ui``: ``tests/ui/test_views.py``).
* The owner is SIGKILLed while two other processes write: they carry on (one takes the folder
  over, the other reconnects), and every write they had acknowledged is there afterwards.
* A client answers every op kind (filters, index paths, TTL, deletes, listings) as a store of
  its own would: what crosses the socket loses nothing.
* A connection to the folder's socket without the secret (or with a wrong one) is refused.
* ``purge`` still needs the folder alone and names the process holding it; so does
  ``purge_store`` on a client's store.
* A client opened with a ``clock=`` of its own stamps and expires by it; one that asks for
  another ``language`` than the holder's gets a clear error (the command line too).
* All of them at once, with the holder SIGKILLed: ``test_sharing_processes.py``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.sharing_wire import (
    PROTOCOL,
    SECRET_FILE,
    SOCKET_FILE,
    ProtocolMismatchError,
)
from langgraph_episodic.chroma.testing import served_by_another_process

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 180.0
"""Longest a helper process may take (a bound against hangs, not a speed check)."""

OPEN = """
import sys, time
from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.testing import served_by_another_process
def open_store():
    return ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
"""

OWNER = OPEN + """
store = open_store()
assert not served_by_another_process(store)
store.put(("agent", "alice"), "first", {"text": "alice drinks green tea"})
print("ready", flush=True)
i = 0
while sys.stdin.readline().strip() != "done":
    store.put(("agent", "alice"), f"o{i}", {"text": f"owner note {i}"})
    print(f"acked o{i}", flush=True)
    i += 1
store.close()
"""

WRITER = OPEN + """
store = open_store()
name = sys.argv[2]
print("remote" if served_by_another_process(store) else "local", flush=True)
for i in range(int(sys.argv[3])):
    store.put(("writers", name), f"k{i}", {"text": f"{name} wrote {i}"})
    print(f"acked {i}", flush=True)
    time.sleep(0.01)
store.close()
print("closed", flush=True)
"""

CLIENT = OPEN + """
import asyncio, json
store = open_store()
remote = served_by_another_process(store)
store.put(("agent", "bob"), "pref", {"text": "bob likes dark roast coffee"})
hits = store.search(("agent",), query="green tea", limit=3)
got = store.get(("agent", "bob"), "pref")
print(json.dumps({
    "remote": remote,
    "hits": [h.key for h in hits],
    "score": hits[0].score,
    "bob": got.value,
    "created": got.created_at.isoformat(),
    "namespaces": [list(ns) for ns in store.list_namespaces()],
    "explained": store.explain(("agent",), query="green tea").hits[0].item.key,
    "verified": store.verify().ok,
    "async": asyncio.run(store.aget(("agent", "bob"), "pref")).key,
}))
store.close()
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False",
               TOKENIZERS_PARALLELISM="false")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def _start(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=REPO,
    )


def _run(code: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, env=_env(), cwd=REPO,
                          timeout=TIMEOUT_S, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=TIMEOUT_S)
        assert proc.stderr is not None
        pytest.fail(f"the process ended: {proc.stderr.read()[-2000:]}")
    return line.strip()


def _say(proc: subprocess.Popen[str], text: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write(text + "\n")
    proc.stdin.flush()


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=TIMEOUT_S)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def owner(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    path = tmp_path / "store"
    proc = _start(OWNER, str(path))
    try:
        assert _line(proc) == "ready"
        yield proc, path
    finally:
        _stop(proc)


def test_a_second_process_searches_and_puts_while_the_owner_writes(
    owner: tuple[subprocess.Popen[str], Path],
) -> None:
    proc, path = owner
    for _ in range(3):
        _say(proc, "write")
        assert _line(proc).startswith("acked")
    seen = json.loads(_run(CLIENT, str(path)).strip().splitlines()[-1])
    assert seen["remote"] is True
    assert seen["hits"][0] == "first"
    assert seen["score"] > 0
    assert seen["bob"] == {"text": "bob likes dark roast coffee"}
    assert ["agent", "bob"] in seen["namespaces"]
    assert (seen["explained"], seen["verified"], seen["async"]) == ("first", True, "pref")
    _say(proc, "write")  # the owner keeps writing after the client went
    assert _line(proc).startswith("acked")
    _say(proc, "done")
    assert proc.wait(timeout=TIMEOUT_S) == 0
    with ChromaStore.persistent(path, index={"dims": 64, "embed": HashEmbeddings(64)}) as store:
        assert store.get(("agent", "bob"), "pref") is not None
        assert [store.get(("agent", "alice"), f"o{i}") is not None for i in range(4)] == [True] * 4
    assert not (path / SOCKET_FILE).exists()
    assert not (path / SECRET_FILE).exists()


def test_the_owner_killed_mid_run_loses_no_acknowledged_write(
    owner: tuple[subprocess.Popen[str], Path],
) -> None:
    proc, path = owner
    writers = [_start(WRITER, str(path), name, "150") for name in ("a", "b")]
    acked: dict[str, list[int]] = {"a": [], "b": []}
    try:
        for writer in writers:
            assert _line(writer) == "remote"
        for name, writer in zip("ab", writers, strict=True):  # some writes through the owner
            for _ in range(10):
                acked[name].append(int(_line(writer).split()[1]))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=TIMEOUT_S)
        for name, writer in zip("ab", writers, strict=True):
            while (line := _line(writer)) != "closed":
                acked[name].append(int(line.split()[1]))
            assert writer.wait(timeout=TIMEOUT_S) == 0
    finally:
        for writer in writers:
            _stop(writer)
    assert acked == {"a": list(range(150)), "b": list(range(150))}
    with ChromaStore.persistent(path, index={"dims": 64, "embed": HashEmbeddings(64)}) as store:
        missing = [(n, i) for n in "ab" for i in acked[n]
                   if store.get(("writers", n), f"k{i}") is None]
        assert missing == []
        assert store.verify().ok


def _frame(sock: socket.socket, message: Mapping[str, object]) -> dict[str, object] | None:
    data = json.dumps(message).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)
    head = sock.recv(4)
    if len(head) < 4:
        return None
    (size,) = struct.unpack(">I", head)
    body = b""
    while len(body) < size:
        body += sock.recv(size - len(body))
    reply: dict[str, object] = json.loads(body)
    return reply


def test_a_connection_without_the_secret_is_refused(
    owner: tuple[subprocess.Popen[str], Path],
) -> None:
    _, path = owner
    assert (path / SOCKET_FILE).stat().st_mode & 0o777 == 0o600
    assert (path / SECRET_FILE).stat().st_mode & 0o777 == 0o600
    secret = (path / SECRET_FILE).read_text()
    attempts: dict[str, Mapping[str, object]] = {
        "wrong secret": {"secret": "0" * len(secret), "collection": "langgraph_store",
                         "language": "auto"},
        "no secret": {"do": "batch", "plan": {}},
    }
    for name, hello in attempts.items():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(str(path / SOCKET_FILE))
            assert _frame(sock, hello) == {"refused": "wrong secret or another user"}, name
            assert sock.recv(1) == b"", name  # and the connection is closed
    hello = {"secret": secret, "collection": "langgraph_store", "language": "auto"}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:  # a version before the check
        sock.connect(str(path / SOCKET_FILE))
        reply = _frame(sock, hello)
        assert reply is not None and "ProtocolMismatchError" in str(reply.get("error"))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:  # the right one works
        sock.connect(str(path / SOCKET_FILE))
        reply = _frame(sock, {**hello, "protocol": PROTOCOL})
        assert reply is not None and "ok" in reply


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "langgraph_episodic", *argv],
                          capture_output=True, text=True, env=_env(), cwd=REPO,
                          timeout=TIMEOUT_S, check=False)


def test_stats_and_export_work_while_an_agent_holds_the_folder(
    owner: tuple[subprocess.Popen[str], Path], tmp_path: Path,
) -> None:
    proc, path = owner
    stats = _cli("stats", "--path", str(path), "--json")
    assert stats.returncode == 0, stats.stderr
    assert "agent" in stats.stdout and "alice" in stats.stdout
    out = tmp_path / "dump.jsonl"
    export = _cli("export", str(out), "--path", str(path))
    assert export.returncode == 0, export.stderr
    (line,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert (line["namespace"], line["key"]) == (["agent", "alice"], "first")
    assert line["index"] == ["$"]  # what only the raw collections say, read through the owner
    _say(proc, "write")  # the agent goes on
    assert _line(proc).startswith("acked")


def test_purge_still_needs_the_folder_alone_and_names_its_holder(
    owner: tuple[subprocess.Popen[str], Path],
) -> None:
    proc, path = owner
    purge = _cli("purge", "--path", str(path))
    assert purge.returncode == 2
    assert f"pid {proc.pid}" in purge.stderr


async def test_mcp_over_stdio_saves_and_recalls_while_an_agent_holds_the_folder(
    owner: tuple[subprocess.Popen[str], Path],
) -> None:
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    proc, path = owner
    argv = ["-m", "langgraph_episodic", "mcp", "--user", "carol", "--path", str(path),
            "--embeddings", "hash", "--locale", "en"]
    params = StdioServerParameters(command=sys.executable, args=argv, env=_env(), cwd=REPO)
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as client,
    ):
        await asyncio.wait_for(client.initialize(), TIMEOUT_S)
        saved = await asyncio.wait_for(
            client.call_tool("save_memory", {"information": "Carol plays the cello."}), TIMEOUT_S
        )
        assert not saved.isError, saved.content
        recalled = await asyncio.wait_for(
            client.call_tool("recall_memory", {"query": "Who plays the cello?"}), TIMEOUT_S
        )
        assert "cello" in "".join(getattr(b, "text", "") for b in recalled.content)
    _say(proc, "write")  # the agent goes on
    assert _line(proc).startswith("acked")


IDLE_OWNER = OPEN + """
store = open_store()
print("ready", flush=True)
sys.stdin.readline()
store.close()
"""


def test_a_client_answers_as_a_store_of_its_own_would(tmp_path: Path) -> None:
    """Every op kind, filters, index paths, TTL and deletes through the socket give what the
    same calls give on a store in the process (the served collection is one the owner had not
    opened: it opens it to serve it)."""
    from langgraph.store.base import (
        GetOp,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        SearchOp,
    )

    path = tmp_path / "store"
    proc = _start(IDLE_OWNER, str(path))
    options: dict[str, Any] = {"index": {"dims": 64, "embed": HashEmbeddings(64),
                                            "fields": ["text", "tags[*]"]},
                                  "search_mode": "hybrid"}
    try:
        assert _line(proc) == "ready"
        client = ChromaStore.persistent(path, collection="differential", **options)
        local = ChromaStore.ephemeral(**options)
        try:
            assert served_by_another_process(client)
            puts: list[Op] = [
                PutOp(("docs", "alice"), "a", {"text": "green tea every morning", "n": 3,
                                               "tags": ["drink", "tea"]}),
                PutOp(("docs", "alice"), "b", {"text": "dark roast coffee", "n": 7}, ttl=60.0),
                PutOp(("docs", "bob"), "c", {"text": "tea with lemon", "n": 5}, index=False),
                PutOp(("docs", "bob", "deep"), "d", {"text": "mountain tea hike", "n": 1},
                      index=["text"]),
                PutOp(("other",), "e", {"text": "unrelated note"}),
            ]
            reads: list[Op] = [
                GetOp(("docs", "alice"), "a"),
                GetOp(("docs", "alice"), "missing"),
                SearchOp(("docs",), query="tea", limit=10),
                SearchOp(("docs",), filter={"n": {"$gte": 3}}, limit=10),
                SearchOp(("docs",), query="coffee", filter={"n": 7}, limit=2, offset=0),
                SearchOp(("docs", "bob"), limit=5),
                ListNamespacesOp(max_depth=2),
                ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("docs",)),)),
            ]
            deletes: list[Op] = [PutOp(("docs", "alice"), "b", None)]
            for ops in (puts, reads, deletes, reads):
                got, want = client.batch(ops), local.batch(ops)
                assert _comparable(got) == _comparable(want)
            found = client.search(("docs",), query="tea", limit=10)
            assert {h.key for h in found} >= {"a", "c", "d"} and found[0].score
            assert [ns for ns in client.list_namespaces(max_depth=2)] == [("docs", "alice"),
                                                                         ("docs", "bob"),
                                                                         ("other",)]
        finally:
            client.close()
            local.close()
    finally:
        _say(proc, "done")
        proc.wait(timeout=TIMEOUT_S)
        _stop(proc)


def _comparable(results: Sequence[object]) -> list[object]:
    """Results without their timestamps (each store stamps its own), scores rounded."""
    from langgraph.store.base import Item, SearchItem

    def one(x: object) -> object:
        if isinstance(x, Item):
            score = round(x.score, 6) if isinstance(x, SearchItem) and x.score else None
            return (tuple(x.namespace), x.key, x.value, score)
        if isinstance(x, list):
            return [one(i) for i in x]
        return x

    return [one(r) for r in results]


def test_purge_store_on_a_client_names_the_holder_and_the_way_to_purge(
    owner: tuple[subprocess.Popen[str], Path],
) -> None:
    from langgraph_episodic.privacy import purge_store

    proc, path = owner
    with ChromaStore.persistent(path, index={"dims": 64, "embed": HashEmbeddings(64)}) as client:
        assert served_by_another_process(client)
        got = purge_store(client)
    assert got.purged is False
    assert f"held by process {proc.pid}" in got.detail
    assert "purge_store needs the folder alone" in got.detail
    assert f"langgraph-episodic purge --path {os.path.realpath(path)}" in got.detail


def test_a_client_with_a_clock_of_its_own_stamps_and_expires_by_it(tmp_path: Path) -> None:
    """Its writes carry its time, and its reads judge a TTL by it, as a store alone would."""
    from datetime import datetime, timezone

    path = tmp_path / "store"
    proc = _start(IDLE_OWNER, str(path))
    now = [1_000_000_000.0]
    try:
        assert _line(proc) == "ready"
        with ChromaStore.persistent(path, index={"dims": 64, "embed": HashEmbeddings(64)},
                                    clock=lambda: now[0]) as client:
            assert served_by_another_process(client)
            client.put(("clock",), "k", {"text": "stamped by the client's clock"}, ttl=1.0)
            got = client.get(("clock",), "k")
            assert got is not None
            assert got.created_at == datetime.fromtimestamp(now[0], timezone.utc)
            assert [h.key for h in client.search(("clock",), query="clock")] == ["k"]
            now[0] += 120.0  # two minutes later, by the client's clock: expired
            assert client.get(("clock",), "k", refresh_ttl=False) is None
            assert client.search(("clock",), query="clock") == []
    finally:
        _say(proc, "done")
        proc.wait(timeout=TIMEOUT_S)
        _stop(proc)


GERMAN_OWNER = """
import sys
from langgraph_episodic import ChromaStore, HashEmbeddings
store = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)},
                               language="de")
store.put(("agent", "anna"), "k", {"text": "Anna trinkt grünen Tee"})
print("ready", flush=True)
sys.stdin.readline()
store.close()
"""


OTHER_VERSION_OWNER = OPEN + """
import langgraph_episodic.chroma.sharing_wire as wire
if sys.argv[2] == "newer":  # requests this version cannot read
    wire.PROTOCOL = "f" * 16
else:  # a version from before the check: it neither checks nor tells its protocol
    wire.PROTOCOL = None
    wire.check_protocol = lambda *args: None
store = open_store()
store.put(("agent", "anna"), "k", {"text": "anna drinks green tea"})
print("ready", flush=True)
sys.stdin.readline()
assert store.get(("agent", "anna"), "k") is not None
print("intact", flush=True)
store.close()
"""


@pytest.mark.parametrize("holder", ["newer", "older"])
def test_a_process_of_another_version_is_refused_with_the_fix(tmp_path: Path,
                                                              holder: str) -> None:
    """Processes of two versions could misread each other's requests: the one that opens the
    folder second gets a clear error, by either side's check, and sends no request."""
    path = tmp_path / "store"
    proc = _start(OTHER_VERSION_OWNER, str(path), holder)
    try:
        assert _line(proc) == "ready"
        with pytest.raises(ProtocolMismatchError, match="must run the same version") as raised:
            ChromaStore.persistent(path, index={"dims": 64, "embed": HashEmbeddings(64)})
        assert f"pid {proc.pid}" in str(raised.value) and PROTOCOL in str(raised.value)
        stats = _cli("stats", "--path", str(path))
        assert stats.returncode == 2, stats.stderr
        assert "Traceback" not in stats.stderr and "same version" in stats.stderr
        _say(proc, "done")
        assert _line(proc) == "intact"
    finally:
        _stop(proc)


def test_another_language_than_the_holders_is_a_clear_error(tmp_path: Path) -> None:
    from langgraph_episodic.chroma.sharing_wire import LanguageMismatchError

    path = tmp_path / "store"
    proc = _start(GERMAN_OWNER, str(path))
    try:
        assert _line(proc) == "ready"
        with pytest.raises(LanguageMismatchError, match="language='de'") as raised:
            ChromaStore.persistent(path, index={"dims": 64, "embed": HashEmbeddings(64)},
                                   language="en")
        assert isinstance(raised.value, ValueError)
        stats = _cli("stats", "--path", str(path))  # the command line opens with "auto"
        assert stats.returncode == 2, stats.stderr
        assert "Traceback" not in stats.stderr
        assert f"pid {proc.pid}" in stats.stderr and "language='de'" in stats.stderr
        assert "once that process has closed the folder" in stats.stderr
        with ChromaStore.persistent(path, index={"dims": 64, "embed": HashEmbeddings(64)},
                                    language="de") as same:  # the same language is served
            assert served_by_another_process(same) and same.get(("agent", "anna"), "k") is not None
    finally:
        _say(proc, "done")
        proc.wait(timeout=TIMEOUT_S)
        _stop(proc)
