"""The inspector inside a LangGraph server deployment, behind the deployment's own auth.

``langgraph.json``::

    "store": {"path": "langgraph_episodic.server.store"},
    "auth": {"path": "./auth.py:auth", "disable_studio_auth": true},
    "http": {"app": "langgraph_episodic.ui.deployment:app", "enable_custom_route_auth": true}

The server then serves it at ``/inspector/``; the user the deployment's ``@auth.authenticate``
returns is the only user the pages show, and a URL naming anyone else's data gets 403
(:mod:`.pages`); a request without an authenticated user is refused. Verify and repair (the
whole store) are not offered. The app holds no middleware of its own (the server makes a custom
app's middleware global). ``EPISODIC_INSPECTOR_READ_ONLY=1``: no edit, delete or forget;
``EPISODIC_INSPECTOR_CSRF``: the forms' CSRF key, one value for all replicas behind one address.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from typing import Any

from langgraph.store.base import BaseStore
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import ASGIApp, Receive, Scope, Send

from .._config import namespace_label
from .app import create_user_app
from .pages import Settings
from .security import OWNER_KEY, Secrets, security_headers

PREFIX = "/inspector"
"""Where the inspector is mounted in the deployment."""


async def server_store() -> BaseStore:
    """The deployment's store (what ``langgraph.json``'s ``store`` made), from langgraph-api."""
    from langgraph_api.store import get_store

    return await get_store()


def identity_of(scope: Scope) -> str | None:
    """The authenticated user's identity the server's auth put in the scope, or None."""
    user = scope.get("user")
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    identity = getattr(user, "identity", None)
    return identity if isinstance(identity, str) and identity else None


class DeploymentInspector:
    """ASGI app: the inspector over the server's store, for the request's authenticated user."""

    def __init__(self, *, read_only: bool = False, secrets: Secrets | None = None,
                 store: Callable[[], Any] = server_store) -> None:
        self.read_only = read_only
        self.secrets = secrets or Secrets()
        self._store = store
        self._app: ASGIApp | None = None
        self._lock = asyncio.Lock()

    async def _inner(self) -> ASGIApp:
        async with self._lock:
            if self._app is None:
                store = await self._store()
                settings = Settings(store, f"deployment store ({type(store).__name__})",
                                    read_only=self.read_only)
                self._app = security_headers(create_user_app(settings, secrets=self.secrets))
            return self._app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = dict(scope)
            scope.pop(OWNER_KEY, None)  # only the server's auth says who this is
            identity = identity_of(scope)
            if identity is not None:
                scope[OWNER_KEY] = namespace_label(identity)
        app = await self._inner()
        await app(scope, receive, send)


def create_deployment_app(env: Mapping[str, str] | None = None) -> Starlette:
    """The Starlette app ``langgraph.json``'s ``"http": {"app": ...}`` names: the inspector
    mounted at :data:`PREFIX`, configured from ``env`` (default: ``os.environ``)."""
    env = os.environ if env is None else env
    csrf = env.get("EPISODIC_INSPECTOR_CSRF", "").strip()
    secrets = Secrets(csrf=csrf) if csrf else Secrets()
    read_only = env.get("EPISODIC_INSPECTOR_READ_ONLY", "").strip().lower() in ("1", "true", "yes")
    inspector = DeploymentInspector(read_only=read_only, secrets=secrets)
    return Starlette(routes=[Mount(PREFIX, app=inspector, name="inspector")])


app = create_deployment_app()
