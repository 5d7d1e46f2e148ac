"""Wire the memory nodes around an agent node, and a prebuilt example graph.

The usual order is::

    START -> sliding_window -> recall -> select_strategy -> <agent>
          -> record_episode -> summarize -> entity_extract -> END

:func:`add_memory_nodes` adds these nodes and edges to your ``StateGraph`` builder around the
agent node you already added; :func:`build_memory_graph` builds and compiles the whole graph,
with a simple chat agent (:func:`memory_agent_node`) when you pass a chat model.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from .._fence import data_notice, fence, single_line
from ._messages import as_messages
from ._runner import MemoryNode, Plan, call
from .entities import entity_extract_node
from .episode_nodes import (
    EpisodeMemories,
    Scorer,
    recall_node,
    record_episode_node,
    select_strategy_node,
)
from .state import EpisodicState
from .summarize import summarize_node
from .window import sliding_window_node


@dataclass(frozen=True)
class MemoryNodeNames:
    """The names :func:`add_memory_nodes` gave the nodes it added (``None`` when left out)."""

    before: tuple[str, ...]
    """Nodes that run before the agent, in order."""
    after: tuple[str, ...]
    """Nodes that run after the agent, in order; route your agent's exit to ``after[0]``."""


def add_memory_nodes(
    builder: StateGraph[Any, Any, Any, Any],
    agent: str,
    *,
    model: BaseChatModel | None = None,
    store: BaseStore | None = None,
    memories: EpisodeMemories | None = None,
    window_tokens: int | None = 2000,
    summarize: bool = True,
    entities: bool = True,
    episodes: bool = True,
    policy: str = "greedy",
    rng: random.Random | None = None,
    top_k: int = 3,
    score: Scorer | None = None,
    connect_agent: bool = True,
    start: str = START,
    end: str = END,
) -> MemoryNodeNames:
    """Add the memory nodes and edges around the already-added node ``agent``.

    Args:
        builder: A ``StateGraph`` whose state has the :class:`EpisodicState` keys.
        agent: Name of your agent node (add it first).
        model: Chat model for the summary and entity extraction (``None``: offline fallbacks).
        store: The store; default: the one the graph is compiled with.
        memories: Shared episodic memories; default one per call of this function.
        window_tokens: Token budget of the sliding window (``None`` leaves the window out).
        summarize, entities, episodes: Leave out the summary, entity or episodic nodes.
        policy: Strategy policy, ``"greedy"`` or ``"thompson"``; ``rng`` seeds the latter.
        top_k: How many past episodes the recall node puts in the replay prompt.
        score: Scoring function for the record-episode node (see there).
        connect_agent: Add the edge ``agent -> after[0]``. Pass ``False`` when your agent
            leaves through a conditional edge (e.g. a tool loop) and route it yourself.
        start, end: Where the chain starts and ends (default ``START`` and ``END``).

    >>> builder = StateGraph(EpisodicState)
    >>> builder.add_node("agent", lambda state: {"messages": [("ai", "Hello!")]})
    <langgraph.graph.state.StateGraph object at ...>
    >>> add_memory_nodes(builder, "agent").after
    ('record_episode', 'summarize', 'entity_extract')
    """
    if agent not in builder.nodes:
        raise ValueError(
            f"Add your agent node first (builder.add_node({agent!r}, ...)); the builder has "
            f"{sorted(builder.nodes) or 'no nodes'}."
        )
    shared = memories or EpisodeMemories(store)
    before: list[tuple[str, MemoryNode]] = []
    after: list[tuple[str, MemoryNode]] = []
    if window_tokens is not None:
        before.append(("sliding_window", sliding_window_node(max_tokens=window_tokens)))
    if episodes:
        before.append(("recall", recall_node(memories=shared, top_k=top_k)))
        before.append(
            ("select_strategy", select_strategy_node(memories=shared, policy=policy, rng=rng))
        )
        after.append(("record_episode", record_episode_node(memories=shared, score=score)))
    if summarize:
        after.append(("summarize", summarize_node(model=model)))
    if entities:
        after.append(("entity_extract", entity_extract_node(model=model, store=store)))
    for name, node in (*before, *after):
        if name in builder.nodes:
            raise ValueError(f"The builder already has a node named {name!r}.")
        builder.add_node(name, node)
    chain_after = [n for n, _ in after]
    edges = list(pairwise([start, *(n for n, _ in before), agent]))
    if connect_agent:
        edges += pairwise([agent, *chain_after, end])
    elif chain_after:
        edges += pairwise([*chain_after, end])
    for a, b in edges:
        builder.add_edge(a, b)
    return MemoryNodeNames(tuple(n for n, _ in before), tuple(chain_after))


