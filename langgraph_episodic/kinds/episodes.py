"""The episodes a turn records: each user's :class:`~langgraph_episodic.episodic.EpisodicMemory`
(:class:`EpisodeMemories`), the task and feedback read from the graph state, and the plan that
records an answer (:func:`record_episode`). The episodic nodes
(:mod:`langgraph_episodic.graph.episode_nodes`) and the deferred formation run them.

The task is ``state["task"]`` (a string, ``TaskDescription.to_dict()`` or a
``TaskDescription``) or, when absent, the text of the last human message.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from .._config import EPISODE_NAMESPACE, fill_namespace, namespace_label
from .._effects import Plan, call
from .._messages import as_messages, last_human_text, message_text
from .._runner import resolve_store
from ..episodic import (
    Episode,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    PrioritizedResult,
    TaskDescription,
)
from ..errors import InvalidTypeError
from ..memory_context import context_of
from ..privacy.report import ForgetReport, on_forget

logger = logging.getLogger(__name__)

SUCCESS_REWARD = 0.8
PARTIAL_REWARD = 0.3

ScoreResult = Feedback | tuple[Feedback, OutcomeStatus | str] | Mapping[str, Any]
Scorer = Callable[[dict[str, Any]], Any]
"""``score(state)`` returning a :data:`ScoreResult` (or an awaitable of one), or ``None``."""


class EpisodeMemories:
    """Hands each user their ``EpisodicMemory``: one instance per (store, namespace), cached.

    A cached memory holds the user's newest episodes, count and skill profiles in process.
    :func:`langgraph_episodic.privacy.forget_user` drops them from every live
    ``EpisodeMemories`` (see :meth:`evict_user`), so a forgotten user's next memory is read
    fresh from the store.

    Args:
        store: The store; default: the one the graph is compiled with.
        namespace: Namespace template, filled from ``config["configurable"]``.
        max_cached: How many users' memories to keep (least recently used are dropped).
        **options: Passed to ``EpisodicMemory`` (``short_term_limit``, ``weights``, ...).
    """

    def __init__(self, store: BaseStore | None = None, *,
                 namespace: tuple[str, ...] = EPISODE_NAMESPACE, max_cached: int = 256,
                 **options: Any) -> None:
        self.store = store
        self.namespace = namespace
        self.max_cached = max_cached
        self.options = options
        self._cache: OrderedDict[tuple[int, tuple[str, ...]], EpisodicMemory] = OrderedDict()
        self._lock = threading.Lock()
        with _live_lock:
            _live.add(self)

    def for_config(self, config: RunnableConfig) -> EpisodicMemory:
        """The memory of the user in ``config`` (raises ``MissingConfigError`` without one)."""
        ns = fill_namespace(self.namespace, config)
        store = resolve_store(self.store)
        key = (id(store), ns)
        with self._lock:
            memory = self._cache.get(key)
            if memory is None or memory.store is not store:
                memory = EpisodicMemory(store, ns, **self.options)
                self._cache[key] = memory
            self._cache.move_to_end(key)
            while len(self._cache) > self.max_cached:
                self._cache.popitem(last=False)
        return memory

    def evict_user(self, user_id: str) -> int:
        """Drop the cached memories whose namespace has ``user_id``'s label; return how many.

        The label is matched whole, as :func:`~langgraph_episodic.privacy.forget_user` matches
        it (``"alice"`` never evicts ``"alice2"``). Nothing is deleted from the store.
        """
        label = namespace_label(user_id)
        with self._lock:
            stale = [key for key in self._cache if label in key[1]]
            for key in stale:
                del self._cache[key]
        return len(stale)


# Every live EpisodeMemories, so that forget_user can evict a user from all of them. Weak
# references: a provider that is no longer used is collected, and one listener serves them all.
_live: weakref.WeakSet[EpisodeMemories] = weakref.WeakSet()
_live_lock = threading.Lock()


def _evict_forgotten(report: ForgetReport) -> None:
    with _live_lock:
        providers = list(_live)
    evicted = sum(p.evict_user(report.user_id) for p in providers)
    logger.debug("forget_user: evicted %d cached episodic memories", evicted)


on_forget(_evict_forgotten)


def task_from_state(state: Mapping[str, Any]) -> TaskDescription | None:
    """The current task: ``state["task"]``, else the last human message; ``None`` if neither."""
    task = state.get("task")
    if isinstance(task, TaskDescription):
        return task
    if isinstance(task, Mapping):
        return TaskDescription(task["description"], task.get("category", "unknown"),
                               task.get("complexity", 0.5))
    if isinstance(task, str) and task.strip():
        return TaskDescription(task.strip())
    text = last_human_text(as_messages(state.get("messages")))
    return TaskDescription(text) if text else None


def has_signal(state: Mapping[str, Any]) -> bool:
    """True when the app said what the task is or how it went (``task``, ``feedback``,
    ``outcome``): the chat-first nodes learn only then."""
    return bool(state.get("task")) or state.get("feedback") is not None or bool(
        state.get("outcome"))


def result_to_dict(result: PrioritizedResult) -> dict[str, Any]:
    """A recalled result as the JSON-safe dict kept in ``state["recalled"]``."""
    out = {**result.episode.to_dict(), "priority": result.priority,
           "similarity": result.similarity}
    if result.components is not None:
        out["components"] = asdict(result.components)
    return out


def recalled_episodes(state: Mapping[str, Any]) -> list[Episode]:
    """The episodes in ``state["recalled"]``, best first."""
    return [Episode.from_dict(d) for d in state.get("recalled") or []]


def outcome_from_feedback(feedback: Feedback) -> OutcomeStatus:
    """Outcome implied by feedback: by tests when any ran, else by reward (0.8 / 0.3)."""
    if feedback.tests_total:
        if feedback.tests_passed == feedback.tests_total:
            return OutcomeStatus.SUCCESS
        return OutcomeStatus.PARTIAL if feedback.tests_passed else OutcomeStatus.FAILURE
    if feedback.reward >= SUCCESS_REWARD:
        return OutcomeStatus.SUCCESS
    return OutcomeStatus.PARTIAL if feedback.reward >= PARTIAL_REWARD else OutcomeStatus.FAILURE


def _as_feedback(value: Any) -> Feedback:
    if isinstance(value, Feedback):
        return value
    if isinstance(value, Mapping):
        return Feedback(value["reward"], value.get("message", ""), value.get("tests_passed", 0),
                        value.get("tests_total", 0))
    raise InvalidTypeError(
        f"Expected Feedback or a dict with 'reward', got {type(value).__name__}."
    )


def _scored(feedback: Any, outcome: Any) -> tuple[Feedback, OutcomeStatus]:
    """The feedback and the outcome given, else the outcome the feedback implies."""
    feedback = _as_feedback(feedback)
    return feedback, OutcomeStatus(outcome) if outcome else outcome_from_feedback(feedback)


def _normalise_score(result: Any) -> tuple[Feedback, OutcomeStatus] | None:
    if result is None:
        return None
    if isinstance(result, tuple):
        return _as_feedback(result[0]), OutcomeStatus(result[1])
    return _scored(result, result.get("outcome") if isinstance(result, Mapping) else None)


def _score_sync(score: Scorer, state: dict[str, Any]) -> Any:
    result = score(state)
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if close is not None:
            close()
        raise InvalidTypeError("The score function is async; run the graph with ainvoke/astream.")
    return result


async def _score_async(score: Scorer, state: dict[str, Any]) -> Any:
    result = score(state)
    return await result if inspect.isawaitable(result) else result


def episode_id_for(
    namespace: tuple[str, ...], thread_id: str, answer: AIMessage, task: TaskDescription,
    feedback: Feedback, outcome: OutcomeStatus, strategy: str,
) -> str:
    """A deterministic episode id: the same answer to the same task in the same thread (and
    with the same feedback) always gets the same id, so recording it twice keeps one episode."""
    payload = json.dumps(
        [list(namespace), thread_id, answer.id or "", message_text(answer), task.to_dict(),
         feedback.to_dict(), outcome.value, strategy],
        sort_keys=True, ensure_ascii=False,
    )
    return hashlib.blake2b(payload.encode("utf-8"), digest_size=16).hexdigest()


def record_episode(
    memories: EpisodeMemories, score: Scorer | None, clock: Callable[[], float],
    state: dict[str, Any], config: RunnableConfig,
) -> Plan[dict[str, Any]]:
    """Plan: record the task, the last AI answer and its feedback in the user's memory of
    ``memories`` (what :func:`~langgraph_episodic.graph.record_episode_node` runs): the state
    update, ``{}`` when nothing was recorded."""
    memory = memories.for_config(config)
    task = task_from_state(state)
    answer = next((m for m in reversed(as_messages(state.get("messages")))
                   if isinstance(m, AIMessage) and message_text(m)), None)
    if task is None or answer is None:
        return {}
    scored: tuple[Feedback, OutcomeStatus] | None = None
    if state.get("feedback") is not None:
        scored = _scored(state["feedback"], state.get("outcome"))
    elif score is not None:
        scored = _normalise_score((yield call(_score_sync, _score_async, score, state)))
    if scored is None:
        logger.debug("record_episode: no feedback and no score function; nothing recorded")
        return {}
    feedback, outcome = scored
    strategy = str(state.get("strategy") or "default")
    thread_id = str(config.get("configurable", {}).get("thread_id", ""))
    episode_id = episode_id_for(memory.namespace, thread_id, answer, task, feedback,
                                outcome, strategy)
    existing = yield call(memory.get, memory.aget, episode_id)
    if existing is None:
        episode = Episode(
            episode_id=episode_id, task=task, solution=message_text(answer),
            feedback=feedback, outcome=outcome, timestamp=clock(),
            iterations=int(state.get("iterations") or 1), strategy_used=strategy,
        )
        when = datetime.fromtimestamp(episode.timestamp, timezone.utc)
        yield call(memory.record, memory.arecord, episode, context=context_of(config, when))
    return {"episode_id": episode_id, "feedback": None, "outcome": None}
