"""``EpisodicMemoryMiddleware`` inside ``create_agent`` with scripted chat models.

Two sessions of one user (the second remembers the first), two users (isolated), sync and
async, streaming (no internal call and no summary reaches ``stream_mode="messages"``), the
user id from the run's context, and a tool loop that is summarised without breaking a request.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore

from langgraph_episodic import EpisodicMemoryMiddleware
from langgraph_episodic.graph import UserProfiles

from .conftest import cfg
from .fakes import ScriptedFakeModel, ToolCallingFakeModel, structured_reply
from .test_property_conversations import assert_valid_request


def system_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages if isinstance(m, SystemMessage))


def agent_for(store: BaseStore, agent_model: Any, **options: Any) -> Any:
    return create_agent(agent_model, tools=[], system_prompt="You are helpful.",
                        middleware=[EpisodicMemoryMiddleware(store=store, **options)],
                        store=store, checkpointer=InMemorySaver())


async def ask(agent: Any, text: str, config: Any, mode: str, **kw: Any) -> dict[str, Any]:
    payload = {"messages": [HumanMessage(text)]}
    if mode == "sync":
        return dict(agent.invoke(payload, config, **kw))
    return dict(await agent.ainvoke(payload, config, **kw))


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_second_session_remembers_the_first_and_users_are_isolated(
    store: BaseStore, mode: str
) -> None:
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    UserProfiles(store).save("alice", "Prefers answers in German")
    agent = agent_for(store, model)
    await ask(agent, "I work at ACME in Berlin.", cfg("alice", "s1"), mode)
    out = await ask(agent, "Where do I work?", cfg("alice", "s2"), mode)
    first_request = model.sent[1]
    assert "ACME" in system_text(first_request)  # loaded before the first answer of session 2
    assert "Prefers answers in German" in system_text(first_request)
    assert [m.content for m in first_request if isinstance(m, HumanMessage)] == ["Where do I work?"]
    assert "ACME" in out["entities"]
    await ask(agent, "Where do I work?", cfg("bob", "s1"), mode)
    assert "ACME" not in system_text(model.sent[2])
    assert "German" not in system_text(model.sent[2])
    assert store.search(("entities", "bob")) == []


def test_user_id_comes_from_the_run_context(store: BaseStore) -> None:
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    agent = agent_for(store, model)
    agent.invoke({"messages": [HumanMessage("I use LangGraph daily.")]},
                 {"configurable": {"thread_id": "t1"}}, context={"user_id": "carol"})
    assert store.get(("entities", "carol"), "langgraph") is not None


@pytest.mark.parametrize(
    ("options", "named"),
    [({"window_tokens": 0}, "window_tokens"), ({"window_tokens": -5}, "window_tokens"),
     ({"keep": ("messages", -1)}, "keep"), ({"keep": ("pages", 3)}, "keep"),
     ({"keep": 6}, "keep")],
)  # fmt: skip
def test_bad_compaction_options_are_refused_when_built(options: dict[str, Any], named: str
                                                       ) -> None:
    """As the graph's summarise and window nodes refuse them: before any turn runs."""
    with pytest.raises(ValueError) as refused:
        EpisodicMemoryMiddleware(**options)
    assert named in str(refused.value)


def test_thanks_and_greetings_to_a_name_are_no_facts_about_it(store: BaseStore) -> None:
    agent = agent_for(store, ScriptedFakeModel(respond=lambda msgs: "Noted."))
    agent.invoke({"messages": [HumanMessage("Thanks, Maria!")]}, cfg("erin", "s1"))
    assert store.search(("entities", "erin")) == []
    agent.invoke({"messages": [HumanMessage("Hey Maria! Yesterday Maria started at ACME.")]},
                 cfg("erin", "s1"))
    facts = [i.value["text"] for i in store.search(("entities", "erin"), filter={"kind": "fact",
                                                                                "subject": "maria"})]
    assert facts == ["Yesterday Maria started at ACME."]


