"""The deployment app in process: a stand-in for the server's auth middleware puts a user in
the scope, as ``langgraph_api`` does with ``enable_custom_route_auth``; the real server is in
``tests/server/test_inspector_mount.py``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials, AuthenticationBackend, SimpleUser
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection
from starlette.routing import Mount
from starlette.testclient import TestClient

from langgraph_episodic.chroma.store import ChromaStore
from langgraph_episodic.ui.deployment import DeploymentInspector, create_deployment_app
from langgraph_episodic.ui.security import CSRF_FIELD

from .conftest import INDEX


class User(SimpleUser):
    @property
    def identity(self) -> str:
        return self.username


class Bearer(AuthenticationBackend):
    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, User] | None:
        scheme, _, name = conn.headers.get("authorization", "").partition(" ")
        return (AuthCredentials(["authenticated"]), User(name)) if scheme == "Bearer" else None


@pytest.fixture
def client(seeded: Path) -> Iterator[TestClient]:
    store = ChromaStore.persistent(seeded, index=INDEX)

    async def the_store() -> Any:
        return store

    inspector = DeploymentInspector(store=the_store)
    app = Starlette(
        routes=[Mount("/inspector", app=inspector)],
        middleware=[Middleware(AuthenticationMiddleware, backend=Bearer())],
    )
    with TestClient(app, base_url="http://deployment.example") as test_client:
        yield test_client
    store.close()


def _as(user: str) -> dict[str, str]:
    return {"authorization": f"Bearer {user}"}


def test_a_user_is_sent_to_their_own_page(client: TestClient) -> None:
    response = client.get("/inspector/", headers=_as("alice"), follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/inspector/user?id=alice"
    page = client.get("/inspector/user?id=alice", headers=_as("alice")).text
    assert 'href="/inspector/namespace?ns=memories&amp;ns=alice"' in page
    assert 'href="/inspector/static/style.css"' in page and "alice2" not in page


@pytest.mark.parametrize("path", [
    "/user?id=bob", "/namespace?ns=memories&ns=bob", "/item?ns=memories&ns=bob&key=pet",
    "/search?q=cat", "/search?q=cat&user=bob", "/export?user=bob", "/forget?user=bob",
    "/episodes?user=bob", "/learning?user=bob", "/learning/curve.svg?user=bob",
    "/facts?user=bob", "/threads?user=bob", "/thread?user=bob&session=s1", "/verify",
    "/user?id=alice2", "/namespace?ns=memories", "/item/delete?ns=memories&ns=bob&key=pet",
])
def test_another_users_data_is_refused(client: TestClient, path: str) -> None:
    response = client.get("/inspector" + path, headers=_as("alice"))
    assert response.status_code == 403
    assert "Miso" not in response.text and "green tea" not in response.text


def test_no_authenticated_user_no_page(client: TestClient) -> None:
    response = client.get("/inspector/user?id=alice")
    assert response.status_code == 403 and "enable_custom_route_auth" in response.text


def test_a_forged_owner_in_the_scope_is_dropped(seeded: Path) -> None:
    """Only the server's auth says who the user is: a scope key set before the app is ignored."""
    import anyio

    from langgraph_episodic.ui.security import OWNER_KEY

    sent: list[dict[str, Any]] = []
    scope = {"type": "http", "method": "GET", "path": "/user", "query_string": b"id=bob",
             "headers": [], "root_path": "", OWNER_KEY: "bob"}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def store() -> Any:
        return ChromaStore.ephemeral(index=INDEX)

    inspector = DeploymentInspector(store=store)
    anyio.run(inspector, scope, receive, send)
    assert sent[0]["status"] == 403


def test_the_app_adds_nothing_to_the_server() -> None:
    """langgraph-api makes a custom app's middleware and exception handlers the server's own."""
    app = create_deployment_app({})
    assert app.user_middleware == [] and app.exception_handlers == {}


def _csrf_on(client: TestClient, user: str, ns: str) -> str:
    page = client.get(f"/inspector/namespace?ns=memories&ns={ns}", headers=_as(user)).text
    item = client.get(f"/inspector/item?ns=memories&ns={ns}&key="
                      + re.findall(r'key=([\w-]+)"', page)[0], headers=_as(user)).text
    match = re.search(rf'name="{CSRF_FIELD}" value="([^"]+)"', item)
    assert match is not None
    return match.group(1)


def test_a_csrf_token_one_users_page_showed_is_refused_for_another(
    client: TestClient, seeded: Path
) -> None:
    """Alice's page's token does not let Bob's session change Bob's items; Bob's own does."""
    alice, bob = _csrf_on(client, "alice", "alice"), _csrf_on(client, "bob", "bob")
    assert alice != bob
    form = {"ns": ["memories", "bob"], "key": "pet"}
    for token in (alice, "", "x" * 64):
        refused = client.post("/inspector/item/delete", data={**form, CSRF_FIELD: token},
                              headers=_as("bob"))
        assert refused.status_code == 403 and "CSRF" in refused.text
        assert refused.headers["x-frame-options"] == "DENY"
    forget = {"user": "bob", "confirm": "bob", CSRF_FIELD: alice}
    assert client.post("/inspector/forget/confirm", data=forget, headers=_as("bob")).status_code == 403
    assert "Miso" in client.get("/inspector/item?ns=memories&ns=bob&key=pet", headers=_as("bob")).text
    done = client.post("/inspector/item/delete", data={**form, CSRF_FIELD: bob},
                       headers=_as("bob"), follow_redirects=False)
    assert done.status_code == 303
    assert client.get("/inspector/item?ns=memories&ns=bob&key=pet",
                      headers=_as("bob")).status_code == 404


def test_every_answer_carries_the_security_headers(client: TestClient) -> None:
    """Pages, refusals (no user, another user's data) and bad requests alike."""
    for path, user in [("/user?id=alice", "alice"), ("/user?id=bob", "alice"),
                       ("/user?id=alice", None), ("/search?user=alice&limit=nan", "alice")]:
        response = client.get("/inspector" + path, headers=_as(user) if user else {})
        assert response.headers["x-frame-options"] == "DENY", path
        assert response.headers["content-security-policy"].startswith("default-src 'none'")
        assert response.headers["content-security-policy"].count("default-src") == 1
