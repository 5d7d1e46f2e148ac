"""The inspector's Starlette app: :func:`create_app` over an open store.

The app only reads and writes through the store's public API and the privacy and admin
helpers (:mod:`langgraph_episodic.admin`, shared with the command line), so it can be mounted
into another ASGI server as it is. Routes live in :mod:`.browse` (users, namespaces, items,
the search playground), :mod:`.user_pages` (episodes, learning, facts, conversations) and
:mod:`.actions` (edit, delete, export, forget, verify); access control in :mod:`.security`
and :mod:`.pages`.
"""

from __future__ import annotations

from functools import partial

from chromadb.errors import ChromaError
from langgraph.store.base import InvalidNamespaceError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..admin.errors import CliError
from ..chroma import FolderInUseError, ProtocolMismatchError
from . import actions, browse, user_pages
from .pages import HERE, Settings, render, templates
from .security import LOOPBACK_HOSTS, Secrets, gate, owner_refusal, security_headers, token_refusal

__all__ = ["Settings", "create_app"]


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return render(request, "error.html", exc.status_code, title="Refused", message=exc.detail)


async def _store_error(request: Request, exc: Exception) -> Response:
    """A store that cannot answer: the error's message (it names the fix), no traceback."""
    if isinstance(exc, FolderInUseError):
        return render(
            request, "error.html", 409, title="Store folder in use", message=str(exc),
            hint="For the inspector, opening the store again means restarting "
            "`langgraph-episodic ui` once the other process is done.",
        )
    if isinstance(exc, (CliError, InvalidNamespaceError)):
        return render(request, "error.html", 400, title="Cannot do that", message=str(exc))
    return render(request, "error.html", 502, title="The store failed", message=str(exc))


def create_app(settings: Settings, *, secrets: Secrets | None = None) -> Starlette:
    """The inspector over ``settings.store``, served under ``secrets.path``; ``secrets`` holds
    its access token and CSRF key (:mod:`.security`)."""
    secrets = secrets or Secrets()
    return Starlette(
        routes=[Mount(secrets.path, app=_build(settings, secrets, []))],
        middleware=[
            Middleware(security_headers),
            Middleware(TrustedHostMiddleware, allowed_hosts=list(LOOPBACK_HOSTS)),
            Middleware(gate, refusal=partial(token_refusal, secrets)),
        ],
    )


def create_user_app(settings: Settings, *, secrets: Secrets) -> Starlette:
    """The inspector without its own access token, for a server whose auth has already said
    who the user is: it serves only requests whose scope names that user
    (:data:`.security.OWNER_KEY`), set by :class:`.deployment.DeploymentInspector`."""
    return _build(settings, secrets, [Middleware(gate, refusal=owner_refusal)])


def _build(settings: Settings, secrets: Secrets, middleware: list[Middleware]) -> Starlette:
    pages = (browse, actions, user_pages)
    app = Starlette(
        routes=[
            *(route for page in pages for route in page.routes),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
            Route("/favicon.ico", browse.no_icon),
        ],
        middleware=middleware,
        exception_handlers={
            HTTPException: _http_error,
            **dict.fromkeys((FolderInUseError, ProtocolMismatchError, CliError,
                             InvalidNamespaceError, ChromaError), _store_error),
        },
    )
    app.state.settings = settings
    app.state.secrets = secrets
    app.state.templates = templates()
    return app
