"""The namespace table of :mod:`langgraph_episodic.kinds.namespaces`, where the graph's helpers
and the tools read it."""

from __future__ import annotations

from ..kinds.namespaces import (
    ENTITIES,
    EPISODES,
    OUTPUT_LOG,
    USER_LABELS,
    USER_PROFILES,
    WORKING_MEMORY,
    user_namespaces,
)

__all__ = ["ENTITIES", "EPISODES", "OUTPUT_LOG", "USER_LABELS", "USER_PROFILES", "WORKING_MEMORY",
           "user_namespaces"]
