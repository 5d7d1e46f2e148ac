"""Wire the memory nodes around an agent node, and a prebuilt example graph.

The usual order is::

    START -> sliding_window -> load_entities -> recall_memories -> recall -> select_strategy
          -> <agent> -> remember_turn -> record_episode -> summarize -> entity_extract -> END

:func:`add_memory_nodes` adds these nodes and edges to your ``StateGraph`` builder around the
agent node you already added; :func:`build_memory_graph` builds and compiles the whole graph,
with a simple chat agent (:func:`memory_agent_node`) when you pass a chat model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from .._fence import prompt_block, single_line
from .._messages import as_messages
from .._runner import MemoryNode, Plan, call
from ..errors import InvalidTypeError, InvalidValueError
from ..formation import Former, Scheduler, resolve_defer
from ..formation.turn import Named, TurnMemory
from ..kinds.compaction import TokenCounter
from ..kinds.entities import ENTITY_NAMESPACE, EntityWriter
from ..kinds.episodes import EpisodeMemories
from ..kinds.summaries import Summarizer
from .episode_nodes import recall_node, select_strategy_node
from .memory_recall import memory_block, recall_memories_node
from .options import EntityOptions, EpisodeOptions, SummaryOptions, TurnOptions, WindowOptions
from .state import EpisodicState
from .working_memory import CustomerHistory, OutputLog
from .working_memory_nodes import history_nodes, output_log_nodes

Option = TypeVar("Option", WindowOptions, SummaryOptions, EntityOptions, EpisodeOptions,
                 TurnOptions)


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


def _group(value: Option | bool, default: type[Option], keyword: str) -> Option | None:
    """The options of one group of nodes: ``True`` its defaults, ``False`` left out."""
    if value is True:
        return default()
    if value is False or value is None:
        return None
    if not isinstance(value, default):
        raise InvalidTypeError(
            f"{keyword}= takes True, False or a {default.__name__}, got {value!r}; e.g. "
            f"{keyword}={default.__name__}(...) from langgraph_episodic.graph."
        )
    return value


def add_memory_nodes(
    builder: StateGraph[Any, Any, Any, Any],
    agent: str,
    *,
    model: BaseChatModel | None = None,
    store: BaseStore | None = None,
    memories: EpisodeMemories | None = None,
    token_counter: TokenCounter | None = None,
    window: WindowOptions | bool = True,
    summarize: SummaryOptions | bool = True,
    entities: EntityOptions | bool = True,
    episodes: EpisodeOptions | bool = True,
    turns: TurnOptions | bool = True,
    history: CustomerHistory | None = None,
    output_log: OutputLog | None = None,
    connect_agent: bool = True,
    start: str = START,
    end: str = END,
    defer: bool | Scheduler = False,
) -> MemoryNodeNames:
    """Add the memory nodes and edges around the already-added node ``agent``.

    Each group of nodes is one keyword: ``True`` adds it with its defaults, ``False`` leaves it
    out, an options record (:mod:`~langgraph_episodic.graph.options`) adds it with those.

    Args:
        builder: A ``StateGraph`` whose state has the :class:`EpisodicState` keys.
        agent: Name of your agent node (add it first).
        model: Chat model for the summary and entity extraction (``None``: offline fallbacks).
        store: The store; default: the one the graph is compiled with.
        memories: Shared episodic memories; default one per call of this function.
        token_counter: Counts tokens for the window and the summary.
        window: The sliding window (:class:`WindowOptions`). With the summary on, what the
            window drops is folded into the summary first; without it, dropped unsummarised.
        summarize: The running summary (:class:`SummaryOptions`).
        entities: The entity nodes, load before the agent, extract after (:class:`EntityOptions`).
        episodes: The episodic nodes, recall and strategy before the agent and record after
            it (:class:`EpisodeOptions`).
        turns: The remembered turns, as the middleware's (:class:`TurnOptions`): before the
            agent ``recall_memories`` searches the user's saved facts and the turns of
            earlier conversations with the latest user message (over the recall tool's
            floor; turns still in ``messages`` left out) into ``recalled_memories``, which
            :func:`memory_system_prompt` fences into the prompt; after it ``remember_turn``
            stores the user's message and the answer (redacted, small talk left out) under
            ``("memories", user_id, "turns")``.
        history, output_log: Wire a :class:`CustomerHistory` / :class:`OutputLog` as nodes.
        connect_agent: Add the edge ``agent -> after[0]``. Pass ``False`` when your agent
            leaves through a conditional edge (e.g. a tool loop) and route it yourself.
        start, end: Where the chain starts and ends (default ``START`` and ``END``).
        defer: Form the memory after the turn (:mod:`langgraph_episodic.formation`): one node,
            ``queue_formation``, replaces ``remember_turn``, ``record_episode`` and
            ``entity_extract``; it queues the turn in the store and the run returns; a worker
            stores the turn, extracts the entities and records the episode. ``True``: a default
            :class:`~langgraph_episodic.formation.DeferredFormation`, closed at exit; pass your
            own to choose the debounce and close it. The window and the summarise node still
            decide in the turn what leaves ``messages``; the summary model runs in the worker.

    >>> builder = StateGraph(EpisodicState)
    >>> builder.add_node("agent", lambda state: {"messages": [("ai", "Hello!")]})
    <langgraph.graph.state.StateGraph object at ...>
    >>> names = add_memory_nodes(builder, "agent", summarize=SummaryOptions(keep=("messages", 6)))
    >>> names.before, names.after
    (('sliding_window', 'load_entities', 'recall_memories', 'recall', 'select_strategy'), ('remember_turn', 'record_episode', 'summarize', 'entity_extract'))
    """
    if agent not in builder.nodes:
        raise InvalidValueError(
            f"Add your agent node first (builder.add_node({agent!r}, ...)); the builder has "
            f"{sorted(builder.nodes) or 'no nodes'}."
        )
    groups = _Groups(
        _group(window, WindowOptions, "window"), _group(summarize, SummaryOptions, "summarize"),
        _group(entities, EntityOptions, "entities"), _group(episodes, EpisodeOptions, "episodes"),
        _group(turns, TurnOptions, "turns"), model, store, token_counter,
        memories or EpisodeMemories(store),
    )
    turn = _turn_memory(groups, resolve_defer(defer))
    before, after = _memory_nodes(groups, turn, history, output_log)
    _add_chain(builder, agent, before, after, connect_agent=connect_agent, start=start, end=end)
    return MemoryNodeNames(tuple(n for n, _ in before), tuple(n for n, _ in after), turn.formation)


@dataclass(frozen=True)
class _Groups:
    """The groups of nodes one :func:`add_memory_nodes` call adds (``None``: left out) and what
    their nodes share."""

    window: WindowOptions | None
    summarize: SummaryOptions | None
    entities: EntityOptions | None
    episodes: EpisodeOptions | None
    turns: TurnOptions | None
    model: BaseChatModel | None
    store: BaseStore | None
    token_counter: TokenCounter | None
    memories: EpisodeMemories


def _turn_memory(g: _Groups, formation: Scheduler | None) -> TurnMemory:
    """What the turn remembers after the agent and how it is summarised, formed in the run
    (``formation=None``) or by ``formation``'s worker."""
    ent, epi, tur, bounds = g.entities, g.episodes, g.turns, g.summarize or SummaryOptions()
    former = Former(
        EntityWriter(g.model, clock=tur.clock if tur is not None else None)
        if ent is not None else None,
        episodes=epi is not None,
        memories=g.memories,
        score=epi.score if epi is not None else None,
        namespace=ent.namespace if ent is not None else ENTITY_NAMESPACE,
        summarizer=Summarizer(g.model, max_summary_tokens=bounds.max_summary_tokens,
                              max_input_tokens=bounds.max_input_tokens,
                              token_counter=g.token_counter),
    )
    ent = ent or EntityOptions(limit=0)
    return TurnMemory(former, formation, store=g.store,
                      turns=tur if tur is not None and tur.remember else None, source=ent.source,
                      redact=ent.redact, load_limit=ent.limit)


