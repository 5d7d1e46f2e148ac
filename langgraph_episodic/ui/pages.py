"""What every page shares: the app's settings, the templates, :func:`render`, and whose memory
a request may reach.

Run locally (``langgraph-episodic ui``) the holder of the access token sees every user. Mounted
into a LangGraph server deployment (:mod:`.deployment`) each request belongs to the user the
deployment's auth authenticated: :func:`.security.owner` is that user's namespace label, and
every page and action that names another user or another user's namespace is refused with 403,
before the store is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from langgraph.store.base import BaseStore
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from ..admin.browse import fact_state, value_text
from .data import user_id_of
from .security import CSRF_FIELD, owner

HERE = Path(__file__).parent

MAX_OFFSET = 1_000_000_000
"""The largest ``offset`` a list page takes (far beyond any namespace a page can list)."""
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
    env.filters["fact_state"] = fact_state
    return Jinja2Templates(env=env)


def render(request: Request, name: str, status_code: int = 200, media_type: str | None = None,
           **context: Any) -> Response:
    settings: Settings = request.app.state.settings
    mine = owner(request)
    base = {
        "root": root(request),
        "where": settings.where,
        "read_only": settings.read_only,
        "owner": mine,
        "can_verify": not settings.read_only and mine is None,
        "csrf": request.app.state.secrets.csrf_for(mine),
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


def check_label(label: str) -> str:
    """``label``, or 400 when no namespace can hold it (empty, or with a ``.`` or a NUL, which
    LangGraph's stores refuse)."""
    if not label or "." in label or "\x00" in label:
        raise HTTPException(
            400, f"{label[:80]!r} is not a namespace label: labels are not empty and hold no "
            "'.' (the library writes a user id's dots as %2E: a.b@x.org is a%2Eb@x%2Eorg).",
        )
    return label


def check_user(request: Request, label: str) -> str:
    """``label``, or 400 when it is no label (:func:`check_label`), 403 when the request
    belongs to another user."""
    check_label(label)
    mine = owner(request)
    if mine is not None and label != mine:
        raise HTTPException(
            403, f"403 Forbidden: user {label!r} is not you; you may only see your own memory "
            f"(user {mine!r}).",
        )
    return label


def requested_user(request: Request, param: str = "user",
                   fields: Mapping[str, Any] | None = None) -> str:
    """The user label the request names in ``param`` of ``fields`` (default: its query
    string): 400 when it names none, 403 when it is not the request's user (:func:`check_user`)."""
    label = str((request.query_params if fields is None else fields).get(param) or "")
    if not label:
        raise HTTPException(400, f"Name the user: ?{param}=<user label>")
    return check_user(request, label)


def check_namespace(request: Request, ns: Sequence[str]) -> tuple[str, ...]:
    """``ns``, or 400 when a label is no label (:func:`check_label`), 403 when its user label
    (second place) is not the request's user."""
    for label in ns:
        check_label(label)
    mine = owner(request)
    if mine is not None and (len(ns) < 2 or ns[1] != mine):
        raise HTTPException(
            403, f"403 Forbidden: namespace {'/'.join(ns)} is not yours; yours are "
            f"<kind>/{mine}/...",
        )
    return tuple(ns)


def user_id_of_label(label: str, cannot: str) -> str:
    """The user id whose namespace label ``label`` is; 400 saying what it ``cannot`` do when
    the label is not one the library makes from a user id."""
    user_id = user_id_of(label)
    if user_id is None:
        raise HTTPException(
            400, f"The label {label!r} is not one the library makes from a user id, so {cannot}"
        )
    return user_id


def namespace_of(request: Request) -> tuple[str, ...]:
    """The ``ns`` query (or form) labels, in order; 400 when there are none."""
    labels = tuple(request.query_params.getlist("ns"))
    if not labels or not all(labels):
        raise HTTPException(400, "Name the namespace: ?ns=<label>&ns=<label>...")
    return check_namespace(request, labels)


def offset_of(request: Request) -> int:
    """The ``offset`` query, a whole number from 0 to :data:`MAX_OFFSET` (0 when absent)."""
    return whole_number(request, "offset", 0, 0, MAX_OFFSET)


def whole_number(request: Request, name: str, default: int, low: int, high: int) -> int:
    """The query parameter ``name`` as a whole number in ``[low, high]`` (``default`` when
    absent or empty); 400 otherwise (``nan``, ``1e400``, ``2.5``, 22 digits...)."""
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return default
    if raw.isdecimal() and len(raw) <= len(str(high)) and low <= int(raw) <= high:
        return int(raw)
    raise HTTPException(
        400, f"{name} must be a whole number from {low} to {high}, got {raw[:40]!r}."
    )
