"""Run on the LangGraph server: the deployment's store factory and per-user isolation.

``langgraph.json``::

    "store": {"path": "langgraph_episodic.server.store"},
    "auth": {"path": "./auth.py:auth", "disable_studio_auth": true}

See :mod:`.factory` (the store), :mod:`.settings` (its ``EPISODIC_*`` variables) and
:mod:`.isolation` (the auth handlers). ``examples/langgraph_server`` is an app to copy.
"""

from __future__ import annotations

from .factory import open_store, store
from .isolation import isolate_users, pin_run_user, pin_store_namespace
from .settings import StoreSettings

__all__ = [
    "StoreSettings",
    "isolate_users",
    "open_store",
    "pin_run_user",
    "pin_store_namespace",
    "store",
]
