"""The inspector in a real browser: Debian's Chromium driven by Playwright, against the real
command (``langgraph-episodic ui --port 0`` in a subprocess).

Needs ``/usr/bin/chromium`` (``apt-get install chromium``); Playwright's own browser download
is never used. Screenshots of each view go to ``$LGE_UI_SCREENSHOTS`` when set (the
``docs/ui/*.png`` that docs/inspector.md shows are made with
``LGE_UI_SCREENSHOTS=docs/ui``), else to a temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import quote, urlsplit

import pytest
from playwright import sync_api

from langgraph_episodic.admin.transfer import parse_lines
from langgraph_episodic.ui.security import COOKIE

from .conftest import PAYLOADS, Served, python_env, serve, stop

CHROMIUM = Path("/usr/bin/chromium")

if not CHROMIUM.is_file():  # a visible failure, never a silent skip
    raise RuntimeError(f"tests/ui/test_browser.py needs {CHROMIUM}: apt-get install -y chromium")



@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser: object, served: Served) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1200, "height": 760})
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs
    page.base = served.base
    page.goto(f"{served.base}?token={served.token}")
    yield page
    context.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("LGE_UI_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def follow(page: object, selector: str) -> None:
    """Click a link or a form's button and wait for the page it opens to load.

    Playwright's ``click`` does not wait for the navigation it starts, so a read right after
    it may see the page before, or the new one still empty while the server answers."""
    with page.expect_event("load"):
        page.click(selector)


class _SlowPage(BaseHTTPRequestHandler):
    """``/``: a link to ``/slow``, a page whose body arrives in two parts, a second apart (as
    a busy inspector's does)."""

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        if self.path == "/":
            self.wfile.write(b'<html><body><a id="go" href="/slow">go</a></body></html>')
            return
        self.wfile.write(b"<html><body><p>first part</p>")
        self.wfile.flush()
        time.sleep(1.0)
        self.wfile.write(b"<p>second part</p></body></html>")


def test_follow_reads_the_whole_page_a_click_opens(browser: object) -> None:
    """A read right after a bare click can see the new page half loaded; ``follow`` waits."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"http://127.0.0.1:{server.server_port}/")
        follow(page, "#go")
        assert "second part" in page.content()
    finally:
        context.close()
        server.shutdown()
        server.server_close()


def snap(page: object, folder: Path, name: str) -> None:
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def test_refused_without_the_token_opened_with_it(browser: object, served: Served, shots: Path) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 300})
    page = context.new_page()
    response = page.goto(served.base)
    assert response.status == 403 and "access token" in page.content()
    snap(page, shots, "refused")
    page.goto(f"{served.base}?token={served.token}")
    assert page.url == served.base  # the token left the address bar
    assert page.locator("a.user").all_inner_texts() == ["alice", "alice2", "bob", "dana"]
    context.close()


def test_browse_to_an_item(page: object, shots: Path) -> None:
    snap(page, shots, "users")
    follow(page, "a.user >> text=alice")
    assert page.locator("h1").inner_text() == "User alice"
    snap(page, shots, "user")
    follow(page, "a.namespace >> text=memories/alice")
    assert page.locator("table.items tbody tr").count() == 5
    snap(page, shots, "namespace")
    follow(page, "a.key >> text=coffee")
    assert "Alice drinks espresso without sugar" in page.locator("pre.value").inner_text()
    snap(page, shots, "item")


def test_search(page: object, shots: Path) -> None:
    follow(page, "nav >> text=Search")
    page.fill("input[name=q]", "espresso")
    page.fill("input[name=limit]", "3")
    follow(page, "form.search button")
    # all users: by meaning only, and the page says so
    assert "by meaning only" in page.locator("p.scope").inner_text()
    assert page.locator("ol.hits a.key").first.inner_text() == "memories/alice/coffee"
    assert "lexical share" not in page.locator("ol.hits").inner_text()
    page.fill("input[name=user]", "alice")
    follow(page, "form.search button")
    assert "of user alice" in page.locator("p.scope").inner_text()
    assert page.locator("ol.hits a.key").first.inner_text() == "memories/alice/coffee"
    assert page.locator("ol.hits li").count() == 3
    # every hit shows what its score is made of
    first = page.locator("ol.hits li").first.locator("table.breakdown")
    assert first.is_visible()
    assert "lexical share" in first.inner_text() and "cosine" in first.inner_text()
    assert page.locator("ol.hits table.breakdown").count() == 3
    snap(page, shots, "search")


def test_edit_then_search_finds_the_new_text(page: object) -> None:
    page.goto(f"{page.base}item?ns=memories&ns=alice&key=editor")
    page.fill("form.edit textarea", "Alice switched to Helix keybindings")
    follow(page, "form.edit button")
    assert "embedded again" in page.locator(".notice").inner_text()
    assert "Helix" in page.locator("pre.value").inner_text()
    page.goto(f"{page.base}search?q=helix+keybindings&limit=1")
    assert page.locator("ol.hits a.key").all_inner_texts() == ["memories/alice/editor"]


def test_delete_asks_first(page: object, shots: Path) -> None:
    page.goto(f"{page.base}item?ns=memories&ns=bob&key=pet")
    follow(page, "form.delete button")
    assert "Nothing has been deleted yet" in page.content() and "Miso" in page.content()
    snap(page, shots, "delete-confirm")
    follow(page, "a.keep")
    assert page.url.startswith(f"{page.base}item?") and "Miso" in page.content()
    follow(page, "form.delete button")
    follow(page, "form.delete button")
    assert "Deleted the item" in page.locator(".notice").inner_text()
    assert page.goto(f"{page.base}item?ns=memories&ns=bob&key=pet").status == 404


def test_forget_with_preview_and_confirmation(page: object, shots: Path) -> None:
    page.goto(f"{page.base}user?id=alice")
    follow(page, "text=Forget this user…")
    assert "Nothing has been deleted yet" in page.content()
    assert page.locator("table.preview tfoot .num").inner_text() == "6"
    assert "alice:s1" in page.locator("main").inner_text()
    snap(page, shots, "forget-preview")
    page.goto(f"{page.base}namespace?ns=memories&ns=alice")  # still all there
    assert page.locator("table.items tbody tr").count() == 5
    page.go_back()
    page.fill("input[name=confirm]", "alice2")
    follow(page, "form.forget button")
    assert "nothing was deleted" in page.locator(".error").inner_text()
    page.goto(f"{page.base}namespace?ns=memories&ns=alice")
    assert page.locator("table.items tbody tr").count() == 5
    page.goto(f"{page.base}forget?user=alice")
    page.fill("input[name=confirm]", "alice")
    follow(page, "form.forget button")
    report = page.locator("pre.report").inner_text()
    assert "forgot user 'alice': 6 items in 2 namespaces, 1 thread" in report
    assert "a second pass found nothing left of this user" in report
    snap(page, shots, "forgotten")
    page.goto(page.base)
    assert page.locator("a.user").all_inner_texts() == ["alice2", "bob", "dana"]


def test_script_in_memories_stays_inert(page: object) -> None:
    """The payloads are shown as text on every view that shows them; none becomes an element,
    none runs (no dialog, no global set), no link points at ``javascript:``."""
    lists = ["namespace?ns=memories&ns=alice", "search?q=alert+click+javascript&limit=20"]
    items = {key: f"item?ns=memories&ns=alice&key={key}" for key in PAYLOADS}
    for view in [*lists, *items.values()]:
        page.goto(page.base + view)
        page.wait_for_load_state("load")
        assert page.evaluate("typeof window.__xss") == "undefined", view
        assert page.locator("main script, main img, main iframe, main a:text('click me')").count() == 0
        hrefs = page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
        assert not [h for h in hrefs if h and re.match(r"\s*javascript:", h, re.I)], view
        if view in lists:
            shown = page.locator("main").inner_text()
            assert all(payload in shown for payload in PAYLOADS.values()), view
    for key, view in items.items():
        page.goto(page.base + view)
        assert json.dumps(PAYLOADS[key])[1:-1] in page.locator("pre.value").inner_text()
        assert page.locator("form.edit textarea").input_value() == PAYLOADS[key]
    assert page.dialogs == []


def test_export_downloads_the_users_items(page: object, tmp_path: Path) -> None:
    page.goto(f"{page.base}user?id=bob")
    with page.expect_download() as download:
        page.click("text=Export this user's data")
    saved = tmp_path / "bob.jsonl"
    download.value.save_as(saved)
    assert download.value.suggested_filename == "export-bob.jsonl"
    records = parse_lines(saved.read_text("utf-8").splitlines())
    assert [(r.namespace, r.key) for r in records] == [(("memories", "bob"), "pet")]


WRITER = """
import sys
from langgraph_episodic import ChromaStore, HashEmbeddings
store = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
store.put(("memories", "carol"), "k", {"text": "written by another process"})
store.close()
"""


def test_an_inspector_that_can_edit_holds_the_folder(served: Served, seeded: Path) -> None:
    """While an inspector that may edit runs, another process opening the folder by its path
    writes through the inspector's process, and the inspector goes on serving."""
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(seeded)], env=python_env(), capture_output=True,
        text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert served.proc.poll() is None


