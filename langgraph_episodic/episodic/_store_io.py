"""Store helpers for :class:`~.memory.EpisodicMemory`: filters, namespace checks, index probe.

The memory's operations are plans run by :mod:`langgraph_episodic._effects` (one body for
sync and async); the pure helpers they share live here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.store.base import BaseStore

from .records import OutcomeStatus, TaskCategory

TEXT_FIELD = "text"
"""The value field that is embedded (the task description)."""


def episode_filter(
    category: TaskCategory | str | None, outcome: OutcomeStatus | str | None
) -> dict[str, Any] | None:
    """Build the store filter for a category and/or an outcome (None when neither)."""
    out: dict[str, Any] = {}
    if category is not None:
        out["category"] = _enum_value(TaskCategory, category, "category")
    if outcome is not None:
        out["outcome"] = _enum_value(OutcomeStatus, outcome, "outcome")
    return out or None


def _enum_value(cls: type[TaskCategory] | type[OutcomeStatus], value: Any, name: str) -> str:
    try:
        return str(cls(value).value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in cls)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}.") from None


def store_has_index(store: BaseStore) -> bool:
    """Whether ``store`` searches by meaning (a store without ``index_config`` is trusted to)."""
    if not hasattr(store, "index_config"):
        return True
    return bool(store.index_config)


def scores_hybrid(store: BaseStore) -> bool:
    """Whether ``store``'s search score is ``ChromaStore``'s hybrid (or lexical) one, the same
    scale for every query, rather than a raw cosine."""
    return getattr(store, "search_mode", None) in ("hybrid", "lexical")


def check_namespace(namespace: Sequence[str]) -> tuple[str, ...]:
    """Return ``namespace`` as a tuple, or raise an error that says what a valid one is."""
    if isinstance(namespace, str) or not isinstance(namespace, (tuple, list)) or not namespace:
        raise TypeError(
            f"namespace must be a non-empty tuple of strings such as ('episodes', 'alice'); "
            f"got {namespace!r}. EpisodicMemory.for_user(store, user_id) builds one."
        )
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise ValueError(
                f"Invalid namespace label {label!r} in {tuple(namespace)!r}: labels must be "
                "non-empty strings without '.' or NUL. Replace or hash such ids first."
            )
    if namespace[0] == "langgraph":
        raise ValueError("A namespace may not start with 'langgraph' (reserved by LangGraph).")
    return tuple(namespace)
