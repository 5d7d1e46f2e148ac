"""``langgraph-episodic mcp --http`` on 127.0.0.1: bearer tokens per user, bad input, clients
that go away. The server is the real command in a subprocess."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from .conftest import ALICE_TOKEN, BOB_TOKEN, HttpServer, cli, start_http, stop

pytestmark = pytest.mark.timeout(180)

ACCEPT = "application/json, text/event-stream"


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One server for this module's tests (each starts with a server that is alive)."""
    folder = tmp_path_factory.mktemp("http")
    server = start_http(folder / "store", folder / "server.log", "--allow-forget")
    try:
        yield server
    finally:
        stop(server.process)


@asynccontextmanager
async def session(server: HttpServer, token: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(server.url, http_client=http) as (read, write, _),
        ClientSession(read, write) as client,
    ):
        await asyncio.wait_for(client.initialize(), 60)
        yield client


async def text(client: ClientSession, name: str, arguments: dict[str, Any]) -> str:
    result = await asyncio.wait_for(client.call_tool(name, arguments), 60)
    assert not result.isError, result.content
    return "".join(getattr(block, "text", "") for block in result.content)


def rpc(method: str, params: dict[str, Any], ident: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}


def post(server: HttpServer, body: Any, headers: dict[str, Any]) -> httpx.Response:
    return httpx.post(server.url, json=body, timeout=60,
                      headers={"Accept": ACCEPT, **headers})


def recall_call(question: str) -> dict[str, Any]:
    return rpc("tools/call", {"name": "memory_abrufen", "arguments": {"frage": question}})


async def test_list_save_recall_and_two_users_apart(http_server: HttpServer) -> None:
    async with session(http_server, ALICE_TOKEN) as alice, session(http_server, BOB_TOKEN) as bob:
        names = [t.name for t in (await alice.list_tools()).tools]
        assert names == ["memory_speichern", "memory_abrufen", "memory_verlauf", "memory_vergessen"]
        assert await text(alice, "memory_speichern", {"information": "Alice spielt Geige."})
        assert await text(bob, "memory_speichern", {"information": "Bob spielt Cello."})
        alice_sees = await text(alice, "memory_abrufen", {"frage": "Geige Cello spielt"})
        bob_sees = await text(bob, "memory_abrufen", {"frage": "Geige Cello spielt"})
        assert "Alice spielt Geige." in alice_sees and "Cello" not in alice_sees
        assert "Bob spielt Cello." in bob_sees and "Geige" not in bob_sees
        # bob forgets: only bob's memory goes
        assert "Einträge: 1" in await text(bob, "memory_vergessen", {})
        assert "Alice spielt Geige." in await text(alice, "memory_abrufen", {"frage": "Geige"})


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token-0123456789abcdef"},
        {"Authorization": f"Bearer {ALICE_TOKEN}x"},
        {"Authorization": f"Basic {ALICE_TOKEN}"},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer tökén-ünicode-0123456789"},
        {"X-User": "alice"},
    ],
    ids=["none", "wrong", "longer", "basic", "empty", "non-ascii", "user-header"],
)
def test_requests_without_a_known_token_are_refused(
    http_server: HttpServer, headers: dict[str, str]
) -> None:
    assert post(http_server, recall_call("Geige"), {"Authorization": f"Bearer {ALICE_TOKEN}"}
                ).status_code == 200
    raw = {k: v.encode("utf-8") for k, v in headers.items()}  # raw UTF-8 bytes on the wire
    response = post(http_server, recall_call("Geige"), raw)
    assert response.status_code == 401
    assert "Geige" not in response.text
    assert http_server.alive()
    assert ALICE_TOKEN not in http_server.stderr() and BOB_TOKEN not in http_server.stderr()


async def test_bob_cannot_reach_alices_memory(http_server: HttpServer) -> None:
    """Bob's token is bob: no argument, header or meta field makes a call alice's."""
    async with session(http_server, ALICE_TOKEN) as alice:
        await text(alice, "memory_speichern", {"information": "Alice wohnt in Köln."})
    bob = {"Authorization": f"Bearer {BOB_TOKEN}", "X-User": "alice"}
    with_user = rpc("tools/call", {"name": "memory_abrufen",
                                   "arguments": {"frage": "Köln", "user_id": "alice"}})
    refused = post(http_server, with_user, bob).json()
    assert refused["result"]["isError"] is True
    meta = rpc("tools/call", {"name": "memory_abrufen", "arguments": {"frage": "Köln wohnt"},
                              "_meta": {"user_id": "alice", "configurable": {"user_id": "alice"}}})
    answer = post(http_server, meta, bob).json()["result"]
    assert answer["isError"] is False
    assert "Köln" not in answer["content"][0]["text"]
    async with session(http_server, ALICE_TOKEN) as alice:
        assert "Köln" in await text(alice, "memory_abrufen", {"frage": "Köln wohnt"})