def test_a_folder_another_process_wrote_shows_what_it_wrote(
    browser: object, seeded: Path
) -> None:
    """A read-only inspector shares the folder too: after another process wrote it, the users
    page shows the new user."""
    served = serve("--path", str(seeded), "--embeddings", "hash", "--read-only")
    context = browser.new_context(viewport={"width": 1200, "height": 760})
    try:
        page = context.new_page()
        page.goto(f"{served.base}?token={served.token}")
        subprocess.run(
            [sys.executable, "-c", WRITER, str(seeded)], env=python_env(), check=True, timeout=120
        )
        response = page.goto(served.base)
        assert response.status == 200
        assert page.locator("a.user", has_text="carol").count() == 1
        assert "Traceback" not in page.content()
    finally:
        context.close()
        stop(served.proc)


def test_pending_formation_is_apart_from_memory(page: object, shots: Path) -> None:
    """Turns waiting for deferred formation are counted apart on the users page and listed
    under their own heading on the user's page, not as a namespace of memory."""
    row = page.locator("tr", has=page.locator("a.user", has_text="dana"))
    assert row.locator("td.pending").inner_text() == "1 thread"
    follow(page, "a.user >> text=dana")
    memory = page.locator("table.user-namespaces").inner_text()
    assert "episodes/dana" in memory and "_pending" not in memory
    queue = page.locator("table.internal")
    assert "pending formation, thread debug" in queue.inner_text()
    assert queue.locator("td.num").inner_text() == "2"
    snap(page, shots, "user-pending")
    follow(page, "a.internal-namespace")
    assert "Not memory" in page.locator(".notice.internal").inner_text()
    assert page.locator("table.items tbody tr").count() == 2


