"""Regression tests of issue 15: concurrent entity merges, streaming, bounds, late entities,
the question filter, chat-first defaults, OutputLog's storage cap and the working-memory nodes."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import EpisodicState, add_memory_nodes, build_memory_graph
from langgraph_episodic.facts import fact_history
from langgraph_episodic.graph import (
    CustomerHistory,
    OutputLog,
    SummaryOptions,
    entity_extract_node,
    record_episode_node,
)
from langgraph_episodic.graph.summarize import summarize_node
from langgraph_episodic.graph.window import sliding_window_node
from langgraph_episodic.kinds.entities import statements
from langgraph_episodic.kinds.summaries import Summarizer
from tests.store._support import switching_every_microsecond

from .conftest import cfg
from .fakes import ScriptedFakeModel, ToolCallingFakeModel, structured_reply

FACTS = [f"Alice owns car number {i}." for i in range(8)]


def test_regression_concurrent_entity_merges_keep_every_fact(store: BaseStore) -> None:
    """Bug 2: 8 sessions of one user at once kept 1 of 8 facts on ChromaStore."""
    node = entity_extract_node(store=store)
    barrier = threading.Barrier(len(FACTS))
    done: list[int] = []

    def session(i: int) -> None:
        barrier.wait()
        node.invoke({"messages": [("user", FACTS[i])]}, cfg("alice", f"s{i}"))
        done.append(i)

    with switching_every_microsecond():
        threads = [threading.Thread(target=session, args=(i,)) for i in range(len(FACTS))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(done) == list(range(len(FACTS)))  # every session finished
    assert_every_fact_kept(store)


def assert_every_fact_kept(store: BaseStore) -> None:
    """Every fact is stored (current, or history when a later one replaced it), one current
    version per fact, and the entity's description holds exactly the current ones."""
    ns = ("entities", "alice")
    versions = [rec for _, rec in fact_history(store, ns) if rec.subject == "alice"]
    assert {rec.text for rec in versions} == set(FACTS)
    now = [rec for rec in versions if rec.current]
    assert len({rec.lineage for rec in now}) == len(now)
    item = store.get(ns, "alice")
    assert item is not None
    assert all(rec.text in item.value["description"] for rec in now)
    assert not any(rec.text in item.value["description"] for rec in versions if not rec.current)


class SlowReads(InMemoryStore):
    """Pauses every async read, so that concurrent merges interleave between read and write."""

    async def aget(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.01)
        return await super().aget(*args, **kwargs)


async def test_regression_concurrent_async_merges_keep_every_fact() -> None:
    store = SlowReads()
    node = entity_extract_node(store=store)
    await asyncio.gather(*(node.ainvoke({"messages": [("user", f)]}, cfg("alice", f"s{i}"))
                           for i, f in enumerate(FACTS)))
    assert_every_fact_kept(store)


def test_regression_graph_streams_no_internal_call_and_no_summary() -> None:
    """Bug 3: summary text and ExtractedEntities chunks reached stream_mode="messages"."""

    def internal(msgs: list[BaseMessage]) -> AIMessage | str:
        if "named entities" in str(msgs[0].content):
            return structured_reply("ExtractedEntities", entities=[
                {"name": "ACME", "description": "The employer."}])
        return "SUMMARY-TEXT"

    graph = build_memory_graph(
        ScriptedFakeModel(respond=lambda m: "Noted.", disable_streaming=True),
        model=ScriptedFakeModel(respond=internal, disable_streaming=True),
        store=InMemoryStore(), checkpointer=InMemorySaver(), episodes=False,
        summarize=SummaryOptions(trigger=("messages", 4), keep=("messages", 2)))
    seen = []
    for i in range(6):
        seen += list(graph.stream({"messages": [("user", f"I work at ACME, note {i}.")]},
                                  cfg("alice", "s1"), stream_mode="messages"))
    state = graph.get_state(cfg("alice", "s1")).values
    assert state["summary"] == "SUMMARY-TEXT" and "ACME" in state["entities"]
    assert not any("SUMMARY-TEXT" in str(c.content) for c, _ in seen)
    assert not any(getattr(c, "tool_call_chunks", None) or getattr(c, "tool_calls", None)
                   for c, _ in seen)
    assert {meta["langgraph_node"] for c, _meta in seen if isinstance(c, AIMessage)
            for meta in [_meta]} == {"agent"}


