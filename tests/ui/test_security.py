"""The inspector's access control: the token on every request, CSRF on every change, escaping."""

from __future__ import annotations

import html
import subprocess
import sys
import textwrap

import pytest

from langgraph_episodic.ui.security import COOKIE, CSRF_FIELD, Secrets

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
            "confirm": "alice", CSRF_FIELD: inspector.secrets.csrf_for(None)}
    assert inspector.client.post(path, data=form).status_code == 403
    assert inspector.store.get(("memories", "alice"), "coffee").value["text"].startswith("Alice")


def test_the_token_sets_a_strict_cookie_and_leaves_the_url(inspector: Inspector) -> None:
    path = inspector.secrets.path
    response = inspector.client.get(
        f"namespace?ns=memories&ns=alice&token={inspector.secrets.token}", follow_redirects=False
    )
    assert response.status_code == 303
    assert response.headers["location"] == f"{path}/namespace?ns=memories&ns=alice"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    page = inspector.client.get("http://127.0.0.1" + response.headers["location"])
    assert page.status_code == 200 and "espresso" in page.text


def test_the_cookie_is_scoped_to_this_server_and_is_not_the_token(inspector: Inspector) -> None:
    """Browsers send a 127.0.0.1 cookie to every port: the cookie is scoped to the app's own
    random path, and holds an HMAC bound to the port, never the token."""
    response = inspector.client.get(f"?token={inspector.secrets.token}", follow_redirects=False)
    cookie = response.cookies
    (name,) = cookie.keys()
    value = cookie[name]
    assert f"path={inspector.secrets.path}".lower() in response.headers["set-cookie"].lower()
    assert inspector.secrets.path.strip("/") not in ("", "static")
    assert inspector.secrets.token not in response.headers["set-cookie"]
    assert value == inspector.secrets.session(80)
    # what another local server would do with the value, had it got it:
    assert inspector.client.get(f"?token={value}").status_code == 403  # not a login token
    inspector.client.cookies = {name: inspector.secrets.session(9999)}  # another port's value
    assert inspector.client.get("").status_code == 403
    inspector.client.cookies = {f"{COOKIE}_9999": value}  # under another server's name
    assert inspector.client.get("").status_code == 403


@pytest.mark.parametrize("path", ["/", "/user?id=alice", "/static/style.css", "/x/user?id=alice"])
def test_nothing_is_served_outside_the_apps_path(inspector: Inspector, path: str) -> None:
    inspector.client.cookies = {f"{COOKIE}_80": inspector.secrets.session(80)}
    assert inspector.client.get("user?id=alice").status_code == 200  # the cookie is right
    response = inspector.client.get(f"http://127.0.0.1{path}")
    assert response.status_code == 403 and "access token" in response.text
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["content-security-policy"].startswith("default-src 'none'")


def test_csrf_tokens_differ_per_user_and_are_not_the_key() -> None:
    secrets = Secrets()
    tokens = {secrets.csrf_for(user) for user in (None, "alice", "bob", "")}
    assert len(tokens) == 4 and secrets.csrf not in tokens
    assert secrets.csrf_ok(secrets.csrf_for("alice"), "alice")
    assert not secrets.csrf_ok(secrets.csrf_for("alice"), "bob")
    assert not secrets.csrf_ok(secrets.csrf, None)


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
    query = f"ns=memories&ns=alice&key=coffee&{CSRF_FIELD}={inspector.secrets.csrf_for(None)}"
    asked = inspector.client.get(f"/item/delete?{query}")  # the confirmation page only
    assert asked.status_code == 200 and "Nothing has been deleted yet" in asked.text
    assert inspector.client.get("/forget/confirm?user=alice&confirm=alice").status_code == 405
    assert inspector.store.get(("memories", "alice"), "coffee") is not None


def test_a_foreign_host_name_is_refused(inspector: Inspector) -> None:
    """DNS rebinding: a page of evil.example resolving to 127.0.0.1 gets nothing."""
    inspector.login()
    response = inspector.client.get("/", headers={"host": "evil.example"})
    assert response.status_code == 400
    assert response.headers["x-frame-options"] == "DENY"


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
    form = {"repair": "1", CSRF_FIELD: inspector.secrets.csrf_for(None)}
    assert "ok" in inspector.client.post("/verify", data=form).text


def test_verify_is_absent_read_only(read_only_inspector: Inspector) -> None:
    read_only_inspector.login()
    assert ">Verify<" not in read_only_inspector.client.get("/").text
    assert read_only_inspector.client.get("/verify").status_code == 403
    form = {"repair": "1", CSRF_FIELD: read_only_inspector.secrets.csrf_for(None)}
    assert read_only_inspector.client.post("/verify", data=form).status_code == 403


def test_read_only_shows_no_change_and_refuses_one(read_only_inspector: Inspector) -> None:
    inspector = read_only_inspector
    inspector.login()
    item = inspector.client.get("/item?ns=memories&ns=alice&key=coffee").text
    assert "<form method=\"post\"" not in item
    assert "/forget?" not in inspector.client.get("/user?id=alice").text
    assert inspector.client.get("/item/delete?ns=memories&ns=alice&key=coffee").status_code == 403
    form = {"ns": ["memories", "alice"], "key": "coffee", CSRF_FIELD: inspector.secrets.csrf_for(None)}
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


