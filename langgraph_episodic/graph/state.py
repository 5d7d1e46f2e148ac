"""The graph state the memory nodes share, and the reducer that merges entities.

Every value in the state is JSON-safe (strings, numbers, dicts, lists, LangChain messages), so
any checkpointer can store it without pickling or allow-listing classes: tasks, episodes and
feedback are kept as the dicts of their records (``TaskDescription.to_dict()`` ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from langgraph.graph import MessagesState

from ..kinds.entity_rules import entity_key


def merge_entities(
    left: Mapping[str, str | None] | None, right: Mapping[str, str | None] | None
) -> dict[str, str]:
    """Reducer for ``entities``: ``right``'s descriptions replace ``left``'s, by name.

    Names match case-insensitively and keep their first spelling; ``None`` in ``right``
    removes an entity. The nodes write each entity's full description (its current facts, as
    rebuilt in the store), so the newest write is the whole truth.

    >>> merge_entities({"Alice": "A developer."}, {"alice": "A developer at ACME.", "Bob": "x"})
    {'Alice': 'A developer at ACME.', 'Bob': 'x'}
    """
    merged: dict[str, str] = {k: v for k, v in (left or {}).items() if v is not None}
    names = {entity_key(name): name for name in merged}
    for name, description in (right or {}).items():
        key = entity_key(name)
        if description is not None:
            merged[names.setdefault(key, name)] = description
        elif key in names:
            del merged[names.pop(key)]
    return merged


class EpisodicState(MessagesState, total=False):
    """State shared by the memory nodes; subclass it to add your own keys.

    Keys (all optional except ``messages``):

    - ``messages``: the conversation (``add_messages`` reducer).
    - ``summary``: the running summary of every message that left ``messages`` (kept out of
      ``messages`` so it never streams; :func:`~langgraph_episodic.graph.wiring.memory_system_prompt`
      adds it to the request) and ``summary_info``: how many messages it covers, the newest id.
    - ``entities``: name -> description, updated by :func:`merge_entities`.
    - ``history`` / ``surfaced``: the customer's recent turns and the unresolved items the agent
      already surfaced, loaded by the working-memory nodes (dicts).
    - ``task``: the current task, a string or ``TaskDescription.to_dict()``; when absent the
      episode nodes use the last human message.
    - ``recalled``: the recalled episodes as dicts (each ``Episode.to_dict()`` plus
      ``"priority"`` and ``"similarity"``), best first.
    - ``replay_prompt``: the replay context formatted for the agent's prompt.
    - ``recalled_memories``: what the user's memory (saved facts, turns of earlier
      conversations) holds for the latest user message, best first, as dicts
      (``namespace``, ``key``, ``value``, ``score``); written by the recall-memories node.
    - ``strategy`` / ``strategy_instruction``: the chosen strategy and its instruction.
    - ``feedback`` / ``outcome``: how the current task went (``Feedback.to_dict()`` and an
      ``OutcomeStatus`` value), read by the record-episode node.
    - ``episode_id``: the id of the episode the record-episode node wrote last.

    >>> from langgraph.graph import StateGraph
    >>> class MyState(EpisodicState):
    ...     attempts: int
    >>> builder = StateGraph(MyState)
    """

    summary: str
    summary_info: dict[str, Any]
    history: list[dict[str, Any]]
    surfaced: list[dict[str, Any]]
    entities: Annotated[dict[str, str], merge_entities]
    task: str | dict[str, Any]
    recalled: list[dict[str, Any]]
    replay_prompt: str
    recalled_memories: list[dict[str, Any]]
    strategy: str
    strategy_instruction: str
    feedback: dict[str, Any] | None
    outcome: str | None
    episode_id: str
