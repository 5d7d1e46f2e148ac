"""Concurrent ``abatch`` calls on one event loop, gathered into one execution.

Like LangGraph's ``AsyncBatchedBaseStore``, the store gathers the calls made in one loop
iteration, and those that arrive while a batch runs, into one batch (one embedding call, one
thread hop, one pass over Chroma). What each caller observes is unchanged: its ops are
validated on their own (:func:`.plans.prepare`); merged calls were concurrent, so "all reads,
then all puts in call order" is an order they could have run in; batches of one loop run in
order, and a merged batch that fails runs its calls again one by one, so only the failing
call sees the error.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from langgraph.store.base import Result

from .plans import BatchPlan

Runner = Callable[[BatchPlan], Awaitable[list[Result]]]


@dataclass
class _Queue:
    pending: list[tuple[BatchPlan, asyncio.Future[list[Result]]]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class Coalescer:
    """Runs plans submitted on one event loop in merged batches (see the module docstring)."""

    def __init__(self, run: Runner) -> None:
        self._run = run
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Queue] = (
            weakref.WeakKeyDictionary()
        )

    async def submit(self, plan: BatchPlan) -> list[Result]:
        """The results of ``plan``, run together with plans submitted concurrently."""
        loop = asyncio.get_running_loop()
        queue = self._queues.setdefault(loop, _Queue())
        future: asyncio.Future[list[Result]] = loop.create_future()
        queue.pending.append((plan, future))
        if queue.task is None:
            # Started after the callbacks already due in this iteration: the other calls made
            # now (e.g. by asyncio.gather) join the first batch.
            queue.task = loop.create_task(self._drain(queue))
        return await future

    async def _drain(self, queue: _Queue) -> None:
        try:
            while queue.pending:
                calls = [(p, f) for p, f in queue.pending if not f.done()]
                queue.pending = []
                if not calls:
                    continue
                plan, spans = merge([p for p, _ in calls])
                try:
                    outcome = await self._outcome(plan)
                except asyncio.CancelledError:
                    for _, f in calls:
                        f.cancel()
                    raise
                for (one, f), (start, end) in zip(calls, spans, strict=True):
                    if not isinstance(outcome, BaseException):
                        _settle(f, outcome[start:end])
                    else:  # merged calls run again one by one: only the failing one sees it
                        _settle(f, outcome if len(calls) == 1 else await self._outcome(one))
        finally:
            queue.task = None
            for _, f in queue.pending:  # only if the loop is shutting down
                f.cancel()
            queue.pending = []

    async def _outcome(self, plan: BatchPlan) -> list[Result] | BaseException:
        """The plan's results, or the exception it raised (handed to its callers)."""
        (outcome,) = await asyncio.gather(self._run(plan), return_exceptions=True)
        return outcome


def _settle(future: asyncio.Future[list[Result]], outcome: list[Result] | BaseException) -> None:
    if future.done():
        return
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)


def merge(plans: list[BatchPlan]) -> tuple[BatchPlan, list[tuple[int, int]]]:
    """One plan doing the work of ``plans`` in order, and the result span of each."""
    if len(plans) == 1:
        return plans[0], [(0, plans[0].n_ops)]
    merged = BatchPlan(n_ops=sum(p.n_ops for p in plans))
    spans = []
    offset = 0
    for p in plans:
        merged.gets.extend((i + offset, op) for i, op in p.gets)
        merged.searches.extend((i + offset, op) for i, op in p.searches)
        merged.listings.extend((i + offset, op) for i, op in p.listings)
        for key, put in p.puts.items():
            merged.puts.pop(key, None)  # last write wins, in call order
            merged.puts[key] = put
        spans.append((offset, offset + p.n_ops))
        offset += p.n_ops
    return merged, spans
