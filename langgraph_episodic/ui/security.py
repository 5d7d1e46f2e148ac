"""Who may use the inspector: the holder of its access token, and only from its own pages.

* The app lives under a path of its own, a random name made at each start
  (``http://127.0.0.1:8766/<path>/``); anything outside it gets 403.
* Every request needs the access token: ``?token=...`` once (the URL the command prints), which
  sets a session cookie and redirects to the same page without the token, so it stays out of
  the history and of ``Referer`` headers; then the cookie. Anything else gets 403. The cookie
  (``HttpOnly``, ``SameSite=Strict``) is scoped to the app's path, so the browser sends it to
  no other server on 127.0.0.1 (cookies are not kept apart by port, paths are), and it holds
  not the token but an HMAC of the token, the port and the path: a server that got it anyway
  could not log in with it anywhere else, nor turn it into the token.
* Every mutating request is a POST carrying the form field ``csrf``, an HMAC of the request's
  user under a secret key, that only the inspector's own pages show (another site cannot read
  them): a token one user's page showed is refused for another user. A POST without it, or
  with a wrong one, gets 403. Other methods than GET, HEAD and POST get 405.
* Every answer, error pages included, forbids scripts, frames and foreign form targets
  (:data:`HEADERS`), and the server answers only to the ``Host`` names of the loopback
  interface (DNS rebinding).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlencode

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

OWNER_KEY = "langgraph_episodic.owner"
"""The ASGI scope key holding the authenticated user's label (absent when run locally)."""


def owner(request: Request) -> str | None:
    """The label of the only user this request may see, or None (every user)."""
    label = request.scope.get(OWNER_KEY)
    return label if isinstance(label, str) else None


COOKIE = "lge_session"
"""The session cookie's name, followed by the server's port."""
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


def _random() -> str:
    return secrets.token_urlsafe(32)


def _mac(key: str, *parts: object) -> str:
    message = "\0".join(str(part) for part in parts)
    return hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()


def _same(given: object, expected: str) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given.encode(), expected.encode())


@dataclass(frozen=True)
class Secrets:
    """The inspector's secrets: the access token (given to the user), the path the app lives
    under, and the key its CSRF tokens are made with."""

    token: str = field(default_factory=_random)
    csrf: str = field(default_factory=_random)
    """The CSRF key: a user's CSRF token is :meth:`csrf_for` that user, never the key."""
    path: str = field(default_factory=lambda: "/" + secrets.token_urlsafe(16))
    """Where the app is served (``/<random>``): the session cookie is scoped to it."""

    def token_ok(self, given: str | None) -> bool:
        return _same(given, self.token)

    def session(self, port: int) -> str:
        """The session cookie's value for the server on ``port``: no server can log in with
        it but this one, and it does not reveal the token."""
        return _mac(self.token, "session", port, self.path)

    def csrf_for(self, user: str | None) -> str:
        """The CSRF token of ``user``'s pages (None: the local inspector's only user)."""
        return _mac(self.csrf, "csrf", "" if user is None else f"user:{user}")

    def csrf_ok(self, given: object, user: str | None) -> bool:
        return _same(given, self.csrf_for(user))


REFUSED = (
    "403 Forbidden: this inspector needs its access token. Open the URL that "
    "`langgraph-episodic ui` printed (it ends in ?token=...)."
)


def security_headers(app: ASGIApp) -> ASGIApp:
    """ASGI middleware: the security headers (:data:`HEADERS`) on every answer, refusals and
    error pages included."""

    async def with_headers(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_with_headers if scope["type"] == "http" else send)

    return with_headers


def gate(app: ASGIApp, refusal: Callable[[Scope], Response | None]) -> ASGIApp:
    """ASGI middleware: the answer ``refusal`` gives an HTTP request, or ``app``'s if none."""

    async def gated(scope: Scope, receive: Receive, send: Send) -> None:
        response = refusal(scope) if scope["type"] == "http" else None
        await (app if response is None else response)(scope, receive, send)

    return gated


def _method_refusal(method: str) -> Response | None:
    if method in SAFE_METHODS | {"POST"}:
        return None
    return PlainTextResponse("405 Method Not Allowed", status_code=405)


def token_refusal(secrets: Secrets, scope: Scope) -> Response | None:
    """Requests under the app's path (:attr:`Secrets.path`) that carry the access token once,
    then the session cookie it set, pass (None)."""
    request = Request(scope)
    port = int((scope.get("server") or ("", 0))[1])
    cookie, session = f"{COOKIE}_{port}", secrets.session(port)
    given = request.query_params.get(TOKEN_PARAM)
    path = scope["path"]
    under = path == secrets.path or path.startswith(secrets.path + "/")
    if under and given is not None and secrets.token_ok(given) and request.method in SAFE_METHODS:
        response = RedirectResponse(_without_token(request), status_code=303)
        response.set_cookie(cookie, session, httponly=True, samesite="strict", path=secrets.path)
        return response
    if not under or given is not None or not _same(request.cookies.get(cookie), session):
        return PlainTextResponse(REFUSED, status_code=403)
    return _method_refusal(request.method)


def owner_refusal(scope: Scope) -> Response | None:
    """For the inspector inside a deployment: only requests whose scope names the authenticated
    user's label (:data:`OWNER_KEY`), GET, HEAD and POST only, pass (None)."""
    mine = scope.get(OWNER_KEY)
    if not isinstance(mine, str):
        return PlainTextResponse(
            "403 Forbidden: no authenticated user. The inspector in a deployment needs the "
            'deployment\'s auth on its routes: "http": {"enable_custom_route_auth": true}.',
            status_code=403,
        )
    wrong_method = _method_refusal(scope["method"])
    if wrong_method is not None:
        return wrong_method
    why = not_yours(Request(scope), mine)
    return None if why is None else PlainTextResponse(f"403 Forbidden: {why}", status_code=403)


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


def _without_token(request: Request) -> str:
    """The request's path and query without the token (where its redirect goes)."""
    kept = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAM]
    # "//host/..." or "/\\host" would send the browser to another host: keep one leading "/".
    path = "/" + request.url.path.lstrip("/\\")
    return path + (f"?{urlencode(kept)}" if kept else "")


async def check_csrf(request: Request) -> FormData:
    """The POST's form; 403 unless it carries the CSRF token of the request's user."""
    form = await request.form()
    if not request.app.state.secrets.csrf_ok(form.get(CSRF_FIELD), owner(request)):
        raise HTTPException(
            403, "403 Forbidden: the form's CSRF token is missing or wrong. Reload the page."
        )
    return form
