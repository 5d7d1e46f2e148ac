"""The base of every error langgraph-episodic raises on purpose.

``except langgraph_episodic.Error`` catches them all. Each error is defined next to the code
that raises it and also derives from the built-in it stands for (``ValueError``, ``KeyError``,
``RuntimeError``...), so a handler written for that built-in keeps working. The errors are
listed in docs/api.md.
"""

from __future__ import annotations

__all__ = ["Error"]


class Error(Exception):
    """Base class of the errors the package raises on purpose; catch it to catch them all."""
