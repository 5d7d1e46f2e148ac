"""The tools inside agents: ``create_agent`` and a hand-built ReAct graph with ``ToolNode``.

A scripted tool-calling model saves a fact in one session (thread) and recalls it in a new one;
the store is injected by LangGraph, the user comes from ``config["configurable"]``.
"""

from __future__ import annotations

from typing import Any

import pytest
from fakes import ScriptedChatModel, call_tool, last_tool_result
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import MissingConfigError
from langgraph_episodic.tools import (
    ENGLISH,
    create_memory_tools,
    memory_abrufen,
    memory_speichern,
)

from .conftest import bullets, hash_index, make_store, user

FACT = "Der Nutzer bevorzugt Python für Datenanalyse."
NOTHING = "Keine relevanten Informationen im Gedächtnis gefunden."


def session_script(save: BaseTool, recall: BaseTool) -> list[Any]:
    """Alice saves (thread 1), recalls in a new thread, Bob recalls in his own (German tools)."""
    return [
        call_tool(save.name, information=FACT),
        "Alles klar, ich merke mir das.",
        call_tool(recall.name, frage="Welche Sprache bevorzuge ich für Datenanalyse?"),
        last_tool_result,
        call_tool(recall.name, frage="Welche Sprache bevorzuge ich für Datenanalyse?"),
        last_tool_result,
    ]


async def invoke(app: Any, text: str, config: Any, mode: str) -> list[BaseMessage]:
    inputs = {"messages": [HumanMessage(text)]}
    result = app.invoke(inputs, config) if mode == "sync" else await app.ainvoke(inputs, config)
    return list(result["messages"])


