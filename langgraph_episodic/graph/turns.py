"""The node that remembers the conversation's turns (:mod:`langgraph_episodic.kinds.turns`)."""

from __future__ import annotations

from langgraph.store.base import BaseStore

from .._runner import MemoryNode
from ..facts.consolidate import Clock
from ..formation.former import Former
from ..formation.turn import TurnMemory
from ..privacy.redaction import DEFAULT_REDACTOR, SaveRedactor
from .options import TurnOptions


def remember_turn_node(
    *,
    store: BaseStore | None = None,
    replies: bool = True,
    redact: SaveRedactor | None = DEFAULT_REDACTOR,
    clock: Clock | None = None,
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
    said = TurnOptions(replies=replies, redact=redact, clock=clock)
    return MemoryNode(
        name, TurnMemory(Former(None, episodes=False), store=store, turns=said).remember
    )


__all__ = ["remember_turn_node"]
