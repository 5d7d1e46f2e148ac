"""Property: random conversations with tool calls never lose a fact and never send a bad request.

Hundreds of random conversations (turns of a human message, zero to three tool steps with
parallel calls, a final answer) are pushed through the sliding window + summarise nodes, and
through ``EpisodicMemoryMiddleware`` in ``create_agent``. Every request a model would receive is
valid by OpenAI's and Anthropic's rules (system first, then a user message; each tool call
answered right after it; no orphan tool result), and every fact that left the list is in the
summary.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.message import add_messages
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import EpisodicMemoryMiddleware, SummaryOptions, WindowOptions
from langgraph_episodic.graph.summarize import summarize_node
from langgraph_episodic.graph.window import sliding_window_node
from langgraph_episodic.graph.wiring import memory_system_prompt

from .fakes import ScriptedFakeModel

FACT = re.compile(r"\bF\d+x\b")


def assert_valid_request(messages: list[BaseMessage]) -> None:
    """OpenAI's and Anthropic's rules for a chat request with tools."""
    n = 0
    while n < len(messages) and isinstance(messages[n], SystemMessage):
        n += 1
    body = messages[n:]
    assert not any(isinstance(m, SystemMessage) for m in body), "system message after the start"
    if not body:
        return
    assert isinstance(body[0], HumanMessage), f"first message is {body[0].type}, not user"
    i = 0
    while i < len(body):
        m = body[i]
        assert not isinstance(m, ToolMessage), f"orphan tool result {m.tool_call_id}"
        i += 1
        if isinstance(m, AIMessage) and m.tool_calls:
            expected = {tc["id"] for tc in m.tool_calls}
            answered = set()
            while i < len(body) and isinstance(body[i], ToolMessage):
                answer = body[i]
                assert isinstance(answer, ToolMessage)
                assert answer.tool_call_id in expected, f"tool result {answer.tool_call_id} " \
                    "does not answer the call right before it"
                answered.add(answer.tool_call_id)
                i += 1
            assert answered == expected, f"unanswered tool calls {expected - answered}"


def facts(text: str) -> set[str]:
    return set(FACT.findall(text))


@dataclass(frozen=True)
class Turn:
    human: str
    steps: tuple[tuple[str, ...], ...]  # each step: the facts its parallel calls look up
    answer: str


@st.composite
def conversations(draw: Any) -> list[Turn]:
    counter = itertools.count()
    turns = []
    for _ in range(draw(st.integers(1, 12))):
        steps = tuple(
            tuple(f"F{next(counter)}x" for _ in range(draw(st.integers(1, 3))))
            for _ in range(draw(st.integers(0, 3)))
        )
        filler = " and more" * draw(st.integers(0, 30))
        turns.append(Turn(f"F{next(counter)}x is what I say{filler}.", steps,
                          f"F{next(counter)}x is my answer."))
    return turns


def turn_messages(turn: Turn, ids: Any) -> list[list[BaseMessage]]:
    """The agent's messages of one turn, step by step (each step follows one model call)."""
    out: list[list[BaseMessage]] = []
    for step in turn.steps:
        calls = [{"name": "lookup", "args": {"key": f}, "id": f"c{next(ids)}", "type": "tool_call"}
                 for f in step]
        ai = AIMessage("", tool_calls=calls, id=f"m{next(ids)}")
        tools = [ToolMessage(f"{c['args']['key']} found.", tool_call_id=c["id"],
                             id=f"m{next(ids)}") for c in calls]
        out.append([ai, *tools])
    out.append([AIMessage(turn.answer, id=f"m{next(ids)}")])
    return out


def apply(messages: list[BaseMessage], update: dict[str, Any]) -> list[BaseMessage]:
    if "messages" not in update:
        return messages
    return list(add_messages(messages, update["messages"]))  # type: ignore[arg-type]


window = sliding_window_node(max_tokens=150, summarize=True, max_summary_tokens=20_000,
                             max_input_tokens=40_000)
summarize = summarize_node(trigger=[("messages", 8), ("tokens", 120)], keep=("messages", 3),
                           max_summary_tokens=20_000, max_input_tokens=40_000)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations())
