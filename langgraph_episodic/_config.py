"""Read per-user settings from ``config["configurable"]`` (and the user id also from the run's
context), never from an LLM's arguments; and where the library keeps each user's data: the one
table of namespace labels and templates (here in the core, since :mod:`~langgraph_episodic.privacy`
needs them as well as the memory kinds above it).

Most per-user namespaces are ``(label, user_id)``; the remembered turns sit one level below the
saved facts, ``(MEMORIES, user_id, "turns")``, and the deferred formation keys its queue and
summaries by thread, ``(PENDING, user_id, thread_id)`` and ``(SUMMARY, user_id, thread_id)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph._internal._constants import CONFIG_KEY_RUNTIME

from .errors import Error, InvalidValueError


class MissingConfigError(Error, KeyError):
    """A required ``config["configurable"]`` key is missing; the message lists the keys present."""

    def __str__(self) -> str:  # KeyError quotes its message; show it plainly
        return str(self.args[0]) if self.args else ""


def configurable(config: RunnableConfig | Mapping[str, Any] | None) -> dict[str, Any]:
    """Return ``config["configurable"]`` as a dict (empty when absent)."""
    return dict((config or {}).get("configurable") or {})


def require(config: RunnableConfig | Mapping[str, Any] | None, key: str) -> str:
    """Return ``config["configurable"][key]`` as a string, or raise :class:`MissingConfigError`.

    The error lists the keys that are there, so the caller sees the fix at once.
    """
    conf = configurable(config)
    value = conf.get(key)
    if value is None or value == "":
        present = sorted(k for k in conf if not k.startswith("__"))
        raise MissingConfigError(
            f"config['configurable'][{key!r}] is required but missing. "
            f"Keys present: {present or 'none'}. Pass it when invoking, e.g. "
            f"graph.invoke(inputs, {{'configurable': {{{key!r}: 'alice', ...}}}})."
        )
    return str(value)


USER_ID = "user_id"
"""The key of the run's user id, in ``config["configurable"]`` and in the run's context."""
USER_SLOT = "{" + USER_ID + "}"
"""The user's place in a namespace template (filled by :func:`fill_namespace`) or a namespace
shape (:mod:`langgraph_episodic.privacy.shapes`)."""


class UserIdError(Error, ValueError):
    """The run's user id is ambiguous (the config and the context name different users) or not
    a non-empty string. Raised before anything is read or written."""


_FROM_CONFIG: Any = object()
"""Default of ``context``: read the run's context from the config (LangGraph puts it there)."""


def _runtime_context(config: RunnableConfig | Mapping[str, Any] | None) -> Any:
    """The context of the LangGraph run that ``config`` belongs to (``None`` outside a run)."""
    runtime = configurable(config).get(CONFIG_KEY_RUNTIME)
    return getattr(runtime, "context", None)


def _context_user_id(context: Any) -> Any:
    if context is None:
        return None
    if isinstance(context, Mapping):
        return context.get(USER_ID)
    return getattr(context, USER_ID, None)


def _checked(value: Any, where: str) -> str:
    if isinstance(value, str) and value:
        return value
    raise UserIdError(
        f"The user id must be a non-empty string; {where} is {value!r} "
        f"({type(value).__name__}). Pass the id as a string, e.g. {where} = 'alice'; nothing "
        "was read or written."
    )


def given_user_id(
    config: RunnableConfig | Mapping[str, Any] | None, context: Any = _FROM_CONFIG
) -> str | None:
    """The run's user id, or ``None`` when neither the config nor the context names one.

    It is read from ``config["configurable"]["user_id"]`` and from the run's context
    (``context={"user_id": ...}``, or an object with a ``user_id`` attribute; by default the
    context of the LangGraph run ``config`` belongs to). One given: that one. Both given: they
    must be equal. Raises :class:`UserIdError` when they differ or a value is not a non-empty
    string (``1`` is refused, not read as ``"1"``).

    >>> given_user_id({"configurable": {"user_id": "alice"}}, {"user_id": "alice"})
    'alice'
    >>> given_user_id({"configurable": {}}, None) is None
    True
    """
    if context is _FROM_CONFIG:
        context = _runtime_context(config)
    places = (
        (f"config['configurable'][{USER_ID!r}]", configurable(config).get(USER_ID)),
        (f"context.{USER_ID}", _context_user_id(context)),
    )
    given = {where: _checked(value, where) for where, value in places
             if value is not None and value != ""}  # fmt: skip
    if len(set(given.values())) > 1:
        named = " and ".join(f"{where} = {value!r}" for where, value in given.items())
        raise UserIdError(
            f"The run names two different users: {named}. Pass the user id once (the "
            "context or config['configurable']), or the same id in both; nothing was read or "
            "written."
        )
    return next(iter(given.values()), None)


USER_NAME = "user_name"
"""The key of the name (or list of names) the user goes by, in ``config["configurable"]``."""

