"""Per-user isolation on the LangGraph server: every store call and run stays in its user's data.

The server's store API lets any caller name any namespace, and a run's ``user_id`` is whatever
the client sent. :func:`isolate_users` adds handlers to your ``langgraph_sdk.Auth`` that close
both holes, for this library's layout: every per-user namespace is ``(label, user)``, ``user``
being :func:`~langgraph_episodic._config.namespace_label` of the authenticated identity.

* Store ``put`` / ``get`` / ``delete``: the namespace's second label must be the caller's (403).
* Store ``search``: ``(label,)`` is narrowed to ``(label, user)``, a longer prefix must have
  the caller's second label, an empty prefix is refused (403).
* Store ``list_namespaces``: no prefix becomes ``("*", user)``, ``(label,)`` becomes
  ``(label, user)``; a longer prefix must have the caller's second label.
* Runs: ``user_id`` (in ``configurable`` and ``context``) is set to the authenticated identity,
  and runs may only start on the caller's threads.
* Threads, assistants, crons: stamped with ``metadata["owner"]`` on create and update, and
  filtered by it on every read, search, update and delete.
* Assistants the server creates from ``langgraph.json`` (``metadata["created_by"] ==
  "system"``): every user can read, search and run them, nobody can update or delete them, and
  no client may create or update an assistant carrying that mark (403).

Use it after your ``@auth.authenticate`` handler::

    auth = Auth()

    @auth.authenticate
    async def authenticate(authorization: str | None) -> str:
        ...  # verify the token; return the user id

    isolate_users(auth)

Under ``langgraph dev`` also set ``"disable_studio_auth": true`` in ``langgraph.json``'s
``auth`` block, or a request with ``x-auth-scheme: langsmith`` passes as the Studio user
without a token and no handler runs.
"""

from __future__ import annotations

from typing import Any, cast

from langgraph_sdk import Auth

from .._config import namespace_label

OWNER = "owner"
"""Metadata key that names the user who owns a thread, assistant or cron."""

CREATED_BY, SYSTEM = "created_by", "system"
"""``metadata[CREATED_BY] == SYSTEM`` marks the assistants the server creates from
``langgraph.json`` (as ``langgraph_api`` writes them)."""


def _forbidden(detail: str) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=403, detail=detail)


def pin_store_namespace(identity: str, action: str, value: dict[str, Any]) -> None:
    """Narrow ``value["namespace"]`` of a store request to ``identity``'s namespaces, in place.

    ``action`` is the server's store action (``put``, ``get``, ``delete``, ``search``,
    ``list_namespaces``). Raises ``Auth.exceptions.HTTPException`` (403) when the request names
    another user's namespace or cannot be narrowed.

    >>> value = {"namespace": ("episodes",)}
    >>> pin_store_namespace("alice", "search", value)
    >>> value["namespace"]
    ('episodes', 'alice')
    """
    label = namespace_label(identity)
    namespace = tuple(value.get("namespace") or ())
    if action not in ("put", "get", "delete", "search", "list_namespaces"):
        raise _forbidden(f"store action {action!r} is not allowed")
    if action == "search" and not namespace:
        raise _forbidden(
            "store search: name a namespace prefix, e.g. ['episodes'] (narrowed to "
            f"['episodes', {label!r}]); searching every user's data is not allowed."
        )
    if action == "list_namespaces" and len(namespace) <= 1:
        namespace = (namespace[0] if namespace else "*", label)
    elif action == "search" and len(namespace) == 1:
        namespace = (namespace[0], label)
    if len(namespace) < 2 or namespace[1] != label:
        raise _forbidden(
            f"store {action}: namespace {list(namespace)} is not yours; "
            f"your namespaces are (label, {label!r}, ...), e.g. ['episodes', {label!r}]."
        )
    value["namespace"] = namespace


