"""One body for sync and async: plans yield effects, thin shells execute them.

A *plan* is a generator that yields :class:`Effect` objects (a call with a sync and an async
implementation, e.g. ``store.put`` / ``store.aput`` or ``model.invoke`` / ``model.ainvoke``) and
receives each result back. :func:`run` executes a plan synchronously, :func:`arun` with
``await``; the logic in between is written once. This is the package's one way of sharing
code between sync and async: the graph nodes and middleware, ``EpisodicMemory``, the memory
tools and privacy all write their operations as plans run here.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

Plan = Generator["Effect", Any, T]
"""A generator yielding :class:`Effect`s and returning the plan's result."""


@dataclass(frozen=True)
class Effect:
    """One call with a sync and an async implementation; the runner picks one."""

    sync: Callable[..., Any]
    async_: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def call(sync: Callable[..., Any], async_: Callable[..., Any], *args: Any, **kwargs: Any) -> Effect:
    """Build an :class:`Effect` calling ``sync(*args, **kwargs)`` or ``await async_(...)``."""
    return Effect(sync, async_, args, kwargs)


def run(plan: Plan[T]) -> T:
    """Execute ``plan`` synchronously and return its result."""
    try:
        effect = next(plan)
        while True:
            effect = plan.send(effect.sync(*effect.args, **effect.kwargs))
    except StopIteration as stop:
        return stop.value


async def arun(plan: Plan[T]) -> T:
    """Async version of :func:`run`."""
    try:
        effect = next(plan)
        while True:
            effect = plan.send(await effect.async_(*effect.args, **effect.kwargs))
    except StopIteration as stop:
        return stop.value
