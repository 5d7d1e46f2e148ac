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

MAX_OFFSET = 1_000_000_000
"""The largest ``offset`` a list page takes (far beyond any namespace a page can list)."""
MAX_FILTER = 200
"""The longest text filter of a namespace's items, in characters."""


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
    return render(request, "user.html", label=label, user_id=data.user_id_of(label),
                  namespaces=namespaces, cap=data.COUNT_CAP, internal_name=data.internal_name)


def namespace(request: Request) -> Response:
    ns = namespace_of(request)
    offset = offset_of(request)
    contains = request.query_params.get("contains", "").strip()
    if len(contains) > MAX_FILTER:
        raise HTTPException(400, f"The filter is longer than {MAX_FILTER} characters.")
    sort = request.query_params.get("sort", "") or "updated"
    if sort not in data.SORTS:
        raise HTTPException(400, f"Unknown sort {sort[:40]!r}; one of: {', '.join(data.SORTS)}.")
    page = data.items_page(request.app.state.settings.store, ns, offset, contains=contains,
                           sort=sort)
    return render(
        request, "namespace.html", ns=ns, contains=contains, sort=sort, sorts=data.SORTS,
        sort_cap=data.SORT_CAP, internal=data.internal_name(ns) if data.is_internal(ns) else None,
        page=page, page_size=data.PAGE_SIZE, notice=notice(request),
    )


def item(request: Request) -> Response:
    ns = namespace_of(request)
    key = request.query_params.get("key", "")
    row = data.item_row(request.app.state.settings.store, ns, key) if key else None
    if row is None:
        raise HTTPException(404, f"No item {key!r} in namespace {'/'.join(ns)}.")
    return render(
        request, "item.html", ns=ns, row=row, editable=isinstance(row.item.value.get("text"), str),
        value_json=json.dumps(row.item.value, indent=2, ensure_ascii=False), notice=notice(request),
    )


def no_icon(request: Request) -> Response:
    return Response(status_code=204)


routes = [
    Route("/", home, name="home"),
    Route("/user", user, name="user"),
    Route("/namespace", namespace, name="namespace"),
    Route("/item", item, name="item"),
]
