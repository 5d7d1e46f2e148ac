"""One body for sync and async: plans yield effects, thin shells execute them.

A *plan* is a generator that yields :class:`Effect` objects (a call with a sync and an async
implementation, e.g. ``store.put`` / ``store.aput``) and receives each result back. :func:`run`
executes a plan synchronously, :func:`arun` with ``await``; the logic in between is written
once. This is the package's one way of sharing code between sync and async.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine, Generator
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")

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


def twins(
    plan: Callable[P, Plan[T]], name: str
) -> tuple[Callable[P, T], Callable[P, Coroutine[Any, Any, T]]]:
    """The sync function (or method) ``name`` running ``plan`` with :func:`run`, with
    ``plan``'s signature and docstring, and its async twin ``"a" + name`` (:func:`arun`)."""

    @functools.wraps(plan)
    def sync(*args: P.args, **kwargs: P.kwargs) -> T:
        return run(plan(*args, **kwargs))

    @functools.wraps(plan)
    async def async_(*args: P.args, **kwargs: P.kwargs) -> T:
        return await arun(plan(*args, **kwargs))

    owner = plan.__qualname__[: -len(plan.__name__)]  # "EpisodicMemory." for a method
    async_.__doc__ = f"Async version of :{'meth' if owner else 'func'}:`{name}`."
    signature = inspect.signature(plan)
    returned = str(signature.return_annotation)  # "Plan[T]" (annotations are strings here)
    if returned.startswith("Plan[") and returned.endswith("]"):  # help() shows T, as called
        signature = signature.replace(return_annotation=returned[len("Plan["):-1])
    for function, function_name in ((sync, name), (async_, "a" + name)):
        function.__name__, function.__qualname__ = function_name, owner + function_name
        function.__dict__["__signature__"] = signature
    return sync, async_
