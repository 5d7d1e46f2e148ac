"""Other readers of the tools' memories see current facts only: the middleware's system
message leaves replaced versions out."""

from __future__ import annotations

from langgraph_episodic._effects import run
from langgraph_episodic.middleware import EpisodicMemoryMiddleware
from langgraph_episodic.tools import create_memory_tools

from .conftest import Clock, make_store, user


def test_the_middleware_shows_the_current_fact_not_the_replaced_one(clock: Clock) -> None:
    store = make_store("chroma")
    save, _ = create_memory_tools(store=store, clock=clock)
    save.invoke({"information": "Ich wohne in München."}, user("alice"))
    clock.set(2026, 6, 15)
    save.invoke({"information": "Ich bin nach Berlin gezogen."}, user("alice"))
    middleware = EpisodicMemoryMiddleware(store, entities=False, profile=False, episodes=False)
    state = {"messages": [("user", "Ich wohne in München, oder?")]}
    update = run(middleware._before_agent(state, user("alice")))
    assert "Berlin" in update["memory_context"]
    assert "München." not in update["memory_context"]