def pin_run_user(identity: str, value: dict[str, Any]) -> None:
    """Set the run's ``user_id`` to ``identity`` (``configurable`` and ``context``), in place,
    and stamp the run's metadata with its owner.

    >>> value = {"kwargs": {"config": {"configurable": {"user_id": "bob"}}}, "metadata": {}}
    >>> pin_run_user("alice", value)
    >>> value["kwargs"]["config"]["configurable"]["user_id"], value["metadata"]
    ('alice', {'owner': 'alice'})
    """
    kwargs = value.setdefault("kwargs", {})
    _dict_at(_dict_at(kwargs, "config"), "configurable")["user_id"] = identity
    # Always in the context too: the server merges the assistant's context under the run's, and
    # an assistant made with context={"user_id": <another user>} would otherwise disagree.
    context = kwargs.get("context")
    if not isinstance(context, dict):
        context = kwargs["context"] = {}
    context["user_id"] = identity
    _dict_at(value, "metadata")[OWNER] = identity


def _dict_at(parent: dict[str, Any], key: str) -> Any:
    """``parent[key]``, set to a new dict when missing or None."""
    child = parent.get(key)
    if child is None:
        child = parent[key] = {}
    return child


def stamp_owner(identity: str, action: str, value: dict[str, Any]) -> None:
    """On ``create`` and ``update``, set ``value["metadata"]["owner"]`` to ``identity``, in
    place (an update without metadata is left so).

    >>> value = {"metadata": {"owner": "bob", "topic": "x"}}
    >>> stamp_owner("alice", "update", value)
    >>> value["metadata"]
    {'owner': 'alice', 'topic': 'x'}
    """
    if action not in ("create", "update"):
        return
    metadata = value.get("metadata")
    if metadata is None and action == "create":
        metadata = value["metadata"] = {}
    if isinstance(metadata, dict):
        metadata[OWNER] = identity


def assistant_filter(identity: str, action: str, value: dict[str, Any]) -> dict[str, Any]:
    """The filter of an assistants request: reads and searches see the caller's assistants and
    the server's (``created_by: system``); create, update and delete only the caller's. Stamps
    the owner and refuses (403) a create or update whose metadata claims ``created_by:
    system``.

    >>> assistant_filter("alice", "search", {})
    {'$or': [{'owner': 'alice'}, {'created_by': 'system'}]}
    >>> assistant_filter("alice", "delete", {})
    {'owner': 'alice'}
    """
    metadata = value.get("metadata")
    claimed = isinstance(metadata, dict) and metadata.get(CREATED_BY) == SYSTEM
    if action in ("create", "update") and claimed:
        raise _forbidden(
            f"assistants {action}: metadata {CREATED_BY}={SYSTEM!r} marks the assistants "
            "the server creates from langgraph.json; leave it out of your metadata."
        )
    stamp_owner(identity, action, value)
    if action in ("read", "search"):
        return {"$or": [{OWNER: identity}, {CREATED_BY: SYSTEM}]}
    return {OWNER: identity}


def isolate_users(auth: Auth) -> Auth:
    """Register the isolation handlers described in this module on ``auth``; return ``auth``."""

    @auth.on
    async def owner_only(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, str]:
        """Threads, crons: stamp the owner on create and update, filter by it always."""
        if isinstance(value, dict):
            stamp_owner(ctx.user.identity, ctx.action, value)
        return {OWNER: ctx.user.identity}

    @auth.on.assistants
    async def shared_graphs(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> dict[str, Any]:
        """Assistants: the caller's, and the server's own for reading and running."""
        return assistant_filter(ctx.user.identity, ctx.action, value)

    @auth.on.threads.create_run
    async def own_runs(ctx: Auth.types.AuthContext, value: Auth.types.RunsCreate) -> dict[str, str]:
        """Runs: the graph sees the authenticated user, on the caller's threads only."""
        pin_run_user(ctx.user.identity, cast("dict[str, Any]", value))
        return {OWNER: ctx.user.identity}

    @auth.on.store
    async def own_namespaces(ctx: Auth.types.AuthContext, value: dict[str, Any]) -> None:
        """Store API: only the caller's ``(label, user)`` namespaces."""
        pin_store_namespace(ctx.user.identity, ctx.action, value)

    return auth
