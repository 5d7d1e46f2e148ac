"""The durable queue of deferred formation: one store item per answered turn.

Before a deferred turn returns, what its formation needs (the user's redacted text for the
entities, the state an episode is recorded from, the config values that fill the namespaces)
is written as one item under ``("_pending", user_id, thread_id)`` in the store the memory
lives in. The worker (:mod:`.worker`) forms it later and deletes it afterwards, so a process
killed between the answer and the formation loses nothing: the next start finds the item.

Keys sort in the order the turns were answered (``<nanoseconds>-<random>``), so reading a
user's items and sorting them by key gives the turns in order.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from .._config import PENDING, SUMMARY, USER_ID, configurable, namespace_label
from .._effects import Plan, call, run
from .._runner import all_items
from ..facts.records import from_iso, to_iso


def pending_key(clock_ns: int | None = None) -> str:
    """A key that sorts after every key made before it in this process (and, clock allowing,
    in any other)."""
    stamp = time.time_ns() if clock_ns is None else clock_ns
    return f"{stamp:020d}-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class PendingTurn:
    """One answered turn whose memory is still to be formed."""

    user_id: str
    thread_id: str
    key: str
    """Sorts in turn order (:func:`pending_key`)."""
    text: str = ""
    """The user's message, redacted, for the entities (empty: no entities to form)."""
    episode: dict[str, Any] | None = None
    """The state an episode is recorded from (``None``: no episode this turn)."""
    configurable: dict[str, Any] = field(default_factory=dict)
    """The run's ``config["configurable"]`` scalars, to fill namespace templates."""
    enqueued_at: float = 0.0
    """When the turn was queued (epoch seconds, the wall clock)."""
    said_at: str = ""
    """When the turn was said, by the clock inline formation would have used (the entity
    writer's; ISO, :func:`~langgraph_episodic.facts.records.to_iso`); empty in a turn queued
    without it: ``enqueued_at``."""
    leaving: tuple[dict[str, Any], ...] = ()
    """Messages that left the thread's window this turn (``messages_to_dict``), to fold into
    the thread's running summary (:mod:`.summary`)."""
    summary_base: str = ""
    """The thread's summary before its first deferred fold (a summary written inline)."""
    turns: tuple[dict[str, Any], ...] = ()
    """The turn's items to store (:meth:`~langgraph_episodic.kinds.turns.TurnItem.to_dict`),
    built in the turn: its text redacted, its day the turn's."""

    @property
    def namespace(self) -> tuple[str, ...]:
        return pending_namespace(self.user_id, self.thread_id)

    def config(self) -> RunnableConfig:
        """The config the formation runs with: the run's values, the user pinned."""
        return {"configurable": {**self.configurable, USER_ID: self.user_id,
                                 "thread_id": self.thread_id}}

    def told(self) -> datetime | None:
        """When the turn was said: its facts' time (None: unknown, now)."""
        if self.said_at:
            return from_iso(self.said_at)
        return datetime.fromtimestamp(self.enqueued_at, timezone.utc) if self.enqueued_at > 0 \
            else None

    def to_value(self) -> dict[str, Any]:
        value = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "key"}
        return {**value, "leaving": list(self.leaving), "turns": list(self.turns)}

    @classmethod
    def from_item(cls, item: Item) -> PendingTurn:
        """The turn an item of the queue holds (a field the item lacks, or holds as null, takes
        its default: items queued by an older release)."""
        value = {f.name: item.value[f.name] for f in fields(cls)
                 if item.value.get(f.name) is not None}
        return cls(**{**value, "key": item.key, "leaving": tuple(value.get("leaving", ())),
                      "turns": tuple(value.get("turns", ()))})

    @classmethod
    def of_run(cls, config: RunnableConfig, user_id: str, *, text: str = "",
               episode: dict[str, Any] | None = None,
               leaving: tuple[dict[str, Any], ...] = (), summary_base: str = "",
               turns: tuple[dict[str, Any], ...] = (),
               said_at: datetime | None = None) -> PendingTurn:
        """The turn of the run of ``config``, queued now (said at ``said_at``, default
        now)."""
        conf = configurable(config)
        now = time.time()
        said = said_at if said_at is not None else datetime.fromtimestamp(now, timezone.utc)
        plain = {k: v for k, v in conf.items()  # what a namespace template can name
                 if not k.startswith(("__", "checkpoint_"))
                 and isinstance(v, str | int | float | bool)}
        return cls(user_id=user_id, thread_id=str(conf.get("thread_id") or ""),
                   key=pending_key(), text=text, episode=episode,
                   configurable=plain, enqueued_at=now, said_at=to_iso(said),
                   leaving=leaving, summary_base=summary_base, turns=turns)


def pending_namespace(user_id: str, thread_id: str) -> tuple[str, str, str]:
    """``(PENDING, user_id, thread_id)`` (a run without a thread id queues under ``"-"``)."""
    return (PENDING, namespace_label(user_id), namespace_label(thread_id or "-"))


SUMMARY_KEY = "summary"


def summary_namespace(user_id: str, thread_id: str) -> tuple[str, str, str]:
    """Where the worker keeps a thread's formed summary (:mod:`.summary`)."""
    return (SUMMARY, namespace_label(user_id), namespace_label(thread_id or "-"))


def enqueue(store: BaseStore, turn: PendingTurn) -> Plan[None]:
    """Plan: write ``turn`` to the queue (not indexed: nobody searches it by meaning)."""
    yield call(store.put, store.aput, turn.namespace, turn.key, turn.to_value(), index=False)


def pending_users(store: BaseStore) -> list[str]:
    """The users with pending turns (the ``user_id`` labels of the queue's namespaces)."""
    users: list[str] = []
    offset = 0
    while True:
        page = store.list_namespaces(prefix=(PENDING,), max_depth=2, limit=500, offset=offset)
        users += [ns[1] for ns in page if len(ns) >= 2]
        if len(page) < 500:
            return sorted(set(users))
        offset += len(page)


def pending_turns(store: BaseStore, user_label: str) -> list[PendingTurn]:
    """All pending turns of one user (every thread), oldest first."""
    items = run(all_items(store, (PENDING, user_label)))
    return sorted((PendingTurn.from_item(i) for i in items), key=lambda t: t.key)


def still_pending(store: BaseStore, turns: list[PendingTurn]) -> bool:
    """True when every one of ``turns`` is still in the queue (none was formed elsewhere or
    deleted by a forget since it was read)."""
    found = store.batch([GetOp(t.namespace, t.key) for t in turns])
    return all(item is not None for item in found)


def remove(store: BaseStore, turns: list[PendingTurn]) -> None:
    """Delete formed turns from the queue (one batch)."""
    if turns:
        store.batch([PutOp(t.namespace, t.key, None) for t in turns])
