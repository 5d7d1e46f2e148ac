"""A store wrapper that redacts every value put into it (and every search query) on the way in."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langgraph.store.base import BaseStore, Op, PutOp, Result, SearchOp

from ..errors import InvalidTypeError
from .redaction import DEFAULT_REDACTOR, Redactor


class RedactingStore(BaseStore):
    """A store wrapper that redacts every value put and every search query, then delegates.

    Redaction happens before the inner store sees the op, so neither its database nor its
    embedder ever receives the original text. Reads, deletes and listings pass through
    unchanged; other attributes (``index_config``, ``sweep_ttl``, ``close`` ...) are the inner
    store's. Filters are not rewritten: a filter on a redacted field matches the placeholder.

    >>> from langgraph.store.memory import InMemoryStore
    >>> store = RedactingStore(InMemoryStore())
    >>> store.put(("users", "alice"), "contact", {"text": "write to alice@example.com"})
    >>> store.get(("users", "alice"), "contact").value
    {'text': 'write to [EMAIL]'}
    """

    def __init__(self, inner: BaseStore, redactor: Redactor | None = None) -> None:
        if not isinstance(inner, BaseStore):
            raise InvalidTypeError(
                f"RedactingStore wraps a LangGraph BaseStore, got {type(inner).__name__}."
            )
        self.inner = inner
        self.redactor = redactor or DEFAULT_REDACTOR
        self.supports_ttl = inner.supports_ttl
        self.ttl_config = inner.ttl_config

    def _rewrite(self, ops: Iterable[Op]) -> list[Op]:
        out: list[Op] = []
        for op in ops:
            if isinstance(op, PutOp) and op.value is not None:
                op = op._replace(value=self.redactor.redact_value(op.value))
            elif isinstance(op, SearchOp) and isinstance(op.query, str):
                op = op._replace(query=self.redactor.redact_text(op.query))
            out.append(op)
        return out

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Redact puts and queries, then run the batch on the inner store."""
        return self.inner.batch(self._rewrite(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async version of :meth:`batch`."""
        return await self.inner.abatch(self._rewrite(ops))

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes this wrapper lacks: expose the inner store's.
        if name == "inner" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"RedactingStore({self.inner!r}, rules={list(self.redactor.names)})"