ENTITIES_LABEL = "KNOWN ENTITIES"
"""Label of the fence around the known entities in :func:`memory_system_prompt`."""


def memory_system_prompt(state: Mapping[str, Any], *, base: str = "") -> str:
    """The system prompt the memory nodes' outputs make: ``base``, the strategy instruction,
    the known entities and the replay prompt (each only when present).

    Entities come from what users said, so they are fenced as quoted data (a notice, then one
    ``| name: description`` line each between ``<<<BEGIN KNOWN ENTITIES ...>>>`` and
    ``<<<END KNOWN ENTITIES>>>``, copies of the markers neutralised; see
    :mod:`langgraph_episodic._fence`), like the replay prompt's episodes.
    """
    parts = [base.strip()] if base.strip() else []
    if state.get("strategy_instruction"):
        parts.append(f"Strategy ({state.get('strategy')}): {state['strategy_instruction']}")
    if state.get("entities"):
        entries = [single_line(f"{k}: {v}") for k, v in sorted(state["entities"].items())]
        block = fence(entries, label=ENTITIES_LABEL, notice=data_notice("known entities"))
        parts.append("\n".join(["Known entities:", *block]))
    if state.get("replay_prompt"):
        parts.append(str(state["replay_prompt"]))
    return "\n\n".join(parts)


def memory_agent_node(
    model: BaseChatModel, *, system_prompt: str = "", name: str = "agent"
) -> MemoryNode:
    """A plain chat agent: sends :func:`memory_system_prompt` plus the messages to ``model``."""

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        prompt = memory_system_prompt(state, base=system_prompt)
        messages: list[BaseMessage] = [SystemMessage(prompt)] if prompt else []
        messages += as_messages(state.get("messages"))
        response = yield call(model.invoke, model.ainvoke, messages, config)
        return {"messages": [response]}

    return MemoryNode(name, plan)


AgentLike = BaseChatModel | Runnable[Any, Any] | Callable[..., Any]


def build_memory_graph(
    agent: AgentLike,
    *,
    model: BaseChatModel | None = None,
    store: BaseStore | None = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    state_schema: type[Any] = EpisodicState,
    system_prompt: str = "",
    **options: Any,
) -> Any:
    """Build and compile the example graph: the memory nodes around one agent node.

    ``agent`` is a chat model (wrapped in :func:`memory_agent_node`) or any node callable or
    runnable. ``model`` writes the summary and extracts entities (``None``: the offline
    fallbacks). ``options`` go to :func:`add_memory_nodes`. Returns the compiled graph.

    >>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    >>> from langgraph.store.memory import InMemoryStore
    >>> from langgraph_episodic.graph.threads import thread_config
    >>> llm = GenericFakeChatModel(messages=iter(["Use a dict."]))
    >>> graph = build_memory_graph(llm, model=None, store=InMemoryStore(), summarize=False)
    >>> out = graph.invoke({"messages": [("user", "How do I count words?")]},
    ...                    thread_config("alice", "s1"))
    >>> out["messages"][-1].content
    'Use a dict.'
    """
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(state_schema)
    node: Any = (
        memory_agent_node(agent, system_prompt=system_prompt)
        if isinstance(agent, BaseChatModel)
        else agent
    )
    builder.add_node("agent", node)
    add_memory_nodes(builder, "agent", model=model, store=store, **options)
    return builder.compile(checkpointer=checkpointer, store=store)