def test_episodes_and_the_replay_prompt(page: object, shots: Path) -> None:
    page.goto(f"{page.base}user?id=dana")
    follow(page, "nav.user-views >> text=Episodes")
    assert page.locator("table.episodes tbody tr").count() == 13
    page.fill("input[name=task]", "the csv parser fails")
    page.select_option("select[name=category]", "debugging")
    follow(page, "form.replay button")
    first = page.locator("table.recalled tbody tr").first.inner_text()
    assert "csv parser" in first
    prompt = page.locator("pre.prompt").inner_text()
    assert prompt.startswith("Current task: the csv parser fails") and "Category: debugging" in prompt
    snap(page, shots, "episodes")


def test_learning_profile_choice_and_curve(page: object, shots: Path) -> None:
    page.goto(f"{page.base}learning?user=dana")
    rows = page.locator("table.profiles tbody tr").all_inner_texts()
    assert [r.split()[0] for r in rows] == ["code_generation", "debugging"]
    names = page.locator(".pick .strategy-name").all_inner_texts()
    assert len(names) == 2 and all(n in ("iterative", "defensive") for n in names)
    assert page.locator(".pick .reason").first.inner_text().strip()
    curve = page.locator("figure.curve svg.curve")
    box = curve.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 150  # drawn inline, at its size
    assert curve.locator("polyline.line").count() == 2  # success rate, cumulative reward
    assert "13 episodes" in curve.get_attribute("aria-label")
    snap(page, shots, "learning")


