"""An entity's facts are facts: consolidated on write, current by default, with history and
``as_of`` (the same records as the memory tools' facts)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.store.base import BaseStore

from langgraph_episodic._effects import run
from langgraph_episodic.facts import FactRecord, current_facts, fact_history
from langgraph_episodic.graph.entities import entity_extract_node
from langgraph_episodic.kinds.entities import (
    DESCRIPTION_FACTS,
    EntityWriter,
    ExtractedEntity,
    load_entities,
)

from .conftest import cfg

NS = ("entities", "alice")
T0 = datetime(2026, 3, 10, 12, tzinfo=timezone.utc)


def node_state(text: str) -> dict[str, Any]:
    return {"messages": [("user", text)]}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def say(store: BaseStore, writer: EntityWriter, name: str, text: str) -> dict[str, str | None]:
    return run(writer.merge(store, NS, [ExtractedEntity(name=name, description=text)]))


def about(store: BaseStore, key: str) -> list[FactRecord]:
    return [rec for _, rec in fact_history(store, NS) if rec.subject == key]


def test_an_entity_fact_that_changes_keeps_the_old_version_as_history(store: BaseStore) -> None:
    clock = Clock()
    writer = EntityWriter(clock=clock)
    say(store, writer, "Alice", "Alice works at ACME.")
    clock.now = T0 + timedelta(days=30)
    say(store, writer, "Alice", "Alice likes green tea.")
    clock.now = T0 + timedelta(days=90)
    update = say(store, writer, "alice", "Alice works at Globex now.")

    assert update == {"Alice": "Alice works at Globex now. Alice likes green tea."}
    item = store.get(NS, "alice")
    assert item is not None and item.value["description"] == update["Alice"]
    versions = about(store, "alice")
    old = next(r for r in versions if r.text == "Alice works at ACME.")
    new = next(r for r in versions if r.text == "Alice works at Globex now.")
    assert not old.current and old.valid_to == new.valid_from and old.superseded_by is not None
    assert new.current and new.supersedes is not None and new.lineage == old.lineage
    assert {r.subject_name for r in versions} == {"Alice"}

    # current by default, and what was true at a moment
    now = [rec.text for _, rec in current_facts(store, NS, "Where does Alice work?")]
    assert "Alice works at Globex now." in now and "Alice works at ACME." not in now
    then = [rec.text for _, rec in current_facts(store, NS, "Where does Alice work?",
                                                 as_of=T0 + timedelta(days=40))]
    assert "Alice works at ACME." in then and "Alice works at Globex now." not in then
    assert run(load_entities(store, NS, 10)) == {"Alice": update["Alice"]}


def test_the_same_sentence_again_confirms_the_fact(store: BaseStore) -> None:
    node = entity_extract_node(store=store)
    node.invoke(node_state("Alice likes tea."), cfg())
    node.invoke(node_state("ALICE likes tea!"), cfg())
    assert len(about(store, "alice")) == 1
    item = store.get(NS, "alice")
    assert item is not None and item.value["description"].lower().startswith("alice likes tea")


def test_facts_about_two_entities_of_one_sentence_are_kept_apart(store: BaseStore) -> None:
    node = entity_extract_node(store=store)
    node.invoke(node_state("I work at ACME and use LangGraph."), cfg())
    node.invoke(node_state("I use LangGraph daily now."), cfg())
    acme = about(store, "acme")
    assert [(r.text, r.current) for r in acme] == [("I work at ACME and use LangGraph.", True)]
    assert all(r.subject == "langgraph" for r in about(store, "langgraph"))


def test_an_ended_fact_leaves_the_entity_without_it(store: BaseStore) -> None:
    writer = EntityWriter()
    say(store, writer, "Bello", "Ich habe einen Hund namens Bello.")
    update = say(store, writer, "Bello", "Ich habe keinen Hund mehr.")
    assert update == {"Bello": None}
    assert store.get(NS, "bello") is None
    assert [r.current for r in about(store, "bello")] == [False]
    assert run(load_entities(store, NS, 10)) == {}


def test_the_description_holds_the_newest_facts(store: BaseStore) -> None:
    clock = Clock()
    writer = EntityWriter(clock=clock)
    colours = ["red", "blue", "green", "yellow", "purple", "orange", "black", "white", "pink",
               "brown", "grey", "violet", "golden"]
    for i, colour in enumerate(colours):
        clock.now = T0 + timedelta(minutes=i)
        say(store, writer, "Alice", f"Alice owns a {colour} bicycle number {i}.")
    item = store.get(NS, "alice")
    assert item is not None
    description = item.value["description"]
    assert description.startswith(f"Alice owns a golden bicycle number {len(colours) - 1}.")
    assert description.count("bicycle") == DESCRIPTION_FACTS
    assert "red bicycle" not in description


def test_an_entity_stored_before_facts_keeps_its_description(store: BaseStore) -> None:
    store.put(NS, "acme", {"name": "ACME", "description": "ACME is her employer.",
                           "text": "ACME: ACME is her employer.", "method": "rules"})
    update = say(store, EntityWriter(), "ACME", "ACME has an office in Berlin.")
    assert update == {"ACME": "ACME has an office in Berlin. ACME is her employer."}
    assert {r.text for r in about(store, "acme")} == {"ACME is her employer.",
                                                      "ACME has an office in Berlin."}
