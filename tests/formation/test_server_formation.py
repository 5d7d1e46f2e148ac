"""``ServerFormation`` without a server: what it asks the server for, and the formation run's
debounce (the run through ``langgraph dev`` is ``tests/server/test_deferred_formation.py``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langgraph.store.memory import InMemoryStore

from langgraph_episodic import build_memory_graph
from langgraph_episodic.formation import PENDING, Former, ServerFormation
from langgraph_episodic.formation.server import form_user, formation_thread_id
from langgraph_episodic.graph.threads import thread_config
from langgraph_episodic.kinds.entities import EntityWriter


class FakeClient:
    """Records the SDK calls ``ServerFormation`` makes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        self.threads, self.runs = self, self

    async def create(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("threads.create" if "if_exists" in kwargs else "runs.create",
                           args, kwargs))
        return {}


def test_a_deferred_run_queues_its_turn_and_asks_for_a_delayed_background_run() -> None:
    store, client = InMemoryStore(), FakeClient()
    graph = build_memory_graph(lambda state: {"messages": [("ai", "Noted.")]}, store=store,
                               summarize=False, episodes=False,
                               defer=ServerFormation(debounce=1.5, client=client))
    asyncio.run(graph.ainvoke({"messages": [("user", "I work at ACME.")]},
                              thread_config("alice", "s1")))
    assert [i.value["text"] for i in store.search((PENDING,))] == ["I work at ACME."]
    assert store.search(("entities", "alice"), filter={"kind": "entity"}) == [], "nothing formed inside the run"
    thread = formation_thread_id("alice")
    assert client.calls == [
        ("threads.create", (), {"thread_id": thread, "if_exists": "do_nothing",
                                "metadata": {"purpose": "memory formation"}}),
        ("runs.create", (thread, "memory_formation"), {
            "input": {"user_id": "alice"}, "multitask_strategy": "enqueue",
            "after_seconds": 2}),
    ]
    assert formation_thread_id("alice") != formation_thread_id("bob")


def test_a_formation_run_leaves_a_user_who_is_still_talking_to_the_next_run() -> None:
    store, client = InMemoryStore(), FakeClient()
    graph = build_memory_graph(lambda state: {"messages": [("ai", "Noted.")]}, store=store,
                               summarize=False, episodes=False,
                               defer=ServerFormation(debounce=0.3, client=client))
    asyncio.run(graph.ainvoke({"messages": [("user", "I work at ACME.")]},
                              thread_config("alice", "s1")))
    former = Former(EntityWriter(None), episodes=False)
    assert form_user(store, former, "alice", debounce=0.3) == 0, "the turn is too recent"
    time.sleep(0.3)
    assert form_user(store, former, "alice", debounce=0.3) == 1
    assert [i.value["name"] for i in store.search(("entities", "alice"), filter={"kind": "entity"})] == ["ACME"]
    assert store.search((PENDING,)) == []
