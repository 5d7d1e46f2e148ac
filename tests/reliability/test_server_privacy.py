"""A store on a Chroma server (``chroma run``): what forget can and cannot purge, the operator's
procedure, and token auth through a TLS/auth front (Chroma 1.x's ``chroma run`` itself has no
authentication: its Rust frontend ships a no-op authenticator; see docs/privacy.md)."""

from __future__ import annotations

import http.client
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.cli.main import main
from langgraph_episodic.privacy import forget_user

from .conftest import DIMS, ServerProcess

INDEX: Any = {"dims": DIMS, "embed": HashEmbeddings(DIMS)}
ALICE_WORD, BOB_WORD = b"zqxalicemarker", b"kvbobmarker"


def files_containing(folder: Path, marker: bytes) -> list[str]:
    """Files holding ``marker``, every byte of every file (Chroma's ``length.bin`` included)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and marker in p.read_bytes())  # fmt: skip


def vector_pieces(word: bytes) -> list[bytes]:
    """16-byte pieces (4 float32, at least three non-zero) of the vectors of alice's texts."""
    vectors = INDEX["embed"].embed_documents([f"{word.decode()}{i} tea" for i in range(10)])
    return [struct.pack("<4f", *v[i : i + 4]) for v in vectors for i in range(0, DIMS - 4, 4)
            if sum(1 for x in v[i : i + 4] if x) >= 3]  # fmt: skip


def test_forget_on_a_server_reports_what_the_operator_must_purge(
    server: ServerProcess, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ChromaStore.http(server.host, server.port, index=INDEX)
    for i in range(10):
        store.put(("memories", "alice"), f"m{i}", {"text": f"{ALICE_WORD.decode()}{i} tea"})
        store.put(("memories", "bob"), f"m{i}", {"text": f"{BOB_WORD.decode()}{i} coffee"})

    report = forget_user("alice", store=store)

    assert report.items_deleted == 10 and not report.purged
    (purge,) = report.purges
    assert purge.target.startswith("Chroma server") and "langgraph-episodic purge --path" in purge.detail
    assert store.search(("memories", "alice")) == []
    # What the server keeps: its write-ahead log still holds alice's texts (and a vector
    # index's uncleared tail may hold a copy of them: not asserted, it depends on the heap).
    assert "chroma.sqlite3" in files_containing(server.path, ALICE_WORD)
    assert any(files_containing(server.path, piece) for piece in vector_pieces(ALICE_WORD))

    # The operator's procedure: stop the server, purge its folder, start it again.
    store.close()
    server.stop()
    code = main(["purge", "--path", str(server.path)])
    assert code == 0, capsys.readouterr().err
    assert files_containing(server.path, ALICE_WORD) == []
    assert not [p for piece in vector_pieces(ALICE_WORD) for p in files_containing(server.path, piece)]
    assert files_containing(server.path, BOB_WORD) != []
    server.start()
    again = ChromaStore.http(server.host, server.port, index=INDEX)
    assert len(again.search(("memories", "bob"), limit=100)) == 10
    assert again.search(("memories", "alice")) == []
    again.close()


TOKEN = "s3cret-token-for-tests"


class _AuthFront(BaseHTTPRequestHandler):
    """Forwards to the Chroma server only requests carrying the token (as nginx/caddy would)."""

    upstream: ClassVar[tuple[str, int]] = ("127.0.0.1", 0)
    seen: ClassVar[list[str]] = []

    def _handle(self) -> None:
        token = self.headers.get("x-chroma-token") or ""
        bearer = self.headers.get("authorization") or ""
        self.seen.append(token or bearer)
        if TOKEN not in (token, bearer.removeprefix("Bearer ")):
            body = b'{"error":"Unauthorized","message":"missing or wrong token"}'
            self.send_response(401)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        length = int(self.headers.get("content-length") or 0)
        payload = self.rfile.read(length) if length else None
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "connection", "x-chroma-token")}  # fmt: skip
        conn.request(self.command, self.path, body=payload, headers=headers)
        answer = conn.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        conn.close()

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def auth_front(server: ServerProcess) -> Iterator[tuple[int, list[str]]]:
    seen: list[str] = []
    handler = type("Front", (_AuthFront,), {"upstream": (server.host, server.port), "seen": seen})
    front = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=front.serve_forever, daemon=True)
    thread.start()
    try:
        yield front.server_address[1], seen
    finally:
        front.shutdown()
        front.server_close()
        thread.join(timeout=10)


def test_the_token_goes_with_every_request(auth_front: tuple[int, list[str]]) -> None:
    port, seen = auth_front
    store = ChromaStore.http("127.0.0.1", port, headers={"x-chroma-token": TOKEN}, index=INDEX)
    store.put(("memories", "alice"), "m", {"text": "tea"})
    assert [i.key for i in store.search(("memories", "alice"), query="tea")] == ["m"]
    assert forget_user("alice", store=store).items_deleted == 1
    assert seen and all(s == TOKEN for s in seen)
    bearer = ChromaStore.http("127.0.0.1", port, headers={"Authorization": f"Bearer {TOKEN}"},
                              index=INDEX)  # fmt: skip
    assert bearer.search(("memories", "alice")) == []


@pytest.mark.parametrize("headers", [None, {"x-chroma-token": "wrong"}])
def test_without_the_token_the_server_is_refused(
    auth_front: tuple[int, list[str]], headers: dict[str, str] | None
) -> None:
    port, _ = auth_front
    with pytest.raises(Exception, match=r"(?i)unauthori|401|auth") as caught:
        ChromaStore.http("127.0.0.1", port, headers=headers, index=INDEX)
    assert TOKEN not in str(caught.value)
