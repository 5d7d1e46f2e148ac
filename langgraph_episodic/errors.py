"""``Error``, the base of every error the package raises on purpose, and the general errors
every unit raises, each also the built-in it stands for.

``except langgraph_episodic.Error`` catches them all. Each error also derives from the
built-in it stands for (``ValueError``, ``KeyError``, ``RuntimeError``...), so a handler
written for that built-in keeps working. The general ones are here; an error only one unit
raises is defined next to the code that raises it. The package raises a plain built-in only
where Python asks for one (``AttributeError`` from ``__getattr__``, ``KeyError`` from a
mapping's ``__getitem__``, ``NotImplementedError`` from an abstract method) and
``ImportError`` for an optional package that is missing. One error is LangGraph's own: its
``BaseStore`` methods (``store.put(...)``, ``store.search(...)``) check the namespace before the
store sees the call and raise a plain ``InvalidNamespaceError`` (the same op through
``store.batch`` raises :class:`NamespaceError`, which is both). The errors are listed in
docs/api.md.
"""

from __future__ import annotations

from langgraph.store.base import InvalidNamespaceError

__all__ = [
    "AccessDeniedError",
    "ConnectionFailedError",
    "Error",
    "InvalidTypeError",
    "InvalidValueError",
    "KeyNotFoundError",
    "NamespaceError",
    "NotFoundError",
    "OperationError",
    "TimedOutError",
    "UnsupportedError",
]


class Error(Exception):
    """Base class of the errors the package raises on purpose; catch it to catch them all."""


class InvalidValueError(Error, ValueError):
    """An argument, setting or piece of data with a value the package cannot use (a negative
    limit, a TTL that is not positive, a corrupt file); the message names the fix."""


class InvalidTypeError(Error, TypeError):
    """An argument or value of a type the package does not take (a store value that is not a
    dict, a filter that is not a dict); the message names the type expected."""


class NamespaceError(Error, InvalidNamespaceError):
    """A namespace a LangGraph store refuses (empty, a bad label): LangGraph's own
    ``InvalidNamespaceError`` (a ``ValueError``), with LangGraph's message."""


class NotFoundError(Error, LookupError):
    """Something asked for by name that does not exist (a user's session); the message lists
    what does."""


class KeyNotFoundError(NotFoundError, KeyError):
    """A :class:`NotFoundError` that is a ``KeyError`` (an unknown redaction rule)."""


class OperationError(Error, RuntimeError):
    """A call that cannot run in the state it finds (a closed worker, a sync call where only
    async works, a store whose deletes do not take effect)."""


class UnsupportedError(Error, NotImplementedError):
    """What the object given cannot do (pruning with a checkpointer that has no prune)."""


class AccessDeniedError(Error, PermissionError):
    """A caller or a file that is not trusted with what it asks for."""


class ConnectionFailedError(Error, ConnectionError):
    """A server or peer process that cannot be reached or does not speak the protocol."""


class TimedOutError(Error, TimeoutError):
    """A server that did not answer in time."""
