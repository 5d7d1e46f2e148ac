"""The entity-extract node: questions skipped, rules and LLM paths, merging, per-user persistence."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import BaseStore

from langgraph_episodic import MissingConfigError
from langgraph_episodic.facts import afact_history
from langgraph_episodic.graph.entities import entity_extract_node
from langgraph_episodic.kinds.entities import extract_entities_by_rules, is_question, statements

from .conftest import cfg
from .fakes import ToolCallingFakeModel, replies, structured_reply


@pytest.mark.parametrize(
    "text",
    ["Wie spät ist es", "Was ist LangGraph", "Warum geht das nicht", "Kannst du mir helfen",
     "Ist das richtig", "What is Chroma", "Where does Alice work", "How do I install it",
     "Do you know Bob", "Can you help me", "Alice works at ACME?", "Ich nutze Python?"],
)
def test_questions_are_recognised(text: str) -> None:
    assert is_question(text)


@pytest.mark.parametrize(
    "text",
    ["Alice works at ACME.", "Ich arbeite bei Siemens.", "Is-Wert ist gesetzt",
     "Do not forget the tests.", "Wien ist schön.", "Whatever happens, we ship."],
)
def test_statements_are_not_questions(text: str) -> None:
    assert not is_question(text)


def test_statements_drop_question_sentences_only() -> None:
    assert statements("Ich heiße Anna. Wie geht es dir? Ich nutze Python.") == [
        "Ich heiße Anna.", "Ich nutze Python."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My name is Anna Schmidt and I work at ACME Corp.", {"Anna Schmidt", "ACME Corp"}),
        ("Ich heiße Anna und arbeite bei Siemens.", {"Anna", "Siemens"}),
        ("We deployed GPT-4 on AWS with LangGraph.", {"GPT-4", "AWS", "LangGraph"}),
        ("Alice lives in Berlin.", {"Alice", "Berlin"}),
    ],
)
def test_rules_find_names(text: str, expected: set[str]) -> None:
    found = extract_entities_by_rules(text)
    assert {e.name for e in found} == expected
    for entity in found:
        assert entity.name in entity.description  # the source sentence


def test_rules_skip_german_common_nouns_and_questions() -> None:
    names = {e.name for e in extract_entities_by_rules(
        "Ich bevorzuge Python für Datenanalyse. Kennst du Pandas?")}
    assert names == {"Python"}


def node_state(text: str, **extra: Any) -> dict[str, Any]:
    return {"messages": [HumanMessage(text), AIMessage("Noted.")], **extra}


def test_rules_node_persists_per_user(store: BaseStore) -> None:
    node = entity_extract_node(store=store)
    update = node.invoke(node_state("I work at ACME and use LangGraph."), cfg("alice"))
    assert set(update["entities"]) == {"ACME", "LangGraph"}
    stored = store.get(("entities", "alice"), "acme")
    assert stored is not None
    assert stored.value["name"] == "ACME"
    assert stored.value["method"] == "rules"
    assert store.get(("entities", "bob"), "acme") is None


def test_questions_write_nothing(store: BaseStore) -> None:
    node = entity_extract_node(store=store)
    update = node.invoke(node_state("Where does Alice work?"), cfg("alice"))
    assert update == {}
    assert store.search(("entities", "alice")) == []


def test_descriptions_merge_without_repeating(store: BaseStore) -> None:
    node = entity_extract_node(store=store)
    node.invoke(node_state("Alice works at ACME."), cfg())
    node.invoke(node_state("Alice works at ACME."), cfg(), )
    node.invoke(node_state("Alice lives in Berlin."), cfg())
    item = store.get(("entities", "alice"), "alice")
    assert item is not None
    assert item.value["description"] == "Alice lives in Berlin. Alice works at ACME."


def test_new_session_loads_stored_entities(store: BaseStore) -> None:
    node = entity_extract_node(store=store)
    node.invoke(node_state("Alice works at ACME."), cfg("alice", "s1"))
    update = node.invoke(node_state("How are you?"), cfg("alice", "s2"))
    assert update["entities"]["Alice"] == "Alice works at ACME."
    other = node.invoke(node_state("How are you?"), cfg("bob", "s1"))
    assert other == {}


def test_llm_path_uses_structured_output(store: BaseStore) -> None:
    model = ToolCallingFakeModel(messages=replies(structured_reply(
        "ExtractedEntities",
        entities=[{"name": "Anna", "description": "Anna is the user."},
                  {"name": "Siemens", "description": "Anna works at Siemens."}])))
    node = entity_extract_node(model=model, store=store)
    update = node.invoke(node_state("Ich heiße Anna und arbeite bei Siemens. Wie spät ist es?"),
                         cfg("anna"))
    assert update["entities"] == {"Anna": "Anna is the user.", "Siemens": "Anna works at Siemens."}
    sent = str(model.sent[0][-1].content)
    assert "Siemens" in sent and "Wie spät" in sent  # the model decides what is a question
    item = store.get(("entities", "anna"), "siemens")
    assert item is not None and item.value["method"] == "llm"


async def test_async_llm_path_decides_over_the_entitys_facts(store: BaseStore) -> None:
    model = ToolCallingFakeModel(messages=replies(
        structured_reply("ExtractedEntities", entities=[{"name": "Bob", "description": "Bob is a manager."}]),
        structured_reply("ExtractedEntities", entities=[{"name": "bob", "description": "Bob leads the sales team now."}]),
        structured_reply("FactDecision", action="update", fact=1),  # replaces fact 1 shown
    ))
    node = entity_extract_node(model=model, store=store)
    await node.ainvoke(node_state("Bob is my manager."), cfg())
    update = await node.ainvoke(node_state("Bob leads sales now.", entities={"Bob": "Bob is a manager."}), cfg())
    assert update["entities"] == {"Bob": "Bob leads the sales team now."}
    shown = "\n".join(str(m.content) for m in model.sent[2])
    assert "1. Bob is a manager." in shown and "Bob leads the sales team now." in shown
    item = await store.aget(("entities", "alice"), "bob")
    assert item is not None and item.value["name"] == "Bob" and item.value["method"] == "llm"
    history = await afact_history(store, ("entities", "alice"))
    assert [(r.text, r.current) for _, r in history] == [
        ("Bob is a manager.", False), ("Bob leads the sales team now.", True)]


async def test_async_rules_path(store: BaseStore) -> None:
    node = entity_extract_node(store=store)
    update = await node.ainvoke(node_state("I use PostgreSQL."), cfg())
    assert update["entities"] == {"PostgreSQL": "I use PostgreSQL."}


def test_model_without_structured_output_is_refused() -> None:
    with pytest.raises(TypeError, match="model=None"):
        entity_extract_node(model=GenericFakeChatModel(messages=replies("x")))


def test_missing_user_id_lists_keys(store: BaseStore) -> None:
    node = entity_extract_node(store=store)
    with pytest.raises(MissingConfigError, match="thread_id"):
        node.invoke(node_state("Alice works at ACME."), {"configurable": {"thread_id": "t"}})


def test_missing_store_names_the_fix() -> None:
    with pytest.raises(ValueError, match="store="):
        entity_extract_node().invoke(node_state("Alice works at ACME."), cfg())


def test_source_last_reads_the_last_message(store: BaseStore) -> None:
    node = entity_extract_node(store=store, source="last")
    update = node.invoke({"messages": [HumanMessage("Hi there friend"),
                                       AIMessage("Alice works at ACME.")]}, cfg())
    assert set(update["entities"]) == {"Alice", "ACME"}
    with pytest.raises(ValueError, match="source"):
        entity_extract_node(source="first")
