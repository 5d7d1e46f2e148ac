"""The graph node of deferred formation: queue the turn after the agent, then end the run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from .._effects import Plan
from .._messages import as_messages
from .._runner import MemoryNode, resolve_store
from ..facts.consolidate import utc_now
from ..kinds.compaction import ContextSize, TokenCounter, normalize_trigger, plan_compaction
from ..kinds.entities import ENTITY_NAMESPACE, EntityWriter
from ..kinds.episodes import EpisodeMemories, Scorer
from ..kinds.summaries import Summarizer
from ..kinds.turns import TurnSettings, turn_items
from ..privacy.redaction import DEFAULT_REDACTOR
from .former import Former
from .queueing import queue_turn
from .summary import deferred_compaction_update
from .worker import Scheduler


def deferred_compaction_node(
    formation: Scheduler, former: Former, *, store: Any = None,
    trigger: ContextSize | Sequence[ContextSize] = (), keep: ContextSize = ("messages", 4),
    window_tokens: int | None = None, token_counter: TokenCounter | None = None,
    name: str = "summarize",
) -> MemoryNode:
    """The summarise node (``trigger``/``keep``) or the summarising window (``window_tokens``)
    with the summary formed by ``formation``'s worker (:mod:`.summary`): the same messages
    leave as inline, no model call in the turn."""
    triggers = normalize_trigger(trigger) if trigger else []

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        messages = as_messages(state.get("messages"))
        compaction = plan_compaction(messages, trigger=triggers, keep=keep,
                                     window_tokens=window_tokens, token_counter=token_counter)
        return (yield from deferred_compaction_update(formation, resolve_store(store), former,
                                                      messages, compaction, state, config))

    return MemoryNode(name, plan)


def queue_formation_node(
    formation: Scheduler, *, store: Any = None, model: BaseChatModel | None = None,
    entities: bool = True, episodes: bool = True, memories: EpisodeMemories | None = None,
    score: Scorer | None = None,
    entity_options: Mapping[str, Any] | None = None, name: str = "queue_formation",
    former: Former | None = None, summarizer: Summarizer | None = None,
    turns: TurnSettings | None = None,
) -> MemoryNode:
    """The node that queues this turn's formation (entities with ``entities``, the episode
    with ``episodes``, into ``memories``, and with ``turns`` the turn's items to remember,
    built here, redacted and dated, as the inline ``remember_turn`` node builds them) for
    ``formation``'s worker.

    ``entity_options`` are the entity-extract node's options that matter here:
    ``namespace``, ``source`` and ``redact``. ``former`` (default: one made from these
    options, with ``summarizer`` for the deferred summaries) is shared with the
    :func:`deferred_compaction_node` of the same graph.
    """
    options = dict(entity_options or {})
    namespace = tuple(options.get("namespace", ENTITY_NAMESPACE))
    source = str(options.get("source", "human"))
    if source not in ("human", "last"):
        raise ValueError(f"source must be 'human' or 'last', got {source!r}.")
    redact = options.get("redact", DEFAULT_REDACTOR)
    if former is None:
        former = Former(EntityWriter(model) if entities else None, episodes=episodes,
                        memories=memories, score=score, namespace=namespace,
                        summarizer=summarizer)
    if store is not None:
        formation.bind(store, former)

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        episode = episodes and (score is not None or state.get("feedback") is not None)
        said = [] if turns is None else turn_items(
            state.get("messages"), config, (turns.clock or utc_now)(), redact=turns.redact,
            replies=turns.replies)
        return (yield from queue_turn(formation, resolve_store(store), former, state, config,
                                      entities=entities, episode=episode, redact=redact,
                                      source=source, turns=said))

    return MemoryNode(name, plan)
