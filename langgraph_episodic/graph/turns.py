"""The node that remembers the conversation's turns (:mod:`langgraph_episodic.kinds.turns`)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from .._effects import Plan
from .._runner import MemoryNode, resolve_store
from ..facts.consolidate import Clock, utc_now
from ..kinds.turns import store_turns, turn_items
from ..privacy.redaction import DEFAULT_REDACTOR, SaveRedactor


def remember_turn_node(
    *, store: BaseStore | None = None, replies: bool = True,
    redact: SaveRedactor | None = DEFAULT_REDACTOR, clock: Clock | None = None,
    name: str = "remember_turn",
) -> MemoryNode:
    """Create the node that remembers the turn after the agent: :func:`~langgraph_episodic.kinds.turns.turn_items` of the
    state's ``messages`` (the last user message, with ``replies`` the answer after it),
    written by :func:`~langgraph_episodic.kinds.turns.store_turns` under the user's ``("memories", user_id, "turns")``.

    The user and the thread come from ``config["configurable"]`` (or the run's context),
    never from state or model output. ``redact`` is applied to every text (``None``: stored
    as said); ``clock`` gives the time a turn was said (default: now, UTC). Keys are
    deterministic, so a replayed turn overwrites its items. Writes no state.

    >>> from langgraph.store.memory import InMemoryStore
    >>> store = InMemoryStore()
    >>> node = remember_turn_node(store=store)
    >>> node.invoke({"messages": [("user", "My daughter's name is Mia."), ("ai", "Noted.")]},
    ...             {"configurable": {"user_id": "alice", "thread_id": "alice:s1"}})
    {}
    >>> [i.value["text"] for i in store.search(("memories", "alice", "turns"))]
    ["My daughter's name is Mia."]
    """
    now: Clock = clock if clock is not None else utc_now

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        items = turn_items(state.get("messages"), config, now(), redact=redact, replies=replies)
        yield from store_turns(resolve_store(store), items)
        return {}

    return MemoryNode(name, plan)


__all__ = ["remember_turn_node"]
