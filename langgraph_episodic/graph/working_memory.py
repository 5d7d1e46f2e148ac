"""Working memory for production agents: a per-customer history window and an output log.

- :class:`CustomerHistory` keeps each customer's last ``max_turns`` turns (a user message and
  the agent's answer) under ``("working_memory", customer_id)``, each expiring ``ttl_days``
  (default 30) after it was written, through the store's TTL. Stores without TTL support
  (LangGraph's ``InMemoryStore``) are refused with an error unless ``ttl_days=None``.
- :class:`OutputLog` records what the agent has surfaced to a user (a warning, a
  recommendation) under ``("output_log", user_id)``; items are marked resolved, and
  :meth:`OutputLog.unresolved` lists the unresolved ones of the last N days, newest first,
  capped at the newest 100, so the agent can stop repeating itself. The log also caps what it
  *stores*: after each record, items surfaced more than ``keep_days`` (7) days ago and all but
  the newest ``max_items`` (100) are deleted.
"""

from __future__ import annotations

import builtins
import time
import uuid
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.base import BaseStore, Item

from .._config import namespace_label
from .._effects import Plan, call, twins
from .._runner import all_items
from .._user_threads import check_id
from ..errors import InvalidValueError
from ..kinds.namespaces import OUTPUT_LOG, WORKING_MEMORY
from .profiles import fact_key

DEFAULT_TTL_DAYS = 30.0
"""Default lifetime of a history turn."""

MAX_UNRESOLVED = 100
""":meth:`OutputLog.unresolved` never returns more than this many items."""

_DAY = 86400.0


def _ttl_minutes(store: BaseStore, ttl_days: float | None) -> float | None:
    if ttl_days is None:
        return None
    if ttl_days <= 0:
        raise InvalidValueError(f"ttl_days must be positive or None, got {ttl_days}.")
    if not getattr(store, "supports_ttl", False):
        raise InvalidValueError(
            f"{type(store).__name__} does not support TTL, so history would never expire. "
            "Use a store with TTL (e.g. ChromaStore) or pass ttl_days=None to keep it forever."
        )
    return ttl_days * 24 * 60  # LangGraph stores take the TTL in minutes


@dataclass(frozen=True)
class Turn:
    """One exchange: what the customer said and what the agent answered."""

    key: str
    user: str
    assistant: str
    timestamp: float

    def to_messages(self) -> list[BaseMessage]:
        """The turn as a human message and an AI message."""
        return [HumanMessage(self.user), AIMessage(self.assistant)]


