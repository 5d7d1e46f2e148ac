"""``/verify``: check the store (and repair it) as ``langgraph-episodic verify [--repair]`` does.

The page itself only shows two buttons; checking reads every record, so it runs on a POST
(with the CSRF token), and repairing is a second POST the user asks for. Both are absent when
the inspector runs ``--read-only``, and in a deployment (:mod:`.deployment`), where one user's
page must not read or change the whole store.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .access import owner
from .pages import Settings, render
from .security import check_csrf


def _check(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    if settings.read_only:
        raise HTTPException(403, "The inspector runs --read-only: verify and repair are off.")
    if owner(request) is not None:
        raise HTTPException(403, "Verify and repair cover the whole store: not from a user's page.")
    if not callable(getattr(settings.store, "verify", None)):
        raise HTTPException(
            400, f"{type(settings.store).__name__} has no verify(): only a ChromaStore does."
        )
    return settings


def verify_page(request: Request) -> Response:
    _check(request)
    return render(request, "verify.html", text=None, report=None)


async def run_verify(request: Request) -> Response:
    from ..admin.verify import render as render_report

    settings = _check(request)
    await check_csrf(request)
    form = await request.form()
    repair = str(form.get("repair", "")) == "1"
    verify = settings.store.verify  # type: ignore[attr-defined]  # checked by _check
    report = await run_in_threadpool(lambda: verify(repair=repair))
    return render(request, "verify.html", text=render_report(report, settings.where),
                  report=report)


routes = [
    Route("/verify", verify_page, methods=["GET"], name="verify_page"),
    Route("/verify", run_verify, methods=["POST"], name="verify"),
]
