"""Browsing: users -> a user's namespaces -> a namespace's items (paged) -> one item; and
the search playground: a query, a limit, a score floor, optionally one user's namespaces.

On a ``ChromaStore`` each hit shows its score's parts (``ChromaStore.explain``), and the hits
the floor removed are listed below. One user: each of their namespaces of memory, ranked as the
agent's recall ranks. All users: one search by meaning only (``mode="dense"``, milliseconds at
100,000 items, where the hybrid ranking's keyword side takes seconds; docs/benchmarks.md), not
run on a store without vectors. Internal namespaces are never searched.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from langgraph.store.base import BaseStore
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from ..admin.browse import best_hits
from . import data
from .pages import (
    check_user,
    namespace_of,
    notice,
    offset_of,
    render,
    requested_user,
    root,
    whole_number,
)
from .security import owner

MAX_FILTER = 200
"""The longest text filter of a namespace's items, in characters."""
MAX_LIMIT = 100
"""The most hits a search shows."""
ALL_USERS_MODE = "dense"
"""How a search over all users ranks on a ``ChromaStore`` (see the module's docstring)."""
SCORE_NOTES = {
    "hybrid": (
        "Hybrid score: 0.35 x cosine (measured from the question's baseline) + 0.65 x lexical "
        "share (BM25 over the best BM25 score any memory could reach), plus the lift when a "
        "memory shares a field value (a date) with the best hits. Each hit's parts are shown "
        "below it."
    ),
    "dense": "Dense score: the cosine similarity of the query and the item's vector.",
    "lexical": "Lexical score: the item's BM25 share of the best BM25 score.",
}


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
    namespaces = data.user_namespace_counts(store, label)
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


def _float(request: Request, name: str) -> float | None:
    """The query parameter ``name`` as a finite number (None when absent); 400 otherwise."""
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return None
    try:
        number = float(raw)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise HTTPException(400, f"{name} must be a finite number, got {raw[:40]!r}.")
    return number


@dataclass(frozen=True)
class Scope:
    """What a search reads and how it ranks, as the page says it."""

    mode: str | None
    """The ranking (``"hybrid"``, ``"dense"``, ``"lexical"``; None: the store's own, unknown)."""
    note: str
    """What was searched, in a sentence."""
    runs: bool = True
    """False when the search is not run (all users on a store without vectors)."""


def scope_of(store: BaseStore, label: str | None) -> Scope:
    """What a search of ``label``'s memory (None: all users) reads on ``store``."""
    mode = getattr(store, "search_mode", None)
    explains = getattr(store, "explain", None) is not None
    if label is not None:
        return Scope(mode, f"Searched each namespace of memory of user {label}, ranked as the "
                           "store ranks (the agent's recall ranks the same way).")
    if not explains:
        return Scope(mode, "Searched the whole store (all users) with the store's own ranking.")
    if getattr(store, "embeddings", None) is None:
        return Scope(mode, "A search over all users needs the store's vectors, and this store has "
                           "none: name a user to search their memory.", runs=False)
    return Scope(ALL_USERS_MODE, (
        "Searched all users' memories at once by meaning only: the cosine of each memory's "
        "vector, from Chroma's vector index (the keyword side of the hybrid score would read "
        "every memory sharing a word with the query). Name a user to see the score the agent's "
        "recall ranks by, with its parts."
    ))


def _explained(
    store: BaseStore, query: str, *, label: str | None, limit: int, floor: float | None
) -> list[Any] | None:
    """The best ``limit`` hits with their score breakdowns (as :func:`.data.search_hits` picks
    them, before the floor), or None for a store that cannot explain its scores."""
    explain = getattr(store, "explain", None)
    if explain is None:
        return None
    if label is None:
        every = explain((), query=query, limit=limit, floor=floor, mode=ALL_USERS_MODE).hits
        return [h for h in every if not data.is_internal(tuple(h.item.namespace))]
    return best_hits(
        lambda ns: explain(ns, query=query, limit=limit, floor=floor).hits,
        data.memory_namespace_list(store, label),
        limit,
        item=lambda hit: hit.item,
    )


def search(request: Request) -> Response:
    store = request.app.state.settings.store
    query = request.query_params.get("q", "")
    given = request.query_params.get("user", "")
    user = check_user(request, given) if given else None
    floor = _float(request, "floor")
    limit = whole_number(request, "limit", 10, 1, MAX_LIMIT)
    scope = scope_of(store, user)
    hits = None
    parts: list[Any] = []
    under_floor: list[Any] = []
    if query.strip() and scope.runs:
        explained = _explained(store, query, label=user, limit=limit, floor=floor)
        if explained is None:
            hits = data.search_hits(store, query, label=user, limit=limit, floor=floor)
        else:
            parts = [h for h in explained if not h.below_floor]
            hits = [h.item for h in parts]
            under_floor = [h for h in explained if h.below_floor]
    return render(
        request, "search.html", query=query, user=user or "", limit=limit,
        floor="" if floor is None else floor, hits=hits, parts=parts, under_floor=under_floor,
        mode=scope.mode, scope=scope,
        score_note=SCORE_NOTES.get(str(scope.mode), "The store's score (its parts are not exposed)."),
    )


routes = [
    Route("/", home, name="home"),
    Route("/user", user, name="user"),
    Route("/namespace", namespace, name="namespace"),
    Route("/item", item, name="item"),
    Route("/search", search, name="search"),
]
