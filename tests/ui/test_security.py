"""The inspector's access control: the token on every request, CSRF on every change, escaping."""

from __future__ import annotations

import html
import subprocess
import sys
import textwrap

import pytest

from langgraph_episodic.ui.security import COOKIE, CSRF_FIELD

from .conftest import PAYLOADS, Inspector, python_env

PAGES = [
    "/",
    "/user?id=alice",
    "/namespace?ns=memories&ns=alice",
    "/item?ns=memories&ns=alice&key=coffee",
    "/search?q=espresso",
    "/export?user=alice",
    "/forget?user=alice",
    "/episodes?user=dana",
    "/learning?user=dana",
    "/learning/curve.svg?user=dana",
    "/facts?user=dana",
    "/threads?user=dana",
    "/thread?user=dana&session=debug",
    "/verify",
    "/static/style.css",
]
POSTS = ["/item/edit", "/item/delete", "/forget/confirm", "/verify"]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_is_refused_without_the_token(inspector: Inspector, path: str) -> None:
    response = inspector.client.get(path)
    assert response.status_code == 403
    assert "access token" in response.text
    assert "espresso" not in response.text


@pytest.mark.parametrize("path", PAGES)
def test_a_wrong_token_or_cookie_is_refused(inspector: Inspector, path: str) -> None:
    sep = "&" if "?" in path else "?"
    assert inspector.client.get(f"{path}{sep}token=wrong").status_code == 403
    inspector.login()
    name = next(iter(inspector.client.cookies))
    assert name.startswith(f"{COOKIE}_")
    inspector.client.cookies = {name: "wrong"}
    assert inspector.client.get(path).status_code == 403


@pytest.mark.parametrize("path", POSTS)
def test_a_post_without_the_token_changes_nothing(inspector: Inspector, path: str) -> None:
    form = {"ns": ["memories", "alice"], "key": "coffee", "text": "changed", "user": "alice",
            "confirm": "alice", CSRF_FIELD: inspector.secrets.csrf}
    assert inspector.client.post(path, data=form).status_code == 403
    assert inspector.store.get(("memories", "alice"), "coffee").value["text"].startswith("Alice")


def test_the_token_sets_a_strict_cookie_and_leaves_the_url(inspector: Inspector) -> None:
    response = inspector.client.get(
        f"/namespace?ns=memories&ns=alice&token={inspector.secrets.token}", follow_redirects=False
    )
    assert response.status_code == 303
    assert response.headers["location"] == "/namespace?ns=memories&ns=alice"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    page = inspector.client.get(response.headers["location"])
    assert page.status_code == 200 and "espresso" in page.text


@pytest.mark.parametrize("path", POSTS)
def test_a_post_without_the_csrf_token_is_refused(inspector: Inspector, path: str) -> None:
    inspector.login()
    form = {"ns": ["memories", "alice"], "key": "coffee", "text": "changed", "user": "alice",
            "confirm": "alice"}
    assert inspector.client.post(path, data=form).status_code == 403
    assert inspector.client.post(path, data={**form, CSRF_FIELD: "wrong"}).status_code == 403
    assert inspector.store.get(("memories", "alice"), "coffee").value["text"].startswith("Alice")
    assert inspector.store.get(("memories", "bob"), "pet") is not None


def test_only_get_and_post_are_answered(inspector: Inspector) -> None:
    inspector.login()
    for method in ("PUT", "DELETE", "PATCH"):
        assert inspector.client.request(method, "/item/delete").status_code == 405


def test_a_change_is_a_post_never_a_get(inspector: Inspector) -> None:
    inspector.login()
    query = f"ns=memories&ns=alice&key=coffee&{CSRF_FIELD}={inspector.secrets.csrf}"
    assert inspector.client.get(f"/item/delete?{query}").status_code == 405
    assert inspector.client.get("/forget/confirm?user=alice&confirm=alice").status_code == 405
    assert inspector.store.get(("memories", "alice"), "coffee") is not None


def test_a_foreign_host_name_is_refused(inspector: Inspector) -> None:
    """DNS rebinding: a page of evil.example resolving to 127.0.0.1 gets nothing."""
    inspector.login()
    response = inspector.client.get("/", headers={"host": "evil.example"})
    assert response.status_code == 400


