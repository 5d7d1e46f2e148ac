"""What changes the store: edit an item's text, delete an item, forget a user, verify and
repair the store; and export.

Every change is a POST whose form carries the CSRF token (:func:`.security.check_csrf`), and
none is possible when the inspector runs ``--read-only``. An edit names the ``updated_at`` its
page showed and is refused when the item changed since (a stale page never overwrites a newer
write; the check and the put are two calls, so a write landing between them still loses).
Deleting an item asks first (a page showing the item, with the button that deletes it);
forgetting shows a dry run first and deletes only after the user id is typed in again.
``/verify`` checks the store as ``langgraph-episodic verify [--repair]`` does; it is not offered
in a deployment (:mod:`.deployment`), where one user's page must not read or change the whole
store.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from . import data
from .pages import (
    Settings,
    check_namespace,
    namespace_of,
    render,
    requested_user,
    root,
    user_id_of_label,
)
from .security import check_csrf, owner


def _check_writable(request: Request) -> None:
    if request.app.state.settings.read_only:
        raise HTTPException(403, "The inspector runs --read-only: nothing can be changed.")


async def _writable_form(request: Request) -> FormData:
    _check_writable(request)
    return await check_csrf(request)


def _existing(store: Any, ns: tuple[str, ...], key: str) -> data.Row:
    row = data.item_row(store, ns, key) if key else None
    if row is None:
        raise HTTPException(404, f"No item {key!r} in namespace {'/'.join(ns)} (deleted?).")
    return row


def _item_of(request: Request, form: FormData) -> tuple[tuple[str, ...], str]:
    ns = tuple(str(v) for v in form.getlist("ns"))
    key = str(form.get("key", ""))
    if not ns or not all(ns) or not key:
        raise HTTPException(400, "The form names no item (ns and key).")
    return check_namespace(request, ns), key


def _query(ns: tuple[str, ...], **extra: str) -> str:
    return urlencode([*(("ns", label) for label in ns), *extra.items()])


async def edit(request: Request) -> Response:
    form = await _writable_form(request)
    ns, key = _item_of(request, form)
    text = str(form.get("text", ""))
    if not text.strip():
        raise HTTPException(400, "The new text is empty; to remove the item, delete it.")
    store = request.app.state.settings.store
    row = await run_in_threadpool(_existing, store, ns, key)
    if not isinstance(row.item.value.get("text"), str):
        raise HTTPException(400, "This item's value has no text field to edit.")
    if str(form.get("seen", "")) != row.item.updated_at.isoformat():
        raise HTTPException(
            409,
            "The item changed since you opened it (another writer updated it); nothing was "
            "saved. Reload the page to see the new text, then edit that.",
        )
    try:
        await run_in_threadpool(data.rewrite_text, store, row, text)
    except ValueError as error:  # the store refused the put (over its size limit): nothing written
        raise HTTPException(413, str(error)) from None
    return RedirectResponse(f"{root(request)}/item?{_query(ns, key=key, notice='edited')}", 303)


def delete_page(request: Request) -> Response:
    """The confirmation a delete asks for: the item, and the POST form that deletes it."""
    _check_writable(request)
    ns = namespace_of(request)
    row = _existing(request.app.state.settings.store, ns, request.query_params.get("key", ""))
    return render(request, "delete.html", ns=ns, row=row)


async def delete(request: Request) -> Response:
    form = await _writable_form(request)
    ns, key = _item_of(request, form)
    await run_in_threadpool(request.app.state.settings.store.delete, ns, key)
    return RedirectResponse(f"{root(request)}/namespace?{_query(ns, notice='deleted')}", 303)


def export(request: Request) -> Response:
    """The user's items as a JSON-lines download (the format of ``langgraph-episodic export``)."""
    from ..admin.transfer import collect_records, write_records

    label = requested_user(request)
    store = request.app.state.settings.store
    records = collect_records(store, data.user_namespace_list(store, label))
    out = io.StringIO()
    write_records(records, out)
    name = re.sub(r"[^A-Za-z0-9_-]", "_", label)[:60] or "user"
    return Response(
        out.getvalue(),
        media_type="application/x-ndjson; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="export-{name}.jsonl"'},
    )


def _preview(settings: Settings, user_id: str) -> dict[str, Any]:
    """What forgetting ``user_id`` would delete (a dry run: nothing is deleted)."""
    from ..admin.forget import checkpoint_database, checkpointer
    from ..privacy import forget_user

    database = checkpoint_database(settings.checkpoints)
    with checkpointer(database) as saver:
        report = forget_user(user_id, store=settings.store, checkpointer=saver, dry_run=True,
                             scan="user")
    return {**report.to_dict(), "checkpoints": None if database is None else str(database)}


def _user_id(label: str) -> str:
    return user_id_of_label(
        label, "`forget` cannot match it; delete its items one by one instead."
    )


def forget_page(request: Request) -> Response:
    label = requested_user(request)
    user_id = _user_id(label)
    settings = request.app.state.settings
    return render(request, "forget.html", label=label, user_id=user_id,
                  preview=_preview(settings, user_id), mismatch=False)


async def forget(request: Request) -> Response:
    from ..admin.forget import forget as forget_and_check
    from ..admin.forget import render as render_report

    form = await _writable_form(request)
    label = requested_user(request, fields=form)
    user_id = _user_id(label)
    settings = request.app.state.settings
    if str(form.get("confirm", "")) != user_id:
        preview = await run_in_threadpool(_preview, settings, user_id)
        return render(request, "forget.html", 400, label=label, user_id=user_id, preview=preview,
                      mismatch=True)
    report = await run_in_threadpool(
        forget_and_check, settings.store, user_id, checkpoints=settings.checkpoints
    )
    return render(request, "forgotten.html", user_id=user_id, report=report,
                  text=render_report(report, settings.where))


def _check_verify(request: Request) -> tuple[Settings, Callable[..., Any]]:
    """The inspector's settings and its store's ``verify``, or the HTTP error that says why
    this inspector cannot verify."""
    settings: Settings = request.app.state.settings
    if settings.read_only:
        raise HTTPException(403, "The inspector runs --read-only: verify and repair are off.")
    if owner(request) is not None:
        raise HTTPException(403, "Verify and repair cover the whole store: not from a user's page.")
    verify = getattr(settings.store, "verify", None)
    if not callable(verify):
        raise HTTPException(
            400, f"{type(settings.store).__name__} has no verify(): only a ChromaStore does."
        )
    return settings, verify


def verify_page(request: Request) -> Response:
    _check_verify(request)
    return render(request, "verify.html", text=None, report=None)


async def run_verify(request: Request) -> Response:
    """Check the store (``langgraph-episodic verify``), or repair it (``--repair``); this reads
    every record, so it is a POST."""
    from ..admin.verify import render as render_report

    settings, verify = _check_verify(request)
    form = await check_csrf(request)
    repair = str(form.get("repair", "")) == "1"
    report = await run_in_threadpool(lambda: verify(repair=repair))
    return render(request, "verify.html", text=render_report(report, settings.where),
                  report=report)


routes = [
    Route("/item/edit", edit, methods=["POST"], name="edit"),
    Route("/item/delete", delete_page, methods=["GET"], name="delete_page"),
    Route("/item/delete", delete, methods=["POST"], name="delete"),
    Route("/export", export, name="export"),
    Route("/forget", forget_page, methods=["GET"], name="forget_page"),
    Route("/forget/confirm", forget, methods=["POST"], name="forget"),
    Route("/verify", verify_page, methods=["GET"], name="verify_page"),
    Route("/verify", run_verify, methods=["POST"], name="verify"),
]
