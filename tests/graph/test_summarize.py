"""The summarise node: thresholds, safe cuts (tool calls, latest human), LLM and extractive."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph import StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages

from langgraph_episodic.graph.state import EpisodicState
from langgraph_episodic.graph.summarize import summarize_node
from langgraph_episodic.kinds.compaction import plan_compaction
from langgraph_episodic.kinds.summaries import EXTRACTIVE_HEADER, SUMMARY_MESSAGE_ID

from .fakes import RecordingFakeModel, replies


def h(text: str, i: str) -> HumanMessage:
    return HumanMessage(text, id=i)


def ai(text: str, i: str, *calls: str) -> AIMessage:
    tool_calls = [{"name": f"tool_{c}", "args": {}, "id": c, "type": "tool_call"} for c in calls]
    return AIMessage(text, id=i, tool_calls=tool_calls)


def tool(call_id: str, i: str) -> ToolMessage:
    return ToolMessage(f"result of {call_id}.", tool_call_id=call_id, id=i)


def conversation(turns: int) -> list[BaseMessage]:
    msgs: list[BaseMessage] = []
    for t in range(turns):
        msgs += [h(f"Question {t}.", f"h{t}"), ai(f"Answer {t}.", f"a{t}")]
    return msgs


def apply(messages: list[BaseMessage], update: dict[str, Any]) -> list[BaseMessage]:
    return list(add_messages(messages, update["messages"]))  # type: ignore[arg-type]


def split(messages: list[BaseMessage], keep_last: int) -> tuple[list[BaseMessage], list[BaseMessage]]:
    c = plan_compaction(messages, trigger=[("messages", 0)], keep=("messages", keep_last))
    return c.leaving, c.kept


def assert_tool_groups_whole(messages: list[BaseMessage]) -> None:
    issued = set()
    for m in messages:
        if isinstance(m, AIMessage):
            issued |= {tc["id"] for tc in m.tool_calls}
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in issued, f"ToolMessage {m.id} kept without its AI message"


def test_below_threshold_nothing_happens() -> None:
    node = summarize_node(trigger=("messages", 10))
    assert node.invoke({"messages": conversation(5)}) == {}


def test_summarises_all_but_last_k_and_keeps_the_summary_in_its_own_key() -> None:
    msgs = [SystemMessage("You are helpful.", id="sys"), *conversation(6)]
    update = summarize_node(trigger=("messages", 10), keep=("messages", 4)).invoke({"messages": msgs})
    after = apply(msgs, update)
    assert [m.id for m in after] == ["sys", "h4", "a4", "h5", "a5"]
    assert update["summary"].startswith(EXTRACTIVE_HEADER)
    for t in range(4):
        assert f"Human: Question {t}." in update["summary"]
        assert f"AI: Answer {t}." in update["summary"]
    assert "Question 4" not in update["summary"]
    assert update["summary_info"] == {"summarized_messages": 8, "last_summarized_id": "a3",
                                      "method": "extractive"}


def test_a_legacy_summary_message_is_removed() -> None:
    msgs = [SystemMessage("old summary", id=SUMMARY_MESSAGE_ID), *conversation(6)]
    update = summarize_node(trigger=("messages", 10), keep=("messages", 4)).invoke({"messages": msgs})
    assert SUMMARY_MESSAGE_ID not in [m.id for m in apply(msgs, update)]


def test_second_summary_builds_on_the_first() -> None:
    node = summarize_node(trigger=("messages", 6), keep=("messages", 2))
    msgs = conversation(4)
    first = node.invoke({"messages": msgs})
    msgs = apply(msgs, first)
    msgs += [h("Question 9.", "h9"), ai("Answer 9.", "a9"), h("Question 10.", "h10"),
             ai("Answer 10.", "a10"), h("Question 11.", "h11")]
    second = node.invoke({"messages": msgs, "summary": first["summary"],
                          "summary_info": first["summary_info"]})
    assert all(isinstance(m, RemoveMessage) and m.id != REMOVE_ALL_MESSAGES
               for m in second["messages"]), "expected per-id removals"
    after = apply(msgs, second)
    assert [m.id for m in after] == ["h10", "a10", "h11"]
    assert "Question 0." in second["summary"] and "Question 9." in second["summary"]
    assert second["summary"].count(EXTRACTIVE_HEADER) == 1
    assert second["summary_info"]["summarized_messages"] == 6 + 4


def test_never_splits_a_tool_call_from_its_tool_message() -> None:
    msgs = [*conversation(3), h("Look it up.", "hq"), ai("", "ac", "c1"), tool("c1", "t1"),
            h("Thanks, and now?", "hl"), ai("Now this.", "al")]
    dropped, keep = split(msgs, keep_last=3)
    assert [m.id for m in keep] == ["hq", "ac", "t1", "hl", "al"]
    assert [m.id for m in dropped][-1] == "a2"


def test_regression_tool_turn_is_kept_whole_and_starts_with_the_human_question() -> None:
    """Issue 15, bug 1: the kept part was [AI(tool_calls), Tool, AI, Human, AI] without the
    question; the window then dropped it unsummarised."""
    msgs = [*conversation(3), h("Weather in Berlin?", "hq"), ai("", "ac", "c1"),
            tool("c1", "t1"), ai("12 degrees.", "af"), h("Thanks!", "hl"), ai("Welcome.", "al")]
    update = summarize_node(trigger=("messages", 8), keep=("messages", 5)).invoke({"messages": msgs})
    after = apply(msgs, update)
    assert isinstance(after[0], HumanMessage)
    assert [m.id for m in after] == ["hq", "ac", "t1", "af", "hl", "al"]


def test_latest_human_message_starts_the_kept_part_when_it_is_older_than_k() -> None:
    msgs = [*conversation(3), h("Look it up.", "hq"), ai("", "ac", "c1"), tool("c1", "t1"),
            ai("Found it.", "af")]
    _, keep = split(msgs, keep_last=4)
    assert [m.id for m in keep] == ["hq", "ac", "t1", "af"]


def test_inside_the_latest_turn_whole_steps_leave_and_the_question_stays() -> None:
    msgs = [h("Do three lookups.", "hq"), ai("", "a1", "c1"), tool("c1", "t1"),
            ai("", "a2", "c2"), tool("c2", "t2"), ai("", "a3", "c3"), tool("c3", "t3"),
            ai("Done.", "af")]
    dropped, keep = split(msgs, keep_last=1)
    assert [m.id for m in keep] == ["hq", "af"]
    assert [m.id for m in dropped] == ["a1", "t1", "a2", "t2", "a3", "t3"]


def test_parallel_tool_calls_stay_together() -> None:
    msgs = [*conversation(4), h("Check three things.", "hq"), ai("", "ac", "c1", "c2", "c3"),
            tool("c1", "t1"), tool("c2", "t2"), tool("c3", "t3"), h("And?", "hl"),
            ai("All done.", "af")]
    for keep_last in range(1, 8):
        dropped, keep = split(msgs, keep_last=keep_last)
        assert_tool_groups_whole(keep)
        assert "hl" in [m.id for m in keep]
        assert isinstance(keep[0], HumanMessage)
        dropped_ids = {m.id for m in dropped}
        assert not ({"ac", "t1", "t2", "t3"} & dropped_ids) or {"ac", "t1", "t2", "t3"} <= dropped_ids


def test_tool_message_answering_an_earlier_call_out_of_order() -> None:
    msgs = [h("Start.", "h0"), ai("", "a0", "c1", "c2"), tool("c1", "t1"), h("More.", "h1"),
            ai("Partial.", "a1"), tool("c2", "t2"), ai("Done.", "a2")]
    _, keep = split(msgs, keep_last=2)
    assert isinstance(keep[0], HumanMessage)


def test_never_drops_the_latest_human_message() -> None:
    msgs = [*conversation(5), h("The latest question.", "hl"), ai("", "ac", "c1"),
            tool("c1", "t1"), ai("x", "a1"), ai("y", "a2"), ai("z", "a3")]
    dropped, keep = split(msgs, keep_last=1)
    assert "hl" in [m.id for m in keep]
    assert "hl" not in [m.id for m in dropped]


def test_node_in_graph_with_tool_calls_leaves_a_valid_history() -> None:
    msgs = [*conversation(4), h("Check.", "hq"), ai("", "ac", "c1", "c2"), tool("c1", "t1"),
            tool("c2", "t2"), ai("Checked.", "af")]
    update = summarize_node(trigger=("messages", 8), keep=("messages", 2)).invoke({"messages": msgs})
    after = apply(msgs, update)
    assert_tool_groups_whole(after)
    assert "hq" in [m.id for m in after]


def test_token_budget_triggers_summary() -> None:
    msgs = [h("word " * 200, "h0"), ai("ok.", "a0"), h("Next.", "h1"), ai("Fine.", "a1")]
    assert summarize_node(trigger=("messages", 50)).invoke({"messages": msgs}) == {}
    update = summarize_node(trigger=("tokens", 100), keep=("tokens", 50)).invoke(
        {"messages": msgs})
    assert [m.id for m in apply(msgs, update)] == ["h1", "a1"]


def test_custom_token_counter_is_used() -> None:
    calls: list[int] = []

    def counter(messages: Any) -> int:
        calls.append(len(messages))
        return 1000 * len(messages)

    msgs = conversation(2)
    update = summarize_node(trigger=("tokens", 3000), keep=("messages", 1), token_counter=counter).invoke({"messages": msgs})
    assert calls and update["messages"]


def test_llm_path_sends_old_summary_and_dropped_messages() -> None:
    model = RecordingFakeModel(messages=replies("Alice asked four questions."))
    msgs = conversation(6)
    update = summarize_node(trigger=("messages", 10), keep=("messages", 4), model=model).invoke(
        {"messages": msgs, "summary": "Earlier: Alice said hello."}
    )
    assert update["summary"] == "Alice asked four questions."
    prompt = "\n".join(str(m.content) for m in model.sent[0])
    assert "Earlier: Alice said hello." in prompt
    assert "Question 0." in prompt and "Answer 3." in prompt and "Question 4." not in prompt
    assert update["summary_info"]["method"] == "llm"


async def test_async_llm_path_matches_sync() -> None:
    model = RecordingFakeModel(messages=replies("S1", "S1"))
    node = summarize_node(trigger=("messages", 4), keep=("messages", 2), model=model)
    msgs = conversation(3)
    sync_update = node.invoke({"messages": msgs})
    async_update = await node.ainvoke({"messages": msgs})
    assert [getattr(m, "id", None) for m in sync_update["messages"]] == [
        getattr(m, "id", None) for m in async_update["messages"]
    ]
    assert sync_update["summary"] == async_update["summary"] == "S1"


def test_extractive_summary_is_capped_dropping_oldest_lines() -> None:
    msgs = [h(f"Sentence number {i} is here.", f"h{i}") for i in range(40)] + [h("Last.", "hz")]
    update = summarize_node(trigger=("messages", 5), keep=("messages", 1), max_summary_chars=300).invoke(
        {"messages": msgs}
    )
    assert len(update["summary"]) <= 300
    assert "Sentence number 39" in update["summary"]
    assert "Sentence number 0 " not in update["summary"]


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="Set a trigger"):
        summarize_node(trigger=[])
    with pytest.raises(ValueError, match="keep"):
        summarize_node(keep=("messages", -1))
    with pytest.raises(TypeError, match="max_messages"):
        summarize_node(max_messages=10)  # type: ignore[call-arg]  # the old shorthand is gone
    with pytest.raises(ValueError, match="'messages', n"):
        summarize_node(trigger=("turns", 3))  # type: ignore[arg-type]  # the bad input under test
    with pytest.raises(ValueError, match="twice"):
        summarize_node(max_summary_tokens=1000, max_input_tokens=1500)


async def test_graph_runs_summary_sync_and_async() -> None:
    builder = StateGraph(EpisodicState)
    builder.add_node(summarize_node(trigger=("messages", 4), keep=("messages", 2)))
    builder.set_entry_point("summarize")
    graph = builder.compile()
    out = graph.invoke({"messages": conversation(3)})
    aout = await graph.ainvoke({"messages": conversation(3)})
    for result in (out, aout):
        assert [m.id for m in result["messages"]] == ["h2", "a2"]
        assert "Question 1." in result["summary"]
