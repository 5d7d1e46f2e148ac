"""Type aliases, and the values more than one unit checks against (defined here once)."""

from __future__ import annotations

Namespace = tuple[str, ...]
"""A LangGraph store namespace, e.g. ``("memories", "alice")``."""

SEARCH_MODES: tuple[str, ...] = ("hybrid", "dense", "lexical")
"""How ``ChromaStore`` can rank a search (its ``search_mode``)."""

MAX_TTL_MINUTES = 100 * 365.25 * 24 * 60
"""Longest TTL accepted (by a put, and by an import, also as the latest expiry from now): 100
years, in minutes. Use ``ttl=None`` for an item that never expires."""
