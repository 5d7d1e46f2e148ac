"""Type aliases shared across the package."""

from __future__ import annotations

Namespace = tuple[str, ...]
"""A LangGraph store namespace, e.g. ``("memories", "alice")``."""