def test_regression_summary_is_bounded_with_a_summary_of_the_summary() -> None:
    """Bug 4: the summary grew to 8,039 characters, bigger than the window."""
    growing = ScriptedFakeModel(respond=lambda msgs: (
        "Short." if "Shorten" in str(msgs[0].content) else "Long summary. " * 400))
    node = summarize_node(model=growing, trigger=("messages", 2), keep=("messages", 1),
                          max_summary_tokens=50, max_input_tokens=400)
    msgs = [HumanMessage("Hello there.", id="h1"), AIMessage("Hi.", id="a1"),
            HumanMessage("Next.", id="h2")]
    update = node.invoke({"messages": msgs})
    assert update["summary"] == "Short."
    assert any("Shorten" in str(sent[0].content) for sent in growing.sent)


def test_regression_summary_input_is_capped_and_nothing_is_skipped() -> None:
    """Bug 4: one big tool result sent 800,526 characters to the summary model."""
    model = ScriptedFakeModel(respond=lambda msgs: "ok")
    node = summarize_node(model=model, trigger=("messages", 2), keep=("messages", 1),
                          max_summary_tokens=100, max_input_tokens=1000)
    msgs = [HumanMessage("Fetch the log.", id="h1"),
            AIMessage("", id="a1", tool_calls=[{"name": "log", "args": {}, "id": "c1"}]),
            ToolMessage("START " + "x" * 800_000 + " END", tool_call_id="c1", id="t1"),
            AIMessage("The log is long.", id="a2"), HumanMessage("Thanks.", id="h2")]
    node.invoke({"messages": msgs})
    sent = [" ".join(str(m.content) for m in request) for request in model.sent]
    assert all(len(text) < 1000 * 4 + 1000 for text in sent)
    joined = " ".join(sent)
    assert "START" in joined and "END" in joined and "Fetch the log." in joined


def test_regression_window_folds_what_it_drops_into_the_summary() -> None:
    node = sliding_window_node(max_tokens=30, summarize=True)
    msgs = [HumanMessage(f"Fact {i} is important here.", id=f"h{i}") for i in range(10)]
    update = node.invoke({"messages": msgs})
    removed = {m.id for m in update["messages"]}
    for i in range(10):
        if f"h{i}" in removed:
            assert f"Fact {i} is important" in update["summary"]


def test_summarizer_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="positive"):
        Summarizer(max_summary_tokens=0)


def test_regression_entities_reach_the_first_answer_of_a_new_session() -> None:
    """Bug 5: entities were loaded after the agent ran."""
    agent = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    graph = build_memory_graph(agent, store=InMemoryStore(), checkpointer=InMemorySaver(),
                               episodes=False)
    graph.invoke({"messages": [("user", "I work at ACME.")]}, cfg("alice", "s1"))
    graph.invoke({"messages": [("user", "Where do I work?")]}, cfg("alice", "s2"))
    assert "ACME" in str(agent.sent[1][0].content)


@pytest.mark.parametrize("text", ["Wie besprochen arbeite ich jetzt bei Siemens.",
                                  "Can you remember that my wife is Julia."])
def test_regression_statements_are_not_dropped_as_questions(text: str) -> None:
    """Bug 6: the question filter dropped statements before any model saw them."""
    assert statements(text) == [text]
    model = ToolCallingFakeModel(messages=iter([structured_reply("ExtractedEntities",
                                                                 entities=[])]))
    entity_extract_node(model=model, store=InMemoryStore()).invoke(
        {"messages": [("user", text)]}, cfg())
    assert text in str(model.sent[0][-1].content)


def test_rules_find_siemens_in_an_inverted_german_sentence() -> None:
    node = entity_extract_node(store=InMemoryStore())
    out = node.invoke({"messages": [("user", "Wie besprochen arbeite ich jetzt bei Siemens.")]},
                      cfg())
    assert "Siemens" in out["entities"]