class CustomerHistory:
    """The last ``max_turns`` turns of each customer, expiring after ``ttl_days``.

    Reads do not extend a turn's lifetime: it expires ``ttl_days`` after it was written.

    >>> from langgraph.store.memory import InMemoryStore
    >>> history = CustomerHistory(InMemoryStore(), max_turns=2, ttl_days=None)  # no TTL here
    >>> for i in range(3):
    ...     _ = history.add_turn("c1", f"question {i}", f"answer {i}")
    >>> [t.user for t in history.recent("c1")]
    ['question 1', 'question 2']
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        max_turns: int = 10,
        ttl_days: float | None = DEFAULT_TTL_DAYS,
        namespace: str = WORKING_MEMORY,
    ) -> None:
        if max_turns <= 0:
            raise InvalidValueError(f"max_turns must be positive, got {max_turns}.")
        self.store = store
        self.max_turns = max_turns
        self.ttl_days = ttl_days
        self.namespace = namespace
        self._ttl = _ttl_minutes(store, ttl_days)

    def _ns(self, customer_id: str) -> tuple[str, ...]:
        return (self.namespace, namespace_label(check_id(customer_id, "customer_id")))

    def _items(self, customer_id: str, now: float) -> Plan[builtins.list[Item]]:
        ns = self._ns(customer_id)
        items = yield from all_items(self.store, ns)
        oldest = now - self.ttl_days * _DAY if self.ttl_days is not None else float("-inf")
        return sorted((i for i in items
                       if i.namespace == ns and i.value.get("timestamp", 0.0) >= oldest),
                      key=lambda i: i.key)

    def _add_turn(
        self, customer_id: str, user: str, assistant: str, *, now: float | None = None
    ) -> Plan[Turn]:
        """Store one turn and drop the customer's turns beyond ``max_turns``."""
        now = time.time() if now is None else now
        key = f"{int(now * 1_000_000):020d}-{uuid.uuid4().hex[:8]}"
        value = {"user": user, "assistant": assistant, "timestamp": now}
        yield call(self.store.put, self.store.aput, self._ns(customer_id), key, value,
                   index=False, ttl=self._ttl)
        items = yield from self._items(customer_id, now)
        for old in items[: max(0, len(items) - self.max_turns)]:
            yield call(self.store.delete, self.store.adelete, self._ns(customer_id), old.key)
        return Turn(key, user, assistant, now)

    add_turn, aadd_turn = twins(_add_turn, "add_turn")

    def _recent(self, customer_id: str, *, now: float | None = None) -> Plan[builtins.list[Turn]]:
        """The customer's unexpired turns, oldest first (at most ``max_turns``)."""
        items = yield from self._items(customer_id, time.time() if now is None else now)
        return [
            Turn(i.key, str(i.value["user"]), str(i.value["assistant"]), float(i.value["timestamp"]))
            for i in items[-self.max_turns :]
        ]

    recent, arecent = twins(_recent, "recent")

    def as_messages(self, customer_id: str) -> builtins.list[BaseMessage]:
        """The recent turns as chat messages, ready to prepend to a prompt."""
        return [m for turn in self.recent(customer_id) for m in turn.to_messages()]

    def _clear(self, customer_id: str) -> Plan[int]:
        """Delete a customer's history; return how many turns were deleted."""
        items = yield from all_items(self.store, self._ns(customer_id))
        for item in items:
            yield call(self.store.delete, self.store.adelete, item.namespace, item.key)
        return len(items)

    clear, aclear = twins(_clear, "clear")


@dataclass(frozen=True)
class OutputItem:
    """Something the agent surfaced to a user."""

    key: str
    text: str
    kind: str | None
    first_surfaced: float
    surfaced_at: float
    """When it was surfaced last."""
    times: int
    resolved: bool
    resolved_at: float | None

    @classmethod
    def from_value(cls, key: str, v: dict[str, Any]) -> OutputItem:
        """Read an output item from the value :class:`OutputLog` stored under ``key``."""
        return cls(
            key=key,
            text=str(v["text"]),
            kind=v.get("kind"),
            first_surfaced=float(v["first_surfaced"]),
            surfaced_at=float(v["surfaced_at"]),
            times=int(v.get("times", 1)),
            resolved=bool(v.get("resolved", False)),
            resolved_at=v.get("resolved_at"),
        )


