"""The in-turn half of deferred formation: queue what the formation needs, then return.

:func:`queue_turn` is the one plan the deferred graph node and the deferred middleware hook
run after the agent has answered. It costs one store write (no model call, no embedding): the
user's redacted message for the entities, the turn's items to remember
(:mod:`langgraph_episodic.graph.turns`) and, when the turn carries feedback (or a score
function will judge it), a JSON snapshot of the state an episode is recorded from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from .._config import user_id_from
from .._effects import Plan, call
from .._messages import as_messages, last_human_index, message_text
from ..kinds.turns import TurnItem
from ..privacy.redaction import SaveRedactor, redact_saved
from .former import Former
from .pending import PendingTurn, enqueue
from .worker import Scheduler

EPISODE_KEYS = ("task", "strategy", "iterations", "outcome")


def _as_json(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def episode_snapshot(state: Mapping[str, Any]) -> dict[str, Any] | None:
    """The part of ``state`` the record-episode node reads, as JSON: the last human message,
    the last AI answer (with its id), the task, feedback, outcome, strategy and iterations."""
    messages = as_messages(state.get("messages"))
    answer = next((m for m in reversed(messages)
                   if isinstance(m, AIMessage) and message_text(m)), None)
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


def source_text(state: Mapping[str, Any], source: str = "human") -> str:
    """The text the entities come from: the last human message, or the last message."""
    messages = as_messages(state.get("messages"))
    if source == "last":
        return message_text(messages[-1]) if messages else ""
    i = last_human_index(messages)
    return "" if i is None else message_text(messages[i])


def queue_turn(
    formation: Scheduler, store: BaseStore, former: Former,
    state: Mapping[str, Any], config: RunnableConfig, *,
    entities: bool, episode: bool, redact: SaveRedactor | None, source: str = "human",
    turns: Sequence[TurnItem] = (),
) -> Plan[dict[str, Any]]:
    """Plan: write this turn to the queue and wake the worker; the state update clears the
    turn's feedback when an episode was queued (as recording it inline does)."""
    user_id = user_id_from(config)
    text = redact_saved(source_text(state, source), redact) if entities else ""
    snapshot = episode_snapshot(state) if episode else None
    if not text.strip() and snapshot is None and not turns:
        return {}
    formation.bind(store, former)
    said_at = former.writer.clock() if former.writer is not None else None  # as inline
    yield from enqueue(store, PendingTurn.of_run(config, user_id, text=text, episode=snapshot,
                                                 turns=tuple(t.to_dict() for t in turns),
                                                 said_at=said_at))
    yield call(formation.notify, formation.anotify, user_id)
    return {"feedback": None, "outcome": None} if snapshot is not None else {}
