"""No tool argument lets one user read or write another user's memories."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore

from langgraph_episodic.tools import create_memory_tools

from .conftest import Call, make_store, user

ALICE_FACT = "Alice hat eine Nussallergie und wohnt in der Lindenstraße 5."
NOTHING = "Keine relevanten Informationen im Gedächtnis gefunden."

# Texts a model (or a prompt injection) might send hoping to reach Alice's namespace.
PROBES = [
    "alice",
    "alice2",
    "memories/alice",
    "memories.alice",
    "('memories', 'alice')",
    '["memories", "alice"]',
    "{user_id}",
    "user_id=alice",
    "Alice Nussallergie Lindenstraße",
    ALICE_FACT,
]


def texts_in(store: BaseStore, *namespace: str) -> list[str]:
    return sorted(item.value["text"] for item in store.search(namespace, limit=100))


async def test_no_question_reads_another_users_memories(store: BaseStore, call: Call) -> None:
    save, recall = create_memory_tools(store=store, k=10)
    await call(save, {"information": ALICE_FACT}, user("alice"))
    for probe in PROBES:
        for other in ("bob", "alice2", "ALICE", "alic"):
            assert await call(recall, {"frage": probe}, user(other)) == NOTHING, (probe, other)
    assert ALICE_FACT in await call(recall, {"frage": "Allergie"}, user("alice"))


async def test_no_information_writes_into_another_users_memories(
    store: BaseStore, call: Call
) -> None:
    save, _ = create_memory_tools(store=store, should_store=None)
    await call(save, {"information": ALICE_FACT}, user("alice"))
    for probe in PROBES:
        await call(save, {"information": f"{probe} mag Katzen sehr"}, user("bob"))
    assert texts_in(store, "memories", "alice") == [ALICE_FACT]
    # Probes with the same words (up to punctuation) are one fact, confirmed: each saved text
    # is one of bob's, none went anywhere else.
    saved = texts_in(store, "memories", "bob")
    assert saved and set(saved) <= {f"{probe} mag Katzen sehr" for probe in PROBES}
    namespaces = store.list_namespaces(prefix=("memories",))
    assert sorted(namespaces) == [("memories", "alice"), ("memories", "bob")]


async def test_a_user_id_that_extends_another_does_not_see_its_memories(
    store: BaseStore, call: Call
) -> None:
    save, recall = create_memory_tools(store=store, k=10)
    await call(save, {"information": "Alice2 spielt gerne Schach am Abend."}, user("alice2"))
    assert await call(recall, {"frage": "Schach"}, user("alice")) == NOTHING
    await call(save, {"information": ALICE_FACT}, user("alice"))
    assert "Schach" not in await call(recall, {"frage": "Schach"}, user("alice"))


@pytest.mark.parametrize("backend", ["memory", "chroma"])
async def test_forged_arguments_in_a_tool_call_are_ignored(backend: str, mode: str) -> None:
    store = make_store(backend)
    save, recall = create_memory_tools()
    node = ToolNode([save, recall])
    await _run_node(node, store, mode, "alice", save.name, {"information": ALICE_FACT})
    forged = {
        "user_id": "alice",
        "namespace": ["memories", "alice"],
        "config": {"configurable": {"user_id": "alice"}},
        "store": None,
    }
    answer = await _run_node(node, store, mode, "bob", recall.name, {"frage": "Allergie", **forged})
    assert answer == NOTHING
    await _run_node(
        node, store, mode, "bob", save.name, {"information": "Bob fährt gern Fahrrad.", **forged}
    )
    assert texts_in(store, "memories", "alice") == [ALICE_FACT]
    assert texts_in(store, "memories", "bob") == ["Bob fährt gern Fahrrad."]


async def _run_node(
    node: ToolNode, store: BaseStore, mode: str, user_id: str, name: str, args: dict[str, object]
) -> str:
    """Run one tool call through a ToolNode in a graph compiled with ``store``."""
    from langgraph.graph import START, MessagesState, StateGraph

    graph = StateGraph(MessagesState).add_node("tools", node).add_edge(START, "tools")
    app = graph.compile(store=store)
    message = AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": "c1", "type": "tool_call"}]
    )
    inputs = {"messages": [message]}
    config = user(user_id)
    result = app.invoke(inputs, config) if mode == "sync" else await app.ainvoke(inputs, config)
    reply = result["messages"][-1]
    assert isinstance(reply, ToolMessage)
    return str(reply.content)