def test_window_and_summary_nodes_lose_nothing_and_send_valid_requests(turns: list[Turn]) -> None:
    ids = itertools.count()
    state: dict[str, Any] = {"messages": [SystemMessage("Be brief.", id="sys")], "summary": ""}
    said: set[str] = set()
    for turn in turns:
        state["messages"] = apply(state["messages"], {"messages": [
            HumanMessage(turn.human, id=f"m{next(ids)}")]})
        said |= facts(turn.human)
        update = window.invoke(state)
        state = {**state, **update, "messages": apply(state["messages"], update)}
        for step in turn_messages(turn, ids):
            request = [SystemMessage(memory_system_prompt(state)), *state["messages"][1:]]
            assert_valid_request(request)
            state["messages"] = apply(state["messages"], {"messages": step})
            said |= facts(" ".join(str(m.content) for m in step))
        update = summarize.invoke(state)
        state = {**state, **update, "messages": apply(state["messages"], update)}
        kept = facts(" ".join(str(m.content) for m in state["messages"]))
        assert said - kept <= facts(state["summary"]), "a fact left without the summary"
        assert state["messages"][0].id == "sys"
        assert_valid_request(state["messages"])


class FactKeepingSummarizer(ScriptedFakeModel):
    """A summary model that keeps every fact it is shown (a perfect summariser)."""


def keep_facts(messages: list[BaseMessage]) -> str:
    return "Facts: " + " ".join(sorted(facts(" ".join(str(m.content) for m in messages))))


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"{key} found."


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations())
def test_middleware_loses_nothing_and_every_request_is_valid(turns: list[Turn]) -> None:
    ids = itertools.count()
    script: list[AIMessage] = []
    for turn in turns:
        script += [step[0] for step in turn_messages(turn, ids) if isinstance(step[0], AIMessage)]
    replies = iter(script)
    agent_model = ScriptedFakeModel(respond=lambda msgs: next(replies))
    store = InMemoryStore()
    middleware = EpisodicMemoryMiddleware(
        store=store, model=FactKeepingSummarizer(respond=keep_facts),
        trigger=("messages", 8), keep=("messages", 3), window_tokens=150,
        max_summary_tokens=20_000, max_input_tokens=40_000, entities=False)
    agent = create_agent(agent_model, tools=[lookup], middleware=[middleware], store=store,
                         checkpointer=InMemorySaver())
    config: Any = {"configurable": {"user_id": "u", "thread_id": "t"}}
    said: set[str] = set()
    for turn in turns:
        agent.invoke({"messages": [HumanMessage(turn.human)]}, config)
        said |= facts(turn.human) | {f for step in turn.steps for f in step} | facts(turn.answer)
    for request in agent_model.sent:
        assert_valid_request(request)
    state = agent.get_state(config).values
    kept = facts(" ".join(str(m.content) for m in state["messages"]))
    assert said - kept <= facts(state.get("summary", "")), "a fact left without the summary"


@st.composite
def long_conversations(draw: Any) -> list[Turn]:
    turns = draw(st.lists(conversations(), min_size=3, max_size=6))
    counter = itertools.count()

    def fresh(text: str) -> str:  # every fact unique across the joined conversations
        return FACT.sub(lambda m: f"F{next(counter)}x", text)

    return [Turn(fresh(t.human), tuple(tuple(fresh(f) for f in s) for s in t.steps),
                 fresh(t.answer)) for group in turns for t in group]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_conversations())
def test_default_wiring_keeps_every_fact_over_long_conversations(turns: list[Turn]) -> None:
    """Up to 72 turns with tool steps through ``build_memory_graph``'s default window and
    summary (the wiring of issue 15's reviewed 60-turn conversation)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_episodic import build_memory_graph

    ids = itertools.count()
    plan = {turn.human: turn_messages(turn, ids) for turn in turns}

    def agent(state: dict[str, Any]) -> dict[str, Any]:
        messages = list(state["messages"])
        out: list[BaseMessage] = []
        for step in plan[str(messages[-1].content)]:
            assert_valid_request([SystemMessage(memory_system_prompt(state)), *messages, *out])
            out += step
        return {"messages": out}

    graph = build_memory_graph(agent, store=InMemoryStore(), checkpointer=InMemorySaver(),
                               episodes=False, entities=False,
                               window=WindowOptions(max_tokens=400),
                               summarize=SummaryOptions(max_summary_tokens=20_000,
                                                        max_input_tokens=40_000))
    config: Any = {"configurable": {"user_id": "u", "thread_id": "t"}}
    said: set[str] = set()
    for turn in turns:
        state = graph.invoke({"messages": [HumanMessage(turn.human)]}, config)
        said |= facts(turn.human) | {f for step in turn.steps for f in step} | facts(turn.answer)
        kept = facts(" ".join(str(m.content) for m in state["messages"]))
        assert said - kept <= facts(state.get("summary", "")), "a fact left without the summary"
        assert_valid_request(list(state["messages"]))
    if len(turns) >= 8:
        assert state["summary_info"]["summarized_messages"] > 0  # the path was exercised
