"""One rule for the run's user id, wherever it is read: the middleware, the tools, the nodes.

The id may come from ``config["configurable"]["user_id"]`` or from the run's context
(``context={"user_id": ...}`` or an object with a ``user_id`` attribute). One given: it is used.
Both given and equal: that user. Both given and different, or a value that is not a non-empty
string: ``UserIdError`` before anything is read or written.
"""

from __future__ import annotations

import doctest
from dataclasses import dataclass
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore, Item

from langgraph_episodic import (
    EpisodicMemoryMiddleware,
    MissingConfigError,
    UserIdError,
    _config,
    build_memory_graph,
    create_memory_tools,
)
from langgraph_episodic._config import fill_namespace, user_id_from
from langgraph_episodic.graph import CustomerHistory, UserProfiles
from langgraph_episodic.graph.working_memory_nodes import history_nodes

from .fakes import ScriptedFakeModel


@dataclass(frozen=True)
class Context:
    user_id: Any = None


def conf(user: Any = None, **extra: Any) -> dict[str, Any]:
    configurable = dict(extra)
    if user is not None:
        configurable["user_id"] = user
    return {"configurable": configurable}


# ------------------------------------------------------------------ the resolver


@pytest.mark.parametrize(
    ("config", "context", "expected"),
    [
        (conf("alice"), None, "alice"),
        (conf(), {"user_id": "bob"}, "bob"),
        (conf(), Context("bob"), "bob"),
        (conf("alice"), {"user_id": "alice"}, "alice"),
        (conf("alice"), Context("alice"), "alice"),
        (conf("alice"), {"other": 1}, "alice"),
        (conf("alice"), Context(None), "alice"),
        (None, {"user_id": "bob"}, "bob"),
    ],
)
def test_one_user_id_or_two_equal_ones_are_used(
    config: Any, context: Any, expected: str
) -> None:
    assert user_id_from(config, context) == expected


@pytest.mark.parametrize(
    ("config", "context"),
    [
        (conf("alice"), {"user_id": "bob"}),
        (conf("alice"), Context("bob")),
        (conf("alice"), {"user_id": "Alice"}),
    ],
)
def test_two_different_user_ids_are_refused(config: Any, context: Any) -> None:
    with pytest.raises(UserIdError, match=r"'alice'.*'[bB]ob'|'alice'.*'Alice'") as caught:
        user_id_from(config, context)
    assert "context" in str(caught.value) and "configurable" in str(caught.value)


@pytest.mark.parametrize(
    ("config", "context"),
    [
        (conf(1), None),
        (conf(), {"user_id": 1}),
        (conf(), Context(1)),
        (conf(b"alice"), None),
        (conf(["alice"]), None),
        (conf("1"), {"user_id": 1}),
    ],
)
def test_a_user_id_that_is_not_a_string_is_refused(config: Any, context: Any) -> None:
    with pytest.raises(UserIdError, match="must be a non-empty string"):
        user_id_from(config, context)


def test_no_user_id_names_both_places_and_the_keys_present() -> None:
    with pytest.raises(MissingConfigError, match="user_id") as caught:
        user_id_from(conf(thread_id="t1"), {"other": 1})
    assert "thread_id" in str(caught.value) and "context" in str(caught.value)


def test_namespaces_are_filled_by_the_same_rule() -> None:
    assert fill_namespace(("memories", "{user_id}"), conf("a.b@x.org")) == (
        "memories", "a%2Eb@x%2Eorg")  # fmt: skip
    with pytest.raises(UserIdError):
        fill_namespace(("memories", "{user_id}"), conf(7))


def test_the_resolver_docstring_examples_run() -> None:
    assert doctest.testmod(_config).failed == 0


# ------------------------------------------------------------------ the middleware


def snapshot(store: BaseStore) -> list[tuple[tuple[str, ...], str, Any]]:
    items: list[Item] = []
    for ns in store.list_namespaces():
        items += store.search(ns, limit=1000)
    return sorted((i.namespace, i.key, i.value) for i in items)


def seeded(store: BaseStore) -> None:
    UserProfiles(store).save("alice", "Alice prefers tea")
    UserProfiles(store).save("bob", "Bob prefers coffee")
    store.put(("memories", "bob"), "m1", {"text": "Bob works at Initech"})


def agent_for(store: BaseStore, model: Any, tools: list[Any] | None = None,
              middleware: bool = True) -> Any:  # fmt: skip
    return create_agent(
        model, tools=tools or [], store=store, checkpointer=InMemorySaver(),
        middleware=[EpisodicMemoryMiddleware(store=store)] if middleware else [],
    )  # fmt: skip


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    ("configurable", "context"),
    [
        ({"user_id": "alice"}, {"user_id": "bob"}),
        ({"user_id": "alice"}, Context("bob")),
        ({"user_id": 1}, None),
        ({}, {"user_id": 1}),
    ],
)
async def test_the_middleware_refuses_before_reading_or_writing(
    store: BaseStore, mode: str, configurable: dict[str, Any], context: Any
) -> None:
    seeded(store)
    before = snapshot(store)
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    agent = agent_for(store, model)
    payload = {"messages": [HumanMessage("I work at ACME. Where does Bob work?")]}
    config = {"configurable": {"thread_id": "t1", **configurable}}
    with pytest.raises(UserIdError):
        if mode == "sync":
            agent.invoke(payload, config, context=context)
        else:
            await agent.ainvoke(payload, config, context=context)
    assert model.sent == [], "the model was called: the run went on"
    assert snapshot(store) == before