def test_pages_forbid_scripts_and_frames(inspector: Inspector) -> None:
    inspector.login()
    headers = inspector.client.get("/").headers
    assert "default-src 'none'" in headers["content-security-policy"]
    assert "script-src" not in headers["content-security-policy"]  # none: default-src 'none'
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize(
    "path",
    ["/namespace?ns=memories&ns=alice", "/item?ns=memories&ns=alice&key={key}",
     "/search?q=alert+click+javascript&limit=20"],
)
@pytest.mark.parametrize("key", sorted(PAYLOADS))
def test_memory_text_is_escaped(inspector: Inspector, path: str, key: str) -> None:
    inspector.login()
    page = inspector.client.get(path.format(key=key)).text
    payload = PAYLOADS[key]
    assert payload not in page
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert 'href="javascript' not in page.lower()
    assert payload in html.unescape(page), "the memory is shown, as text"


NEW_VIEWS = [
    "/episodes?user=dana", "/episodes?user=dana&task=alert+script&category=debugging",
    "/facts?user=dana", "/facts?user=dana&as_of=2025-03-01",
    "/thread?user=dana&session=debug",
]


@pytest.mark.parametrize("path", NEW_VIEWS)
def test_memory_text_is_escaped_in_the_new_views(inspector: Inspector, path: str) -> None:
    """Dana's episode, fact, entity and conversation hold the payloads."""
    inspector.login()
    page = inspector.client.get(path).text
    main = page[page.index("<main>"):]
    assert "<script" not in main.lower() and "<img src=x" not in main.lower()
    assert 'href="javascript' not in main.lower()
    shown = html.unescape(main)
    assert any(payload in shown for payload in PAYLOADS.values()), "the memory is shown, as text"


def test_a_typed_task_is_escaped(inspector: Inspector) -> None:
    inspector.login()
    from urllib.parse import quote

    page = inspector.client.get(
        f"/learning?user=dana&task={quote(PAYLOADS['xss-img'])}&category=debugging"
    ).text
    assert "<img src=x" not in page and PAYLOADS["xss-img"] in html.unescape(page)


def test_verify_needs_the_csrf_token(inspector: Inspector) -> None:
    inspector.login()
    assert inspector.client.post("/verify", data={"repair": "1"}).status_code == 403
    assert ">Verify<" in inspector.client.get("/").text
    form = {"repair": "1", CSRF_FIELD: inspector.secrets.csrf}
    assert "ok" in inspector.client.post("/verify", data=form).text


def test_verify_is_absent_read_only(read_only_inspector: Inspector) -> None:
    read_only_inspector.login()
    assert ">Verify<" not in read_only_inspector.client.get("/").text
    assert read_only_inspector.client.get("/verify").status_code == 403
    form = {"repair": "1", CSRF_FIELD: read_only_inspector.secrets.csrf}
    assert read_only_inspector.client.post("/verify", data=form).status_code == 403


def test_read_only_shows_no_change_and_refuses_one(read_only_inspector: Inspector) -> None:
    inspector = read_only_inspector
    inspector.login()
    item = inspector.client.get("/item?ns=memories&ns=alice&key=coffee").text
    assert "<form method=\"post\"" not in item
    assert "/forget?" not in inspector.client.get("/user?id=alice").text
    form = {"ns": ["memories", "alice"], "key": "coffee", CSRF_FIELD: inspector.secrets.csrf}
    response = inspector.client.post("/item/delete", data=form)
    assert response.status_code == 403 and "read-only" in response.text
    assert inspector.store.get(("memories", "alice"), "coffee") is not None


HOLDER = """
import sys
from langgraph_episodic import ChromaStore, HashEmbeddings
store = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
store.put(("memories", "carol"), "k", {"text": "held by another process"})
print("ready", flush=True)
sys.stdin.readline()
"""


def test_a_folder_another_process_writes_shows_the_fix(inspector: Inspector) -> None:
    inspector.login()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(inspector.path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=python_env(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        response = inspector.client.get("/")
        assert response.status_code == 409
        assert "being written by another process" in response.text
        assert "chroma run --path" in response.text and "Traceback" not in response.text
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


def test_the_token_redirect_stays_on_this_server(inspector: Inspector) -> None:
    """A request for the path ``//evil.example/x?token=...`` (sent raw: clients normalise
    it) must not redirect to ``//evil.example/x``, which a browser reads as another host."""
    import anyio

    sent: list[dict[str, object]] = []
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": "//evil.example/x", "raw_path": b"//evil.example/x",
        "query_string": f"token={inspector.secrets.token}".encode(), "root_path": "",
        "headers": [(b"host", b"127.0.0.1")], "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 5000),
    }

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    anyio.run(inspector.client.app, scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    headers = dict(start["headers"])
    assert start["status"] == 303
    assert not headers[b"location"].startswith(b"//"), headers[b"location"]
