"""The memory inspector: a local web app to browse, search, edit and forget what a store holds.

``langgraph-episodic ui`` serves it; :func:`create_app` builds the Starlette app over any open
``BaseStore`` (for tests, or to mount it into another ASGI server). Needs the ``[ui]`` extra.
"""

from __future__ import annotations

from .app import create_app
from .pages import Settings
from .security import Secrets

__all__ = ["Secrets", "Settings", "create_app"]
