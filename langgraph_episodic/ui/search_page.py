"""The search playground: a query, a limit, a score floor, optionally one user's namespaces."""

from __future__ import annotations

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
        "share (BM25 over the best BM25 score), possibly lifted by a shared field value. The "
        "store returns only the fused score per hit; its parts are not exposed through the "
        "BaseStore API, so they are not shown."
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
    if query.strip():
        hits = data.search_hits(store, query, label=user, limit=int(limit), floor=floor)
    mode = getattr(store, "search_mode", None)
    return render(
        request,
        "search.html",
        query=query,
        user=user or "",
        limit=int(limit),
        floor="" if floor is None else floor,
        hits=hits,
        mode=mode,
        score_note=SCORE_NOTES.get(str(mode), "The store's score (its parts are not exposed)."),
    )


routes = [Route("/search", search, name="search")]