def _memory_nodes(
    g: _Groups,
    turn: TurnMemory,
    history: CustomerHistory | None,
    output_log: OutputLog | None,
) -> tuple[list[Named], list[Named]]:
    """The nodes before and after the agent, each list in the order of the chain."""
    before: list[Named] = []
    after, last = turn.nodes()
    if g.window is not None:
        before.append(("sliding_window", turn.compaction_node(
            "sliding_window", window_tokens=g.window.max_tokens, token_counter=g.token_counter,
            summarize=g.summarize is not None)))
    if g.entities is not None:
        limit = g.entities.limit
        before.append(("load_entities", MemoryNode(
            "load_entities", lambda state, config: turn.load_entities(state, config, limit))))
    if history is not None:
        load_history, save_history = history_nodes(history)
        before.append(("load_history", load_history))
        after.append(("save_history", save_history))
    if output_log is not None:
        load_surfaced, record_surfaced = output_log_nodes(output_log)
        before.append(("load_surfaced", load_surfaced))
        after.append(("record_surfaced", record_surfaced))
    tur, epi = g.turns, g.episodes
    if tur is not None and tur.recall:
        before.append(("recall_memories", recall_memories_node(
            store=g.store, limit=tur.limit, min_score=tur.min_score)))
    if epi is not None:
        before.append(("recall", recall_node(
            memories=g.memories, top_k=epi.top_k, max_prompt_chars=epi.max_prompt_chars,
            min_score=epi.min_score)))
        before.append(("select_strategy", select_strategy_node(
            memories=g.memories, policy=epi.policy, rng=epi.rng, pool=epi.pool,
            similar_k=epi.similar_k, require_signal=epi.score is None)))
    if g.summarize is not None:
        after.append(("summarize", turn.compaction_node(
            "summarize", trigger=g.summarize.trigger, keep=g.summarize.keep,
            token_counter=g.token_counter)))
    return before, after + last


