"""The graph node of deferred formation: queue the turn after the agent, then end the run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from .._effects import Plan
from ..graph._runner import MemoryNode, resolve_store
from ..graph.entities import ENTITY_NAMESPACE, EntityWriter
from ..graph.episode_nodes import EpisodeMemories, Scorer
from ..privacy.redaction import DEFAULT_REDACTOR
from .former import Former
from .queueing import queue_turn
from .worker import Scheduler


def queue_formation_node(
    formation: Scheduler, *, store: Any = None, model: BaseChatModel | None = None,
    entities: bool = True, episodes: bool = True, memories: EpisodeMemories | None = None,
    score: Scorer | None = None,
    entity_options: Mapping[str, Any] | None = None, name: str = "queue_formation",
) -> MemoryNode:
    """The node that queues this turn's formation (entities with ``entities``, the episode
    with ``episodes``, into ``memories``) for ``formation``'s worker.

    ``entity_options`` are the entity-extract node's options that matter here:
    ``namespace``, ``source`` and ``redact``.
    """
    options = dict(entity_options or {})
    namespace = tuple(options.get("namespace", ENTITY_NAMESPACE))
    source = str(options.get("source", "human"))
    if source not in ("human", "last"):
        raise ValueError(f"source must be 'human' or 'last', got {source!r}.")
    redact = options.get("redact", DEFAULT_REDACTOR)
    former = Former(EntityWriter(model) if entities else None, episodes=episodes,
                    memories=memories, score=score, namespace=namespace)
    if store is not None:
        formation.bind(store, former)

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        episode = episodes and (score is not None or state.get("feedback") is not None)
        return (yield from queue_turn(formation, resolve_store(store), former, state, config,
                                      entities=entities, episode=episode, redact=redact,
                                      source=source))

    return MemoryNode(name, plan)
