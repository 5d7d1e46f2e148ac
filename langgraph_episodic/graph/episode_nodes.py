"""The episodic nodes: recall past episodes, select a strategy, record the new episode.

All three find the user's :class:`~langgraph_episodic.episodic.EpisodicMemory` through an
:class:`EpisodeMemories` (namespace ``("episodes", user_id)`` by default, the user id from
``config["configurable"]``). Pass the same ``EpisodeMemories`` to all three nodes (as
:func:`~langgraph_episodic.graph.wiring.add_memory_nodes` does) so that what the record node
writes is at once visible to the others' counts and skill profiles.

The task is ``state["task"]`` (a string, ``TaskDescription.to_dict()`` or a
``TaskDescription``) or, when absent, the text of the last human message. Set ``task`` in each
invocation's input (or leave it out); the nodes never write it, so it cannot go stale.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import random
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any, Literal

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from .._config import fill_namespace, namespace_label
from ..episodic import (
    Episode,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    PrioritizedResult,
    TaskDescription,
    aselect_strategy,
    build_replay_context,
    format_replay_prompt,
    select_strategy,
)
from ..episodic.memory import AUTO
from ..episodic.strategy import DEFAULT_POLICY
from ..memory_context import context_of
from ..privacy.report import ForgetReport, on_forget
from ._messages import as_messages, last_human_text, message_text
from ._runner import MemoryNode, Plan, call, resolve_store
from .namespaces import EPISODES

logger = logging.getLogger(__name__)

EPISODE_NAMESPACE: tuple[str, ...] = (EPISODES, "{user_id}")
"""Default namespace template of a user's episodes."""

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

    def __init__(
        self,
        store: BaseStore | None = None,
        *,
        namespace: tuple[str, ...] = EPISODE_NAMESPACE,
        max_cached: int = 256,
        **options: Any,
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.max_cached = max_cached
        self.options = options
        self._cache: OrderedDict[tuple[int, tuple[str, ...]], EpisodicMemory] = OrderedDict()
        self._lock = threading.Lock()
        _track(self)

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
_subscribed = False


def _track(memories: EpisodeMemories) -> None:
    global _subscribed
    with _live_lock:
        _live.add(memories)
        if not _subscribed:
            on_forget(_evict_forgotten)
            _subscribed = True


def _evict_forgotten(report: ForgetReport) -> None:
    """The forget listener: evict the forgotten user from every live ``EpisodeMemories``."""
    with _live_lock:
        providers = list(_live)
    evicted = sum(p.evict_user(report.user_id) for p in providers)
    logger.debug("forget_user: evicted %d cached episodic memories", evicted)


def task_from_state(state: Mapping[str, Any]) -> TaskDescription | None:
    """The current task: ``state["task"]``, else the last human message; ``None`` if neither."""
    task = state.get("task")
    if isinstance(task, TaskDescription):
        return task
    if isinstance(task, Mapping):
        return TaskDescription(
            description=task["description"],
            category=task.get("category", "unknown"),
            complexity=task.get("complexity", 0.5),
        )
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
    out = result.episode.to_dict()
    out["priority"] = result.priority
    out["similarity"] = result.similarity
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
        return Feedback(
            reward=value["reward"],
            message=value.get("message", ""),
            tests_passed=value.get("tests_passed", 0),
            tests_total=value.get("tests_total", 0),
        )
    raise TypeError(f"Expected Feedback or a dict with 'reward', got {type(value).__name__}.")


def _normalise_score(result: Any) -> tuple[Feedback, OutcomeStatus] | None:
    if result is None:
        return None
    if isinstance(result, tuple):
        feedback = _as_feedback(result[0])
        return feedback, OutcomeStatus(result[1])
    feedback = _as_feedback(result)
    outcome = result.get("outcome") if isinstance(result, Mapping) else None
    return feedback, OutcomeStatus(outcome) if outcome else outcome_from_feedback(feedback)


def _score_sync(score: Scorer, state: dict[str, Any]) -> Any:
    result = score(state)
    if inspect.isawaitable(result):
        close = getattr(result, "close", None)
        if close is not None:
            close()
        raise TypeError("The score function is async; run the graph with ainvoke/astream.")
    return result


async def _score_async(score: Scorer, state: dict[str, Any]) -> Any:
    result = score(state)
    return await result if inspect.isawaitable(result) else result


def _last_ai(state: Mapping[str, Any]) -> AIMessage | None:
    for message in reversed(as_messages(state.get("messages"))):
        if isinstance(message, AIMessage) and message_text(message):
            return message
    return None


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


def recall_node(
    *,
    memories: EpisodeMemories | None = None,
    store: BaseStore | None = None,
    namespace: tuple[str, ...] = EPISODE_NAMESPACE,
    top_k: int = 3,
    max_prompt_chars: int = 2000,
    name: str = "recall",
    min_score: float | Literal["auto"] | None = AUTO,
) -> MemoryNode:
    """Create the recall node: writes ``recalled`` (dicts, best first) and ``replay_prompt``.

    ``store`` and ``namespace`` are used only when ``memories`` is not given. With no task and
    no human message the node writes an empty recall. ``min_score`` is the relevance floor of
    :meth:`EpisodicMemory.recall <langgraph_episodic.episodic.EpisodicMemory.recall>`
    (default ``"auto"``: the floor for the store's kind of score; ``None``: none): past
    episodes whose task is less similar than that are not replayed, so a task unlike every
    past one recalls nothing.

    >>> from langgraph.store.memory import InMemoryStore
    >>> node = recall_node(store=InMemoryStore(), top_k=2)
    >>> update = node.invoke({"task": "Sort a list"}, {"configurable": {"user_id": "alice"}})
    >>> update["recalled"], update["replay_prompt"].splitlines()[0]
    ([], 'Current task: Sort a list')
    """
    provider = memories or EpisodeMemories(store, namespace=namespace)

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        memory = provider.for_config(config)
        task = task_from_state(state)
        if task is None:
            return {"recalled": [], "replay_prompt": ""}
        results = yield call(memory.recall, memory.arecall, task, top_k, min_score=min_score)
        prompt = format_replay_prompt(build_replay_context(results), task,
                                      max_chars=max_prompt_chars)
        logger.debug("recalled %d episodes", len(results))
        return {"recalled": [result_to_dict(r) for r in results], "replay_prompt": prompt}

    return MemoryNode(name, plan)


def select_strategy_node(
    *,
    memories: EpisodeMemories | None = None,
    store: BaseStore | None = None,
    namespace: tuple[str, ...] = EPISODE_NAMESPACE,
    policy: str = DEFAULT_POLICY,
    rng: random.Random | None = None,
    pool: Mapping[str, str] | None = None,
    similar_k: int = 10,
    require_signal: bool = False,
    name: str = "select_strategy",
) -> MemoryNode:
    """Create the select-strategy node: writes ``strategy`` and ``strategy_instruction``.

    ``policy`` is ``"thompson"`` (default: Thompson sampling over weighted evidence, which
    explores and re-learns after a change) or ``"greedy"`` (the seed's three-level rule).
    Without ``rng`` each choice is seeded from the task and the user's evidence, so the same
    memory and task give the same strategy in every run; pass ``rng=random.Random(seed)`` for a
    seeded stream of draws. ``pool`` replaces ``STRATEGY_POOL``. With
    ``require_signal=True`` (chat-first, as :func:`~langgraph_episodic.graph.wiring.add_memory_nodes`
    wires it without a score function) a strategy is chosen only when the input names a
    ``task`` or carries ``feedback`` / ``outcome``; otherwise both keys are cleared.

    >>> from langgraph.store.memory import InMemoryStore
    >>> node = select_strategy_node(store=InMemoryStore(), policy="greedy")
    >>> task = {"description": "Design a plugin API", "complexity": 0.9}
    >>> node.invoke({"task": task}, {"configurable": {"user_id": "alice"}})["strategy"]
    'iterative'
    """
    if policy not in ("greedy", "thompson"):
        raise ValueError(f"Unknown policy {policy!r}; use 'greedy' or 'thompson'.")
    provider = memories or EpisodeMemories(store, namespace=namespace)

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        if require_signal and not has_signal(state):
            return {"strategy": "", "strategy_instruction": ""}
        memory = provider.for_config(config)
        task = task_from_state(state)
        if task is None:
            return {}
        choice = yield call(select_strategy, aselect_strategy, task, memory, None,
                            policy=policy, rng=rng, pool=pool, similar_k=similar_k)
        logger.debug("strategy %s (%s)", choice.name, choice.reason)
        return {"strategy": choice.name, "strategy_instruction": choice.instruction}

    return MemoryNode(name, plan)


def record_episode_node(
    *,
    memories: EpisodeMemories | None = None,
    store: BaseStore | None = None,
    namespace: tuple[str, ...] = EPISODE_NAMESPACE,
    score: Scorer | None = None,
    clock: Callable[[], float] = time.time,
    name: str = "record_episode",
) -> MemoryNode:
    """Create the record-episode node: records the task, the last AI answer and its feedback.

    Feedback comes from ``state["feedback"]`` (``Feedback`` or its dict) and
    ``state["outcome"]``, else from ``score(state)`` (sync or async), which returns
    ``Feedback``, ``(Feedback, outcome)``, a feedback dict (optionally with ``"outcome"``) or
    ``None`` to skip. A missing outcome is derived by :func:`outcome_from_feedback`. With no
    task, no AI answer or no feedback nothing is recorded.

    The node writes ``episode_id`` and clears ``feedback`` and ``outcome`` so they are not
    reused for the next answer. The id is deterministic (:func:`episode_id_for`): running the
    node twice on the same state records one episode.

    >>> from langgraph.store.memory import InMemoryStore
    >>> memories = EpisodeMemories(InMemoryStore())
    >>> node = record_episode_node(memories=memories)
    >>> state = {"messages": [("user", "Sort a list"), ("ai", "Use sorted().")],
    ...          "feedback": {"reward": 1.0}}
    >>> config = {"configurable": {"user_id": "alice", "thread_id": "alice:s1"}}
    >>> first, again = node.invoke(state, config), node.invoke(state, config)
    >>> first == again, memories.for_config(config).count()
    (True, 1)
    """
    provider = memories or EpisodeMemories(store, namespace=namespace)

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        memory = provider.for_config(config)
        task, answer = task_from_state(state), _last_ai(state)
        if task is None or answer is None:
            return {}
        scored: tuple[Feedback, OutcomeStatus] | None
        if state.get("feedback") is not None:
            feedback = _as_feedback(state["feedback"])
            outcome = state.get("outcome")
            scored = feedback, OutcomeStatus(outcome) if outcome else outcome_from_feedback(feedback)
        elif score is not None:
            scored = _normalise_score((yield call(_score_sync, _score_async, score, state)))
        else:
            scored = None
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

    return MemoryNode(name, plan)
