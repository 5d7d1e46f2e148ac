"""The turn pipeline (:class:`~.turn.TurnMemory`, run inline by the middleware and the graph
nodes, or deferred) and the deferred formation's queue and worker: the user never waits for the
memory.

With ``defer=`` on :class:`~langgraph_episodic.EpisodicMemoryMiddleware`,
:func:`~langgraph_episodic.graph.add_memory_nodes` or
:func:`~langgraph_episodic.graph.build_memory_graph`, a turn writes what its formation needs to
a durable queue in the store (:mod:`.pending`) and returns; a background worker
(:class:`DeferredFormation`) extracts the entities and records the episodes later, coalescing a
user's burst of turns into one batch (:mod:`.former`). See ``docs/deferred.md``.
"""

from .former import FORMED_THROUGH, Formed, Former
from .pending import PENDING, PendingTurn, pending_namespace
from .server import FORMATION_ASSISTANT, ServerFormation, formation_graph
from .turn import queue_formation_node
from .worker import DeferredFormation, Scheduler, resolve_defer

__all__ = [
    "FORMATION_ASSISTANT",
    "FORMED_THROUGH",
    "PENDING",
    "DeferredFormation",
    "Formed",
    "Former",
    "PendingTurn",
    "Scheduler",
    "ServerFormation",
    "formation_graph",
    "pending_namespace",
    "queue_formation_node",
    "resolve_defer",
]
