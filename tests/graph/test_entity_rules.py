"""The rule-based entity extractor stores names, not task text or capitalised nouns.

The labelled sets are ``benchmarks/data/entity_rules_{de,en}.jsonl`` (see
``benchmarks/entity_rules.py``): facts about named people, places, companies, products and
pets, and look-alikes (imperative tasks, acronyms in task text, questions, German nouns).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from langgraph.store.memory import InMemoryStore
from script_modules import script_module

from langgraph_episodic.cli.simulation import World
from langgraph_episodic.graph.entities import entity_extract_node
from langgraph_episodic.kinds.entities import extract_entities_by_rules
from langgraph_episodic.kinds.entity_rules import fact_clauses

from .conftest import cfg

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "entity_rules.py"
MIN_PRECISION = 0.9


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    with script_module("entity_rules_benchmark", SCRIPT) as module:
        yield module


@pytest.mark.parametrize("lang", ["de", "en"])
def test_the_labelled_set_is_large_and_mixed(bench: ModuleType, lang: str) -> None:
    rows = bench.load(lang)
    assert len(rows) >= 60
    kinds = {r.kind for r in rows}
    assert {"fact", "task", "question"} <= kinds
    assert sum(bool(r.entities) for r in rows) >= 30
    assert sum(not r.entities for r in rows) >= 30
    assert {r.split for r in rows} == set(bench.SPLITS)


@pytest.mark.parametrize("lang", ["de", "en"])
def test_rule_precision_on_the_labelled_set(bench: ModuleType, lang: str) -> None:
    score, mistakes = bench.score(bench.load(lang))
    wrong = [m for m in mistakes if m[1] == "wrong"]
    assert score.returned > 0
    assert score.precision >= MIN_PRECISION, wrong


@pytest.mark.parametrize("lang", ["de", "en"])
def test_no_name_comes_from_a_task_or_a_question(bench: ModuleType, lang: str) -> None:
    rows = [r for r in bench.load(lang) if r.kind in ("task", "question") and r.split == "tune"]
    found = {r.id: bench.extracted_names(r.text) for r in rows}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_demo_tasks_name_no_entity() -> None:
    world = World.from_seed(0)
    texts = {world.task(i).task.description for i in range(200)}
    assert len(texts) > 50
    assert {t: names for t in texts
            if (names := [e.name for e in extract_entities_by_rules(t)])} == {}


def test_many_task_messages_store_nothing_and_facts_stay_short() -> None:
    store = InMemoryStore()
    node = entity_extract_node(store=store)
    world = World.from_seed(1)
    for i in range(40):
        node.invoke({"messages": [("user", world.task(i).task.description)]}, cfg("dev"))
    assert store.search(("entities", "dev")) == []
    node.invoke({"messages": [("user", "Alice works at ACME. Fix the CSV export.")]},
                cfg("dev"))
    node.invoke({"messages": [("user", "Alice lives in Berlin; find the API docs.")]},
                cfg("dev"))
    alice = store.get(("entities", "dev"), "alice")
    assert alice is not None
    assert alice.value["description"] == "Alice lives in Berlin. Alice works at ACME."
    entities = store.search(("entities", "dev"), filter={"kind": "entity"})
    assert {i.key for i in entities} == {"alice", "acme", "berlin"}


def test_a_request_on_its_own_line_keeps_the_next_line_a_statement() -> None:
    store = InMemoryStore()
    node = entity_extract_node(store=store)
    out = node.invoke({"messages": [("user", "Fix the login bug\nAlice works at ACME")]},
                      cfg("dev"))
    assert out["entities"] == {"Alice": "Alice works at ACME", "ACME": "Alice works at ACME"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Find and fix the crash in the rate limiter.", []),
        ("Please sort the list.", []),
        ("Bitte fasse das zusammen.", []),
        ("Den Fehler bitte beheben.", []),
        ("Do you know a good place in Paris.", []),
        ("Call me Jo.", ["Call me Jo."]),
        ("Remember that I work at ACME.", ["I work at ACME."]),
        ("The export fails; fix it.", ["The export fails"]),
        ("Wie besprochen arbeite ich jetzt bei Siemens.",
         ["Wie besprochen arbeite ich jetzt bei Siemens."]),
    ],
)
def test_fact_clauses(text: str, expected: list[str]) -> None:
    assert fact_clauses(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mein Hund heißt Bello und trinkt keinen Kaffee.", {"Bello"}),
        ("Unsere Katze Minka schläft viel.", {"Minka"}),
        ("Ich trinke gern Kaffee mit meinem Hund.", set()),
        ("Ich nutze Tabellen für die Planung.", set()),
        ("Ich nutze Python für die Planung.", {"Python"}),
        ("Ich komme aus Gewohnheit zu spät.", set()),
        ("Wir ziehen nach München.", {"München"}),
        ("The API returns JSON; the CSV export is slow.", set()),
        ("I bought an iPhone 15 in May.", {"iPhone 15"}),
        ("Everything is fine on Monday.", set()),
        ("Since May 2024 I live in Porto.", {"Porto"}),
        ("Thanks, Maria!", set()),
        ("Hey John! Good morning.", set()),
        ("Danke, Julia.", set()),
    ],
)
def test_rules_on_look_alikes(text: str, expected: set[str]) -> None:
    assert {e.name for e in extract_entities_by_rules(text)} == expected


def test_a_greeting_to_a_name_leaves_the_name_to_what_the_message_says_about_it() -> None:
    found = extract_entities_by_rules("Hey Mel! Yesterday Mel ran a charity race.")
    assert [(e.name, e.description) for e in found] == [
        ("Mel", "Yesterday Mel ran a charity race.")]
