"""The sliding-window node: token budget, system prompt, tool pairs, latest human, real trimming."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.graph.message import add_messages

from langgraph_episodic.graph.state import EpisodicState
from langgraph_episodic.graph.window import sliding_window_node, window_messages

from .test_summarize import ai, assert_tool_groups_whole, conversation, h, tool


def count_messages(messages: Any) -> int:
    return len(messages)


def test_keeps_the_newest_messages_within_budget() -> None:
    msgs = conversation(10)
    kept = window_messages(msgs, max_tokens=4, token_counter=count_messages)
    assert [m.id for m in kept] == ["h8", "a8", "h9", "a9"]


def test_budget_with_approximate_default_counter() -> None:
    msgs = conversation(20)
    kept = window_messages(msgs, max_tokens=60)
    assert count_tokens_approximately(kept) <= 60
    assert kept[-1].id == "a19" and isinstance(kept[0], HumanMessage)
    longer = window_messages(msgs, max_tokens=120)
    assert len(longer) > len(kept)


def test_starts_on_a_human_message() -> None:
    msgs = conversation(10)
    kept = window_messages(msgs, max_tokens=5, token_counter=count_messages)
    assert isinstance(kept[0], HumanMessage)
    assert [m.id for m in kept] == ["h8", "a8", "h9", "a9"]


def test_leading_system_messages_are_kept_and_counted() -> None:
    msgs = [SystemMessage("Be brief.", id="sys"), SystemMessage("Rules.", id="rules"),
            *conversation(10)]
    kept = window_messages(msgs, max_tokens=6, token_counter=count_messages)
    assert [m.id for m in kept] == ["sys", "rules", "h8", "a8", "h9", "a9"]


def test_tool_call_groups_are_kept_whole() -> None:
    msgs = [*conversation(3), h("Check both.", "hq"), ai("", "ac", "c1", "c2"), tool("c1", "t1"),
            tool("c2", "t2"), ai("Both fine.", "af")]
    for budget in range(1, 12):
        kept = window_messages(msgs, max_tokens=budget, token_counter=count_messages)
        assert_tool_groups_whole(kept)


def test_latest_human_message_is_kept_even_over_budget(caplog: pytest.LogCaptureFixture) -> None:
    msgs = [*conversation(3), h("word " * 400, "big"), ai("ok", "a")]
    with caplog.at_level(logging.WARNING):
        kept = window_messages(msgs, max_tokens=20)
    assert [m.id for m in kept] == ["big", "a"]
    assert "need more than window_tokens=20" in caplog.text


def test_invalid_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        sliding_window_node(max_tokens=0)


def test_node_returns_remove_operations_that_really_trim() -> None:
    msgs = conversation(10)
    update = sliding_window_node(max_tokens=4, token_counter=count_messages).invoke({"messages": msgs})
    after: list[BaseMessage] = list(add_messages(msgs, update["messages"]))  # type: ignore[arg-type]
    assert [m.id for m in after] == ["h8", "a8", "h9", "a9"]


def test_node_without_ids_replaces_all() -> None:
    msgs = [HumanMessage(f"q{i}") for i in range(5)] + [AIMessage("a")]
    update = sliding_window_node(max_tokens=2, token_counter=count_messages).invoke({"messages": msgs})
    after = list(add_messages(msgs, update["messages"]))  # type: ignore[arg-type]
    assert [m.content for m in after] == ["q4", "a"]


def test_nothing_to_drop_returns_no_update() -> None:
    assert sliding_window_node(max_tokens=1000).invoke({"messages": conversation(2)}) == {}


async def test_in_graph_state_and_checkpoint_shrink_sync_and_async() -> None:
    builder = StateGraph(EpisodicState)
    builder.add_node(sliding_window_node(max_tokens=4, token_counter=count_messages))
    builder.set_entry_point("sliding_window")
    graph = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    for i in range(5):
        graph.invoke({"messages": [h(f"q{i}", f"h{i}"), ai(f"a{i}", f"a{i}")]}, config)
    assert [m.id for m in graph.get_state(config).values["messages"]] == ["h3", "a3", "h4", "a4"]
    aconfig: Any = {"configurable": {"thread_id": "t2"}}
    for i in range(5):
        await graph.ainvoke({"messages": [h(f"q{i}", f"h{i}"), ai(f"a{i}", f"a{i}")]}, aconfig)
    state = await graph.aget_state(aconfig)
    assert [m.id for m in state.values["messages"]] == ["h3", "a3", "h4", "a4"]