def _add_chain(
    builder: StateGraph[Any, Any, Any, Any],
    agent: str,
    before: list[Named],
    after: list[Named],
    *,
    connect_agent: bool,
    start: str,
    end: str,
) -> None:
    """Add the nodes and the edges ``start -> before... -> agent -> after... -> end``."""
    for name, node in (*before, *after):
        if name in builder.nodes:
            raise InvalidValueError(f"The builder already has a node named {name!r}.")
        builder.add_node(name, node)
    for a, b in (*pairwise([start, *(n for n, _ in before), agent]),
                 *pairwise([*([agent] if connect_agent else []), *(n for n, _ in after), end])):
        builder.add_edge(a, b)


# The labels of the fences :func:`memory_system_prompt` puts around what users said.
ENTITIES_LABEL = "KNOWN ENTITIES"
SUMMARY_LABEL = "CONVERSATION SUMMARY"
HISTORY_LABEL = "RECENT TURNS"
SURFACED_LABEL = "ALREADY SURFACED"


def memory_system_prompt(state: Mapping[str, Any], *, base: str = "") -> str:
    """The system prompt the memory nodes' outputs make: ``base``, the strategy instruction,
    the running summary, the known entities, the customer's recent turns, what was already
    surfaced, the recalled memories (saved facts and turns of earlier conversations) and the
    replay prompt (each only when present; the replay prompt only when episodes were
    recalled).

    Everything that comes from what users said is fenced as quoted data (a notice, then one
    ``| ...`` line each between ``<<<BEGIN LABEL ...>>>`` and ``<<<END LABEL>>>``, copies of the
    markers neutralised; see :mod:`langgraph_episodic._fence`), like the replay prompt's episodes.
    """
    parts = [base.strip()] if base.strip() else []
    if state.get("strategy_instruction"):
        parts.append(f"Strategy ({state.get('strategy')}): {state['strategy_instruction']}")
    fenced = (  # state key, title, fence label, what the data is, its entries
        ("summary", "Summary of the earlier conversation:", SUMMARY_LABEL,
         "a summary of earlier messages",
         lambda s: [single_line(ln) for ln in str(s).splitlines() if ln.strip()]),
        ("entities", "Known entities:", ENTITIES_LABEL, "known entities",
         lambda s: [single_line(f"{k}: {v}") for k, v in sorted(s.items())]),
        ("history", "Recent turns with this customer:", HISTORY_LABEL, "earlier turns",
         lambda s: [single_line(f"{t['user']} -> {t['assistant']}") for t in s]),
        ("surfaced", "Already told the user (do not repeat unless asked):", SURFACED_LABEL,
         "earlier answers", lambda s: [single_line(str(i["text"])) for i in s]),
    )
    for key, title, label, what, entries in fenced:
        if state.get(key):
            parts.append(prompt_block(title, entries(state[key]), label, what))
    if state.get("recalled_memories"):
        parts.append(memory_block(m["value"] for m in state["recalled_memories"]))
    if state.get("replay_prompt") and state.get("recalled"):
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
    node: Any = (memory_agent_node(agent, system_prompt=system_prompt)
                 if isinstance(agent, BaseChatModel) else agent)
    builder.add_node("agent", node)
    add_memory_nodes(builder, "agent", model=model, store=store, **options)
    return builder.compile(checkpointer=checkpointer, store=store)
