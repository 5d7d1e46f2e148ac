"""The episodic nodes: recall past episodes, select a strategy, record the new episode.

All three find the user's :class:`~langgraph_episodic.episodic.EpisodicMemory` through an
:class:`~langgraph_episodic.kinds.episodes.EpisodeMemories` (namespace ``("episodes", user_id)``
by default, the user id from ``config["configurable"]``). Pass the same ``EpisodeMemories`` to
all three nodes (as :func:`~langgraph_episodic.graph.wiring.add_memory_nodes` does) so that what
the record node writes is at once visible to the others' counts and skill profiles.

The task is ``state["task"]`` (a string, ``TaskDescription.to_dict()`` or a
``TaskDescription``) or, when absent, the text of the last human message. Set ``task`` in each
invocation's input (or leave it out); the nodes never write it, so it cannot go stale.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from .._effects import Plan, call
from .._runner import MemoryNode
from ..episodic import aselect_strategy, build_replay_context, format_replay_prompt, select_strategy
from ..episodic.memory import AUTO
from ..episodic.strategy import DEFAULT_POLICY
from ..errors import InvalidValueError
from ..kinds.episodes import (
    EPISODE_NAMESPACE,
    EpisodeMemories,
    Scorer,
    has_signal,
    record_episode,
    result_to_dict,
    task_from_state,
)

logger = logging.getLogger(__name__)


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
        raise InvalidValueError(f"Unknown policy {policy!r}; use 'greedy' or 'thompson'.")
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
    ``None`` to skip. A missing outcome is derived by
    :func:`~langgraph_episodic.kinds.episodes.outcome_from_feedback`. With no
    task, no AI answer or no feedback nothing is recorded.

    The node writes ``episode_id`` and clears ``feedback`` and ``outcome`` so they are not
    reused for the next answer. The id is deterministic (:func:`~langgraph_episodic.kinds.episodes.episode_id_for`): running the
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
        return (yield from record_episode(provider, score, clock, state, config))

    return MemoryNode(name, plan)


__all__ = ["recall_node", "record_episode_node", "select_strategy_node"]
