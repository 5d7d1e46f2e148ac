"""Deferred formation on the LangGraph server: the server's own run queue forms the memory.

On the server the user's run queues its turn in the store as everywhere
(:mod:`.pending`); then, instead of waking a thread in the process,
:class:`ServerFormation` asks the server (in process, through ``langgraph_sdk.get_client()``)
for a *background run* of the formation graph (:func:`formation_graph`, registered in
``langgraph.json``), delayed by the debounce, on one formation thread per user with
``multitask_strategy="enqueue"``. So formation never runs inside the user's run; the server
schedules, retries and persists it like any other run; a user's formation runs one after the
other, in turn order; and each run forms every pending turn of the user, so a run that finds
the user still talking (a newer turn within the debounce) leaves the work to the run that
turn scheduled: a burst is formed once, after its last turn.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import uuid
from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from .._config import configurable, namespace_label
from ..errors import AccessDeniedError, OperationError
from ..kinds.entities import ENTITY_NAMESPACE, EntityWriter
from ..kinds.episodes import EpisodeMemories, Scorer
from .former import Former
from .pending import pending_turns, remove

logger = logging.getLogger(__name__)

FORMATION_ASSISTANT = "memory_formation"
"""The graph id :class:`ServerFormation` runs by default (its key in ``langgraph.json``)."""

_THREADS = uuid.UUID("6f1d3c2e-5b7a-4e0f-9a41-2c8d7e6b5a90")
"""Namespace of the formation threads' ids (one uuid5 per user)."""


def formation_thread_id(user_id: str) -> str:
    """The id of ``user_id``'s formation thread (the same on every start)."""
    return str(uuid.uuid5(_THREADS, namespace_label(user_id)))


class ServerFormation:
    """``defer=`` for a graph the LangGraph server runs (see the module docstring).

    Args:
        assistant_id: The formation graph's id in ``langgraph.json``.
        debounce: Seconds after a turn its formation run starts; a run that finds a newer
            turn of the user within this window leaves it to that turn's run.
        client: A ``langgraph_sdk`` async client (default: the server's in-process client,
            ``get_client()``).
    """

    def __init__(self, *, assistant_id: str = FORMATION_ASSISTANT, debounce: float = 1.0,
                 client: Any = None) -> None:
        self.assistant_id, self.debounce, self._client = assistant_id, debounce, client

    def bind(self, store: BaseStore, former: Former) -> None:
        """Nothing to start: the server's queue runs the formation graph."""

    def notify(self, user_id: str) -> None:
        raise OperationError(
            "ServerFormation schedules through the server's API, which is async: run the "
            "graph with ainvoke/astream (the LangGraph server does), or use "
            "DeferredFormation outside the server.")

    async def anotify(self, user_id: str) -> None:
        """Schedule the user's formation run, ``debounce`` seconds from now."""
        if self._client is None:
            from langgraph_sdk import get_client

            self._client = get_client()
        thread_id = formation_thread_id(user_id)
        try:
            await self._client.threads.create(thread_id=thread_id, if_exists="do_nothing",
                                              metadata={"purpose": "memory formation"})
            await self._client.runs.create(
                thread_id, self.assistant_id, input={"user_id": user_id},
                multitask_strategy="enqueue", after_seconds=math.ceil(max(0.0, self.debounce)))
        except Exception:  # the turn is queued in the store: the user's next run forms it
            logger.exception("could not schedule the memory formation of %r; it stays queued "
                             "until the user's next turn schedules one", user_id)

    def close(self, timeout: float | None = None) -> bool:
        """The queue is the server's: nothing to drain here."""
        return True


class FormationState(TypedDict, total=False):
    user_id: str
    formed: int
    """How many pending turns this run formed (0: none, or the user was still talking)."""


def form_user(store: BaseStore, former: Former, user_id: str, debounce: float) -> int:
    """Form ``user_id``'s pending turns unless a newer turn came within ``debounce``."""
    turns = pending_turns(store, namespace_label(user_id))
    if not turns or time.time() - turns[-1].enqueued_at < debounce * 0.9:
        return 0
    former.form(store, turns)
    remove(store, turns)
    return len(turns)


def formation_graph(
    *, model: BaseChatModel | None = None, entities: bool = True, episodes: bool = True,
    score: Scorer | None = None, namespace: tuple[str, ...] = ENTITY_NAMESPACE,
    debounce: float = 1.0, memories: EpisodeMemories | None = None,
) -> Any:
    """The formation graph for the server: input ``{"user_id": ...}``, forms that user's
    pending turns in the server's store. Build it with the options of the agent graph it
    forms for (the same ``model``, ``entities``, ``episodes``, ``score``)."""
    former = Former(EntityWriter(model) if entities else None, episodes=episodes,
                    memories=memories, score=score, namespace=namespace)

    async def form(state: FormationState, config: RunnableConfig) -> FormationState:
        caller = configurable(config).get("langgraph_auth_user_id")
        if caller and caller != state["user_id"]:  # the in-process client has no user
            raise AccessDeniedError(
                f"A formation run forms its caller's memory only; {caller!r} asked for "
                f"{state['user_id']!r}. The server schedules these runs itself.")
        store = get_store()
        formed = await asyncio.to_thread(form_user, store, former, state["user_id"], debounce)
        return {"formed": formed}

    builder: StateGraph[Any, Any, Any, Any] = StateGraph(FormationState)
    builder.add_node("form", form)
    builder.add_edge(START, "form")
    builder.add_edge("form", END)
    return builder.compile()