_ONE_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def own_names(config: RunnableConfig | Mapping[str, Any] | None) -> frozenset[str]:
    """The casefolded names the run's user goes by: ``config["configurable"]["user_name"]``
    (a name or a list of names; each name's words count alone too, "Maya Patel" is also
    "maya") and the user id when it is one word of letters (``"alice"``; not ``"u-1093"``).
    Recall reads facts an agent saved about the user in the third person ("Maya has moved to
    Manchester") as the user's own.

    >>> sorted(own_names({"configurable": {"user_id": "alice", "user_name": "Alice Smith"}}))
    ['alice', 'alice smith', 'smith']
    >>> own_names({"configurable": {"user_id": "u-1093"}})
    frozenset()
    """
    conf = configurable(config)
    given = conf.get(USER_NAME) or ()
    names = [given] if isinstance(given, str) else [str(name) for name in given]
    user_id = given_user_id(config)
    if user_id is not None and _ONE_WORD.fullmatch(user_id):
        names.append(user_id)
    folded = {name.strip().casefold() for name in names if name.strip()}
    return frozenset(folded | {word for name in folded for word in name.split()})


def user_id_from(
    config: RunnableConfig | Mapping[str, Any] | None, context: Any = _FROM_CONFIG
) -> str:
    """The run's user id by the rule of :func:`given_user_id`; the one resolver of the package
    (the middleware, the tools and the nodes all read the user through it).

    Raises :class:`MissingConfigError` (listing the keys present) when neither names a user.

    >>> user_id_from({"configurable": {"thread_id": "t1"}}, {"user_id": "bob"})
    'bob'
    """
    user_id = given_user_id(config, context)
    if user_id is None:
        present = sorted(k for k in configurable(config) if not k.startswith("__"))
        raise MissingConfigError(
            f"config['configurable'][{USER_ID!r}] is required but missing (and the run's "
            f"context has no {USER_ID!r} either). Keys present: {present or 'none'}. Pass it "
            f"when invoking, e.g. graph.invoke(inputs, {{'configurable': {{{USER_ID!r}: "
            "'alice', ...}}) or graph.invoke(inputs, context={'user_id': 'alice'})."
        )
    return user_id


def namespace_label(value: str) -> str:
    """Make a user id safe as one namespace label, reversibly and without collisions.

    LangGraph forbids "." and NUL inside labels, so e-mail-style ids would be refused; and
    ``list_namespaces`` reads ``*`` as a wildcard. ``%``, ``.``, ``*`` and NUL are
    percent-encoded instead (``"a.b@x.org"`` -> ``"a%2Eb@x%2Eorg"``).

    >>> namespace_label("alice@example.com")
    'alice@example%2Ecom'
    """
    if not isinstance(value, str) or not value:
        raise InvalidValueError(f"A user id must be a non-empty string, got {value!r}.")
    return (
        value.replace("%", "%25").replace(".", "%2E").replace("*", "%2A").replace("\x00", "%00")
    )


def fill_namespace(
    template: tuple[str, ...], config: RunnableConfig | Mapping[str, Any] | None
) -> tuple[str, ...]:
    """Fill ``{key}`` placeholders of a namespace template from ``config["configurable"]``.

    ``{user_id}`` is the run's user by :func:`user_id_from` (the config or the run's context);
    values pass through :func:`namespace_label`, so any user id makes one valid label.

    >>> fill_namespace(("memories", "{user_id}"), {"configurable": {"user_id": "alice"}})
    ('memories', 'alice')
    """
    out = []
    for label in template:
        if label.startswith("{") and label.endswith("}") and label.count("{") == 1:
            key = label[1:-1]
            value = user_id_from(config) if key == USER_ID else require(config, key)
            out.append(namespace_label(value))
        else:
            out.append(label)
    return tuple(out)


MEMORIES = "memories"
"""Facts the memory tools save, and the remembered turns below them."""
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
PENDING = "_pending"
"""First label of the deferred formation's queue, ``(PENDING, user_id, thread_id)``."""
SUMMARY = "_summary"
"""First label of the formed summaries' namespaces, ``(SUMMARY, user_id, thread_id)``."""
RESERVED_LABEL = "langgraph"
"""The first label LangGraph reserves for itself; no namespace of ours may start with it."""

USER_LABELS: tuple[str, ...] = (EPISODES, ENTITIES, USER_PROFILES, WORKING_MEMORY, OUTPUT_LOG)
"""First labels of every per-user namespace the graph helpers write by default."""

MEMORIES_NAMESPACE: tuple[str, ...] = (MEMORIES, USER_SLOT)
"""Where the memory tools save facts and the middleware recalls them: one namespace per user."""
TURN_NAMESPACE: tuple[str, ...] = (MEMORIES, USER_SLOT, "turns")
"""Where the remembered turns go, below the saved facts (a recall over
:data:`MEMORIES_NAMESPACE` as a prefix finds both)."""
EPISODE_NAMESPACE: tuple[str, ...] = (EPISODES, USER_SLOT)
"""Where each user's episodes live."""
ENTITY_NAMESPACE: tuple[str, ...] = (ENTITIES, USER_SLOT)
"""Where each user's entities live."""
