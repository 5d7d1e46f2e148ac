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


def test_profile_facts_are_consolidated_like_the_tools_facts(clock: Clock) -> None:
    from langgraph_episodic.facts import fact_history
    from langgraph_episodic.graph.profiles import UserProfiles

    store = make_store("chroma")
    profiles = UserProfiles(store, clock=clock)
    profiles.save("alice", "Lives in Munich with her partner")
    profiles.save("alice", "Has a dog called Rex")
    clock.set(2026, 6, 15)
    profiles.save("alice", "Moved to Berlin last week")
    profiles.save("alice", "Does not have a dog anymore")
    assert [f.text for f in profiles.list("alice")] == ["Moved to Berlin last week"]
    assert [f.text for f in profiles.search("alice", "Munich")] == ["Moved to Berlin last week"]
    history = fact_history(store, ("user_profiles", "alice"))
    assert sorted((r.text, r.current) for _, r in history) == [
        ("Has a dog called Rex", False),
        ("Lives in Munich with her partner", False), ("Moved to Berlin last week", True)]
    assert profiles.clear("alice") == 1
    assert fact_history(store, ("user_profiles", "alice")) == []  # the history went too
