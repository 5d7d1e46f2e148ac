"""Ten users at once, each in bursts, all deferred to one worker: nothing lost, nothing
attributed to the wrong user, each user's turns formed in the order they were answered.

The users start together behind a ``threading.Barrier`` and the interpreter switches threads
every microsecond, so queue writes, the worker's reads and its deletes interleave densely;
the debounce is short, so bursts are cut into several batches while turns keep coming.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.store.base import BaseStore

from langgraph_episodic import build_memory_graph
from langgraph_episodic.formation import PENDING, DeferredFormation
from langgraph_episodic.graph.threads import thread_config
from tests.fakes import ScriptedChatModel

USERS = 10
TURNS = 6
"""Turns per user; the last one corrects the city the first one told."""


def extract(messages: list[BaseMessage]) -> AIMessage | str:
    """The scripted memory model: extraction names every ``Fact_*`` and ``City_*`` token of
    the text, with its sentence; a consolidation call answers ``update`` of the current fact
    naming the same city, ``new`` otherwise, as a good model would."""
    text = str(messages[-1].content)
    if text.startswith("NEW fact:"):  # the consolidation: a new city replaces the old one
        new, _, listing = text.removeprefix("NEW fact:\n").partition("\n\nCURRENT facts:\n")
        city = re.search(r"\bCity_\w+?\b", new)
        number = next((int(line.split(".")[0]) for line in listing.splitlines()
                       if city and city.group(0) in line), None)
        decision = {"action": "update", "fact": number} if number else {"action": "new"}
        return AIMessage(content="", tool_calls=[{
            "name": "FactDecision", "args": decision, "id": "d", "type": "tool_call"}])
    found = [{"name": m.group(1), "description": sentence.strip()}
             for sentence in text.splitlines()
             for m in re.finditer(r"\b((?:Fact|City)_\w+?)\b(?: is| lives)", sentence)]
    return AIMessage(content="", tool_calls=[{
        "name": "ExtractedEntities", "args": {"entities": found}, "id": "x", "type": "tool_call"}])


def turns_of(user: str) -> list[str]:
    said = [f"City_{user} is Berlin, where I live."]
    said += [f"Fact_{user}_{i} is something I care about." for i in range(TURNS - 2)]
    said.append(f"City_{user} is Wien now, I moved.")
    return said


@pytest.fixture
def fast_switching() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def test_ten_users_in_bursts_keep_every_fact_their_own_and_in_order(
        store: BaseStore, fast_switching: None) -> None:
    model = ScriptedChatModel(script=[extract] * 2000)
    formation = DeferredFormation(debounce=0.01, max_wait=0.05)
    graph = build_memory_graph(lambda state: {"messages": [("ai", "Noted.")]}, model=model,
                               store=store, summarize=False, episodes=False, defer=formation)
    users = [f"u{n}" for n in range(USERS)]
    barrier = threading.Barrier(USERS)

    def chat(user: str) -> None:
        barrier.wait()
        for text in turns_of(user):
            graph.invoke({"messages": [("user", text)]}, thread_config(user, "burst"))

    with ThreadPoolExecutor(USERS) as pool:
        for done in [pool.submit(chat, u) for u in users]:
            done.result(timeout=120)  # re-raises what a user's thread raised
    assert formation.close(timeout=60), "the worker drained the queue"
    assert store.search((PENDING,), limit=1000) == []

    for user in users:
        stored = {i.value["name"]: i.value["description"]
                  for i in store.search(("entities", user), limit=1000, filter={"kind": "entity"})}
        expected = {f"Fact_{user}_{i}" for i in range(TURNS - 2)} | {f"City_{user}"}
        assert set(stored) == expected, f"{user}: lost or foreign facts"
        assert all(user in desc for desc in stored.values()), f"{user}: a foreign description"
        assert stored[f"City_{user}"] == f"City_{user} is Wien now, I moved.", (
            f"{user}: the older city overwrote the correction")
