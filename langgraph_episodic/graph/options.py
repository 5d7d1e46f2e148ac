"""The options of :func:`~langgraph_episodic.graph.wiring.add_memory_nodes`, one record per group
of nodes.

Each group is one keyword of ``add_memory_nodes`` (and of ``build_memory_graph``): ``True`` adds
the group with its defaults, ``False`` leaves it out, an options record adds it with those
options. The fields carry the names of the node factories' own parameters, so an option means
the same in ``add_memory_nodes(summarize=SummaryOptions(keep=...))`` and in
``summarize_node(keep=...)``. What several groups share (the chat model, the store, the
episodic memories, the token counter) stays a keyword of ``add_memory_nodes`` itself.

>>> from langgraph_episodic.graph import SummaryOptions
>>> SummaryOptions(trigger=("tokens", 3000)).keep
('messages', 4)
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ..episodic.memory import AUTO
from ..episodic.strategy import DEFAULT_POLICY
from ..facts.consolidate import Clock
from ..kinds.compaction import ContextSize
from ..kinds.entities import ENTITY_NAMESPACE
from ..kinds.episodes import Scorer
from ..kinds.summaries import DEFAULT_INPUT_TOKENS, DEFAULT_SUMMARY_TOKENS
from ..memory_kinds import DEFAULT_MIN_SCORE
from ..privacy.redaction import DEFAULT_REDACTOR, SaveRedactor
from .memory_recall import MEMORY_LIMIT


@dataclass(frozen=True)
class WindowOptions:
    """The sliding window before the agent (:func:`~.window.sliding_window_node`)."""

    max_tokens: int = 2000
    """Token budget of the messages the agent sees. With the summary on, what the window drops
    is folded into the summary first (with the summary's bounds)."""


@dataclass(frozen=True)
class SummaryOptions:
    """The running summary after the agent (:func:`~.summarize.summarize_node`)."""

    trigger: ContextSize | Sequence[ContextSize] = ("messages", 10)
    """When it runs: ``("messages", n)``, ``("tokens", n)`` or a list of them (any one)."""
    keep: ContextSize = ("messages", 4)
    """What stays verbatim: ``("messages", n)`` (at least n) or ``("tokens", n)`` (at most n)."""
    max_summary_tokens: int = DEFAULT_SUMMARY_TOKENS
    """Bound of the summary."""
    max_input_tokens: int = DEFAULT_INPUT_TOKENS
    """Bound of one summary request (at least twice ``max_summary_tokens``)."""


@dataclass(frozen=True)
class EntityOptions:
    """The entity nodes: load before the agent, extract after it (:mod:`.entities`)."""

    limit: int = 50
    """How many stored entities a new session loads (and the extractor merges with)."""
    source: str = "human"
    """Which messages the extractor reads: ``"human"`` or ``"last"``."""
    namespace: tuple[str, ...] = ENTITY_NAMESPACE
    """Where the entities are stored (``{user_id}`` is filled from the config)."""
    redact: SaveRedactor | None = DEFAULT_REDACTOR
    """Applied to every entity before it is saved (``None``: saved as extracted)."""


@dataclass(frozen=True)
class EpisodeOptions:
    """The episodic nodes: recall and strategy before the agent, record after it
    (:mod:`.episode_nodes`)."""

    top_k: int = 3
    """How many past episodes the recall node puts in the replay prompt."""
    max_prompt_chars: int = 2000
    """Length bound of the replay prompt."""
    min_score: float | Literal["auto"] | None = AUTO
    """Recalled episodes scoring below this are left out (``None``: none), so a task unlike every
    past one recalls nothing (:meth:`~langgraph_episodic.episodic.EpisodicMemory.recall`)."""
    policy: str = DEFAULT_POLICY
    """Strategy policy: ``"thompson"`` (Thompson sampling over weighted evidence, which explores
    and re-learns after a change) or ``"greedy"``. Without ``rng`` each choice is seeded from
    the task and the user's evidence (the same memory and task give the same strategy)."""
    rng: random.Random | None = None
    """A seeded stream of draws for the policy, e.g. ``random.Random(seed)``."""
    pool: Mapping[str, str] | None = None
    """The strategies to choose from, name -> instruction (default: the built-in pool)."""
    similar_k: int = 10
    """How many similar episodes the strategy choice weighs."""
    score: Scorer | None = None
    """Scoring function of the record-episode node. Without one the graph is chat-first:
    episodes are recorded and a strategy chosen only when the input carries ``feedback`` /
    ``outcome`` (or names a ``task``)."""


@dataclass(frozen=True)
class TurnOptions:
    """The remembered turns: search the user's memory with the question before the agent
    (:func:`~.memory_recall.recall_memories_node`), store the turn after it
    (:func:`~.turns.remember_turn_node`), as the middleware does."""

    replies: bool = True
    """Store the agent's answer beside the user's message (and, on a thread's first turn, the
    agent's messages that open it)."""
    redact: SaveRedactor | None = DEFAULT_REDACTOR
    """Applied to every stored turn (``None``: stored as said)."""
    clock: Clock | None = None
    """The time a turn was said: its ``said_at``, the day in its context and the time of the
    facts the entity nodes take from it (default: now, UTC)."""
    remember: bool = True
    """Store the turn after the agent (``False``: recall only, as the middleware's
    ``remember_turns=False``)."""
    recall: bool = True
    """Search the saved facts and remembered turns before the agent (``False``: store only)."""
    limit: int = MEMORY_LIMIT
    """How many memories (saved facts and remembered turns together) the search loads."""
    min_score: float | None = DEFAULT_MIN_SCORE
    """The search's relevance floor, the recall tool's (``None``: every hit): a question the
    memory knows nothing about loads nothing."""


__all__ = ["EntityOptions", "EpisodeOptions", "SummaryOptions", "TurnOptions", "WindowOptions"]
