"""The search playground: a query, a limit, a score floor, optionally one user's namespaces.

On a ``ChromaStore`` each hit shows what its score is made of (``ChromaStore.explain``: the
cosine, the lexical share, the shared-field lift), and the hits the floor removed are listed
under the results with theirs."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import BaseStore
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from . import data
from .pages import render

MAX_LIMIT = 100

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
    raw = request.query_params.get(name, "").strip()
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        raise HTTPException(400, f"{name} must be a number, got {raw!r}") from None


def _explained(
    store: BaseStore, query: str, *, label: str | None, limit: int, floor: float | None
) -> list[Any] | None:
    """The best ``limit`` hits with their score breakdowns (as :func:`.data.search_hits` picks
    them, before the floor), or None for a store that cannot explain its scores."""
    explain = getattr(store, "explain", None)
    if explain is None:
        return None
    if label is None:
        return list(explain((), query=query, limit=limit, floor=floor).hits)
    found: list[Any] = []
    for ns, _count in data.user_namespaces(store, label):
        found.extend(
            h
            for h in explain(ns, query=query, limit=limit, floor=floor).hits
            if tuple(h.item.namespace) == ns
        )
    found.sort(key=lambda h: -(h.score if h.score is not None else float("-inf")))
    return found[:limit]


def search(request: Request) -> Response:
    store = request.app.state.settings.store
    query = request.query_params.get("q", "")
    user = request.query_params.get("user", "") or None
    floor = _float(request, "floor")
    given = _float(request, "limit")
    limit = 10.0 if given is None else given
    if limit != int(limit) or not 1 <= limit <= MAX_LIMIT:
        raise HTTPException(400, f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    hits = None
    parts: list[Any] = []
    under_floor: list[Any] = []
    if query.strip():
        explained = _explained(store, query, label=user, limit=int(limit), floor=floor)
        if explained is None:
            hits = data.search_hits(store, query, label=user, limit=int(limit), floor=floor)
        else:
            parts = [h for h in explained if not h.below_floor]
            hits = [h.item for h in parts]
            under_floor = [h for h in explained if h.below_floor]
    mode = getattr(store, "search_mode", None)
    return render(
        request,
        "search.html",
        query=query,
        user=user or "",
        limit=int(limit),
        floor="" if floor is None else floor,
        hits=hits,
        parts=parts,
        under_floor=under_floor,
        mode=mode,
        score_note=SCORE_NOTES.get(str(mode), "The store's score (its parts are not exposed)."),
    )


routes = [Route("/search", search, name="search")]
