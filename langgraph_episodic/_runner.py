"""Node-side helpers around the shared effect runner (:mod:`langgraph_episodic._effects`):
:class:`MemoryNode` turns a plan factory ``(state, config) -> plan`` into a ``Runnable`` that
works in both ``graph.invoke`` and ``graph.ainvoke``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langgraph.store.base import BaseStore, Item

from ._effects import Plan, arun, call, run
from .errors import InvalidTypeError, InvalidValueError

PAGE_SIZE = 500
"""Items fetched per search page by :func:`all_items`."""


def all_items(
    store: BaseStore, namespace: tuple[str, ...], *, filter: dict[str, Any] | None = None
) -> Plan[list[Item]]:
    """Plan: every item under a namespace prefix (optionally filtered), paging through search.

    A listing is a read, not a use: it never extends the items' TTL (``refresh_ttl=False``), so
    an item with a TTL expires when it was set to, however often it is listed.
    """
    items: list[Item] = []
    while True:
        page = yield call(
            store.search, store.asearch, namespace, filter=filter, limit=PAGE_SIZE,
            offset=len(items), refresh_ttl=False,
        )
        items.extend(page)
        if len(page) < PAGE_SIZE:
            return items


def resolve_store(explicit: BaseStore | None) -> BaseStore:
    """Return ``explicit``, else the store the running graph was compiled with."""
    if explicit is not None:
        return explicit
    from langgraph.config import get_store

    try:
        store = get_store()
    except (RuntimeError, KeyError, AttributeError):
        store = None
    if store is None:
        raise InvalidValueError(
            "This memory node needs a store: pass `store=...` to the node factory, or compile "
            "the graph with one, e.g. `builder.compile(store=ChromaStore.persistent())`."
        )
    return store


def state_as_dict(state: Any) -> dict[str, Any]:
    """Read a graph state (TypedDict, pydantic model or dataclass) as a shallow dict."""
    if isinstance(state, Mapping):
        return dict(state)
    fields = getattr(type(state), "model_fields", None)
    if fields is not None:
        return {name: getattr(state, name) for name in fields}
    if dataclasses.is_dataclass(state):
        return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    raise InvalidTypeError(
        f"Expected the graph state as a dict, pydantic model or dataclass, got "
        f"{type(state).__name__}. Use `EpisodicState` (a TypedDict) or a subclass of it."
    )


PlanFactory = Callable[[dict[str, Any], RunnableConfig], Plan[dict[str, Any]]]


class MemoryNode(Runnable[Any, dict[str, Any]]):
    """A graph node running one plan, with native sync and async paths.

    Add it with ``builder.add_node(node)`` (its ``name`` becomes the node name) or
    ``builder.add_node("my_name", node)``. Call ``node.invoke(state, config)`` directly to test it.
    """

    def __init__(self, name: str, plan: PlanFactory) -> None:
        self.name = name
        self._plan = plan

    def __repr__(self) -> str:
        return f"MemoryNode(name={self.name!r})"

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return run(self._plan(state_as_dict(input), ensure_config(config)))

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return await arun(self._plan(state_as_dict(input), ensure_config(config)))
