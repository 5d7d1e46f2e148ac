"""A user's pages beyond their namespaces: episodes and learning, facts, conversations.

``/episodes?user=L`` pages the user's episodes of ``("episodes", L)``; with ``task=...`` also
what recall would replay for it and the prompt. ``/learning?user=L``: skill profiles, the
strategy each category (or the typed task) would get now and why, and the learning curve as
SVG drawn on each request (by :func:`~langgraph_episodic.episodic.plot.plot_learning_curve`),
also alone at ``/learning/curve.svg``. It reads at most :data:`LEARNING_CAP` episodes (the newest).

``/facts?user=L``: facts with a period (:mod:`langgraph_episodic.facts`), every version with
what replaced or ended it (with ``as_of=DATE`` also those true then); profile facts
(``("user_profiles", L)``); entities (``("entities", L)``). Each list is bounded
(:data:`FACTS_CAP`, one page of the others).

``/threads?user=L`` lists the user's sessions (threads ``"<user_id>:<session>"``, see
:func:`~langgraph_episodic.graph.threads.thread_id_for`), newest first;
``/thread?user=L&session=S`` shows the latest checkpoint of one: the messages in the window
(what the model is sent now), the running summary of the messages that left it, and how many
those were. Nothing is written: the page reads the checkpointer's latest state only.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore, Item
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .._types import Namespace
from ..admin.forget import checkpoint_database, checkpointer
from ..admin.transfer import iter_namespace, namespace_page
from ..episodic.learning import compute_learning_curve, window_for
from ..episodic.memory import EpisodicMemory
from ..episodic.plot import LearningCurvePlot, plot_learning_curve
from ..episodic.priority import PrioritizedResult
from ..episodic.records import Episode, EpisodeSchemaError, TaskCategory, TaskDescription
from ..episodic.replay import build_replay_context, format_replay_prompt
from ..episodic.skills import SkillProfile, compute_skill_profiles
from ..episodic.strategy import StrategyChoice, select_strategy
from ..facts.recall import current_facts, fact_history, parse_as_of
from ..facts.records import FactRecord
from ..graph.profiles import UserFact
from ..graph.threads import SessionInfo, list_sessions, thread_config
from ..kinds.namespaces import ENTITIES, EPISODES, USER_PROFILES
from . import data
from .pages import Settings, offset_of, render, requested_user, user_id_of_label

PAGE_SIZE = 50
"""Episodes, profile facts and entities per page."""
REPLAY_K = 5
"""Episodes recalled for the typed task (the graph's recall node's default)."""
LEARNING_CAP = 2000
"""Most episodes (the newest) the learning page and its curve read."""
MAX_TASK_CHARS = 2000
FACTS_CAP = 500
"""Most fact versions read per namespace."""
AS_OF_K = 50
"""Most facts listed as true at a moment, per namespace."""
MAX_SESSIONS = 200
"""Most sessions listed (the newest)."""
MAX_MESSAGES = 200
"""Most messages shown of a thread's window (the newest)."""


# ------------------------------------------------------------------ episodes and learning


@dataclass(frozen=True)
class EpisodeRow:
    key: str
    episode: Episode | None
    """None when the item is not a readable episode (``problem`` says why)."""
    problem: str = ""

    @property
    def when(self) -> datetime | None:
        if self.episode is None:
            return None
        return datetime.fromtimestamp(self.episode.timestamp, tz=timezone.utc)


def _row(item: Item) -> EpisodeRow:
    try:
        return EpisodeRow(item.key, Episode.from_dict(item.value))
    except (EpisodeSchemaError, ValueError, TypeError) as exc:
        return EpisodeRow(item.key, None, str(exc))


def newest_episodes(store: BaseStore, label: str) -> list[Episode]:
    """At most :data:`LEARNING_CAP` readable episodes of the user, oldest first."""
    items = itertools.islice(iter_namespace(store, (EPISODES, label)), LEARNING_CAP)
    rows = [_row(item) for item in items]
    found = [row.episode for row in rows if row.episode is not None]
    return sorted(found, key=lambda e: (e.timestamp, e.episode_id))


def _task(request: Request) -> TaskDescription | None:
    text = request.query_params.get("task", "").strip()
    if not text:
        return None
    if len(text) > MAX_TASK_CHARS:
        raise HTTPException(400, f"The task is longer than {MAX_TASK_CHARS} characters.")
    raw = request.query_params.get("category", "") or TaskCategory.UNKNOWN.value
    try:
        category = TaskCategory(raw)
    except ValueError:
        known = ", ".join(c.value for c in TaskCategory)
        raise HTTPException(400, f"Unknown category {raw!r}; one of: {known}.") from None
    return TaskDescription(text, category)


def _memory(store: BaseStore, label: str) -> EpisodicMemory:
    return EpisodicMemory(store, (EPISODES, label), short_term_limit=0)


def episodes(request: Request) -> Response:
    label = requested_user(request)
    store = request.app.state.settings.store
    offset = offset_of(request)
    items, more = namespace_page(store, (EPISODES, label), offset, PAGE_SIZE)  # newest first
    task = _task(request)
    recalled: list[PrioritizedResult] = []
    prompt = ""
    if task is not None:  # what recall would replay for it, best first, and the prompt
        recalled = _memory(store, label).recall(task, top_k=REPLAY_K)
        prompt = format_replay_prompt(build_replay_context(recalled), task)
    return render(
        request, "episodes.html", label=label, rows=[_row(item) for item in items],
        offset=offset, more=more,
        page_size=PAGE_SIZE, task=task, recalled=recalled, prompt=prompt,
        categories=[c.value for c in TaskCategory],
    )