def test_chat_first_a_plain_chat_gets_no_strategy_instruction() -> None:
    agent = ScriptedFakeModel(respond=lambda msgs: "Gut, danke!")
    graph = build_memory_graph(agent, store=InMemoryStore(), checkpointer=InMemorySaver())
    out = graph.invoke({"messages": [("user", "Hallo, wie geht's?")]}, cfg("hans", "s1"))
    assert "Strategy" not in str(agent.sent[0][0].content)
    assert "episode_id" not in out
    out = graph.invoke({"messages": [("user", "Sort a list.")], "task": "Sort a list",
                        "feedback": {"reward": 1.0}}, cfg("hans", "s1"))
    assert "Strategy" in str(agent.sent[1][0].content) and out["episode_id"]


def test_every_node_option_is_reachable_through_add_memory_nodes() -> None:
    """Each field of an options record is a parameter of the node factory it configures, and
    ``add_memory_nodes`` passes it on (the recall node refuses a 10-character prompt bound)."""
    import dataclasses
    import inspect

    from langgraph_episodic.graph import (
        EntityOptions,
        EpisodeOptions,
        WindowOptions,
        entity_extract_node,
        load_entities_node,
        recall_node,
        select_strategy_node,
        sliding_window_node,
        summarize_node,
    )

    factories = {
        WindowOptions: [sliding_window_node],
        SummaryOptions: [summarize_node],
        EntityOptions: [load_entities_node, entity_extract_node],
        EpisodeOptions: [recall_node, select_strategy_node, record_episode_node],
    }
    renamed = {"limit": "load_limit"}  # entity_extract_node's name for the load limit
    for options, nodes in factories.items():
        params = set().union(*(inspect.signature(f).parameters for f in nodes))
        for field in dataclasses.fields(options):
            assert field.name in params or renamed.get(field.name) in params, field.name
    store = InMemoryStore()
    builder = StateGraph(EpisodicState)
    builder.add_node("agent", lambda state: {"messages": [AIMessage("ok")]})
    add_memory_nodes(builder, "agent", summarize=False, entities=False,
                     episodes=EpisodeOptions(max_prompt_chars=10))
    graph = builder.compile(store=store)
    cfg_ = {"configurable": {"user_id": "u", "thread_id": "t"}}
    with pytest.raises(ValueError, match="max_chars=10 is too small"):
        graph.invoke({"messages": [("user", "Sort a long list of numbers.")]}, cfg_)


def test_output_log_caps_what_it_stores() -> None:
    store = InMemoryStore()
    log = OutputLog(store, max_items=5, keep_days=7)
    day = 86400.0
    log.record("alice", "An old warning.", now=1000.0)
    for i in range(8):
        log.record("alice", f"Warning number {i}.", now=1000.0 + 8 * day + i)
    stored = store.search(("output_log", "alice"), limit=100)
    assert len(stored) == 5
    assert "An old warning." not in {i.value["text"] for i in stored}


def test_history_and_output_log_wire_as_nodes() -> None:
    store = InMemoryStore()
    agent = ScriptedFakeModel(respond=lambda msgs: "Your order ships today.")
    builder = StateGraph(EpisodicState)
    from langgraph_episodic.graph import memory_agent_node

    builder.add_node("agent", memory_agent_node(agent))
    add_memory_nodes(builder, "agent", store=store, episodes=False, summarize=False,
                     entities=False, history=CustomerHistory(store, ttl_days=None),
                     output_log=OutputLog(store))
    graph = builder.compile(store=store, checkpointer=InMemorySaver())
    graph.invoke({"messages": [("user", "Where is order 42?")]}, cfg("c1", "s1"))
    graph.invoke({"messages": [("user", "And now?")]}, cfg("c1", "s2"))
    prompt = str(agent.sent[1][0].content)
    assert "Where is order 42?" in prompt and "Already told the user" in prompt


def test_a_failing_summary_call_is_retried() -> None:
    attempts: list[int] = []

    def flaky(msgs: list[BaseMessage]) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("the provider hung up")
        return "Recovered summary."

    node = summarize_node(model=ScriptedFakeModel(respond=flaky), trigger=("messages", 2),
                          keep=("messages", 1))
    msgs = [HumanMessage("One.", id="h1"), AIMessage("Two.", id="a1"),
            HumanMessage("Three.", id="h2")]
    assert node.invoke({"messages": msgs})["summary"] == "Recovered summary."
    assert len(attempts) == 2
