"""Wire the memory nodes around an agent node, and a prebuilt example graph.

The usual order is::

    START -> sliding_window -> load_entities -> recall -> select_strategy -> <agent>
          -> record_episode -> summarize -> entity_extract -> END

:func:`add_memory_nodes` adds these nodes and edges to your ``StateGraph`` builder around the
agent node you already added; :func:`build_memory_graph` builds and compiles the whole graph,
with a simple chat agent (:func:`memory_agent_node`) when you pass a chat model.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from .._fence import data_notice, fence, single_line
from ..episodic.strategy import DEFAULT_POLICY
from ._messages import as_messages
from ._runner import MemoryNode, Plan, call
from .compaction import ContextSize, TokenCounter
from .entities import entity_extract_node, load_entities_node
from .episode_nodes import (
    EpisodeMemories,
    Scorer,
    recall_node,
    record_episode_node,
    select_strategy_node,
)
from .state import EpisodicState
from .summarize import DEFAULT_INPUT_TOKENS, DEFAULT_SUMMARY_TOKENS, summarize_node
from .window import sliding_window_node
from .working_memory import CustomerHistory, OutputLog
from .working_memory_nodes import history_nodes, output_log_nodes

if TYPE_CHECKING:
    from ..formation import Scheduler


@dataclass(frozen=True)
class MemoryNodeNames:
    """The names :func:`add_memory_nodes` gave the nodes it added (``None`` when left out)."""

    before: tuple[str, ...]
    """Nodes that run before the agent, in order."""
    after: tuple[str, ...]
    """Nodes that run after the agent, in order; route your agent's exit to ``after[0]``."""
    formation: Scheduler | None = None
    """The background formation with ``defer=``: :meth:`~DeferredFormation.close` it at
    shutdown."""


def add_memory_nodes(
    builder: StateGraph[Any, Any, Any, Any],
    agent: str,
    *,
    model: BaseChatModel | None = None,
    store: BaseStore | None = None,
    memories: EpisodeMemories | None = None,
    window_tokens: int | None = 2000,
    summarize: bool = True,
    summary_trigger: ContextSize | Sequence[ContextSize] = ("messages", 10),
    summary_keep: ContextSize = ("messages", 4),
    summary_tokens: int = DEFAULT_SUMMARY_TOKENS,
    summary_input_tokens: int = DEFAULT_INPUT_TOKENS,
    token_counter: TokenCounter | None = None,
    entities: bool = True,
    entity_limit: int = 50,
    episodes: bool = True,
    policy: str = DEFAULT_POLICY,
    rng: random.Random | None = None,
    top_k: int = 3,
    score: Scorer | None = None,
    history: CustomerHistory | None = None,
    output_log: OutputLog | None = None,
    node_options: Mapping[str, Mapping[str, Any]] | None = None,
    connect_agent: bool = True,
    start: str = START,
    end: str = END,
    defer: bool | Scheduler = False,
) -> MemoryNodeNames:
    """Add the memory nodes and edges around the already-added node ``agent``.

    Args:
        builder: A ``StateGraph`` whose state has the :class:`EpisodicState` keys.
        agent: Name of your agent node (add it first).
        model: Chat model for the summary and entity extraction (``None``: offline fallbacks).
        store: The store; default: the one the graph is compiled with.
        memories: Shared episodic memories; default one per call of this function.
        window_tokens: Token budget of the sliding window (``None`` leaves the window out).
            With ``summarize`` on, what the window drops is folded into the summary first.
        summarize: Leave out the summary (then the window drops messages unsummarised).
        summary_trigger: When the summarise node runs: ``("messages", n)``, ``("tokens", n)``
            or a list of them (any one).
        summary_keep: What it keeps verbatim: ``("messages", n)`` or ``("tokens", n)``.
        summary_tokens, summary_input_tokens: Bounds of the summary and of one summary request.
        token_counter: Counts tokens for the window and the summary.
        entities: Leave out the entity nodes (load before the agent, extract after it).
        entity_limit: How many stored entities a new session loads.
        episodes: Leave out the episodic nodes (recall, strategy, record).
        policy: Strategy policy: ``"thompson"`` (default; Thompson sampling over weighted
            evidence, which explores and re-learns after a change) or ``"greedy"`` (the seed's
            three-level rule). Without ``rng`` each choice is seeded from the task and the
            user's evidence (the same memory and task give the same strategy); pass
            ``rng=random.Random(seed)`` for a seeded stream of draws.
        top_k: How many past episodes the recall node puts in the replay prompt.
        score: Scoring function for the record-episode node. Without one the graph is
            chat-first: episodes are recorded and a strategy chosen only when the input carries
            ``feedback`` / ``outcome`` (or names a ``task``).
        history, output_log: Wire a :class:`CustomerHistory` / :class:`OutputLog` as nodes.
        node_options: Any other factory option, by node name, e.g.
            ``{"recall": {"max_prompt_chars": 4000}, "entity_extract": {"source": "last"}}``.
        connect_agent: Add the edge ``agent -> after[0]``. Pass ``False`` when your agent
            leaves through a conditional edge (e.g. a tool loop) and route it yourself.
        start, end: Where the chain starts and ends (default ``START`` and ``END``).
        defer: Form the memory after the turn (:mod:`langgraph_episodic.formation`): one node,
            ``queue_formation``, replaces ``record_episode`` and ``entity_extract`` after the
            agent; it writes the turn to a queue in the store and the run returns, and a
            background worker extracts the entities and records the episode. ``True`` uses
            a default :class:`~langgraph_episodic.formation.DeferredFormation` (closed at
            exit); pass your own to choose the debounce and to close it. The summary (a
            state update) still runs in the turn.

    >>> builder = StateGraph(EpisodicState)
    >>> builder.add_node("agent", lambda state: {"messages": [("ai", "Hello!")]})
    <langgraph.graph.state.StateGraph object at ...>
    >>> names = add_memory_nodes(builder, "agent")
    >>> names.before, names.after
    (('sliding_window', 'load_entities', 'recall', 'select_strategy'), ('record_episode', 'summarize', 'entity_extract'))
    """
    if agent not in builder.nodes:
        raise ValueError(
            f"Add your agent node first (builder.add_node({agent!r}, ...)); the builder has "
            f"{sorted(builder.nodes) or 'no nodes'}."
        )
    extra = {k: dict(v) for k, v in (node_options or {}).items()}
    known = {"sliding_window", "load_entities", "recall", "select_strategy", "record_episode",
             "summarize", "entity_extract"}
    if set(extra) - known:
        raise ValueError(f"node_options has unknown nodes {sorted(set(extra) - known)}; "
                         f"use {sorted(known)}.")

    def opts(name: str, **defaults: Any) -> dict[str, Any]:
        return {**defaults, **extra.get(name, {})}

    shared = memories or EpisodeMemories(store)
    summary = {"model": model, "max_summary_tokens": summary_tokens,
               "max_input_tokens": summary_input_tokens, "token_counter": token_counter}
    before: list[tuple[str, MemoryNode]] = []
    after: list[tuple[str, MemoryNode]] = []
    if window_tokens is not None:
        before.append(("sliding_window", sliding_window_node(**opts(
            "sliding_window", max_tokens=window_tokens, summarize=summarize, **summary))))
    if entities:
        before.append(("load_entities", load_entities_node(**opts(
            "load_entities", store=store, limit=entity_limit))))
    if history is not None:
        load_history, save_history = history_nodes(history)
        before.append(("load_history", load_history))
        after.append(("save_history", save_history))
    if output_log is not None:
        load_surfaced, record_surfaced = output_log_nodes(output_log)
        before.append(("load_surfaced", load_surfaced))
        after.append(("record_surfaced", record_surfaced))
    from ..formation import queue_formation_node, resolve_defer  # it builds on these nodes

    formation = resolve_defer(defer)
    if episodes:
        before.append(("recall", recall_node(**opts("recall", memories=shared, top_k=top_k))))
        before.append(("select_strategy", select_strategy_node(**opts(
            "select_strategy", memories=shared, policy=policy, rng=rng,
            require_signal=score is None))))
        if formation is None:
            after.insert(0, ("record_episode", record_episode_node(**opts(
                "record_episode", memories=shared, score=score))))
    if summarize:
        after.append(("summarize", summarize_node(**opts(
            "summarize", trigger=summary_trigger, keep=summary_keep, **summary))))
    if entities and formation is None:
        after.append(("entity_extract", entity_extract_node(**opts(
            "entity_extract", model=model, store=store, load_limit=entity_limit))))
    if formation is not None:
        after.append(("queue_formation", queue_formation_node(
            formation, store=store, model=model if entities else None, entities=entities,
            episodes=episodes, memories=shared, score=score,
            entity_options=extra.get("entity_extract", {}))))
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
    return MemoryNodeNames(tuple(n for n, _ in before), tuple(chain_after), formation)


