"""langgraph-episodic: a memory that learns, for LangGraph agents.

Names are imported lazily, so ``import langgraph_episodic`` does not load torch, the model or
Chroma until they are used; importing the package itself imports nothing (the command line's
``--help`` starts as fast as Python).
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing.TYPE_CHECKING`` without importing typing (see the end)

__version__ = "0.1.0"

# name -> module that defines it (relative to this package)
_EXPORTS: dict[str, str] = {
    # --- store (issue 2) ---
    "ChromaStore": ".chroma.store",
    "FolderInUseError": ".chroma.folder_lock",  # issue 13
    "IndexReadError": ".chroma.gateway",
    "StoreClosedError": ".chroma.lifecycle",
    "StoreForkedError": ".chroma.lifecycle",
    "VerifyReport": ".chroma.verify",  # issue 13
    "default_embeddings": ".embeddings",
    "simple_hash_embedding": ".embeddings",
    "HashEmbeddings": ".embeddings",
    "SentenceTransformerEmbeddings": ".embeddings",
    "as_embeddings": ".embeddings",
    "MultilingualEmbeddings": ".multilingual",  # issue 16: German
    "multilingual_embeddings": ".multilingual",
    "multilingual_index": ".multilingual",
    # --- shared helpers ---
    "MissingConfigError": "._config",
    "UserIdError": "._config",
    "is_worth_storing": ".relevance",
    # --- episodic (issue 3) ---
    "EARLY_WEIGHTS": ".episodic",
    "EmbeddingStore": ".episodic",
    "SearchResult": ".episodic",
    "Episode": ".episodic",
    "EpisodeConflictError": ".episodic",
    "EpisodeSchemaError": ".episodic",
    "EpisodicMemory": ".episodic",
    "ChangeDetection": ".episodic",
    "EvidenceDecay": ".episodic",
    "EvidenceWeight": ".episodic",
    "OutcomeRecord": ".episodic",
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
    "prune_threads": ".graph",
    "aprune_threads": ".graph",
    "SessionInfo": ".graph",
    "UserProfiles": ".graph",
    "UserFact": ".graph",
    "CustomerHistory": ".graph",
    "Turn": ".graph",
    "OutputLog": ".graph",
    "OutputItem": ".graph",
    # --- conversation memory names (issue 15) ---
    "SUMMARY_MESSAGE_ID": ".graph",
    "USER_LABELS": ".graph",
    "ExtractedEntities": ".graph",
    "ExtractedEntity": ".graph",
    "extract_entities_by_rules": ".graph",
    "extractive_summary": ".graph",
    "is_question": ".graph",
    "memory_system_prompt": ".graph",
    "outcome_from_feedback": ".graph",
    "recalled_episodes": ".graph",
    "task_from_state": ".graph",
    "thread_id_for": ".graph",
    "user_namespaces": ".graph",
    "window_messages": ".graph",
    "load_entities_node": ".graph",
    "history_nodes": ".graph",
    "output_log_nodes": ".graph",
    "plan_compaction": ".graph",
    "Compaction": ".graph",
    "Summarizer": ".graph",
    # --- create_agent middleware (issue 15) ---
    "EpisodicMemoryMiddleware": ".middleware",
    "EpisodicMemoryState": ".middleware",
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

__all__ = ("__version__", *sorted(_EXPORTS))
"""Derived from ``_EXPORTS``, the one list of public names; ``tests/test_public_api.py`` checks
that the ``TYPE_CHECKING`` imports below name exactly these."""


def __getattr__(name: str) -> object:
    from importlib import import_module

    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langgraph_episodic' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    # ``X as X`` marks each name as re-exported for strict type checkers (``__all__`` is not a
    # literal they can read). The names are those of ``_EXPORTS``; a test keeps them equal.
    from ._config import MissingConfigError as MissingConfigError
    from ._config import UserIdError as UserIdError
    from .chroma.folder_lock import FolderInUseError as FolderInUseError
    from .chroma.gateway import IndexReadError as IndexReadError
    from .chroma.lifecycle import StoreClosedError as StoreClosedError
    from .chroma.lifecycle import StoreForkedError as StoreForkedError
    from .chroma.store import ChromaStore as ChromaStore
    from .chroma.verify import VerifyReport as VerifyReport
    from .embeddings import HashEmbeddings as HashEmbeddings
    from .embeddings import SentenceTransformerEmbeddings as SentenceTransformerEmbeddings
    from .embeddings import as_embeddings as as_embeddings
    from .embeddings import default_embeddings as default_embeddings
    from .embeddings import simple_hash_embedding as simple_hash_embedding
    from .episodic import EARLY_WEIGHTS as EARLY_WEIGHTS
    from .episodic import LATE_WEIGHTS as LATE_WEIGHTS
    from .episodic import NORMAL_WEIGHTS as NORMAL_WEIGHTS
    from .episodic import SCHEMA_VERSION as SCHEMA_VERSION
    from .episodic import STRATEGY_POOL as STRATEGY_POOL
    from .episodic import ChangeDetection as ChangeDetection
    from .episodic import EmbeddingStore as EmbeddingStore
    from .episodic import Episode as Episode
    from .episodic import EpisodeConflictError as EpisodeConflictError
    from .episodic import EpisodeSchemaError as EpisodeSchemaError
    from .episodic import EpisodicMemory as EpisodicMemory
    from .episodic import EvidenceDecay as EvidenceDecay
    from .episodic import EvidenceWeight as EvidenceWeight
    from .episodic import Feedback as Feedback
    from .episodic import LearningSnapshot as LearningSnapshot
    from .episodic import OutcomeRecord as OutcomeRecord
    from .episodic import OutcomeStatus as OutcomeStatus
    from .episodic import PrioritizedResult as PrioritizedResult
    from .episodic import PriorityComponents as PriorityComponents
    from .episodic import ReplayContext as ReplayContext
    from .episodic import ReplayWeights as ReplayWeights
    from .episodic import SearchResult as SearchResult
    from .episodic import SkillProfile as SkillProfile
    from .episodic import StrategyChoice as StrategyChoice
    from .episodic import StrategyEvidence as StrategyEvidence
    from .episodic import StrategyStats as StrategyStats
    from .episodic import TaskCategory as TaskCategory
    from .episodic import TaskDescription as TaskDescription
    from .episodic import aselect_strategy as aselect_strategy
    from .episodic import build_replay_context as build_replay_context
    from .episodic import choose_strategy as choose_strategy
    from .episodic import complexity_strategy as complexity_strategy
    from .episodic import compute_learning_curve as compute_learning_curve
    from .episodic import compute_priority as compute_priority
    from .episodic import compute_skill_profiles as compute_skill_profiles
    from .episodic import cosine_similarity as cosine_similarity
    from .episodic import decay_factor as decay_factor
    from .episodic import format_replay_prompt as format_replay_prompt
    from .episodic import identify_weak_skills as identify_weak_skills
    from .episodic import plot_learning_curve as plot_learning_curve
    from .episodic import select_strategy as select_strategy
    from .episodic import temporal_decay as temporal_decay
    from .episodic import weights_for_size as weights_for_size
    from .graph import SUMMARY_MESSAGE_ID as SUMMARY_MESSAGE_ID
    from .graph import USER_LABELS as USER_LABELS
    from .graph import Compaction as Compaction
    from .graph import CustomerHistory as CustomerHistory
    from .graph import EpisodeMemories as EpisodeMemories
    from .graph import EpisodicState as EpisodicState
    from .graph import ExtractedEntities as ExtractedEntities
    from .graph import ExtractedEntity as ExtractedEntity
    from .graph import MemoryNode as MemoryNode
    from .graph import MemoryNodeNames as MemoryNodeNames
    from .graph import OutputItem as OutputItem
    from .graph import OutputLog as OutputLog
    from .graph import SessionInfo as SessionInfo
    from .graph import Summarizer as Summarizer
    from .graph import Turn as Turn
    from .graph import UserFact as UserFact
    from .graph import UserProfiles as UserProfiles
    from .graph import add_memory_nodes as add_memory_nodes
    from .graph import adelete_user_threads as adelete_user_threads
    from .graph import alist_sessions as alist_sessions
    from .graph import aopen_checkpointer as aopen_checkpointer
    from .graph import aprune_threads as aprune_threads
    from .graph import aresume_config as aresume_config
    from .graph import build_memory_graph as build_memory_graph
    from .graph import delete_user_threads as delete_user_threads
    from .graph import entity_extract_node as entity_extract_node
    from .graph import extract_entities_by_rules as extract_entities_by_rules
    from .graph import extractive_summary as extractive_summary
    from .graph import history_nodes as history_nodes
    from .graph import is_question as is_question
    from .graph import list_sessions as list_sessions
    from .graph import load_entities_node as load_entities_node
    from .graph import memory_agent_node as memory_agent_node
    from .graph import memory_system_prompt as memory_system_prompt
    from .graph import merge_entities as merge_entities
    from .graph import open_checkpointer as open_checkpointer
    from .graph import outcome_from_feedback as outcome_from_feedback
    from .graph import output_log_nodes as output_log_nodes
    from .graph import plan_compaction as plan_compaction
    from .graph import prune_threads as prune_threads
    from .graph import recall_node as recall_node
    from .graph import recalled_episodes as recalled_episodes
    from .graph import record_episode_node as record_episode_node
    from .graph import resume_config as resume_config
    from .graph import select_strategy_node as select_strategy_node
    from .graph import sliding_window_node as sliding_window_node
    from .graph import summarize_node as summarize_node
    from .graph import task_from_state as task_from_state
    from .graph import thread_config as thread_config
    from .graph import thread_id_for as thread_id_for
    from .graph import user_namespaces as user_namespaces
    from .graph import window_messages as window_messages
    from .middleware import EpisodicMemoryMiddleware as EpisodicMemoryMiddleware
    from .middleware import EpisodicMemoryState as EpisodicMemoryState
    from .multilingual import MultilingualEmbeddings as MultilingualEmbeddings
    from .multilingual import multilingual_embeddings as multilingual_embeddings
    from .multilingual import multilingual_index as multilingual_index
    from .privacy import ForgetReport as ForgetReport
    from .privacy import RedactingStore as RedactingStore
    from .privacy import RedactionRule as RedactionRule
    from .privacy import Redactor as Redactor
    from .privacy import aforget_user as aforget_user
    from .privacy import forget_user as forget_user
    from .privacy import on_forget as on_forget
    from .privacy import redact_text as redact_text
    from .privacy import redact_value as redact_value
    from .relevance import is_worth_storing as is_worth_storing
    from .tools.memory_tools import MemoryStoreMissingError as MemoryStoreMissingError
    from .tools.memory_tools import create_memory_tools as create_memory_tools
    from .tools.memory_tools import memory_abrufen as memory_abrufen
    from .tools.memory_tools import memory_speichern as memory_speichern
    from .tools.texts import ToolTexts as ToolTexts
    from .tools.vectorstore_tools import (
        create_vectorstore_memory_tools as create_vectorstore_memory_tools,
    )