def test_a_folder_another_process_writes_shows_what_it_wrote(inspector: Inspector) -> None:
    """The other process opens the folder through the inspector's process, which holds it."""
    inspector.login()
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), str(inspector.path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=python_env(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        response = inspector.client.get("/")
        assert response.status_code == 200
        assert "carol" in response.text and "Traceback" not in response.text
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


@pytest.mark.parametrize("under_path", [False, True])
def test_the_token_redirect_stays_on_this_server(inspector: Inspector, under_path: bool) -> None:
    """A request for the path ``//evil.example/x?token=...`` (sent raw: clients normalise
    it) must not redirect to ``//evil.example/x``, which a browser reads as another host:
    outside the app's path it is refused, inside it the redirect keeps the path."""
    import anyio

    raw = (inspector.secrets.path if under_path else "") + "//evil.example/x"
    sent: list[dict[str, object]] = []
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": raw, "raw_path": raw.encode(),
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
    assert start["status"] == (303 if under_path else 403)
    assert not headers.get(b"location", b"").startswith((b"//", b"/\\")), headers


HUGE = "999999999999999999999"
BAD_REQUESTS = [
    *(f"search?q=espresso&limit={v}" for v in ("nan", "inf", "-inf", "1e400", "0", "101", "2.5",
                                              "ten", HUGE)),
    *(f"search?q=espresso&floor={v}" for v in ("nan", "inf", "-inf", "1e400", "high")),
    "search?q=espresso&user=a.b", "user?id=a.b", "user?id=", "namespace?ns=memories&ns=a.b",
    "namespace?ns=a.b", "namespace?ns=memories&ns=", "item?ns=memories&ns=a.b&key=k",
    "export?user=a.b", "forget?user=a.b", "episodes?user=a.b", "learning?user=a.b",
    "learning/curve.svg?user=a.b", "facts?user=a.b", "threads?user=a.b",
    "thread?user=a.b&session=s", "thread?user=dana",
    *(f"{page}offset={v}" for page in ("?", "namespace?ns=memories&ns=alice&", "episodes?user=dana&",
                                        "facts?user=dana&") for v in (HUGE, "1e3", "x")),
    "no-such-page", "item?ns=memories&ns=alice&key=nope", "item?ns=memories&ns=alice&key=%00",
    "thread?user=dana&session=%00", "thread?user=dana&session=" + "s" * 5000,
    "learning?user=dana&category=%00&task=x", "item?ns=memories&ns=alice",
    "search?q=espresso&user=a%00b", "namespace?ns=memories&ns=alice&sort=size",
    "facts?user=dana&as_of=yesterday", "facts?user=dana&as_of=99999-01-01",
    "episodes?user=dana&task=sort&category=nonsense", "learning?user=dana&task=" + "x" * 5000,
]


@pytest.mark.parametrize("path", BAD_REQUESTS)
def test_every_bad_parameter_gets_a_clean_4xx_with_the_headers(
    inspector: Inspector, path: str
) -> None:
    inspector.login()
    response = inspector.client.get(path)
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    assert "Traceback" not in response.text
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["content-security-policy"].startswith("default-src 'none'")


BAD_POSTS = [
    ("item/edit", {"ns": ["memories", "alice"], "key": "coffee", "text": "x" * 70_000}),
    ("item/edit", {"ns": ["memories", "a.b"], "key": "k", "text": "new"}),
    ("item/edit", {"ns": ["memories", "alice"], "key": "nope", "text": "new"}),
    ("item/delete", {"ns": ["memories", "a.b"], "key": "k"}),
    ("item/delete", {"ns": ["memories", ""], "key": "k"}),
    ("forget/confirm", {"user": "a.b", "confirm": "a.b"}),
]


@pytest.mark.parametrize(("path", "form"), BAD_POSTS)
def test_every_bad_form_gets_a_clean_4xx_with_the_headers(
    inspector: Inspector, path: str, form: dict[str, object]
) -> None:
    inspector.login()
    seen = inspector.store.get(("memories", "alice"), "coffee").updated_at.isoformat()
    form = {"seen": seen, **form, CSRF_FIELD: inspector.secrets.csrf_for(None)}
    response = inspector.client.post(path, data=form)
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    assert response.headers["x-frame-options"] == "DENY"
    assert inspector.store.get(("memories", "alice"), "coffee").value["text"].startswith("Alice")


def test_an_unexpected_error_page_carries_the_headers(seeded: object) -> None:
    """A store that raises what no handler knows: a bare 500, but with the security headers."""
    from starlette.testclient import TestClient

    from langgraph_episodic.ui import Settings, create_app

    class Broken:
        def list_namespaces(self, *args: object, **kwargs: object) -> None:
            raise RuntimeError("boom")

    secrets = Secrets()
    app = create_app(Settings(store=Broken(), where="broken"), secrets=secrets)  # type: ignore[arg-type]
    with TestClient(app, base_url=f"http://127.0.0.1{secrets.path}/",
                    raise_server_exceptions=False) as client:
        client.get(f"?token={secrets.token}")
        response = client.get("")
    assert response.status_code == 500 and "boom" not in response.text
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["content-security-policy"].startswith("default-src 'none'")