@pytest.mark.parametrize(
    ("configurable", "context", "user"),
    [
        ({"user_id": "bob"}, None, "bob"),
        ({}, {"user_id": "bob"}, "bob"),
        ({}, Context("bob"), "bob"),
        ({"user_id": "bob"}, {"user_id": "bob"}, "bob"),
    ],
)
def test_the_middleware_uses_the_one_user_given(
    store: BaseStore, configurable: dict[str, Any], context: Any, user: str
) -> None:
    seeded(store)
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    agent = agent_for(store, model)
    agent.invoke({"messages": [HumanMessage("I use LangGraph daily.")]},
                 {"configurable": {"thread_id": "t1", **configurable}}, context=context)  # fmt: skip
    prompt = str(model.sent[0][0].content)
    assert "Bob prefers coffee" in prompt and "Alice prefers tea" not in prompt
    assert store.get(("entities", user), "langgraph") is not None


def test_the_middleware_loads_the_profile_of_an_email_user_id(store: BaseStore) -> None:
    """The profile is read under the same label ``UserProfiles.save`` wrote it to."""
    UserProfiles(store).save("a.b@x.org", "Prefers short answers")
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    agent_for(store, model).invoke(
        {"messages": [HumanMessage("Hello")]}, conf("a.b@x.org", thread_id="t1"))
    assert "Prefers short answers" in str(model.sent[0][0].content)


# ------------------------------------------------------------------ the tools


def saving_model() -> ScriptedFakeModel:
    def respond(messages: list[Any]) -> AIMessage | str:
        if any(getattr(m, "type", "") == "tool" for m in messages):
            return "Done."
        call = {"name": "save_memory", "args": {"information": "Likes green tea"}, "id": "c1"}
        return AIMessage("", tool_calls=[call])

    return ScriptedFakeModel(respond=respond)


@pytest.mark.parametrize("context", [{"user_id": "bob"}, Context("bob")])
def test_the_tools_take_the_user_from_the_context(store: BaseStore, context: Any) -> None:
    save, _ = create_memory_tools(locale="en", should_store=None)
    agent = agent_for(store, saving_model(), tools=[save], middleware=False)
    agent.invoke({"messages": [HumanMessage("Remember: I like green tea")]},
                 conf(thread_id="t1"), context=context)  # fmt: skip
    assert [i.value["text"] for i in store.search(("memories", "bob"))] == ["Likes green tea"]


@pytest.mark.parametrize(
    ("configurable", "context"),
    [({"user_id": "alice"}, {"user_id": "bob"}), ({"user_id": 1}, None), ({}, {"user_id": 1})],
)
def test_the_tools_refuse_two_users_or_a_number(
    store: BaseStore, configurable: dict[str, Any], context: Any
) -> None:
    seeded(store)
    before = snapshot(store)
    save, _ = create_memory_tools(locale="en", should_store=None)
    agent = agent_for(store, saving_model(), tools=[save], middleware=False)
    with pytest.raises(UserIdError):
        agent.invoke({"messages": [HumanMessage("Remember: I like green tea")]},
                     {"configurable": {"thread_id": "t1", **configurable}}, context=context)  # fmt: skip
    assert snapshot(store) == before


def test_a_tool_called_alone_refuses_a_number(store: BaseStore) -> None:
    save, recall = create_memory_tools(store=store, should_store=None)
    with pytest.raises(UserIdError):
        save.invoke({"information": "Ein Fakt."}, conf(1))
    with pytest.raises(UserIdError):
        recall.invoke({"frage": "Fakt"}, conf(1))
    assert store.list_namespaces() == []


# ------------------------------------------------------------------ the nodes


def offline_agent(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [("ai", "Noted.")]}


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_graph_nodes_follow_the_same_rule(store: BaseStore, mode: str) -> None:
    seeded(store)
    graph = build_memory_graph(offline_agent, store=store, checkpointer=InMemorySaver(),
                               summarize=False)  # fmt: skip
    payload = {"messages": [("user", "I work at ACME.")], "feedback": {"reward": 1.0}}

    async def run(configurable: dict[str, Any], context: Any) -> Any:
        config = {"configurable": {"thread_id": "t1", **configurable}}
        if mode == "sync":
            return graph.invoke(payload, config, context=context)
        return await graph.ainvoke(payload, config, context=context)

    before = snapshot(store)
    for configurable, context in (({"user_id": "alice"}, {"user_id": "bob"}),
                                  ({"user_id": 1}, None)):  # fmt: skip
        with pytest.raises(UserIdError):
            await run(configurable, context)
        assert snapshot(store) == before
    out = await run({}, {"user_id": "carol"})
    assert out.get("episode_id"), "no episode recorded for the context's user"
    assert store.search(("episodes", "carol")) and store.search(("entities", "carol"))


def test_the_history_nodes_use_the_label_the_history_writes(store: BaseStore) -> None:
    history = CustomerHistory(store, ttl_days=None)
    history.add_turn("a.b@x.org", "Where is order 42?", "It ships today.")
    load, save = history_nodes(history)
    config = conf("a.b@x.org")
    assert [t["assistant"] for t in load.invoke({}, config)["history"]] == ["It ships today."]
    save.invoke({"messages": [("user", "And order 43?"), ("ai", "Tomorrow.")]}, config)
    assert [t.assistant for t in history.recent("a.b@x.org")] == ["It ships today.", "Tomorrow."]