class OutputLog:
    """What the agent has surfaced to each user, so it stops repeating itself.

    Recording the same text again (ignoring case and spacing) updates one item: its
    ``surfaced_at``, ``times``, and makes it unresolved again.

    >>> from langgraph.store.memory import InMemoryStore
    >>> log = OutputLog(InMemoryStore())
    >>> item = log.record("alice", "Your API key expires on Friday.")
    >>> [i.text for i in log.unresolved("alice")]
    ['Your API key expires on Friday.']
    >>> log.resolve("alice", item.key)
    True
    >>> log.unresolved("alice")
    []
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        namespace: str = OUTPUT_LOG,
        ttl_days: float | None = None,
        cap: int = MAX_UNRESOLVED,
        keep_days: float | None = 7.0,
        max_items: int = MAX_UNRESOLVED,
    ) -> None:
        if not 0 < cap <= MAX_UNRESOLVED:
            raise InvalidValueError(f"cap must be between 1 and {MAX_UNRESOLVED}, got {cap}.")
        if max_items <= 0 or (keep_days is not None and keep_days <= 0):
            raise InvalidValueError(
                f"max_items and keep_days must be positive, got {max_items} and "
                f"{keep_days} (keep_days=None keeps items of any age)."
            )
        self.store = store
        self.namespace = namespace
        self.cap = cap
        self.keep_days = keep_days
        self.max_items = max_items
        self._ttl = _ttl_minutes(store, ttl_days)

    def _ns(self, user_id: str) -> tuple[str, ...]:
        return (self.namespace, namespace_label(user_id))

    def _record(
        self, user_id: str, text: str, *, kind: str | None = None, now: float | None = None
    ) -> Plan[OutputItem]:
        """Record that ``text`` was surfaced to the user; return the (updated) item."""
        text, now = " ".join(text.split()), time.time() if now is None else now
        if not text:
            raise InvalidValueError("Cannot record an empty text in the output log.")
        key = fact_key(text)
        old = yield call(self.store.get, self.store.aget, self._ns(user_id), key)
        value: dict[str, Any] = {
            "text": text,
            "kind": kind if kind is not None else (old.value.get("kind") if old else None),
            "first_surfaced": old.value["first_surfaced"] if old else now,
            "surfaced_at": now,
            "times": (int(old.value.get("times", 1)) + 1) if old else 1,
            "resolved": False,
            "resolved_at": None,
        }
        yield call(self.store.put, self.store.aput, self._ns(user_id), key, value,
                   ttl=self._ttl)
        yield from self._prune(user_id, now)
        return OutputItem.from_value(key, value)

    record, arecord = twins(_record, "record")

    def _prune(self, user_id: str, now: float) -> Plan[int]:
        """Delete items older than ``keep_days`` and all but the newest ``max_items``."""
        ns = self._ns(user_id)
        items = yield from all_items(self.store, ns)
        mine = sorted((i for i in items if i.namespace == ns),
                      key=lambda i: float(i.value.get("surfaced_at", 0.0)), reverse=True)
        oldest = now - self.keep_days * _DAY if self.keep_days is not None else float("-inf")
        stale = [i for n, i in enumerate(mine)
                 if n >= self.max_items or float(i.value.get("surfaced_at", 0.0)) < oldest]
        for item in stale:
            yield call(self.store.delete, self.store.adelete, item.namespace, item.key)
        return len(stale)

    def _resolve(self, user_id: str, key: str, *, now: float | None = None) -> Plan[bool]:
        """Mark an item resolved; ``False`` when there is no such item."""
        old = yield call(self.store.get, self.store.aget, self._ns(user_id), key)
        if old is None:
            return False
        value = {**old.value, "resolved": True,
                 "resolved_at": time.time() if now is None else now}
        yield call(self.store.put, self.store.aput, self._ns(user_id), key, value,
                   ttl=self._ttl)
        return True

    resolve, aresolve = twins(_resolve, "resolve")

    def _unresolved(
        self, user_id: str, *, days: float = 7.0, now: float | None = None
    ) -> Plan[builtins.list[OutputItem]]:
        """Unresolved items surfaced in the last ``days`` days, newest first, at most ``cap``."""
        cutoff = (time.time() if now is None else now) - days * _DAY
        where = {"resolved": False, "surfaced_at": {"$gte": cutoff}}
        ns = self._ns(user_id)
        items = yield from all_items(self.store, ns, filter=where)
        found = [OutputItem.from_value(i.key, i.value) for i in items if i.namespace == ns]
        found.sort(key=lambda i: i.surfaced_at, reverse=True)
        return found[: self.cap]

    unresolved, aunresolved = twins(_unresolved, "unresolved")

    def _was_surfaced(
        self, user_id: str, text: str, *, days: float = 7.0, now: float | None = None
    ) -> Plan[bool]:
        """True when ``text`` is among the unresolved items of the last ``days`` days."""
        key = fact_key(" ".join(text.split()))
        items = yield from self._unresolved(user_id, days=days, now=now)
        return any(item.key == key for item in items)

    was_surfaced, awas_surfaced = twins(_was_surfaced, "was_surfaced")