def test_a_plain_chat_records_no_episode_and_feedback_does(store: BaseStore) -> None:
    model = ScriptedFakeModel(respond=lambda msgs: "Use sorted().")
    agent = agent_for(store, model)
    out = agent.invoke({"messages": [HumanMessage("Hallo, wie geht's?")]}, cfg("dora", "s1"))
    assert "episode_id" not in out
    assert "Strategy" not in system_text(model.sent[0])
    out = agent.invoke({"messages": [HumanMessage("Sort a list of numbers.")],
                        "feedback": {"reward": 1.0}}, cfg("dora", "s1"))
    assert out["episode_id"]


SUMMARY = "SUMMARY-TEXT: the user works at ACME."


def internal_models() -> ToolCallingFakeModel:
    def respond(msgs: list[BaseMessage]) -> AIMessage | str:
        if "ExtractedEntities" in str([m.content for m in msgs]) or "named entities" in str(
                msgs[0].content):
            return structured_reply("ExtractedEntities", entities=[
                {"name": "ACME", "description": "ACME is the user's employer."}])
        return SUMMARY

    return ScriptedFakeModel(respond=respond, disable_streaming=True)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_streaming_shows_only_the_agent_answer(store: BaseStore, mode: str) -> None:
    agent_model = ScriptedFakeModel(respond=lambda msgs: f"Answer {len(msgs)}.",
                                    disable_streaming=True)
    agent = agent_for(store, agent_model, model=internal_models(), trigger=("messages", 4),
                      keep=("messages", 2))
    config = cfg("erin", "s1")
    seen: list[tuple[Any, dict[str, Any]]] = []
    for i in range(5):
        payload = {"messages": [HumanMessage(f"I work at ACME, note {i}.")]}
        if mode == "sync":
            seen += list(agent.stream(payload, config, stream_mode="messages"))
        else:
            seen += [e async for e in agent.astream(payload, config, stream_mode="messages")]
    state = agent.get_state(config).values
    assert state["summary"] == SUMMARY and state["entities"]["ACME"]
    texts = [str(chunk.content) for chunk, _ in seen]
    assert not any("SUMMARY-TEXT" in t for t in texts)
    assert not any(getattr(c, "tool_calls", None) or getattr(c, "tool_call_chunks", None)
                   for c, _ in seen)
    assert {meta["langgraph_node"] for c, meta in seen if isinstance(c, AIMessage)} == {"model"}
    assert any(t.startswith("Answer") for t in texts)


def test_a_long_tool_loop_is_summarised_and_every_request_stays_valid(store: BaseStore) -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value-of-{key} " + "x" * 200

    calls: dict[str, int] = {}

    def respond(msgs: list[BaseMessage]) -> AIMessage | str:
        question = str([m for m in msgs if isinstance(m, HumanMessage)][-1].content)
        calls[question] = calls.get(question, 0) + 1
        if calls[question] <= 3:
            return AIMessage("", tool_calls=[{"name": "lookup", "args": {"key": f"k{len(msgs)}"},
                                              "id": f"call-{len(model.sent)}", "type": "tool_call"}])
        return "Done."

    model = ScriptedFakeModel(respond=respond)
    agent = create_agent(model, tools=[lookup], system_prompt="Use tools.",
                         middleware=[EpisodicMemoryMiddleware(store=store, window_tokens=300,
                                                              trigger=("messages", 6),
                                                              keep=("messages", 3),
                                                              max_summary_tokens=5000,
                                                              max_input_tokens=10000)],
                         store=store, checkpointer=InMemorySaver())
    config = cfg("fay", "s1")
    for i in range(6):
        agent.invoke({"messages": [HumanMessage(f"Fact {i}: my code is C{i}. Look it up.")]}, config)
    for request in model.sent:
        assert_valid_request(request)
    state = agent.get_state(config).values
    assert state["summary_info"]["summarized_messages"] > 0
    assert "Summary of the earlier conversation" in system_text(model.sent[-1])
    kept = " ".join(str(m.content) for m in state["messages"])
    for i in range(6):
        assert f"C{i}" in state.get("summary", "") or f"C{i}" in kept
