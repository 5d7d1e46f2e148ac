"""The conversation itself as memory: each turn's user message (and the answer) as an item.

After a turn, the turn pipeline (:class:`~langgraph_episodic.formation.turn.TurnMemory`: the
middleware, the graph nodes, :func:`~langgraph_episodic.graph.turns.remember_turn_node`, or the
deferred worker) stores the user's message (and, unless told not to, the agent's answer, and
on a thread's first turn the agent's messages before the user speaks) under
``("memories", user_id, "turns")``, with the conversation and the day as context
(:mod:`langgraph_episodic.memory_context`)::

    {"text": "I moved to Lisbon last week.", "kind": "turn", "role": "user",
     "message_id": "...", "said_at": "2026-05-08T13:56:00.000000Z", "asks": False,
     "slot": "residence", "context": {"day": "Friday, 8 May 2026", "thread": "alice:s1"}}

A user's turn that sets a single-valued topic keeps it as ``slot``, as a saved fact does, so a
question on the topic finds the latest such turn by filter. The memory tools' recall searches
``("memories", user_id)`` as a prefix and so finds turns beside saved facts; a turn has no
``current`` field and no lineage (it is no fact).

Keys are deterministic per (thread, message id, role), so a replayed turn writes the same items
again. Texts are redacted (:func:`~langgraph_episodic.privacy.redact_saved`), small talk is not
stored, and a message with a ``name`` is stored as ``"name: text"``. :func:`turn_items` builds
the items (pure); :func:`store_turns` writes them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from .._config import TURN_NAMESPACE, configurable, fill_namespace
from .._effects import Plan, call
from .._messages import as_messages, last_human_index, message_text
from ..facts.consolidate import Clock
from ..facts.records import to_iso
from ..facts.rules import slot_of
from ..memory_context import CONTEXT_FIELD, context_of, in_turn, index_paths, with_context
from ..memory_kinds import ASKS_FIELD, ASSISTANT, TURN_KIND, USER
from ..privacy.redaction import SaveRedactor, redact_saved
from ..relevance import is_worth_storing
from .entity_rules import fact_clauses, statements

SLOT_FIELD = "slot"
"""The single-valued topic a user's turn sets ("I moved to Lisbon last week.": ``residence``),
as a saved fact's slot (:func:`~langgraph_episodic.facts.rules.slot_of`): a question on the
topic finds the latest such turn by filter."""
LINE_CHARS = 500
"""Longest a recalled turn is in the prompt (characters; longer ones are cut with "…")."""


class TurnSettings(Protocol):
    """How a turn's items are built (:func:`turn_items`), as
    :class:`~langgraph_episodic.graph.TurnOptions` says it."""

    @property
    def replies(self) -> bool: ...
    @property
    def redact(self) -> SaveRedactor | None: ...
    @property
    def clock(self) -> Clock | None: ...


@dataclass(frozen=True)
class TurnItem:
    """One item to store: where, under which key, what."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"namespace": list(self.namespace), "key": self.key, "value": self.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TurnItem:
        return cls(tuple(data["namespace"]), str(data["key"]), dict(data["value"]))


def turn_key(thread: str, message_id: str, role: str) -> str:
    """The key of a turn's item: the same (thread, user message, role) gives the same key.

    >>> turn_key("alice:s1", "m1", "user") == turn_key("alice:s1", "m1", "user")
    True
    >>> turn_key("alice:s1", "m1", "user") == turn_key("alice:s2", "m1", "user")
    False
    """
    digest = hashlib.blake2b(f"{thread}\x00{message_id}\x00{role}".encode(), digest_size=16)
    return f"turn-{digest.hexdigest()}"


