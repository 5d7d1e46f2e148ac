"""Browsing: users -> a user's namespaces -> a namespace's items (paged) -> one item."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from . import data
from .access import check_namespace, owner, requested_user
from .pages import notice, render, root


def namespace_of(request: Request) -> tuple[str, ...]:
    """The ``ns`` query (or form) labels, in order; 400 when there are none."""
    labels = tuple(request.query_params.getlist("ns"))
    if not labels or not all(labels):
        raise HTTPException(400, "Name the namespace: ?ns=<label>&ns=<label>...")
    return check_namespace(request, labels)


def offset_of(request: Request) -> int:
    """The ``offset`` query as a whole number >= 0 (0 when absent); 400 otherwise."""
    try:
        return max(0, int(request.query_params.get("offset", "0")))
    except ValueError:
        raise HTTPException(400, "offset must be a whole number") from None


def home(request: Request) -> Response:
    mine = owner(request)
    if mine is not None:  # in a deployment: the only user there is to see
        return RedirectResponse(f"{root(request)}/user?{urlencode({'id': mine})}", 303)
    store = request.app.state.settings.store
    offset = offset_of(request)
    overview = data.overview(store)
    shown = overview.users[offset : offset + data.USERS_PER_PAGE]
    return render(
        request, "home.html", overview=overview, users=shown, offset=offset,
        more=offset + len(shown) < len(overview.users), page_size=data.USERS_PER_PAGE,
    )


def user(request: Request) -> Response:
    label = requested_user(request, "id")
    store = request.app.state.settings.store
    namespaces = data.user_namespaces(store, label)
    return render(
        request,
        "user.html",
        label=label,
        user_id=data.user_id_of(label),
        namespaces=namespaces,
        cap=data.COUNT_CAP,
        internal_name=data.internal_name,
    )


def namespace(request: Request) -> Response:
    ns = namespace_of(request)
    offset = offset_of(request)
    page = data.items_page(request.app.state.settings.store, ns, offset)
    return render(
        request,
        "namespace.html",
        ns=ns,
        internal=data.internal_name(ns) if data.is_internal(ns) else None,
        page=page,
        page_size=data.PAGE_SIZE,
        notice=notice(request),
    )


def item(request: Request) -> Response:
    ns = namespace_of(request)
    key = request.query_params.get("key", "")
    row = data.item_row(request.app.state.settings.store, ns, key) if key else None
    if row is None:
        raise HTTPException(404, f"No item {key!r} in namespace {'/'.join(ns)}.")
    return render(
        request,
        "item.html",
        ns=ns,
        row=row,
        editable=isinstance(row.item.value.get("text"), str),
        value_json=json.dumps(row.item.value, indent=2, ensure_ascii=False),
        notice=notice(request),
    )


def no_icon(request: Request) -> Response:
    return Response(status_code=204)


routes = [
    Route("/", home, name="home"),
    Route("/user", user, name="user"),
    Route("/namespace", namespace, name="namespace"),
    Route("/item", item, name="item"),
]
