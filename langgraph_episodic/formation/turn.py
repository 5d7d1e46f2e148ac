"""What a turn remembers: one plan for the graph nodes, the middleware and the worker.

After the agent answers, a turn remembers up to three things: its items (the user's message and
the answer, :mod:`langgraph_episodic.kinds.turns`), the entities the user's message states
something about (:mod:`langgraph_episodic.kinds.entities`) and, when it carries feedback or a
score function judges it, an episode (:mod:`langgraph_episodic.kinds.episodes`). While it runs,
a compaction folds what leaves the thread into the running summary
(:mod:`langgraph_episodic.kinds.summaries`).

:class:`TurnMemory` holds these decisions once, from the options of the graph nodes or of the
middleware, and runs them inline, in the turn, or deferred: the turn writes what its formation
needs to the queue (:mod:`.pending`, one store write, no model call, no embedding) and the
worker (:mod:`.worker`) forms it later with the same :class:`~.former.Former`; a compaction
removes the same messages either way (:mod:`.summary`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from .._config import fill_namespace, user_id_from
from .._effects import Plan, call
from .._messages import as_messages, last_human_index, message_text
from .._runner import MemoryNode, resolve_store
from ..errors import InvalidValueError
from ..facts.consolidate import utc_now
from ..kinds.compaction import (
    ContextSize,
    TokenCounter,
    check_size,
    normalize_trigger,
    plan_compaction,
)
from ..kinds.entities import ENTITY_NAMESPACE, EntityWriter, load_entities, text_of_source
from ..kinds.episodes import EpisodeMemories, Scorer, record_episode
from ..kinds.summaries import Summarizer, compaction_update
from ..kinds.turns import TurnItem, TurnSettings, store_turns, turn_items
from ..privacy.redaction import DEFAULT_REDACTOR, SaveRedactor, redact_saved
from .former import Former
from .pending import PendingTurn, enqueue
from .summary import deferred_compaction_update
from .worker import Scheduler

logger = logging.getLogger(__name__)

EPISODE_KEYS = ("task", "strategy", "iterations", "outcome")
Named = tuple[str, MemoryNode]
"""A node and the name it is added under."""


@dataclass(frozen=True)
class TurnMemory:
    """What a turn remembers, run inline or deferred (see the module docstring)."""

    former: Former
    """What is formed: the entity writer (``None``: no entities) and their namespace, the
    episodes (their memories and score function), the summarizer."""
    formation: Scheduler | None = None
    """The worker the turn is queued for (``None``: formed inline, in the turn)."""
    store: BaseStore | None = None
    """The store; default: the one the running graph was compiled with."""
    turns: TurnSettings | None = None
    """How the turn's items are built (``None``: the turn itself is not remembered)."""
    source: str = "human"
    """The message the entities come from: ``"human"`` (the last human one) or ``"last"``."""
    redact: SaveRedactor | None = DEFAULT_REDACTOR
    """Applied to that message before the entities are extracted."""
    load_limit: int = 0
    """Inline extraction: how many stored entities load when the state has none."""

    def __post_init__(self) -> None:
        if self.source not in ("human", "last"):
            raise InvalidValueError(f"source must be 'human' or 'last', got {self.source!r}.")
        if self.formation is not None and self.store is not None:
            self.formation.bind(self.store, self.former)

    # --- while the turn runs: the summary ---

    def compaction(
        self,
        *,
        trigger: ContextSize | Sequence[ContextSize] = (),
        keep: ContextSize = ("messages", 4),
        window_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
        summarize: bool = True,
    ) -> Callable[[dict[str, Any], Callable[[], RunnableConfig]], Plan[dict[str, Any]]]:
        """The plan ``(state, config)`` of the summarise node, the window or the middleware's
        ``before_model``: the state update that removes what
        :func:`~langgraph_episodic.kinds.compaction.plan_compaction` says leaves, folded into
        the summary first (inline, or queued for the worker: ``config()`` gives the run's
        config then), or dropped without ``summarize``. Raises ``ValueError`` for a bad ``keep``
        or a ``window_tokens`` below 1."""
        triggers = normalize_trigger(trigger)
        check_size(keep, "keep")
        if window_tokens is not None and window_tokens <= 0:
            raise InvalidValueError(
                f"window_tokens must be positive (or None: no window), got "
                f"{window_tokens}."
            )

        def plan(state: dict[str, Any], config: Callable[[], RunnableConfig]
                 ) -> Plan[dict[str, Any]]:
            messages = as_messages(state.get("messages"))
            compaction = plan_compaction(messages, trigger=triggers, keep=keep,
                                         window_tokens=window_tokens, token_counter=token_counter)
            if summarize and self.formation is not None:
                return (yield from deferred_compaction_update(
                    self.formation, resolve_store(self.store), self.former, messages,
                    compaction, state, config()))
            summarizer = (self.former.summarizer or Summarizer()) if summarize else None
            return (yield from compaction_update(messages, compaction, state, summarizer))

        return plan

    def compaction_node(
        self,
        name: str,
        *,
        trigger: ContextSize | Sequence[ContextSize] | None = None,
        keep: ContextSize = ("messages", 4),
        window_tokens: int | None = None,
        token_counter: TokenCounter | None = None,
        summarize: bool = True,
    ) -> MemoryNode:
        """The summarise node (``trigger``, ``keep``) or the window (``window_tokens``):
        :meth:`compaction`, its options checked."""
        if trigger is not None and not normalize_trigger(trigger):
            raise InvalidValueError(
                "Set a trigger, e.g. trigger=('messages', 10); otherwise the node never summarises."
            )
        if window_tokens is not None and window_tokens <= 0:
            raise InvalidValueError(f"max_tokens must be positive, got {window_tokens}.")
        plan = self.compaction(trigger=trigger or (), keep=keep,
                               window_tokens=window_tokens, token_counter=token_counter,
                               summarize=summarize)
        return MemoryNode(name, lambda state, config: plan(state, lambda: config))

    # --- before the agent: the entities ---

    def load_entities(self, state: dict[str, Any], config: RunnableConfig,
                      limit: int) -> Plan[dict[str, Any]]:
        """Plan: up to ``limit`` of the user's stored entities into ``state["entities"]`` when
        the thread has none; deferred, on every turn, so that what the worker formed since
        reaches the running thread."""
        if self.formation is None and state.get("entities"):
            return {}
        loaded = yield from load_entities(resolve_store(self.store),
                                          fill_namespace(self.former.namespace, config), limit)
        return {"entities": loaded} if loaded else {}

    # --- after the agent: the turn, its entities, its episode ---

    def after(self, state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        """Plan: everything the turn remembers, written now or queued; the state update."""
        episode = self.former.episodes and (
            self.former.score is not None or state.get("feedback") is not None
        )
        if self.formation is not None:
            return (yield from self._queue(state, config, episode))
        yield from self.remember(state, config)
        update: dict[str, Any] = {}
        if self.former.writer is not None:
            update.update((yield from self.extract(state, config)))
        if episode:
            update.update((yield from self.record(state, config)))
        return update

    def nodes(self) -> tuple[list[Named], list[Named]]:
        """The graph nodes of :meth:`after`: those that run first after the agent and those
        that run last. Inline ``remember_turn`` (with ``turns``) and ``record_episode`` (with
        episodes) first and ``entity_extract`` (with a writer) last; deferred
        ``queue_formation`` last."""
        if self.formation is not None:
            return [], [("queue_formation", MemoryNode("queue_formation", self.after))]
        first = [
            (name, MemoryNode(name, plan))
            for name, plan, on in (
                ("remember_turn", self.remember, self.turns is not None),
                ("record_episode", self.record, self.former.episodes),
            )
            if on
        ]
        last = [("entity_extract", MemoryNode("entity_extract", self.extract))]
        return first, (last if self.former.writer is not None else [])

    def remember(self, state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        """Plan, inline: store the turn's items (deterministic keys: a replay overwrites)."""
        yield from store_turns(resolve_store(self.store), self._items(state, config))
        return {}

    def extract(self, state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        """Plan, inline: extract the entities of the turn's message and merge their facts,
        each entity under its lock; ``{"entities": name -> description}``."""
        writer = self.former.writer
        assert writer is not None
        ns = fill_namespace(self.former.namespace, config)
        store = resolve_store(self.store)
        update: dict[str, str | None] = {}
        if not state.get("entities"):
            update.update((yield from load_entities(store, ns, self.load_limit)))
        extracted = yield from writer.extract(self._text(state))
        update.update((yield from writer.merge(store, ns, extracted, config)))
        logger.debug("entity_extract: %d entities (%s)", len(extracted), writer.method)
        return {"entities": update} if update else {}

    def record(self, state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        """Plan, inline: record the episode (:func:`~langgraph_episodic.kinds.episodes.record_episode`)."""
        memories = self.former.memories or EpisodeMemories(self.store)
        return (yield from record_episode(memories, self.former.score, time.time, state, config))

    def _text(self, state: dict[str, Any]) -> str:
        """The message the entities come from, redacted."""
        return redact_saved(text_of_source(as_messages(state.get("messages")), self.source),
                            self.redact)

    def _items(self, state: dict[str, Any], config: RunnableConfig) -> list[TurnItem]:
        t = self.turns
        if t is None:
            return []
        return turn_items(state.get("messages"), config, (t.clock or utc_now)(),
                          redact=t.redact, replies=t.replies)

    def _queue(
        self, state: dict[str, Any], config: RunnableConfig, episode: bool
    ) -> Plan[dict[str, Any]]:
        """Plan, deferred: write this turn to the queue and wake the worker; the update clears
        the turn's feedback when an episode was queued (as recording it inline does)."""
        assert self.formation is not None
        items = self._items(state, config)
        store = resolve_store(self.store)
        user_id = user_id_from(config)
        writer = self.former.writer
        text = "" if writer is None else self._text(state)
        snapshot = episode_snapshot(state) if episode else None
        if not text.strip() and snapshot is None and not items:
            return {}
        self.formation.bind(store, self.former)
        said_at = writer.clock() if writer is not None else None  # the clock inline uses
        yield from enqueue(store, PendingTurn.of_run(
            config, user_id, text=text, episode=snapshot, said_at=said_at,
            turns=tuple(t.to_dict() for t in items)))
        yield call(self.formation.notify, self.formation.anotify, user_id)
        return {"feedback": None, "outcome": None} if snapshot is not None else {}


def _as_json(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def episode_snapshot(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The part of ``state`` the record-episode node reads, as JSON: the last human message,
    the last AI answer (with its id), the task, feedback, outcome, strategy and iterations."""
    messages = as_messages(state.get("messages"))
    answer = next(
        (m for m in reversed(messages) if isinstance(m, AIMessage) and message_text(m)), None
    )
    if answer is None:
        return None
    human = last_human_index(messages)
    snapshot: list[dict[str, Any]] = []
    if human is not None:
        snapshot.append({"role": "user", "content": message_text(messages[human])})
    snapshot.append({"role": "assistant", "content": message_text(answer), "id": answer.id})
    out: dict[str, Any] = {"messages": snapshot, "feedback": _as_json(state.get("feedback"))}
    out.update({k: _as_json(state[k]) for k in EPISODE_KEYS if state.get(k) is not None})
    return out


def queue_formation_node(
    formation: Scheduler,
    *,
    store: Any = None,
    model: BaseChatModel | None = None,
    entities: bool = True,
    episodes: bool = True,
    memories: EpisodeMemories | None = None,
    score: Scorer | None = None,
    entity_options: Mapping[str, Any] | None = None,
    name: str = "queue_formation",
    former: Former | None = None,
    summarizer: Summarizer | None = None,
    turns: TurnSettings | None = None,
) -> MemoryNode:
    """The node that queues this turn's formation (entities with ``entities``, the episode
    with ``episodes``, into ``memories``, and with ``turns`` the turn's items to remember,
    built here, redacted and dated, as the inline ``remember_turn`` node builds them) for
    ``formation``'s worker.

    ``entity_options`` are the entity-extract node's options that matter here:
    ``namespace``, ``source`` and ``redact``. ``former`` (default: one made from these
    options, with ``summarizer`` for the deferred summaries) is shared with the compaction
    nodes of the same graph.
    """
    options = dict(entity_options or {})
    if former is None:
        former = Former(EntityWriter(model) if entities else None, episodes=episodes,
                        memories=memories, score=score, summarizer=summarizer,
                        namespace=tuple(options.get("namespace", ENTITY_NAMESPACE)))
    turn = TurnMemory(former, formation, store=store, turns=turns,
                      source=str(options.get("source", "human")),
                      redact=options.get("redact", DEFAULT_REDACTOR))
    return MemoryNode(name, turn.after)
