"""Namespace shapes: where a user's label sits in the namespaces ``forget_user`` deletes.

A shape is a tuple of labels with :data:`USER` exactly once and ``"*"`` for any one label;
:data:`DEFAULT_SHAPES` covers every per-user namespace this library writes, ``(kind, user, ...)``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from .._config import MEMORIES, RESERVED_LABEL, USER_LABELS, USER_SLOT, namespace_label
from .._types import Namespace
from ..errors import InvalidValueError

USER = USER_SLOT
"""The user's place in a namespace shape (see :data:`DEFAULT_SHAPES`)."""

Shape = tuple[str, ...]

DEFAULT_SHAPES: tuple[Shape, ...] = (("*", USER),)
"""Where the user sits in the namespaces this library writes: ``(kind, user, ...)``."""

PROTECTED_LABELS: frozenset[str] = frozenset({MEMORIES, *USER_LABELS, RESERVED_LABEL})
"""The first labels of this library's per-user namespaces (the tools' ``"memories"`` and
:data:`~langgraph_episodic._config.USER_LABELS`) and LangGraph's reserved ``"langgraph"``. A
user whose label is one of them cannot be forgotten by label match: it would delete that kind
for every user. Pass ``protected_labels=`` to change."""


def check_shapes(shapes: Any) -> tuple[Shape, ...]:
    checked = []
    for shape in shapes:
        shape = tuple(shape) if isinstance(shape, list | tuple) else shape
        if (
            not isinstance(shape, tuple)
            or not all(isinstance(label, str) and label for label in shape)
            or shape.count(USER) != 1
        ):
            raise InvalidValueError(
                f"A namespace shape is a tuple of labels with USER ({USER!r}) exactly once and "
                f"'*' for any label, e.g. ('*', USER) or ('team', '*', USER); got {shape!r}."
            )
        checked.append(shape)
    if not checked:
        raise InvalidValueError("Pass at least one namespace shape, e.g. shapes=[('*', USER)].")
    return tuple(checked)


def user_label(user_id: Any, shapes: Sequence[Shape], protected: Collection[str]) -> str:
    """The user's namespace label, refusing ids that would match other users' namespaces."""
    if not isinstance(user_id, str) or not user_id:
        raise InvalidValueError(f"user_id must be a non-empty string, got {user_id!r}.")
    label = namespace_label(user_id)
    if label in protected and any(shape[0] == USER for shape in shapes):
        raise InvalidValueError(
            f"Refusing to forget user {user_id!r}: it is also a namespace kind, so every "
            f"namespace like ({label!r}, <other user>) would match a shape that puts the user "
            "first. Rename the user, drop that shape, or pass protected_labels=... without it."
        )
    return label


def fill(shape: Shape, label: str) -> Namespace:
    return tuple(label if part == USER else part for part in shape)


def matches(namespace: Namespace, shapes: Sequence[Shape], label: str) -> bool:
    """Whether ``namespace`` starts like one of ``shapes`` with the user's label in place."""
    for shape in shapes:
        pairs = zip(fill(shape, label), namespace, strict=False)
        if len(namespace) >= len(shape) and all(part in ("*", ns_label) for part, ns_label in pairs):
            return True
    return False
