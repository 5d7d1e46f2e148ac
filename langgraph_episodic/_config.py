"""Read per-user settings from ``config["configurable"]``, never from an LLM's arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig


class MissingConfigError(KeyError):
    """A required ``config["configurable"]`` key is missing; the message lists the keys present."""

    def __str__(self) -> str:  # KeyError quotes its message; show it plainly
        return str(self.args[0]) if self.args else ""


def configurable(config: RunnableConfig | Mapping[str, Any] | None) -> dict[str, Any]:
    """Return ``config["configurable"]`` as a dict (empty when absent)."""
    if not config:
        return {}
    conf = config.get("configurable") or {}
    return dict(conf)


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


def user_id_from(config: RunnableConfig | Mapping[str, Any] | None, key: str = "user_id") -> str:
    """Return the user id from ``config["configurable"]`` (see :func:`require`)."""
    return require(config, key)


def namespace_label(value: str) -> str:
    """Make a user id safe as one namespace label, reversibly and without collisions.

    LangGraph forbids "." and NUL inside labels, so e-mail-style ids would be refused; and
    ``list_namespaces`` reads ``*`` as a wildcard. ``%``, ``.``, ``*`` and NUL are
    percent-encoded instead (``"a.b@x.org"`` -> ``"a%2Eb@x%2Eorg"``).

    >>> namespace_label("alice@example.com")
    'alice@example%2Ecom'
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"A user id must be a non-empty string, got {value!r}.")
    return (
        value.replace("%", "%25").replace(".", "%2E").replace("*", "%2A").replace("\x00", "%00")
    )


def fill_namespace(
    template: tuple[str, ...], config: RunnableConfig | Mapping[str, Any] | None
) -> tuple[str, ...]:
    """Fill ``{key}`` placeholders of a namespace template from ``config["configurable"]``.

    Values pass through :func:`namespace_label`, so any user id makes one valid label.

    >>> fill_namespace(("memories", "{user_id}"), {"configurable": {"user_id": "alice"}})
    ('memories', 'alice')
    """
    out = []
    for label in template:
        if label.startswith("{") and label.endswith("}") and label.count("{") == 1:
            out.append(namespace_label(require(config, label[1:-1])))
        else:
            out.append(label)
    return tuple(out)