def picks(
    store: BaseStore, label: str, profiles: dict[TaskCategory, SkillProfile],
    task: TaskDescription | None,
) -> list[tuple[TaskDescription, StrategyChoice]]:
    """The strategy the agent would choose now for the typed ``task``, or for a new task of
    each profiled category."""
    memory = _memory(store, label)
    tasks = [task] if task is not None else [
        TaskDescription(f"a new {category.value} task", category) for category in profiles
    ]
    return [(t, select_strategy(t, memory)) for t in tasks]


def learning(request: Request) -> Response:
    label = requested_user(request)
    store = request.app.state.settings.store
    history = newest_episodes(store, label)
    profiles = compute_skill_profiles(history)
    task = _task(request)
    return render(
        request, "learning.html", label=label, count=len(history), cap=LEARNING_CAP,
        fig=curve_figure(history, label) if history else None, window=window_for(len(history)),
        profiles=sorted(profiles.values(), key=lambda p: p.category.value),
        picks=picks(store, label, profiles, task), task=task,
        categories=[c.value for c in TaskCategory],
    )


def curve_figure(history: Sequence[Episode], label: str) -> LearningCurvePlot:
    """The user's learning curve (``history`` oldest first, not empty), with the demo's
    rolling window (a sixth of the episodes, between 5 and 20)."""
    curve = compute_learning_curve(history, window=window_for(len(history)))
    return plot_learning_curve(curve, title=f"learning curve of {label}")


def curve(request: Request) -> Response:
    """The learning curve alone, as an SVG document (to save or to open full size)."""
    label = requested_user(request)
    history = newest_episodes(request.app.state.settings.store, label)
    if not history:
        raise HTTPException(404, f"User {label!r} has no episodes, so there is no curve.")
    return Response(curve_figure(history, label).svg, media_type="image/svg+xml")


# ------------------------------------------------------------------ facts


def histories(
    store: BaseStore, namespaces: list[Namespace]
) -> list[tuple[Namespace, list[tuple[str, FactRecord]]]]:
    """Every fact of these namespaces as its lineage: its namespace and its versions (key,
    record), oldest first."""
    found: list[tuple[Namespace, list[tuple[str, FactRecord]]]] = []
    for ns in namespaces:
        lineages: dict[str, list[tuple[str, FactRecord]]] = {}
        for key, rec in fact_history(store, ns, limit=FACTS_CAP):
            lineages.setdefault(rec.lineage, []).append((key, rec))
        found.extend((ns, versions) for versions in lineages.values())
    return found


def _as_of(request: Request) -> datetime | None:
    raw = request.query_params.get("as_of", "").strip()
    if not raw:
        return None
    try:
        return parse_as_of(raw)  # a bare date is the start of that day, UTC
    except ValueError as error:
        raise HTTPException(400, str(error)) from None


def facts(request: Request) -> Response:
    label = requested_user(request)
    store = request.app.state.settings.store
    offset = offset_of(request)
    as_of = _as_of(request)
    namespaces = data.memory_namespace_list(store, label)
    profile_items, more_profile = namespace_page(store, (USER_PROFILES, label), offset, PAGE_SIZE)
    entity_items, more_entities = namespace_page(store, (ENTITIES, label), offset, PAGE_SIZE)
    held = [(ns, rec) for ns in namespaces  # the facts true at ``as_of``
            for _, rec in current_facts(store, ns, k=AS_OF_K, as_of=as_of)] if as_of else []
    return render(
        request, "facts.html", label=label, lineages=histories(store, namespaces),
        as_of=as_of, held=held,
        profile=[(UserFact.from_item(it), FactRecord.from_value(it.value)) for it in profile_items],
        entities=entity_items, offset=offset,
        more=more_profile or more_entities, page_size=PAGE_SIZE,
    )


# ------------------------------------------------------------------ conversation threads


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(str(p) for p in parts if p)
    return str(content)


def _message(raw: Any) -> dict[str, Any]:
    """A message as the page shows it: its ``kind`` (``human``, ``ai``, ``tool``...), ``text``
    and ``name`` (or None)."""
    kind = str(getattr(raw, "type", "") or (raw.get("type", "") if isinstance(raw, dict) else ""))
    content = getattr(raw, "content", None)
    if content is None and isinstance(raw, dict):
        content = raw.get("content", "")
    name = getattr(raw, "name", None)
    return {"kind": kind or "message", "text": _text(content),
            "name": name if isinstance(name, str) else None}


def thread_view(
    saver: BaseCheckpointSaver[Any], user_id: str, session: str
) -> dict[str, Any] | None:
    """The latest state of one thread as the page shows it, or None when it has no checkpoint:
    the newest :data:`MAX_MESSAGES` messages of the window and how many more it holds
    (``hidden``), the running summary and what it covers, the step and when it was written."""
    config = thread_config(user_id, session)
    latest = saver.get_tuple({"configurable": {**config["configurable"], "checkpoint_ns": ""}})
    if latest is None:
        return None
    values = latest.checkpoint.get("channel_values", {}) or {}
    messages = [_message(m) for m in values.get("messages", []) or []]
    info = values.get("summary_info")
    return {
        "thread_id": str(config["configurable"]["thread_id"]),
        "messages": messages[-MAX_MESSAGES:],
        "hidden": max(0, len(messages) - MAX_MESSAGES),
        "summary": str(values.get("summary", "") or ""),
        "summary_info": dict(info) if isinstance(info, dict) else {},
        "step": int((latest.metadata or {}).get("step", -1)),
        "updated_at": str(latest.checkpoint.get("ts", "")),
    }


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


routes = [
    Route("/episodes", episodes, name="episodes"),
    Route("/learning", learning, name="learning"),
    Route("/learning/curve.svg", curve, name="learning_curve"),
    Route("/facts", facts, name="facts"),
    Route("/threads", threads, name="threads"),
    Route("/thread", thread, name="thread"),
]
