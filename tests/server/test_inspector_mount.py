"""The memory inspector mounted into the example deployment (``langgraph dev``), for real.

The example's ``langgraph.json`` mounts ``langgraph_episodic.ui.deployment:app`` behind the
deployment's auth. Through it each user sees only their own memory: another user's page,
namespace, item, search or forget is refused with 403 (and nothing is deleted); a request
without a token is refused by the deployment's auth; a change needs the CSRF token; the
memory text is escaped. Then the same in Chromium, with each user's bearer token as a header.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from .conftest import TOKENS, LangGraphServer

pytestmark = [
    pytest.mark.server,
    pytest.mark.xdist_group("langgraph-server"),
    pytest.mark.skipif(
        sys.version_info < (3, 11), reason="langgraph dev (langgraph-api) needs Python 3.11+"
    ),
]

CHROMIUM = Path("/usr/bin/chromium")
SCRIPT = "<script>window.__xss = 1; alert('x')</script>"
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def _as(user: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}


def _store(url: str, user: str) -> Any:
    return get_sync_client(url=url, headers=_as(user)).store


def _seed(url: str) -> None:
    for user, text in (("alice", "Alice drinks espresso"), ("bob", "Bob has a cat")):
        _store(url, user).put_item(["memories", user], "k", {"text": text})
    _store(url, "alice").put_item(["memories", "alice"], "xss", {"text": SCRIPT})


def test_each_user_sees_only_their_own_memory(
    langgraph_server: type[LangGraphServer], app_dir: Path, tmp_path: Path
) -> None:
    env = {"EPISODIC_STORE_PATH": str(app_dir / "memory"), "EPISODIC_EMBEDDINGS": "hash"}
    server = langgraph_server(app_dir, env).start()
    url, base = server.url, f"{server.url}/inspector"
    try:
        _seed(url)
        with httpx.Client(timeout=60) as http:
            assert http.get(f"{base}/user?id=alice").status_code in (401, 403)  # no token
            home = http.get(f"{base}/", headers=_as("alice"), follow_redirects=True)
            assert home.status_code == 200 and "espresso" not in home.text
            assert "memories/alice" in home.text and "bob" not in home.text
            page = http.get(f"{base}/namespace?ns=memories&ns=alice", headers=_as("alice"))
            assert "Alice drinks espresso" in page.text
            assert SCRIPT not in page.text and "&lt;script&gt;" in page.text
            refused = [
                "/user?id=bob", "/namespace?ns=memories&ns=bob", "/item?ns=memories&ns=bob&key=k",
                "/search?q=cat&user=bob", "/search?q=cat", "/export?user=bob", "/forget?user=bob",
                "/episodes?user=bob", "/learning?user=bob", "/facts?user=bob",
                "/threads?user=bob", "/verify",
            ]
            for path in refused:
                response = http.get(base + path, headers=_as("alice"))
                assert response.status_code == 403, (path, response.status_code)
                assert "Bob has a cat" not in response.text
            item = http.get(f"{base}/item?ns=memories&ns=alice&key=k", headers=_as("alice"))
            csrf = CSRF.search(item.text)
            assert csrf is not None
            form = {"ns": ["memories", "bob"], "key": "k", "csrf": csrf.group(1)}
            deleted = http.post(f"{base}/item/delete", data=form, headers=_as("alice"))
            assert deleted.status_code == 403
            forget = {"user": "bob", "confirm": "bob", "csrf": csrf.group(1)}
            assert http.post(f"{base}/forget/confirm", data=forget,
                             headers=_as("alice")).status_code == 403  # fmt: skip
            no_csrf = {"ns": ["memories", "alice"], "key": "k"}
            assert http.post(f"{base}/item/delete", data=no_csrf,
                             headers=_as("alice")).status_code == 403  # fmt: skip
            bob = http.get(f"{base}/namespace?ns=memories&ns=bob", headers=_as("bob"))
            assert bob.status_code == 200 and "Bob has a cat" in bob.text
            own = {"ns": ["memories", "alice"], "key": "k", "csrf": csrf.group(1)}
            assert http.post(f"{base}/item/delete", data=own, headers=_as("alice"),
                             follow_redirects=False).status_code == 303  # fmt: skip
            gone = http.get(f"{base}/item?ns=memories&ns=alice&key=k", headers=_as("alice"))
            assert gone.status_code == 404
            kept = _store(url, "bob").get_item(["memories", "bob"], "k")
            assert kept is not None and kept["value"]["text"] == "Bob has a cat"
        _in_the_browser(base, tmp_path)
    finally:
        server.stop()


def _in_the_browser(base: str, tmp_path: Path) -> None:
    """Chromium with alice's token: her page, the payload inert, bob's page refused (403)."""
    import os

    from playwright import sync_api

    if not CHROMIUM.is_file():
        raise RuntimeError(f"{CHROMIUM} is needed: apt-get install -y chromium")
    shots = Path(os.environ.get("LGE_UI_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            context = browser.new_context(
                viewport={"width": 1200, "height": 600}, extra_http_headers=_as("alice")
            )
            page = context.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(f"{base}/")
            assert page.locator("h1").inner_text() == "User alice"
            page.click("a.namespace >> text=memories/alice")
            assert SCRIPT in page.locator("main").inner_text()
            assert page.evaluate("typeof window.__xss") == "undefined" and dialogs == []
            page.screenshot(path=str(shots / "deployment-own.png"), full_page=True)
            response = page.goto(f"{base}/namespace?ns=memories&ns=bob")
            assert response is not None and response.status == 403
            assert "Bob has a cat" not in page.content()
            page.screenshot(path=str(shots / "deployment-refused.png"), full_page=True)
            context.close()
        finally:
            browser.close()
