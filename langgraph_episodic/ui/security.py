"""Who may use the inspector: the holder of its access token, and only from its own pages.

* Every request needs the access token: ``?token=...`` once (the URL the command prints), which
  sets a cookie (``HttpOnly``, ``SameSite=Strict``) and redirects to the same page without the
  token, so it stays out of the history and of ``Referer`` headers; then the cookie. Anything
  else gets 403.
* Every mutating request is a POST carrying the form field ``csrf``, a second random token
  that only the inspector's own pages hold (another site cannot read them); a POST without it,
  or with a wrong one, gets 403. Other methods than GET, HEAD and POST get 405.
* Responses forbid scripts, frames and foreign form targets (``Content-Security-Policy``), and
  the server answers only to the ``Host`` names of the loopback interface (DNS rebinding).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "lge_token"
"""The cookie's name, followed by the server's port: cookies are not kept apart by port, so two
inspectors on one machine each keep their own."""
TOKEN_PARAM = "token"
CSRF_FIELD = "csrf"
SAFE_METHODS = frozenset({"GET", "HEAD"})
LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
"""The ``Host`` names the server answers to (it listens on 127.0.0.1 only)."""

HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}


@dataclass(frozen=True)
class Secrets:
    """The access token (given to the user) and the CSRF token (put in the app's forms)."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def csrf_ok(self, given: object) -> bool:
        return isinstance(given, str) and hmac.compare_digest(given.encode(), self.csrf.encode())


REFUSED = (
    "403 Forbidden: this inspector needs its access token. Open the URL that "
    "`langgraph-episodic ui` printed (it ends in ?token=...)."
)


class TokenGate:
    """ASGI middleware: the access token on every request, security headers on every answer."""

    def __init__(self, app: ASGIApp, secrets_: Secrets) -> None:
        self.app = app
        self.secrets = secrets_

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        given = request.query_params.get(TOKEN_PARAM)
        response: Response | None = None
        if given is not None:
            if self.secrets.token_ok(given) and request.method in SAFE_METHODS:
                response = RedirectResponse(_without_token(request), status_code=303)
                response.set_cookie(
                    cookie_name(scope), self.secrets.token, httponly=True, samesite="strict",
                    path="/",
                )
            else:
                response = PlainTextResponse(REFUSED, status_code=403)
        elif not self.secrets.token_ok(request.cookies.get(cookie_name(scope))):
            response = PlainTextResponse(REFUSED, status_code=403)
        elif request.method not in SAFE_METHODS | {"POST"}:
            response = PlainTextResponse("405 Method Not Allowed", status_code=405)
        if response is not None:
            response.headers.update(HEADERS)
            await response(scope, receive, send)
            return

        await self.app(scope, receive, with_headers(send))


def with_headers(send: Send) -> Send:
    """``send`` that adds the security headers (:data:`HEADERS`) to the response."""

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            headers += [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
            message = {**message, "headers": headers}
        await send(message)

    return send_with_headers


class OwnerGate:
    """ASGI middleware for the inspector inside a deployment: only requests whose scope names
    the authenticated user's label (:data:`.access.OWNER_KEY`), GET, HEAD and POST only, and
    the security headers on every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from .access import OWNER_KEY

        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        response: Response | None = None
        if not isinstance(scope.get(OWNER_KEY), str):
            response = PlainTextResponse(
                "403 Forbidden: no authenticated user. The inspector in a deployment needs the "
                'deployment\'s auth on its routes: "http": {"enable_custom_route_auth": true}.',
                status_code=403,
            )
        elif scope.get("method") not in SAFE_METHODS | {"POST"}:
            response = PlainTextResponse("405 Method Not Allowed", status_code=405)
        else:
            refused = not_yours(Request(scope), str(scope[OWNER_KEY]))
            if refused is not None:
                response = PlainTextResponse(f"403 Forbidden: {refused}", status_code=403)
        if response is not None:
            response.headers.update(HEADERS)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, with_headers(send))


def not_yours(request: Request, owner: str) -> str | None:
    """Why the query of ``request`` reaches beyond ``owner``'s memory, or None when it does
    not: every ``user`` and ``id`` must be the owner, every ``ns`` the owner's, and a search
    names its user (a search of all users is no user's page). The pages check the same
    again; this covers every route, whatever it reads."""
    query = request.query_params
    for name in ("user", "id"):
        for given in query.getlist(name):
            if given != owner:
                return f"user {given!r} is not you; you may only see your own memory ({owner!r})."
    labels = query.getlist("ns")
    if labels and (len(labels) < 2 or labels[1] != owner):
        return f"namespace {'/'.join(labels)} is not yours; yours are <kind>/{owner}/..."
    path, mount = request.url.path, str(request.scope.get("root_path", ""))
    route = path[len(mount):] if mount and path.startswith(mount) else path
    if route.rstrip("/") == "/search" and "user" not in query:
        return f"a search covers one user's memory here: add ?user={owner}."
    return None


def cookie_name(scope: Scope) -> str:
    """The access cookie's name for the server this request reached (``lge_token_8765``)."""
    server = scope.get("server") or ("", 0)
    return f"{COOKIE}_{server[1]}"


def _without_token(request: Request) -> str:
    """The request's path and query without the token (where its redirect goes)."""
    kept = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
    # "//host/..." or "/\\host" would send the browser to another host: keep one leading "/".
    path = "/" + request.url.path.lstrip("/\\")
    return path + (f"?{urlencode(kept)}" if kept else "")


async def check_csrf(request: Request) -> None:
    """Raise 403 unless the POST's form carries the app's CSRF token."""
    from starlette.exceptions import HTTPException

    form = await request.form()
    if not request.app.state.secrets.csrf_ok(form.get(CSRF_FIELD)):
        raise HTTPException(
            403, "403 Forbidden: the form's CSRF token is missing or wrong. Reload the page."
        )
