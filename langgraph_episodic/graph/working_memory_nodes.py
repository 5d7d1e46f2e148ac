"""Graph nodes for the working memory: a customer's recent turns and what was surfaced.

:func:`history_nodes` returns a node that loads the user's recent turns
(:class:`~langgraph_episodic.graph.working_memory.CustomerHistory`) into ``state["history"]``
before the agent, and one that stores the new turn after it. :func:`output_log_nodes` loads the
unresolved items the agent already surfaced (:class:`~langgraph_episodic.graph.working_memory.OutputLog`)
into ``state["surfaced"]`` and records each new answer. The customer / user id comes from
``config["configurable"]["user_id"]`` or the run's context (see
:func:`~langgraph_episodic._config.user_id_from`). :func:`~langgraph_episodic.graph.wiring.memory_system_prompt`
renders both, fenced as data.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from .._config import user_id_from
from .._messages import as_messages, last_ai_text, last_human_text
from .._runner import MemoryNode, Plan
from .working_memory import CustomerHistory, OutputLog


def history_nodes(history: CustomerHistory) -> tuple[MemoryNode, MemoryNode]:
    """``(load, save)`` nodes for ``history``: load before the agent, save after it.

    >>> from langgraph.store.memory import InMemoryStore
    >>> load, save = history_nodes(CustomerHistory(InMemoryStore(), ttl_days=None))
    >>> config = {"configurable": {"user_id": "c1"}}
    >>> _ = save.invoke({"messages": [("user", "Hi, order 42?"), ("ai", "It ships today.")]}, config)
    >>> load.invoke({}, config)["history"][0]["assistant"]
    'It ships today.'
    """

    def load(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        turns = yield from history._recent(user_id_from(config))
        return {"history": [{"user": t.user, "assistant": t.assistant, "timestamp": t.timestamp}
                            for t in turns]}

    def save(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        messages = as_messages(state.get("messages"))
        user, answer = last_human_text(messages), last_ai_text(messages)
        if user and answer:
            yield from history._add_turn(user_id_from(config), user, answer)
        return {}

    return MemoryNode("load_history", load), MemoryNode("save_history", save)


def output_log_nodes(log: OutputLog, *, days: float = 7.0) -> tuple[MemoryNode, MemoryNode]:
    """``(load, record)`` nodes for ``log``: load the unresolved items of the last ``days``
    days before the agent, record the agent's answer after it."""

    def load(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        items = yield from log._unresolved(user_id_from(config), days=days)
        return {"surfaced": [{"key": i.key, "text": i.text, "times": i.times} for i in items]}

    def record(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        answer = last_ai_text(as_messages(state.get("messages")))
        if answer:
            yield from log._record(user_id_from(config), answer)
        return {}

    return MemoryNode("load_surfaced", load), MemoryNode("record_surfaced", record)
