"""Where the memory kinds keep each user's data in the store.

The labels and templates are defined once, in the core (:mod:`langgraph_episodic._config`,
since :mod:`langgraph_episodic.privacy` below this unit needs them too), and re-exported here.
The namespaces the graph helpers write by default are ``(label, user_id)`` for each label of
:data:`USER_LABELS`; :func:`user_namespaces` lists them, e.g. for deleting everything a user
has (together with :func:`~langgraph_episodic.graph.threads.delete_user_threads` for the
checkpoints).
"""

from __future__ import annotations

from .._config import (
    ENTITIES,
    EPISODES,
    OUTPUT_LOG,
    USER_LABELS,
    USER_PROFILES,
    WORKING_MEMORY,
    namespace_label,
)

__all__ = ["ENTITIES", "EPISODES", "OUTPUT_LOG", "USER_LABELS", "USER_PROFILES", "WORKING_MEMORY",
           "user_namespaces"]


def user_namespaces(user_id: str) -> list[tuple[str, str]]:
    """Every default per-user namespace of ``user_id``.

    >>> user_namespaces("alice")[:2]
    [('episodes', 'alice'), ('entities', 'alice')]
    """
    label = namespace_label(user_id)
    return [(prefix, label) for prefix in USER_LABELS]