def test_facts_with_periods_and_entities(page: object, shots: Path) -> None:
    page.goto(f"{page.base}facts?user=dana")
    history = page.locator("table.facts-history").inner_text()
    assert "Dana lives in Berlin" in history and "replaced" in history
    assert "Dana lives in Vienna" in history and "2025-06-01" in history
    page.fill("input[name=as_of]", "2024-06-01")
    follow(page, "form.search button")
    assert page.locator("ul.held").inner_text().startswith("Dana lives in Berlin")
    assert "Dana prefers short answers" in page.locator("ul.profile").inner_text()
    assert "ACME" in page.locator("table.entities").inner_text()
    snap(page, shots, "facts")


def test_a_conversation_read_only(page: object, shots: Path) -> None:
    page.goto(f"{page.base}threads?user=dana")
    follow(page, "a.session >> text=debug")
    assert "csv parser" in page.locator("pre.summary").inner_text()
    kinds = page.locator("ol.messages li .role").all_inner_texts()
    assert [k.lower() for k in kinds] == ["human", "ai"]
    assert page.locator("main form").count() == 0  # nothing to change here
    snap(page, shots, "conversation")


def test_verify_then_repair(page: object, shots: Path) -> None:
    follow(page, "nav >> text=Verify")
    follow(page, "form.verify button")
    report = page.locator("pre.report").inner_text()
    assert "ok" in report.split()[-1] and "orphan vectors: 0" in report
    snap(page, shots, "verify")


def test_script_in_the_new_views_stays_inert(page: object) -> None:
    """Dana's episode, fact, entity and conversation carry the payloads: shown as text, none
    runs, no element made of them, no ``javascript:`` link."""
    views = [
        "episodes?user=dana", "episodes?user=dana&task=alert+script&category=debugging",
        "learning?user=dana&task=" + quote(PAYLOADS["xss-img"]) + "&category=debugging",
        "facts?user=dana", "facts?user=dana&as_of=2025-03-01",
        "thread?user=dana&session=debug",
    ]
    for view in views:
        page.goto(page.base + view)
        page.wait_for_load_state("load")
        assert page.evaluate("typeof window.__xss") == "undefined", view
        assert page.locator("main script, main iframe, main a:text('click me')").count() == 0
        assert page.locator("main img").count() == 0, view
        hrefs = page.eval_on_selector_all("a", "els => els.map(e => e.getAttribute('href'))")
        assert not [h for h in hrefs if h and re.match(r"\s*javascript:", h, re.I)], view
        shown = page.locator("main").inner_text()
        assert any(payload in shown for payload in PAYLOADS.values()), view
    assert page.dialogs == []


class _CookieRecorder(BaseHTTPRequestHandler):
    """Another local server: records the ``Cookie`` header of every request it gets (in the
    ``seen`` list of the subclass each test makes)."""

    seen: ClassVar[list[str]]

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append(self.headers.get("Cookie", ""))
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html><body>another server</body></html>")


