"""Episodic memory with prioritised experience replay.

Record what the agent did (:class:`Episode`) in any LangGraph store through
:class:`EpisodicMemory`, recall the past episodes that matter most for a new task (ranked by
similarity, recency, reward and outcome), render them for a prompt
(:func:`format_replay_prompt`), pick a strategy from experience (:func:`select_strategy`) and
watch the agent learn (:func:`compute_learning_curve`).

The most used of these are also exported from ``langgraph_episodic`` itself (see docs/api.md).
"""

from __future__ import annotations

from .change import ChangeDetection
from .embedding_store import EmbeddingStore
from .learning import LearningSnapshot, compute_learning_curve
from .memory import EpisodeConflictError, EpisodicMemory
from .plot import plot_learning_curve
from .priority import (
    EARLY_WEIGHTS,
    LATE_WEIGHTS,
    NORMAL_WEIGHTS,
    PrioritizedResult,
    PriorityComponents,
    ReplayWeights,
    SearchResult,
    compute_priority,
    weights_for_size,
)
from .records import (
    SCHEMA_VERSION,
    Episode,
    EpisodeSchemaError,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)
from .replay import ReplayContext, build_replay_context, format_replay_prompt
from .similarity import cosine_similarity, decay_factor, temporal_decay
from .skills import (
    OutcomeRecord,
    SkillProfile,
    StrategyStats,
    compute_skill_profiles,
    identify_weak_skills,
)
from .strategy import (
    STRATEGY_POOL,
    EvidenceDecay,
    EvidenceWeight,
    StrategyChoice,
    StrategyEvidence,
    aselect_strategy,
    choose_strategy,
    complexity_strategy,
    select_strategy,
)

__all__ = [
    "EARLY_WEIGHTS",
    "LATE_WEIGHTS",
    "NORMAL_WEIGHTS",
    "SCHEMA_VERSION",
    "STRATEGY_POOL",
    "ChangeDetection",
    "EmbeddingStore",
    "Episode",
    "EpisodeConflictError",
    "EpisodeSchemaError",
    "EpisodicMemory",
    "EvidenceDecay",
    "EvidenceWeight",
    "Feedback",
    "LearningSnapshot",
    "OutcomeRecord",
    "OutcomeStatus",
    "PrioritizedResult",
    "PriorityComponents",
    "ReplayContext",
    "ReplayWeights",
    "SearchResult",
    "SkillProfile",
    "StrategyChoice",
    "StrategyEvidence",
    "StrategyStats",
    "TaskCategory",
    "TaskDescription",
    "aselect_strategy",
    "build_replay_context",
    "choose_strategy",
    "complexity_strategy",
    "compute_learning_curve",
    "compute_priority",
    "compute_skill_profiles",
    "cosine_similarity",
    "decay_factor",
    "format_replay_prompt",
    "identify_weak_skills",
    "plot_learning_curve",
    "select_strategy",
    "temporal_decay",
    "weights_for_size",
]
