"""The search playground: a query, a limit, a score floor, optionally one user's namespaces.

On a ``ChromaStore`` each hit shows its score's parts (``ChromaStore.explain``), and the hits
the floor removed are listed below. One user: each of their namespaces of memory, ranked as the
agent's recall ranks. All users: one search by meaning only (``mode="dense"``, milliseconds at
100,000 items, where the hybrid ranking's keyword side takes seconds; docs/benchmarks.md), not
run on a store without vectors. Internal namespaces are never searched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..admin.browse import best_hits
from . import data
from .access import check_user
from .browse import whole_number
from .pages import render

MAX_LIMIT = 100
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
    mode = scope.mode
    return render(
        request, "search.html", query=query, user=user or "", limit=limit,
        floor="" if floor is None else floor, hits=hits, parts=parts, under_floor=under_floor,
        mode=mode, scope=scope,
        score_note=SCORE_NOTES.get(str(mode), "The store's score (its parts are not exposed)."),
    )


routes = [Route("/search", search, name="search")]
