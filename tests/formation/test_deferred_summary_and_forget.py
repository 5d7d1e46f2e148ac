"""With ``defer=``, the running summary is formed by the worker too, and a forget that falls
between a batch's read and its write leaves nothing of the user in the store.

The summary model records the thread of each call, so "not in the turn" is observed, not
timed; the agent records every request it gets, and each must be a valid message sequence
for the providers (system first, no tool result without the call before it).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from pydantic import Field

from langgraph_episodic import build_memory_graph, forget_user
from langgraph_episodic.formation import DeferredFormation
from langgraph_episodic.formation.summary import PENDING_HEADER
from langgraph_episodic.graph import SummaryOptions, WindowOptions
from langgraph_episodic.graph.threads import thread_config


class RecordingSummaryModel(BaseChatModel):
    """A summary model that names the thread it was called on; summaries are numbered."""

    threads: list[str] = Field(default_factory=list)
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "recording-summary"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RecordingSummaryModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        self.threads.append(threading.current_thread().name)
        self.calls += 1
        text = str(messages[-1].content)
        if "Write the updated summary." in text:
            reply = AIMessage(content=f"MODEL SUMMARY {self.calls}")
        else:  # an entity extraction: nothing to extract
            reply = AIMessage(content="", tool_calls=[{
                "name": "ExtractedEntities", "args": {"entities": []}, "id": "x",
                "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def check_valid(messages: Sequence[BaseMessage]) -> None:
    """What OpenAI and Anthropic accept: the first non-system message is a human one; every
    tool result answers a call of the AI message before it."""
    body = [m for m in messages if m.type != "system"]
    assert body and isinstance(body[0], HumanMessage), [m.type for m in messages]
    open_calls: set[str] = set()
    for message in body:
        if isinstance(message, AIMessage):
            open_calls = {str(c["id"]) for c in message.tool_calls}
        elif isinstance(message, ToolMessage):
            assert message.tool_call_id in open_calls, "a tool result without its call"
        else:
            open_calls = set()


def tool_agent(seen: list[tuple[str, list[BaseMessage]]]) -> Any:
    """Answers each turn with a tool call, its result and a final answer."""
    def agent(state: dict[str, Any]) -> dict[str, Any]:
        seen.append((str(state.get("summary") or ""), list(state["messages"])))
        n = len(seen)
        return {"messages": [
            AIMessage("", tool_calls=[{"name": "lookup", "args": {"n": n}, "id": f"c{n}"}]),
            ToolMessage(f"result {n}", tool_call_id=f"c{n}", name="lookup"),
            AIMessage(f"Answer {n}.")]}
    return agent


def test_the_summary_model_runs_in_the_worker_and_every_request_stays_valid(
        store: BaseStore) -> None:
    model = RecordingSummaryModel()
    formation = DeferredFormation(debounce=0.05)
    seen: list[tuple[str, list[BaseMessage]]] = []
    graph = build_memory_graph(tool_agent(seen), model=model, store=store,
                               checkpointer=InMemorySaver(), episodes=False, entities=False,
                               summarize=SummaryOptions(trigger=("messages", 6),
                                                        keep=("messages", 4)),
                               window=WindowOptions(max_tokens=400), defer=formation)
    config = thread_config("alice", "s1")
    try:
        for i in range(6):
            graph.invoke({"messages": [("user", f"Question number {i}, about topic {i}.")]},
                         config)
            if i == 2:
                assert formation.flush(timeout=10)
        assert formation.flush(timeout=10)
        graph.invoke({"messages": [("user", "And the last question?")]}, config)
    finally:
        formation.close(timeout=5)
    assert model.calls > 0, "the summary was formed"
    assert all(name.startswith("episodic-formation") for name in model.threads), (
        "no summary model call in the turn", model.threads)
    for _summary, messages in seen:
        check_valid(messages)
    summary, messages = seen[-1]
    assert summary.startswith("MODEL SUMMARY"), summary
    assert PENDING_HEADER not in summary, "the formed summary replaced the quoted lines"
    assert len(messages) < 6 * 4, "what left the window left the state"
    # between a turn and its formation, what left stands quoted in the summary
    assert any(PENDING_HEADER in s and "Question number" in s for s, _ in seen)


def all_items_of(store: BaseStore, label: str) -> list[Any]:
    found = []
    for ns in store.list_namespaces(limit=1000):
        if label in ns:
            found += store.search(ns, limit=1000)
    return found


def test_a_forget_between_the_workers_read_and_write_leaves_nothing_of_the_user(
        store: BaseStore) -> None:
    read, resume = threading.Event(), threading.Event()

    def pause(user: str, turns: int) -> None:
        if user == "alice":
            read.set()
            assert resume.wait(30), "the test never resumed the worker"

    formation = DeferredFormation(debounce=0.0, on_prepared=pause)
    graph = build_memory_graph(lambda s: {"messages": [("ai", "Noted.")]}, store=store,
                               summarize=False, episodes=False, defer=formation)
    try:
        graph.invoke({"messages": [("user", "I work at ACME and I use LangGraph daily.")]},
                     thread_config("alice", "s1"))
        graph.invoke({"messages": [("user", "I work at Initech on the TPS reports.")]},
                     thread_config("bob", "s1"))
        assert read.wait(10), "the worker read a batch"
        forget_user("alice", store=store, purge=False)
        resume.set()
        assert formation.flush(timeout=10)
    finally:
        resume.set()
        formation.close(timeout=5)
    assert all_items_of(store, "alice") == [], [
        (i.namespace, i.key) for i in all_items_of(store, "alice")]
    assert all_items_of(store, "bob"), "the other user's memory was formed"
