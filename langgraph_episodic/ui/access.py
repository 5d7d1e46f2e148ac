"""Whose memory a request may reach.

Run locally (``langgraph-episodic ui``) the holder of the access token sees every user. Mounted
into a LangGraph server deployment (:mod:`.deployment`) each request belongs to the user the
deployment's auth authenticated: :func:`owner` is that user's namespace label, and every page
and action that names another user or another user's namespace is refused with 403, before
the store is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request

from .data import user_id_of

OWNER_KEY = "langgraph_episodic.owner"
"""The ASGI scope key holding the authenticated user's label (absent when run locally)."""


def owner(request: Request) -> str | None:
    """The label of the only user this request may see, or None (every user)."""
    label = request.scope.get(OWNER_KEY)
    return label if isinstance(label, str) else None


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
