"""The example graph: the memory nodes of langgraph-episodic around one agent node.

The server gives the graph its store (``langgraph_episodic.server.store``, see
``langgraph.json``) and its checkpointer; the nodes read the user from ``config["configurable"]["user_id"]`` and the
run's context, both of which ``auth.py`` pins to the authenticated user.

With ``EPISODIC_CHAT_MODEL`` set (e.g. ``openai:gpt-4o-mini``, with its API key and package)
the agent and the entity extraction use that model; without it an offline agent answers from
its memory, so the app runs with no API key.

A run records an episode when its input carries feedback for the answer, e.g.
``{"messages": [...], "feedback": {"reward": 1.0}}``.

With ``EPISODIC_DEFER=1`` the run returns once the agent has answered, and the server forms the
memory afterwards as a background run of ``formation`` (see the README).
"""

from __future__ import annotations

import os
from typing import Any

from langgraph_episodic import build_memory_graph
from langgraph_episodic.formation import ServerFormation, formation_graph


def offline_agent(state: dict[str, Any]) -> dict[str, Any]:
    """Answer from memory alone: what it knows about the user and how many past episodes match."""
    known = ", ".join(sorted(state.get("entities") or {})) or "nothing yet"
    recalled = len(state.get("recalled") or [])
    strategy = state.get("strategy") or "default"
    reply = f"I know about: {known}. Similar past tasks: {recalled}. Strategy: {strategy}."
    return {"messages": [("ai", reply)]}


def _chat_model() -> Any:
    name = os.environ.get("EPISODIC_CHAT_MODEL", "").strip()
    if not name:
        return None
    from langchain.chat_models import init_chat_model

    return init_chat_model(name)


model = _chat_model()
deferred = os.environ.get("EPISODIC_DEFER", "").strip().lower() in ("1", "true", "yes")
graph = build_memory_graph(model or offline_agent, model=model,
                           defer=ServerFormation() if deferred else False)
formation = formation_graph(model=model)
"""The memory-formation graph ``ServerFormation`` runs in the background (register it in
``langgraph.json`` as ``memory_formation`` when ``EPISODIC_DEFER`` is on; see the README)."""
