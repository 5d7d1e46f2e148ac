"""The entity nodes: load the user's entities before the agent, extract and save them after
(:mod:`langgraph_episodic.kinds.entities`)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from .._config import fill_namespace
from .._effects import Plan
from .._runner import MemoryNode, resolve_store
from ..facts.consolidate import Clock
from ..formation.former import Former
from ..formation.turn import TurnMemory
from ..kinds.entities import ENTITY_NAMESPACE, EntityWriter, load_entities
from ..privacy.redaction import DEFAULT_REDACTOR, SaveRedactor


def load_entities_node(
    *,
    store: BaseStore | None = None,
    namespace: tuple[str, ...] = ENTITY_NAMESPACE,
    limit: int = 50,
    name: str = "load_entities",
) -> MemoryNode:
    """Create the node that loads the user's stored entities before the agent runs.

    Runs when ``state["entities"]`` is empty (a new session); later turns keep what the
    extract node merged.

    >>> from langgraph.store.memory import InMemoryStore
    >>> store = InMemoryStore()
    >>> store.put(("entities", "alice"), "acme", {"name": "ACME", "description": "Her employer."})
    >>> load_entities_node(store=store).invoke({}, {"configurable": {"user_id": "alice"}})
    {'entities': {'ACME': 'Her employer.'}}
    """

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        if state.get("entities"):
            return {}
        loaded = yield from load_entities(
            resolve_store(store), fill_namespace(namespace, config), limit
        )
        return {"entities": loaded} if loaded else {}

    return MemoryNode(name, plan)


def entity_extract_node(
    *,
    model: BaseChatModel | None = None,
    store: BaseStore | None = None,
    namespace: tuple[str, ...] = ENTITY_NAMESPACE,
    source: str = "human",
    load_limit: int = 50,
    name: str = "entity_extract",
    redact: SaveRedactor | None = DEFAULT_REDACTOR,
    clock: Clock | None = None,
) -> MemoryNode:
    """Create the entity-extract node (see :mod:`langgraph_episodic.kinds.entities`).

    Args:
        model: A chat model that supports ``with_structured_output``; ``None`` for the rules.
        store: The store; default: the one the graph is compiled with.
        namespace: Namespace template; ``{user_id}`` and other ``{key}`` labels are filled
            from ``config["configurable"]``.
        source: ``"human"`` (the last human message) or ``"last"`` (the last message).
        load_limit: How many stored entities to load when the state has none (used alone,
            without :func:`load_entities_node` before the agent).
        name: The node's name.
        redact: Applied to the message text before entities are extracted, so neither the
            model nor the store sees e-mail addresses, phone numbers, IBANs or card numbers
            (see :func:`~langgraph_episodic.privacy.redact_saved`); ``None`` turns it off.
        clock: The time a fact was said (default: now, UTC).

    >>> from langgraph.store.memory import InMemoryStore
    >>> node = entity_extract_node(store=InMemoryStore())
    >>> state = {"messages": [("user", "I work at ACME. Where is the office?")]}
    >>> node.invoke(state, {"configurable": {"user_id": "alice"}})
    {'entities': {'ACME': 'I work at ACME.'}}
    """
    turn = TurnMemory(
        Former(EntityWriter(model, clock=clock), episodes=False, namespace=namespace),
        store=store,
        source=source,
        redact=redact,
        load_limit=load_limit,
    )
    return MemoryNode(name, turn.extract)


__all__ = ["entity_extract_node", "load_entities_node"]
