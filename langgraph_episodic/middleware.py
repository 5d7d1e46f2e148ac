"""Episodic memory for ``langchain.agents.create_agent``, as one middleware.

>>> from langchain.agents import create_agent
>>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
>>> from langgraph.store.memory import InMemoryStore
>>> store = InMemoryStore()
>>> agent = create_agent(GenericFakeChatModel(messages=iter(["Hi Alice!"])), tools=[],
...                      middleware=[EpisodicMemoryMiddleware(store=store)], store=store)
>>> out = agent.invoke({"messages": [("user", "I am Alice and I work at ACME.")]},
...                    {"configurable": {"user_id": "alice", "thread_id": "alice:s1"}})
>>> out["entities"]["ACME"]
'I am Alice and I work at ACME.'

What it does, hook by hook:

- ``before_agent``: loads the user's stored entities (when the thread has none), their profile
  facts (:class:`~langgraph_episodic.graph.profiles.UserProfiles`), what the user's memory
  holds that matches the question (the facts the memory tools saved and the turns of earlier
  conversations, over a relevance floor; turns still in the thread's messages are left out),
  and recalled episodes, into the private state key ``memory_context``.
- ``before_model``: trims and summarises: once ``trigger`` is passed, or whenever the messages
  exceed ``window_tokens``, whole turns (then whole steps of the latest turn) leave the list and
  are folded into the running ``summary`` first (bounded in tokens, summary of the summary when
  it grows, requests capped; see :mod:`langgraph_episodic.kinds.summaries`). What stays starts
  with a human message and keeps every tool call next to its results.
- ``wrap_model_call``: adds the summary, the entities and ``memory_context`` to the system
  message of the request (fenced as data). The summary never enters ``messages``, so it never
  streams.
- ``after_agent``: remembers the turn (the user's message and the answer, redacted, under
  ``("memories", user_id, "turns")`` with the thread and the day as context, the day indexed; see
  :mod:`langgraph_episodic.kinds.turns`), extracts entities from the user's last message and
  merges them (locked per entity), and records an episode when the input carries ``feedback``
  / ``outcome`` or a ``score`` function is given (chat-first: a plain chat records nothing).

The user id comes from the run's context (``context={"user_id": ...}`` or an object with a
``user_id`` attribute) or ``config["configurable"]["user_id"]``; never from the model. When both
name a user they must agree, and the id must be a string: otherwise the run stops with
:class:`~langgraph_episodic.UserIdError` before anything is read or written. The
memory's own model calls are retried and tagged so that ``stream_mode="messages"`` skips them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any

from langchain.agents.middleware.internal_call_transformer import InternalCallTransformer
from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from typing_extensions import NotRequired

from ._config import USER_ID, given_user_id, user_id_from
from ._effects import Plan, arun, run
from ._messages import as_messages, last_human_text
from ._runner import resolve_store
from .facts import consolidate
from .facts.consolidate import Clock
from .formation import Former, Scheduler, resolve_defer
from .formation.turn import TurnMemory
from .graph.episode_nodes import recall_node
from .graph.memory_recall import (
    MEMORIES_NAMESPACE,
    MEMORY_LIMIT,
    memories_for_turn,
    memory_block,
    recall_memories,
)
from .graph.options import TurnOptions
from .graph.profiles import UserProfiles
from .graph.state import merge_entities
from .graph.wiring import memory_system_prompt
from .kinds.compaction import ContextSize, TokenCounter
from .kinds.entities import EntityWriter
from .kinds.episodes import EpisodeMemories, Scorer
from .kinds.summaries import DEFAULT_INPUT_TOKENS, DEFAULT_SUMMARY_TOKENS, Summarizer
from .kinds.turns import TURN_NAMESPACE
from .memory_kinds import DEFAULT_MIN_SCORE
from .privacy.redaction import DEFAULT_REDACTOR, SaveRedactor


class EpisodicMemoryState(AgentState[Any]):
    """The state keys :class:`EpisodicMemoryMiddleware` adds to the agent's state."""

    summary: NotRequired[str]
    summary_info: NotRequired[dict[str, Any]]
    entities: NotRequired[Annotated[dict[str, str], merge_entities]]
    memory_context: NotRequired[Annotated[str, PrivateStateAttr]]
    feedback: NotRequired[dict[str, Any] | None]
    outcome: NotRequired[str | None]
    recalled: NotRequired[Annotated[list[dict[str, Any]], PrivateStateAttr]]
    replay_prompt: NotRequired[Annotated[str, PrivateStateAttr]]
    episode_id: NotRequired[str]


