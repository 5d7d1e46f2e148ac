"""Store and embedder access for :class:`~.memory.EpisodicMemory`: one core, two drivers.

Each memory operation is written once, as a *plan*: a generator that yields requests
(:class:`Get`, :class:`Search`, :class:`Put`, :class:`Embed`) and receives their results.
:meth:`PlanRunner.run` executes the requests with the store's sync methods and
:meth:`PlanRunner.arun` with the async ones, so sync and async behave the same by construction.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore

from .records import OutcomeStatus, TaskCategory

T = TypeVar("T")

TEXT_FIELD = "text"
"""The value field that is embedded (the task description)."""


@dataclass(frozen=True)
class Get:
    """Read one item of the namespace; the result is an ``Item`` or None."""

    key: str


@dataclass(frozen=True)
class Search:
    """Search the namespace (by meaning when ``query`` is set); the result is a list of items."""

    query: str | None
    filter: dict[str, Any] | None
    limit: int
    offset: int = 0


@dataclass(frozen=True)
class Put:
    """Write one item, embedding only :data:`TEXT_FIELD`; the result is None."""

    key: str
    value: dict[str, Any]


@dataclass(frozen=True)
class Embed:
    """Embed texts (as one query when ``query``); the result is a list of vectors."""

    texts: list[str]
    query: bool = False


Request = Get | Search | Put | Embed
Plan = Generator[Request, Any, T]


class PlanRunner:
    """Runs plans against one namespace of one store (and an optional embedder)."""

    def __init__(
        self, store: BaseStore, namespace: tuple[str, ...], embeddings: Embeddings | None
    ) -> None:
        self.store = store
        self.namespace = namespace
        self.embeddings = embeddings

    def run(self, plan: Plan[T]) -> T:
        """Run ``plan`` with the store's sync methods and return its result."""
        reply: Any = None
        while True:
            try:
                request = plan.send(reply)
            except StopIteration as done:
                return done.value
            reply = self._execute(request)

    async def arun(self, plan: Plan[T]) -> T:
        """Async version of :meth:`run`."""
        reply: Any = None
        while True:
            try:
                request = plan.send(reply)
            except StopIteration as done:
                return done.value
            reply = await self._aexecute(request)

    def _execute(self, request: Request) -> Any:
        ns, store = self.namespace, self.store
        if isinstance(request, Get):
            return store.get(ns, request.key)
        if isinstance(request, Search):
            return store.search(
                ns, query=request.query, filter=request.filter, limit=request.limit,
                offset=request.offset,
            )
        if isinstance(request, Put):
            return store.put(ns, request.key, request.value, index=[TEXT_FIELD])
        emb = self._embedder()
        if request.query:
            return [emb.embed_query(request.texts[0])]
        return emb.embed_documents(request.texts)

    async def _aexecute(self, request: Request) -> Any:
        ns, store = self.namespace, self.store
        if isinstance(request, Get):
            return await store.aget(ns, request.key)
        if isinstance(request, Search):
            return await store.asearch(
                ns, query=request.query, filter=request.filter, limit=request.limit,
                offset=request.offset,
            )
        if isinstance(request, Put):
            return await store.aput(ns, request.key, request.value, index=[TEXT_FIELD])
        emb = self._embedder()
        if request.query:
            return [await emb.aembed_query(request.texts[0])]
        return await emb.aembed_documents(request.texts)

    def _embedder(self) -> Embeddings:
        if self.embeddings is None:  # pragma: no cover - plans only embed when one is set
            raise RuntimeError("This memory has no embeddings; pass embeddings=... to embed.")
        return self.embeddings


def episode_filter(
    category: TaskCategory | str | None, outcome: OutcomeStatus | str | None
) -> dict[str, Any] | None:
    """Build the store filter for a category and/or an outcome (None when neither)."""
    out: dict[str, Any] = {}
    if category is not None:
        out["category"] = _enum_value(TaskCategory, category, "category")
    if outcome is not None:
        out["outcome"] = _enum_value(OutcomeStatus, outcome, "outcome")
    return out or None


def _enum_value(cls: type[TaskCategory] | type[OutcomeStatus], value: Any, name: str) -> str:
    try:
        return str(cls(value).value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in cls)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}.") from None


def store_has_index(store: BaseStore) -> bool:
    """Whether ``store`` searches by meaning (a store without ``index_config`` is trusted to)."""
    if not hasattr(store, "index_config"):
        return True
    return bool(store.index_config)


def check_namespace(namespace: Sequence[str]) -> tuple[str, ...]:
    """Return ``namespace`` as a tuple, or raise an error that says what a valid one is."""
    if isinstance(namespace, str) or not isinstance(namespace, (tuple, list)) or not namespace:
        raise TypeError(
            f"namespace must be a non-empty tuple of strings such as ('episodes', 'alice'); "
            f"got {namespace!r}. EpisodicMemory.for_user(store, user_id) builds one."
        )
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise ValueError(
                f"Invalid namespace label {label!r} in {tuple(namespace)!r}: labels must be "
                "non-empty strings without '.' or NUL. Replace or hash such ids first."
            )
    if namespace[0] == "langgraph":
        raise ValueError("A namespace may not start with 'langgraph' (reserved by LangGraph).")
    return tuple(namespace)
