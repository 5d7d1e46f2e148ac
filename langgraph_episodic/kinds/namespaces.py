"""Where the memory kinds keep each user's data in the store (one place for all of them).

Every per-user namespace is ``(label, user_id)``. :func:`user_namespaces` lists them, e.g. for
deleting everything a user has (together with
:func:`~langgraph_episodic.graph.threads.delete_user_threads` for the checkpoints).
"""

from __future__ import annotations

from .._config import namespace_label

EPISODES = "episodes"
"""Episodes recorded by the record-episode node (``EpisodicMemory``)."""
ENTITIES = "entities"
"""Entities persisted by the entity-extract node."""
USER_PROFILES = "user_profiles"
"""Cross-session user facts (:class:`~langgraph_episodic.graph.profiles.UserProfiles`)."""
WORKING_MEMORY = "working_memory"
"""Per-customer history turns (:class:`~langgraph_episodic.graph.working_memory.CustomerHistory`)."""
OUTPUT_LOG = "output_log"
"""What the agent surfaced (:class:`~langgraph_episodic.graph.working_memory.OutputLog`)."""

USER_LABELS: tuple[str, ...] = (EPISODES, ENTITIES, USER_PROFILES, WORKING_MEMORY, OUTPUT_LOG)
"""First labels of every per-user namespace the graph helpers write by default."""


def user_namespaces(user_id: str) -> list[tuple[str, str]]:
    """Every default per-user namespace of ``user_id``.

    >>> user_namespaces("alice")[:2]
    [('episodes', 'alice'), ('entities', 'alice')]
    """
    label = namespace_label(user_id)
    return [(prefix, label) for prefix in USER_LABELS]