def turn_items(
    messages: Any, config: Mapping[str, Any], when: datetime, *,
    redact: SaveRedactor | None, replies: bool,
    template: tuple[str, ...] = TURN_NAMESPACE,
) -> list[TurnItem]:
    """The items of the turn that ends ``messages`` (a state's ``messages``): its last user
    message and, with ``replies``, the answer after it (the last AI message with text) and,
    when it is the thread's first user message, the AI messages before it (the agent opening
    the thread), said at ``when`` in the run of ``config``. Empty when there is no user
    message or what it says is not worth storing."""
    listed = as_messages(messages)
    i = last_human_index(listed)
    if i is None:
        return []
    human = listed[i]
    thread = str(configurable(config).get("thread_id") or "")
    message_id = _message_id(human)
    namespace = fill_namespace(template, config)
    context = context_of(config, when)
    said: list[tuple[str, BaseMessage, str]] = []  # role, message, the id its key is of
    if replies and not any(isinstance(m, HumanMessage) for m in listed[:i]):
        said += [(ASSISTANT, m, _message_id(m)) for m in listed[:i]
                 if isinstance(m, AIMessage) and message_text(m)]
    said.append((USER, human, message_id))
    if replies:
        answer = next((m for m in reversed(listed[i + 1:])
                       if isinstance(m, AIMessage) and message_text(m)), None)
        if answer is not None:
            said.append((ASSISTANT, answer, message_id))
    items: list[TurnItem] = []
    for role, message, keyed_by in said:
        text = " ".join(redact_saved(message_text(message), redact).split())
        if text and isinstance(message.name, str) and message.name.strip():
            text = f"{message.name}: {text}"
        if not is_worth_storing(text):
            continue
        value: dict[str, Any] = {"text": text, "kind": TURN_KIND, "role": role,
                                 "message_id": message.id or keyed_by,
                                 "said_at": to_iso(when)}
        if role == ASSISTANT and keyed_by == message_id:
            value["reply_to"] = message_id
        if role == USER:
            value[ASKS_FIELD] = only_asks(text)
            slot = next((s for s in map(slot_of, statements(text)) if s is not None), None)
            if slot is not None:  # what the turn says of a single-valued topic: recall's filter
                value[SLOT_FIELD] = slot
        items.append(TurnItem(namespace, turn_key(thread, keyed_by, role),
                              with_context(value, context)))
    return items


def _message_id(message: BaseMessage) -> str:
    """A message's id, or a digest of its text when it has none."""
    return message.id or hashlib.blake2b(message_text(message).encode(),
                                         digest_size=16).hexdigest()


def store_turns(store: BaseStore, items: Sequence[TurnItem]) -> Plan[None]:
    """Plan: put ``items``, their text and day indexed, in one batch (for LangGraph's
    ``InMemoryStore``, in as few as it takes: :func:`~langgraph_episodic.memory_context.in_turn`)."""
    ops = [PutOp(t.namespace, t.key, t.value, index=index_paths("text", t.value))
           for t in items]
    for batch in (in_turn(ops) if isinstance(store, InMemoryStore) else [ops]):
        if batch:
            yield call(store.batch, store.abatch, batch)


def only_asks(text: str) -> bool:
    """True when a user's message states nothing: its sentences are questions or requests
    ("Can you help me write to my landlord?", "Write me a poem."). Recall counts such a turn
    as little evidence about the user (:mod:`langgraph_episodic.memory_kinds`).

    >>> only_asks("Any ideas for dinner?"), only_asks("I'm vegetarian. Any ideas for dinner?")
    (True, False)
    """
    return not any(fact_clauses(sentence) for sentence in statements(text))


def is_turn(value: Mapping[str, Any]) -> bool:
    """Whether an item's value is a stored turn."""
    return value.get("kind") == TURN_KIND


def turn_line(value: Mapping[str, Any]) -> str:
    """A recalled turn's value as one prompt line: its day, who said it, the text (cut at
    :data:`LINE_CHARS`)."""
    text = str(value.get("text") or "")
    if len(text) > LINE_CHARS:
        text = text[: LINE_CHARS - 1].rstrip() + "…"
    who = "you said" if value.get("role") == ASSISTANT else "the user said"
    context = value.get(CONTEXT_FIELD)
    day = context.get("day") if isinstance(context, Mapping) else None
    return f"{day or 'Earlier'}, {who}: {text}"


__all__ = ["TURN_KIND", "TURN_NAMESPACE", "TurnItem", "TurnSettings", "is_turn", "store_turns",
           "turn_items", "turn_key", "turn_line"]