def tool_messages(messages: list[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


async def drive_sessions(app: Any, model: ScriptedChatModel, mode: str) -> None:
    """Run the three sessions of :func:`session_script` and check what each one saw."""
    first = await invoke(app, "Ich arbeite am liebsten mit Python.", user("alice", "t1"), mode)
    assert tool_messages(first) == [f"Gespeichert: {FACT}"]

    second = await invoke(app, "Welche Sprache mag ich?", user("alice", "t2"), mode)
    [recalled] = tool_messages(second)
    assert bullets(recalled) == [FACT]
    assert FACT in str(second[-1].content)
    # a new session: the model saw none of the first thread's messages
    assert all("Python" not in str(m.content) for m in model.received[2])

    third = await invoke(app, "Welche Sprache mag ich?", user("bob", "t3"), mode)
    assert tool_messages(third) == [NOTHING]
    assert model.exhausted


@pytest.mark.parametrize("backend", ["memory", "chroma"])
async def test_create_agent_saves_and_recalls_across_sessions(backend: str, mode: str) -> None:
    store = make_store(backend)
    model = ScriptedChatModel(script=session_script(memory_speichern, memory_abrufen))
    agent = create_agent(
        model, [memory_speichern, memory_abrufen], store=store, checkpointer=InMemorySaver()
    )
    await drive_sessions(agent, model, mode)
    assert [i.value["text"] for i in store.search(("memories", "alice"))] == [FACT]
    assert store.search(("memories", "bob")) == []


async def test_create_agent_shows_the_model_only_the_model_arguments(mode: str) -> None:
    model = ScriptedChatModel(script=["Hallo!"])
    agent = create_agent(model, [memory_speichern, memory_abrufen], store=InMemoryStore())
    await invoke(agent, "Hi", user("alice"), mode)
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in model.bound_tools}
    assert list(schemas["memory_speichern"]["properties"]) == ["information"]
    assert list(schemas["memory_abrufen"]["properties"]) == ["frage"]


async def test_tools_with_a_bound_store_work_in_an_agent_without_one(mode: str) -> None:
    store = InMemoryStore(index=hash_index())  # type: ignore[arg-type]
    save, recall = create_memory_tools(store=store)
    model = ScriptedChatModel(script=session_script(save, recall))
    agent = create_agent(model, [save, recall], checkpointer=InMemorySaver())
    await drive_sessions(agent, model, mode)
    assert [i.value["text"] for i in store.search(("memories", "alice"))] == [FACT]


async def test_english_tools_in_an_agent(mode: str) -> None:
    store = InMemoryStore(index=hash_index())  # type: ignore[arg-type]
    save, recall = create_memory_tools(locale="en")
    fact = "The user is allergic to peanuts."
    model = ScriptedChatModel(
        script=[
            call_tool("save_memory", information=fact),
            "Noted.",
            call_tool("recall_memory", query="allergies"),
            last_tool_result,
        ]
    )
    agent = create_agent(model, [save, recall], store=store, checkpointer=InMemorySaver())
    assert tool_messages(await invoke(agent, "I can't eat peanuts", user("ann", "a"), mode)) == [
        f"Saved: {fact}"
    ]
    [recalled] = tool_messages(await invoke(agent, "What can't I eat?", user("ann", "b"), mode))
    assert bullets(recalled, ENGLISH) == [fact]


async def test_agent_without_user_id_fails_with_the_keys_present(mode: str) -> None:
    model = ScriptedChatModel(script=[call_tool("memory_abrufen", frage="Sprache?")])
    agent = create_agent(model, [memory_speichern, memory_abrufen], store=InMemoryStore())
    with pytest.raises(MissingConfigError, match=r"user_id.*thread_id"):
        await invoke(agent, "Welche Sprache?", {"configurable": {"thread_id": "t"}}, mode)


def react_graph(model: ScriptedChatModel, tools: list[BaseTool], store: BaseStore) -> Any:
    """A hand-built ReAct loop: model node, ``tools_condition``, ``ToolNode``."""
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    async def aagent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", RunnableLambda(agent, afunc=aagent))
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(store=store, checkpointer=InMemorySaver())


@pytest.mark.parametrize("backend", ["memory", "chroma"])
async def test_tool_node_in_a_hand_built_graph(backend: str, mode: str) -> None:
    store = make_store(backend)
    model = ScriptedChatModel(script=session_script(memory_speichern, memory_abrufen))
    app = react_graph(model, [memory_speichern, memory_abrufen], store)
    await drive_sessions(app, model, mode)
    assert [i.value["text"] for i in store.search(("memories", "alice"))] == [FACT]


async def test_tool_node_refusal_reaches_the_model(mode: str) -> None:
    store = InMemoryStore(index=hash_index())  # type: ignore[arg-type]
    model = ScriptedChatModel(
        script=[call_tool("memory_speichern", information="Danke, alles klar!"), "Okay."]
    )
    app = react_graph(model, [memory_speichern, memory_abrufen], store)
    messages = await invoke(app, "Danke, alles klar!", user("alice"), mode)
    [answer] = tool_messages(messages)
    assert answer.startswith("Nicht gespeichert")
    assert any(answer in str(m.content) for m in model.received[-1])
    assert store.search(("memories", "alice")) == []


async def test_tool_invoked_by_hand_inside_a_node_uses_the_graph_store(mode: str) -> None:
    store = InMemoryStore(index=hash_index())  # type: ignore[arg-type]

    def node(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        saved = memory_speichern.invoke({"information": FACT}, config)
        return {"messages": [AIMessage(saved)]}

    async def anode(state: MessagesState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        saved = await memory_speichern.ainvoke({"information": FACT}, config)
        return {"messages": [AIMessage(saved)]}

    graph = StateGraph(MessagesState)
    graph.add_node("remember", RunnableLambda(node, afunc=anode))
    graph.add_edge(START, "remember")
    messages = await invoke(graph.compile(store=store), "x", user("dora"), mode)
    assert messages[-1].content == f"Gespeichert: {FACT}"
    assert [i.value["text"] for i in store.search(("memories", "dora"))] == [FACT]
