"""Episodes and learning: what the agent did for a user, and what it learned from it.

``/episodes?user=L`` pages the user's episodes of ``("episodes", L)``; with ``task=...`` also
what recall would replay for it and the prompt. ``/learning?user=L``: skill profiles, the
strategy each category (or the typed task) would get now and why, and the learning curve as
SVG drawn on each request (by :func:`~langgraph_episodic.episodic.plot.plot_learning_curve`),
also alone at ``/learning/curve.svg``. It reads at most :data:`LEARNING_CAP` episodes (the newest).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from langgraph.store.base import BaseStore, Item
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..admin.transfer import iter_namespace, namespace_page
from ..episodic.learning import compute_learning_curve, window_for
from ..episodic.memory import EpisodicMemory
from ..episodic.plot import LearningCurvePlot, plot_learning_curve
from ..episodic.priority import PrioritizedResult
from ..episodic.records import Episode, EpisodeSchemaError, TaskCategory, TaskDescription
from ..episodic.replay import build_replay_context, format_replay_prompt
from ..episodic.skills import SkillProfile, compute_skill_profiles
from ..episodic.strategy import StrategyChoice, select_strategy
from ..kinds.namespaces import EPISODES
from .access import requested_user
from .browse import offset_of
from .pages import render

PAGE_SIZE = 50
"""Episodes per page."""
REPLAY_K = 5
"""Episodes recalled for the typed task (the graph's recall node's default)."""
LEARNING_CAP = 2000
"""Most episodes (the newest) the learning page and its curve read."""
MAX_TASK_CHARS = 2000


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


def episodes_page(store: BaseStore, label: str, offset: int) -> tuple[list[EpisodeRow], bool]:
    """One page of the user's episode items (newest written first) and whether more follow."""
    items, more = namespace_page(store, (EPISODES, label), offset, PAGE_SIZE)
    return [_row(item) for item in items], more


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


def replay(store: BaseStore, label: str, task: TaskDescription) -> tuple[
    list[PrioritizedResult], str
]:
    """What recall would replay for ``task`` (best first) and the prompt it makes."""
    results = _memory(store, label).recall(task, top_k=REPLAY_K)
    return results, format_replay_prompt(build_replay_context(results), task)


def episodes(request: Request) -> Response:
    label = requested_user(request)
    store = request.app.state.settings.store
    offset = offset_of(request)
    rows, more = episodes_page(store, label, offset)
    task = _task(request)
    recalled, prompt = replay(store, label, task) if task is not None else ([], "")
    return render(
        request, "episodes.html", label=label, rows=rows, offset=offset, more=more,
        page_size=PAGE_SIZE, task=task, recalled=recalled, prompt=prompt,
        categories=[c.value for c in TaskCategory],
    )


@dataclass(frozen=True)
class Pick:
    """The strategy the agent would choose now for ``task``."""

    task: TaskDescription
    choice: StrategyChoice


def picks(
    store: BaseStore, label: str, profiles: dict[TaskCategory, SkillProfile],
    task: TaskDescription | None,
) -> list[Pick]:
    """The strategy for the typed ``task``, or for a new task of each profiled category."""
    memory = _memory(store, label)
    tasks = [task] if task is not None else [
        TaskDescription(f"a new {category.value} task", category) for category in profiles
    ]
    return [Pick(t, select_strategy(t, memory)) for t in tasks]


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


routes = [
    Route("/episodes", episodes, name="episodes"),
    Route("/learning", learning, name="learning"),
    Route("/learning/curve.svg", curve, name="learning_curve"),
]