ENTITIES_LABEL = "KNOWN ENTITIES"
"""Label of the fence around the known entities in :func:`memory_system_prompt`."""


SUMMARY_LABEL = "CONVERSATION SUMMARY"
"""Label of the fence around the running summary in :func:`memory_system_prompt`."""


def _block(title: str, entries: list[str], label: str, what: str) -> str:
    return "\n".join([title, *fence(entries, label=label, notice=data_notice(what))])


def memory_system_prompt(state: Mapping[str, Any], *, base: str = "") -> str:
    """The system prompt the memory nodes' outputs make: ``base``, the strategy instruction,
    the running summary, the known entities, the customer's recent turns, what was already
    surfaced and the replay prompt (each only when present; the replay prompt only when
    episodes were recalled).

    Everything that comes from what users said is fenced as quoted data (a notice, then one
    ``| ...`` line each between ``<<<BEGIN LABEL ...>>>`` and ``<<<END LABEL>>>``, copies of the
    markers neutralised; see :mod:`langgraph_episodic._fence`), like the replay prompt's episodes.
    """
    parts = [base.strip()] if base.strip() else []
    if state.get("strategy_instruction"):
        parts.append(f"Strategy ({state.get('strategy')}): {state['strategy_instruction']}")
    if state.get("summary"):
        lines = [single_line(ln) for ln in str(state["summary"]).splitlines() if ln.strip()]
        parts.append(_block("Summary of the earlier conversation:", lines, SUMMARY_LABEL,
                            "a summary of earlier messages"))
    if state.get("entities"):
        entries = [single_line(f"{k}: {v}") for k, v in sorted(state["entities"].items())]
        parts.append(_block("Known entities:", entries, ENTITIES_LABEL, "known entities"))
    if state.get("history"):
        entries = [single_line(f"{t['user']} -> {t['assistant']}") for t in state["history"]]
        parts.append(_block("Recent turns with this customer:", entries, HISTORY_LABEL,
                            "earlier turns"))
    if state.get("surfaced"):
        entries = [single_line(str(i["text"])) for i in state["surfaced"]]
        parts.append(_block("Already told the user (do not repeat unless asked):", entries,
                            SURFACED_LABEL, "earlier answers"))
    if state.get("replay_prompt") and state.get("recalled"):
        parts.append(str(state["replay_prompt"]))
    return "\n\n".join(parts)


HISTORY_LABEL = "RECENT TURNS"
SURFACED_LABEL = "ALREADY SURFACED"


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