def _user_config(runtime: Runtime[Any] | None) -> RunnableConfig:
    """The run's config with ``user_id`` set to the run's user (:func:`given_user_id` of the
    config and the hook's context), so that every step below reads that one user; raises
    :class:`~langgraph_episodic.UserIdError` before anything is read or written."""
    config: RunnableConfig = get_config()
    user_id = given_user_id(config, getattr(runtime, "context", None))
    if user_id is None:
        return config  # the steps that need a user raise MissingConfigError
    return {**config, "configurable": {**(config.get("configurable") or {}), USER_ID: user_id}}


class EpisodicMemoryMiddleware(AgentMiddleware[EpisodicMemoryState, Any, Any]):
    """Episodic memory as ``create_agent`` middleware (see the module docstring).

    Args:
        store: The store; default: the one the agent is compiled with (``create_agent(store=)``).
        model: Chat model for the summary, entity extraction and rewrites (``None``: the
            offline extractive summary and rule-based extractor).
        trigger: When to summarise: ``("tokens", n)``, ``("messages", n)`` or a list (any).
        keep: What stays verbatim after summarising: ``("messages", n)`` or ``("tokens", n)``.
        window_tokens: The messages never exceed this (system prompt not counted); what does
            not fit is summarised too. ``None``: only ``trigger``.
        max_summary_tokens, max_input_tokens: Bounds of the summary and of a summary request.
        token_counter: Counts tokens (default ``count_tokens_approximately``).
        entities, profile, memories, episodes: Turn each part off (``memories=False``: no
            search of saved memories and remembered turns before the model).
        remember_turns: Store each turn's user message (redacted, small talk left out) under
            ``("memories", user_id, "turns")``, with the thread and the day as indexed
            context, so that later threads and the recall tool find it.
        remember_replies: Store the agent's answer beside it (only with ``remember_turns``).
        entity_limit, memory_limit, top_k: How many entities, memories (saved facts and
            remembered turns together) and episodes load.
        min_score: The relevance floor of the memory search before the model (as the recall
            tool's, :data:`~langgraph_episodic.memory_kinds.DEFAULT_MIN_SCORE`; ``None``: keep
            every hit): a question the memory knows nothing about loads nothing.
        clock: The time a turn was said (default: now, UTC).
        score: Scores a finished run for the episode (see ``record_episode_node``).
        redact: Applied to the user's text before entities are extracted and saved, and to
            every remembered turn (default: e-mail addresses, phone numbers, IBANs and card
            numbers; ``None`` turns it off; see :func:`~langgraph_episodic.privacy.redact_saved`).
        defer: Form the memory after the turn (see :mod:`langgraph_episodic.formation`):
            ``after_agent`` only queues the turn in the store and the run returns; storing
            the turn's items (built, redacted and dated in the turn), entity extraction and
            episode recording run in a background worker. ``True`` uses a
            default :class:`~langgraph_episodic.formation.DeferredFormation`; pass your own
            to set the debounce and to :meth:`close` it. With ``defer`` the entities load
            from the store on every turn, so formed facts reach a running thread too, and
            the summary model runs in the worker too: ``before_model`` still removes the
            same messages, their first sentences stand in the summary until the worker's
            summary replaces them (:mod:`langgraph_episodic.formation.summary`).
    """

    state_schema = EpisodicMemoryState
    transformers = (InternalCallTransformer,)

    def __init__(
        self,
        store: BaseStore | None = None,
        model: BaseChatModel | None = None,
        *,
        trigger: ContextSize | Sequence[ContextSize] = ("tokens", 3000),
        keep: ContextSize = ("messages", 6),
        window_tokens: int | None = 6000,
        max_summary_tokens: int = DEFAULT_SUMMARY_TOKENS,
        max_input_tokens: int = DEFAULT_INPUT_TOKENS,
        token_counter: TokenCounter | None = None,
        entities: bool = True,
        profile: bool = True,
        memories: bool = True,
        episodes: bool = True,
        remember_turns: bool = True,
        remember_replies: bool = True,
        entity_limit: int = 50,
        memory_limit: int = MEMORY_LIMIT,
        top_k: int = 3,
        min_score: float | None = DEFAULT_MIN_SCORE,
        clock: Clock | None = None,
        score: Scorer | None = None,
        redact: SaveRedactor | None = DEFAULT_REDACTOR,
        defer: bool | Scheduler = False,
    ) -> None:
        super().__init__()
        self.store = store
        summarizer = Summarizer(model, max_summary_tokens=max_summary_tokens,
                                max_input_tokens=max_input_tokens, token_counter=token_counter)
        self.use_entities, self.use_profile = entities, profile
        self.use_memories, self.use_episodes = memories, episodes
        self.entity_limit, self.memory_limit = entity_limit, memory_limit
        self.remember_turns, self.remember_replies = remember_turns, remember_replies
        self.min_score = min_score
        shared = EpisodeMemories(store)
        self._recall = recall_node(memories=shared, top_k=top_k)
        self.formation = resolve_defer(defer)
        former = Former(EntityWriter(model, clock=clock) if entities else None,
                        episodes=episodes, memories=shared, score=score,
                        summarizer=summarizer)
        said = TurnOptions(replies=remember_replies, redact=redact,
                           clock=clock if clock is not None else consolidate.utc_now)
        self._turn = TurnMemory(former, self.formation, store=store, redact=redact,
                                turns=said if remember_turns else None)
        self._compact = self._turn.compaction(trigger=trigger, keep=keep,
                                              window_tokens=window_tokens,
                                              token_counter=token_counter)

    def close(self, timeout: float | None = None) -> bool:
        """Form what is still queued, for up to ``timeout`` seconds, and stop the worker
        (see :meth:`DeferredFormation.close`); True when nothing is left. Without ``defer``
        there is nothing to do."""
        return True if self.formation is None else self.formation.close(timeout)

    # --- plans (one body for sync and async) ---

    def _before_agent(self, state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        store = resolve_store(self.store)
        update: dict[str, Any] = {}
        if self.use_entities:
            update.update((yield from self._turn.load_entities(state, config, self.entity_limit)))
        blocks: list[str] = []
        user_id = user_id_from(config)
        question = last_human_text(as_messages(state.get("messages")))
        if self.use_profile:
            facts = yield from UserProfiles(store)._list(user_id)
            if facts:
                blocks.append(UserProfiles.as_prompt(facts))
        if self.use_memories:
            items = yield from memories_for_turn(store, state, config, limit=self.memory_limit,
                                                 min_score=self.min_score)
            if items:
                blocks.append(memory_block(i.value for i in items))
        if self.use_episodes and question:
            recalled = yield from self._recall._plan(state, config)
            if recalled.get("recalled"):
                blocks.append(str(recalled["replay_prompt"]))
        update["memory_context"] = "\n\n".join(blocks)
        return update

    def _before_model(
        self, state: dict[str, Any], runtime: Runtime[Any] | None
    ) -> Plan[dict[str, Any] | None]:
        return (yield from self._compact(state, lambda: _user_config(runtime))) or None

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        state = request.state
        base = request.system_message.text if request.system_message is not None else ""
        prompt = memory_system_prompt(
            {"summary": state.get("summary"), "entities": state.get("entities")}, base=base
        )
        context = str(state.get("memory_context") or "")
        prompt = "\n\n".join(p for p in (prompt, context) if p)
        if not prompt or prompt == base:
            return request
        return request.override(system_message=SystemMessage(prompt))

    # --- hooks ---

    def before_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Load the user's entities, profile, the memories and turns matching the question,
        and episodes."""
        return run(self._before_agent(dict(state), _user_config(runtime))) or None

    async def abefore_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async version of :meth:`before_agent`."""
        return await arun(self._before_agent(dict(state), _user_config(runtime))) or None

    def before_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Trim and summarise (nothing leaves unsummarised)."""
        return run(self._before_model(dict(state), runtime))

    async def abefore_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async version of :meth:`before_model`."""
        return await arun(self._before_model(dict(state), runtime))

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        """Add the summary and the loaded memory to the request's system message."""
        return handler(self._request(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Async version of :meth:`wrap_model_call`."""
        return await handler(self._request(request))

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Remember the turn, extract entities; record the episode when there is feedback or
        a score."""
        return run(self._turn.after(dict(state), _user_config(runtime))) or None

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Async version of :meth:`after_agent`."""
        return await arun(self._turn.after(dict(state), _user_config(runtime))) or None


__all__ = [
    "MEMORIES_NAMESPACE",
    "TURN_NAMESPACE",
    "EpisodicMemoryMiddleware",
    "EpisodicMemoryState",
    "recall_memories",
]