def test_the_session_cookie_reaches_no_other_local_server(page: object, served: Served) -> None:
    """Chromium sends a 127.0.0.1 cookie to every port (the probe below shows it): the
    inspector's session cookie is scoped to its own random path, so another local server never
    gets it, and it is not the token, so a server that had it could not log in with it."""
    recorder = type("Recorder", (_CookieRecorder,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.context.add_cookies([{"name": "probe", "value": "sent-to-every-port",
                                   "domain": "127.0.0.1", "path": "/"}])
        other = f"http://127.0.0.1:{server.server_port}"
        own_path = urlsplit(served.base).path  # "/<random>/"
        for path in ("/", "/user?id=alice", "/static/style.css", own_path[:-1] + "x/"):
            assert page.goto(other + path).status == 200
        (session,) = [c for c in page.context.cookies() if c["name"].startswith(COOKIE)]
        assert session["path"] == own_path.rstrip("/") and session["httpOnly"]
        assert session["sameSite"] == "Strict"
        assert served.token not in session["value"]
        assert len(recorder.seen) >= 4  # the pages (and the favicon Chromium asks for)
        assert all("probe=sent-to-every-port" in header for header in recorder.seen)
        assert not any(COOKIE in h or session["value"] in h for h in recorder.seen), recorder.seen
        assert page.goto(served.base).status == 200  # the inspector still knows the browser
        assert "alice" in page.content()
        with_value = page.context.new_page()
        try:  # had another server got the value, it is no token
            assert with_value.goto(f"{served.base}?token={session['value']}").status == 403
        finally:
            with_value.close()
    finally:
        server.shutdown()
        server.server_close()


def test_a_bad_parameter_shows_a_clean_page_with_the_headers(page: object) -> None:
    """The 4xx pages Chromium gets for bad parameters carry the CSP and X-Frame-Options."""
    for path in ("search?q=x&limit=nan", "search?q=x&limit=1e400", "user?id=a.b",
                 "namespace?ns=memories&ns=a.b", "namespace?ns=memories&ns=alice"
                 "&offset=999999999999999999999"):
        response = page.goto(page.base + path)
        assert response.status == 400, path
        headers = response.all_headers()
        assert headers["x-frame-options"] == "DENY"
        assert headers["content-security-policy"].startswith("default-src 'none'")
        assert "Traceback" not in page.content() and page.locator(".error").count() == 1


@pytest.fixture
def deployment(seeded: Path) -> Iterator[str]:
    """The deployment app (:mod:`langgraph_episodic.ui.deployment`) under uvicorn, behind the
    stand-in of the server's auth that ``test_deployment`` uses (``Authorization: Bearer
    <user>``); yields the inspector's URL."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.routing import Mount

    from langgraph_episodic import ChromaStore
    from langgraph_episodic.cli.ui import bind
    from langgraph_episodic.ui.deployment import DeploymentInspector

    from .conftest import INDEX
    from .test_deployment import Bearer

    store = ChromaStore.persistent(seeded, index=INDEX)

    async def the_store() -> ChromaStore:
        return store

    app = Starlette(
        routes=[Mount("/inspector", app=DeploymentInspector(store=the_store))],
        middleware=[Middleware(AuthenticationMiddleware, backend=Bearer())],
    )
    sock = bind(0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/inspector"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        store.close()


def test_a_csrf_token_alices_page_showed_is_refused_in_bobs_session(
    browser: object, deployment: str
) -> None:
    """In a deployment each user's pages carry their own CSRF token: Bob's browser posting
    the delete form with the token Alice's page showed is refused, and deletes nothing."""
    sessions = {
        user: browser.new_context(extra_http_headers={"Authorization": f"Bearer {user}"})
        for user in ("alice", "bob")
    }
    try:
        alice, bob = (sessions[u].new_page() for u in ("alice", "bob"))
        alice.goto(f"{deployment}/item/delete?ns=memories&ns=alice&key=coffee")
        alices = alice.locator("input[name=csrf]").get_attribute("value")
        bob_item = f"{deployment}/item/delete?ns=memories&ns=bob&key=pet"
        bob.goto(bob_item)
        bobs = bob.locator("input[name=csrf]").get_attribute("value")
        assert alices and bobs and alices != bobs
        bob.locator("input[name=csrf]").evaluate("(input, token) => input.value = token", alices)
        with bob.expect_response(lambda r: r.request.method == "POST") as posted:
            follow(bob, "form.delete button")
        assert posted.value.status == 403 and "CSRF token" in bob.content()
        assert posted.value.all_headers()["x-frame-options"] == "DENY"
        assert bob.goto(f"{deployment}/item?ns=memories&ns=bob&key=pet").status == 200
        bob.goto(bob_item)
        follow(bob, "form.delete button")
        assert "Deleted the item" in bob.locator(".notice").inner_text()
        assert bob.goto(f"{deployment}/item?ns=memories&ns=bob&key=pet").status == 404
    finally:
        for context in sessions.values():
            context.close()
