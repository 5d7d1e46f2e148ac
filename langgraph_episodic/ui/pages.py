"""What every page shares: the app's settings, the templates, and :func:`render`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from langgraph.store.base import BaseStore
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from ..admin.browse import value_text
from .access import owner
from .security import CSRF_FIELD

HERE = Path(__file__).parent

NOTICES = {
    "edited": "Saved: the item was put again with the new text and embedded again.",
    "deleted": "Deleted the item.",
}
"""The fixed messages a redirect may ask a page to show (``?notice=edited``)."""


@dataclass(frozen=True)
class Settings:
    """What the app works on."""

    store: BaseStore
    where: str
    """The store as messages name it (``"embedded store .episodic"``)."""
    read_only: bool = False
    checkpoints: str | Path | None = None
    """The checkpoint database ``forget`` searches for the user's threads (None: none)."""


def templates() -> Jinja2Templates:
    """Templates with autoescaping on for every file (all memory text is escaped)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["value_text"] = value_text
    return Jinja2Templates(env=env)


def render(request: Request, name: str, status_code: int = 200, media_type: str | None = None,
           **context: Any) -> Response:
    settings: Settings = request.app.state.settings
    base = {
        "root": root(request),
        "where": settings.where,
        "read_only": settings.read_only,
        "owner": owner(request),
        "can_verify": not settings.read_only and owner(request) is None,
        "csrf": request.app.state.secrets.csrf_for(owner(request)),
        "csrf_field": CSRF_FIELD,
    }
    return request.app.state.templates.TemplateResponse(
        request, name, {**base, **context}, status_code=status_code, media_type=media_type
    )


def root(request: Request) -> str:
    """The path the app is mounted at ("" at the server's root, "/inspector" in a deployment):
    every link and form target of the pages starts with it."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def notice(request: Request) -> str | None:
    return NOTICES.get(request.query_params.get("notice", ""))
