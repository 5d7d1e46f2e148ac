"""What changes the store: edit an item's text, delete an item, forget a user; and export.

Every change is a POST whose form carries the CSRF token (:func:`.security.check_csrf`), and
none is possible when the inspector runs ``--read-only``. An edit names the ``updated_at`` its
page showed and is refused when the item changed since (a stale page never overwrites a newer
write; the check and the put are two calls, so a write landing between them still loses).
Deleting an item asks first (a page showing the item, with the button that deletes it);
forgetting shows a dry run first and deletes only after the user id is typed in again.
"""

from __future__ import annotations

import io
import re
from typing import Any
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from . import data
from .access import check_namespace, requested_user, user_id_of_label
from .browse import namespace_of
from .pages import Settings, render, root
from .security import check_csrf


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _check_writable(request: Request) -> None:
    if _settings(request).read_only:
        raise HTTPException(403, "The inspector runs --read-only: nothing can be changed.")


async def _writable_form(request: Request) -> FormData:
    _check_writable(request)
    await check_csrf(request)
    return await request.form()


def _item_of(form: FormData) -> tuple[tuple[str, ...], str]:
    ns = tuple(str(v) for v in form.getlist("ns"))
    key = str(form.get("key", ""))
    if not ns or not all(ns) or not key:
        raise HTTPException(400, "The form names no item (ns and key).")
    return ns, key


def _query(ns: tuple[str, ...], **extra: str) -> str:
    return urlencode([*(("ns", label) for label in ns), *extra.items()])


async def edit(request: Request) -> Response:
    form = await _writable_form(request)
    ns, key = _item_of(form)
    check_namespace(request, ns)
    text = str(form.get("text", ""))
    if not text.strip():
        raise HTTPException(400, "The new text is empty; to remove the item, delete it.")
    store = _settings(request).store
    row = await run_in_threadpool(data.item_row, store, ns, key)
    if row is None:
        raise HTTPException(404, f"No item {key!r} in namespace {'/'.join(ns)} (deleted?).")
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
    key = request.query_params.get("key", "")
    row = data.item_row(_settings(request).store, ns, key) if key else None
    if row is None:
        raise HTTPException(404, f"No item {key!r} in namespace {'/'.join(ns)} (deleted?).")
    return render(request, "delete.html", ns=ns, row=row)


async def delete(request: Request) -> Response:
    form = await _writable_form(request)
    ns, key = _item_of(form)
    check_namespace(request, ns)
    await run_in_threadpool(_settings(request).store.delete, ns, key)
    return RedirectResponse(f"{root(request)}/namespace?{_query(ns, notice='deleted')}", 303)


def export(request: Request) -> Response:
    """The user's items as a JSON-lines download (the format of ``langgraph-episodic export``)."""
    from ..admin.transfer import collect_records, write_records

    label = requested_user(request)
    store = _settings(request).store
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
    settings = _settings(request)
    return render(request, "forget.html", label=label, user_id=user_id,
                  preview=_preview(settings, user_id), mismatch=False)


async def forget(request: Request) -> Response:
    from ..admin.forget import forget as forget_and_check
    from ..admin.forget import render as render_report

    form = await _writable_form(request)
    label = requested_user(request, fields=form)
    user_id = _user_id(label)
    settings = _settings(request)
    if str(form.get("confirm", "")) != user_id:
        preview = await run_in_threadpool(_preview, settings, user_id)
        return render(request, "forget.html", 400, label=label, user_id=user_id, preview=preview,
                      mismatch=True)
    report = await run_in_threadpool(
        forget_and_check, settings.store, user_id, checkpoints=settings.checkpoints
    )
    return render(request, "forgotten.html", user_id=user_id, report=report,
                  text=render_report(report, settings.where))


routes = [
    Route("/item/edit", edit, methods=["POST"], name="edit"),
    Route("/item/delete", delete_page, methods=["GET"], name="delete_page"),
    Route("/item/delete", delete, methods=["POST"], name="delete"),
    Route("/export", export, name="export"),
    Route("/forget", forget_page, methods=["GET"], name="forget_page"),
    Route("/forget/confirm", forget, methods=["POST"], name="forget"),
]