@pytest.mark.parametrize(
    "body",
    [
        rpc("tools/call", {"name": "memory_abrufen", "arguments": {"frage": 42}}),
        rpc("tools/call", {"name": "memory_abrufen", "arguments": {"frage": "x" * 5000}}),
        rpc("tools/call", {"name": "memory_speichern", "arguments": {"information": {"a": 1}}}),
        rpc("tools/call", {"name": "memory_speichern", "arguments": "Alice"}),
        rpc("tools/call", {"name": "memory_speichern"}),
        rpc("tools/call", {"name": 7, "arguments": {}}),
        rpc("tools/call", {"name": "no_such_tool", "arguments": {}}),
        rpc("tools/nope", {}),
        {"jsonrpc": "2.0", "id": 1},
        [1, 2, 3],
        "not json-rpc",
    ],
)
def test_bad_requests_get_an_mcp_error_not_a_crash(http_server: HttpServer, body: Any) -> None:
    alice = {"Authorization": f"Bearer {ALICE_TOKEN}"}
    response = post(http_server, body, alice)
    assert response.status_code < 500, response.text
    if response.status_code == 200:
        reply = response.json()
        assert "error" in reply or reply["result"]["isError"] is True, reply
    assert http_server.alive()
    after = post(http_server, recall_call("Geige"), alice)
    assert after.status_code == 200 and after.json()["result"]["isError"] is False


def test_a_request_body_that_is_not_json(http_server: HttpServer) -> None:
    alice = {"Authorization": f"Bearer {ALICE_TOKEN}", "Accept": ACCEPT,
             "Content-Type": "application/json"}
    response = httpx.post(http_server.url, content=b"\xff{{", headers=alice, timeout=60)
    # The SDK answers a body that is not UTF-8 with 500 and a JSON-RPC error (it catches
    # JSONDecodeError only); what matters here: an error answer, and the server carries on.
    assert response.status_code >= 400 and "error" in response.json()
    assert post(http_server, recall_call("x"), alice).status_code == 200


def _raw_request(port: int, body: bytes, *, send: int | None = None) -> None:
    """POST ``body`` (only its first ``send`` bytes) and close without reading the answer."""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {ALICE_TOKEN}\r\n"
        f"Accept: {ACCEPT}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + body[: len(body) if send is None else send])


KILLED_CLIENT = textwrap.dedent(
    """
    import httpx, sys
    url, token = sys.argv[1:]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "memory_speichern", "arguments": {"information": "Alice mag Jazz."}}}
    with httpx.Client(timeout=60) as http:
        with http.stream("POST", url, json=body, headers={"Authorization": "Bearer " + token,
                         "Accept": "application/json, text/event-stream"}) as response:
            print("sent", flush=True)
            import time; time.sleep(600)
    """
)


async def test_the_server_survives_clients_that_go_away(http_server: HttpServer) -> None:
    save = json.dumps(rpc("tools/call", {"name": "memory_speichern",
                                         "arguments": {"information": "Alice mag Tee."}})).encode()
    for _ in range(5):
        _raw_request(http_server.port, save, send=len(save) // 2)  # gone mid-request
        _raw_request(http_server.port, save)  # gone before the answer
    killed = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, http_server.url, ALICE_TOKEN],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert killed.stdout is not None
        assert killed.stdout.readline().strip() == b"sent"
    finally:
        killed.kill()
        killed.wait(timeout=10)
    assert http_server.alive()
    async with session(http_server, ALICE_TOKEN) as alice:
        answer = await text(alice, "memory_abrufen", {"frage": "Was mag Alice? Tee Jazz"})
    assert "Alice mag Tee." in answer  # the complete requests were served, the cut one dropped
    assert answer.count("Alice mag Tee.") == 1
    assert http_server.alive(), http_server.stderr()


def test_http_without_tokens_says_how_to_configure_them(tmp_path: Path) -> None:
    env = {k: v for k, v in __import__("os").environ.items() if k != "EPISODIC_MCP_TOKENS"}
    done = subprocess.run(cli("mcp", "--http", "--path", str(tmp_path / "s"), "--embeddings",
                              "hash"), capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert "EPISODIC_MCP_TOKENS" in done.stderr and "--tokens-file" in done.stderr
    assert "Traceback" not in done.stderr


def test_short_tokens_are_refused_without_printing_them(tmp_path: Path) -> None:
    env = {**__import__("os").environ, "EPISODIC_MCP_TOKENS": "abc123:alice"}
    done = subprocess.run(cli("mcp", "--http", "--path", str(tmp_path / "s"), "--embeddings",
                              "hash"), capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert "fewer than 16" in done.stderr and "abc123" not in done.stderr


async def test_two_users_at_once_stay_apart(http_server: HttpServer) -> None:
    """Ten saves and recalls of alice and bob interleaved on one server."""
    async def user(token: str, name: str) -> list[str]:
        async with session(http_server, token) as client:
            await asyncio.gather(*(
                text(client, "memory_speichern", {"information": f"{name} besitzt Buch {i}."})
                for i in range(10)
            ))
            return await asyncio.gather(*(
                text(client, "memory_abrufen", {"frage": f"besitzt Buch {i}"}) for i in range(10)
            ))

    alice, bob = await asyncio.gather(user(ALICE_TOKEN, "Alice"), user(BOB_TOKEN, "Bob"))
    assert all("Alice besitzt" in a and "Bob" not in a for a in alice), alice
    assert all("Bob besitzt" in b and "Alice" not in b for b in bob), bob
    assert http_server.alive()
