"""Graph nodes, conversation memory and per-user threads for LangGraph apps.

Add memory to a ``StateGraph`` with the node factories (each returns a node that runs in
``graph.invoke`` and ``graph.ainvoke``), or wire them all with :func:`add_memory_nodes`. Run
each user's sessions in their own threads (:func:`thread_config`, :func:`open_checkpointer`),
and keep cross-session facts (:class:`UserProfiles`) and working memory
(:class:`CustomerHistory`, :class:`OutputLog`) in the store.

The most used of these are also exported from ``langgraph_episodic`` itself (see docs/api.md).
"""

from __future__ import annotations

from .._runner import MemoryNode
from ..kinds.compaction import Compaction, plan_compaction
from ..kinds.entities import (
    ExtractedEntities,
    ExtractedEntity,
    extract_entities_by_rules,
    is_question,
)
from ..kinds.episodes import (
    EpisodeMemories,
    outcome_from_feedback,
    recalled_episodes,
    task_from_state,
)
from ..kinds.namespaces import USER_LABELS, user_namespaces
from ..kinds.summaries import SUMMARY_MESSAGE_ID, Summarizer, extractive_summary
from .entities import entity_extract_node, load_entities_node
from .episode_nodes import recall_node, record_episode_node, select_strategy_node
from .memory_recall import explain_recall, recall_memories_node
from .options import EntityOptions, EpisodeOptions, SummaryOptions, TurnOptions, WindowOptions
from .profiles import UserFact, UserProfiles
from .pruning import aprune_threads, prune_threads
from .state import EpisodicState, merge_entities
from .summarize import summarize_node
from .threads import (
    SessionInfo,
    adelete_user_threads,
    alist_sessions,
    aopen_checkpointer,
    aresume_config,
    delete_user_threads,
    list_sessions,
    open_checkpointer,
    resume_config,
    thread_config,
    thread_id_for,
)
from .turns import remember_turn_node
from .window import sliding_window_node, window_messages
from .wiring import (
    MemoryNodeNames,
    add_memory_nodes,
    build_memory_graph,
    memory_agent_node,
    memory_system_prompt,
)
from .working_memory import CustomerHistory, OutputItem, OutputLog, Turn
from .working_memory_nodes import history_nodes, output_log_nodes

__all__ = [
    "SUMMARY_MESSAGE_ID",
    "USER_LABELS",
    "Compaction",
    "CustomerHistory",
    "EntityOptions",
    "EpisodeMemories",
    "EpisodeOptions",
    "EpisodicState",
    "ExtractedEntities",
    "ExtractedEntity",
    "MemoryNode",
    "MemoryNodeNames",
    "OutputItem",
    "OutputLog",
    "SessionInfo",
    "Summarizer",
    "SummaryOptions",
    "Turn",
    "TurnOptions",
    "UserFact",
    "UserProfiles",
    "WindowOptions",
    "add_memory_nodes",
    "adelete_user_threads",
    "alist_sessions",
    "aopen_checkpointer",
    "aprune_threads",
    "aresume_config",
    "build_memory_graph",
    "delete_user_threads",
    "entity_extract_node",
    "explain_recall",
    "extract_entities_by_rules",
    "extractive_summary",
    "history_nodes",
    "is_question",
    "list_sessions",
    "load_entities_node",
    "memory_agent_node",
    "memory_system_prompt",
    "merge_entities",
    "open_checkpointer",
    "outcome_from_feedback",
    "output_log_nodes",
    "plan_compaction",
    "prune_threads",
    "recall_memories_node",
    "recall_node",
    "recalled_episodes",
    "record_episode_node",
    "remember_turn_node",
    "resume_config",
    "select_strategy_node",
    "sliding_window_node",
    "summarize_node",
    "task_from_state",
    "thread_config",
    "thread_id_for",
    "user_namespaces",
    "window_messages",
]
