"""Conversation threads, read-only from the checkpoint database.

``/threads?user=L`` lists the user's sessions (threads ``"<user_id>:<session>"``, see
:func:`~langgraph_episodic.graph.threads.thread_id_for`), newest first; ``/thread?user=L&session=S``
shows the latest checkpoint of one: the messages in the window (what the model is sent now),
the running summary of the messages that left it, and how many those were. Nothing is written:
the page reads the checkpointer's latest state only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..admin.forget import checkpoint_database, checkpointer
from ..graph.threads import SessionInfo, list_sessions, thread_config
from .access import requested_user, user_id_of_label
from .pages import Settings, render

MAX_SESSIONS = 200
"""Most sessions listed (the newest)."""
MAX_MESSAGES = 200
"""Most messages shown of a thread's window (the newest)."""


@dataclass(frozen=True)
class Message:
    kind: str
    """``human``, ``ai``, ``tool``, ``system`` ..."""
    text: str
    name: str | None = None


@dataclass(frozen=True)
class ThreadView:
    thread_id: str
    messages: tuple[Message, ...]
    hidden: int
    """Messages of the window not shown (over :data:`MAX_MESSAGES`)."""
    summary: str
    summary_info: dict[str, Any]
    step: int
    updated_at: str


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(str(p) for p in parts if p)
    return str(content)


def _message(raw: Any) -> Message:
    kind = str(getattr(raw, "type", "") or (raw.get("type", "") if isinstance(raw, dict) else ""))
    content = getattr(raw, "content", None)
    if content is None and isinstance(raw, dict):
        content = raw.get("content", "")
    name = getattr(raw, "name", None)
    return Message(kind or "message", _text(content), name if isinstance(name, str) else None)


def thread_view(saver: BaseCheckpointSaver[Any], user_id: str, session: str) -> ThreadView | None:
    """The latest state of one thread, or None when it has no checkpoint."""
    config = thread_config(user_id, session)
    latest = saver.get_tuple({"configurable": {**config["configurable"], "checkpoint_ns": ""}})
    if latest is None:
        return None
    values = latest.checkpoint.get("channel_values", {}) or {}
    messages = [_message(m) for m in values.get("messages", []) or []]
    info = values.get("summary_info")
    return ThreadView(
        thread_id=str(config["configurable"]["thread_id"]),
        messages=tuple(messages[-MAX_MESSAGES:]),
        hidden=max(0, len(messages) - MAX_MESSAGES),
        summary=str(values.get("summary", "") or ""),
        summary_info=dict(info) if isinstance(info, dict) else {},
        step=int((latest.metadata or {}).get("step", -1)),
        updated_at=str(latest.checkpoint.get("ts", "")),
    )


def _user(request: Request) -> tuple[str, str]:
    label = requested_user(request)
    return label, user_id_of_label(label, "no thread id can be made from it.")


def threads(request: Request) -> Response:
    label, user_id = _user(request)
    settings: Settings = request.app.state.settings
    sessions: list[SessionInfo] = []
    with checkpointer(checkpoint_database(settings.checkpoints)) as saver:
        if saver is not None:
            sessions = list_sessions(saver, user_id)[:MAX_SESSIONS]
    return render(request, "threads.html", label=label, sessions=sessions,
                  has_database=settings.checkpoints is not None and saver is not None,
                  checkpoints=str(settings.checkpoints or ""), cap=MAX_SESSIONS)


def thread(request: Request) -> Response:
    label, user_id = _user(request)
    session = request.query_params.get("session", "")
    if not session:
        raise HTTPException(400, "Name the session: ?user=<user>&session=<session id>")
    settings: Settings = request.app.state.settings
    with checkpointer(checkpoint_database(settings.checkpoints)) as saver:
        view = None if saver is None else thread_view(saver, user_id, session)
    if view is None:
        raise HTTPException(404, f"User {label!r} has no conversation thread {session!r}.")
    return render(request, "thread.html", label=label, session=session, view=view)


routes = [Route("/threads", threads, name="threads"), Route("/thread", thread, name="thread")]
