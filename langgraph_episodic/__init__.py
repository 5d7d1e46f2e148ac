"""langgraph-episodic: a memory that learns, for LangGraph agents.

Names are imported lazily, so ``import langgraph_episodic`` does not load torch, the model or
Chroma until they are used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> module that defines it (relative to this package)
_EXPORTS: dict[str, str] = {
    # --- store (issue 2) ---
    "ChromaStore": ".chroma.store",
    "default_embeddings": ".embeddings",
    "simple_hash_embedding": ".embeddings",
    "HashEmbeddings": ".embeddings",
    "SentenceTransformerEmbeddings": ".embeddings",
    "as_embeddings": ".embeddings",
    # --- shared helpers ---
    "MissingConfigError": "._config",
    "is_worth_storing": ".relevance",
    # --- episodic (issue 3) ---
    "EARLY_WEIGHTS": ".episodic",
    "Episode": ".episodic",
    "EpisodeConflictError": ".episodic",
    "EpisodeSchemaError": ".episodic",
    "EpisodicMemory": ".episodic",
    "Feedback": ".episodic",
    "LATE_WEIGHTS": ".episodic",
    "LearningSnapshot": ".episodic",
    "NORMAL_WEIGHTS": ".episodic",
    "OutcomeStatus": ".episodic",
    "PrioritizedResult": ".episodic",
    "PriorityComponents": ".episodic",
    "ReplayContext": ".episodic",
    "ReplayWeights": ".episodic",
    "SCHEMA_VERSION": ".episodic",
    "STRATEGY_POOL": ".episodic",
    "SkillProfile": ".episodic",
    "StrategyChoice": ".episodic",
    "StrategyEvidence": ".episodic",
    "StrategyStats": ".episodic",
    "TaskCategory": ".episodic",
    "TaskDescription": ".episodic",
    "aselect_strategy": ".episodic",
    "build_replay_context": ".episodic",
    "choose_strategy": ".episodic",
    "complexity_strategy": ".episodic",
    "compute_learning_curve": ".episodic",
    "compute_priority": ".episodic",
    "compute_skill_profiles": ".episodic",
    "cosine_similarity": ".episodic",
    "decay_factor": ".episodic",
    "format_replay_prompt": ".episodic",
    "identify_weak_skills": ".episodic",
    "plot_learning_curve": ".episodic",
    "select_strategy": ".episodic",
    "temporal_decay": ".episodic",
    "weights_for_size": ".episodic",
    # --- graph nodes and threads (issue 4) ---
    "EpisodicState": ".graph",
    "merge_entities": ".graph",
    "MemoryNode": ".graph",
    "summarize_node": ".graph",
    "entity_extract_node": ".graph",
    "sliding_window_node": ".graph",
    "recall_node": ".graph",
    "select_strategy_node": ".graph",
    "record_episode_node": ".graph",
    "EpisodeMemories": ".graph",
    "add_memory_nodes": ".graph",
    "build_memory_graph": ".graph",
    "memory_agent_node": ".graph",
    "MemoryNodeNames": ".graph",
    "thread_config": ".graph",
    "open_checkpointer": ".graph",
    "aopen_checkpointer": ".graph",
    "list_sessions": ".graph",
    "alist_sessions": ".graph",
    "resume_config": ".graph",
    "aresume_config": ".graph",
    "delete_user_threads": ".graph",
    "adelete_user_threads": ".graph",
    "SessionInfo": ".graph",
    "UserProfiles": ".graph",
    "UserFact": ".graph",
    "CustomerHistory": ".graph",
    "Turn": ".graph",
    "OutputLog": ".graph",
    "OutputItem": ".graph",
    # --- tools (issue 5) ---
    "create_memory_tools": ".tools.memory_tools",
    "create_vectorstore_memory_tools": ".tools.vectorstore_tools",
    "memory_speichern": ".tools.memory_tools",
    "memory_abrufen": ".tools.memory_tools",
    "MemoryStoreMissingError": ".tools.memory_tools",
    "ToolTexts": ".tools.texts",
    # --- privacy (issue 9) ---
    "forget_user": ".privacy",
    "aforget_user": ".privacy",
    "on_forget": ".privacy",
    "ForgetReport": ".privacy",
    "Redactor": ".privacy",
    "RedactionRule": ".privacy",
    "RedactingStore": ".privacy",
    "redact_text": ".privacy",
    "redact_value": ".privacy",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langgraph_episodic' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .chroma.store import ChromaStore
    from .embeddings import (
        HashEmbeddings,
        SentenceTransformerEmbeddings,
        as_embeddings,
        default_embeddings,
        simple_hash_embedding,
    )
    from .episodic import (
        EARLY_WEIGHTS,
        LATE_WEIGHTS,
        NORMAL_WEIGHTS,
        SCHEMA_VERSION,
        STRATEGY_POOL,
        Episode,
        EpisodeConflictError,
        EpisodeSchemaError,
        EpisodicMemory,
        Feedback,
        LearningSnapshot,
        OutcomeStatus,
        PrioritizedResult,
        PriorityComponents,
        ReplayContext,
        ReplayWeights,
        SkillProfile,
        StrategyChoice,
        StrategyEvidence,
        StrategyStats,
        TaskCategory,
        TaskDescription,
        aselect_strategy,
        build_replay_context,
        choose_strategy,
        complexity_strategy,
        compute_learning_curve,
        compute_priority,
        compute_skill_profiles,
        cosine_similarity,
        decay_factor,
        format_replay_prompt,
        identify_weak_skills,
        plot_learning_curve,
        select_strategy,
        temporal_decay,
        weights_for_size,
    )
    from .graph import (
        CustomerHistory,
        EpisodeMemories,
        EpisodicState,
        MemoryNode,
        MemoryNodeNames,
        OutputItem,
        OutputLog,
        SessionInfo,
        Turn,
        UserFact,
        UserProfiles,
        add_memory_nodes,
        adelete_user_threads,
        alist_sessions,
        aopen_checkpointer,
        aresume_config,
        build_memory_graph,
        delete_user_threads,
        entity_extract_node,
        list_sessions,
        memory_agent_node,
        merge_entities,
        open_checkpointer,
        recall_node,
        record_episode_node,
        resume_config,
        select_strategy_node,
        sliding_window_node,
        summarize_node,
        thread_config,
    )
    from .privacy import (
        ForgetReport,
        RedactingStore,
        RedactionRule,
        Redactor,
        aforget_user,
        forget_user,
        on_forget,
        redact_text,
        redact_value,
    )
    from .tools.memory_tools import (
        MemoryStoreMissingError,
        create_memory_tools,
        memory_abrufen,
        memory_speichern,
    )
    from .tools.texts import ToolTexts
    from .tools.vectorstore_tools import create_vectorstore_memory_tools
