"""A question worded like an earlier version finds the current one: a replaced version that
matches stands in for its lineage's current version (never shown itself); an ended fact
brings nothing back."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph_episodic._effects import Plan, run
from langgraph_episodic.facts import FactWriter, current_facts
from langgraph_episodic.facts.rules import Candidate, Decision
from langgraph_episodic.tools import create_memory_tools

from .conftest import Clock, make_store, user

NS = ("memories", "alice")


def _saved(clock: Clock, *texts: str) -> tuple[Any, Any]:
    store = make_store("chroma")
    save, recall = create_memory_tools(store=store, clock=clock, min_score=None, k=3)
    for month, text in enumerate(texts, start=3):
        clock.set(2026, month, 1)
        save.invoke({"information": text}, user("alice"))
    return store, recall


class Replaces:
    """A decider that replaces the shown fact naming ``old`` by one naming ``new`` (as a
    model would)."""

    method = "model"

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def decide(self, text: str, candidates: Sequence[Candidate]) -> Plan[Decision]:
        for c in candidates:
            if self.new in text and self.old in c.text:
                return Decision("update", c.key, "test")
        return Decision("new", None, "test")
        yield


EDITOR = ["Ich programmiere am liebsten mit VS Code.", "Ich spreche fließend Spanisch.",
          "Meine liebste Programmiersprache ist Python.", "Ich bin allergisch gegen Erdnüsse.",
          "Ich fahre jeden Tag mit dem Fahrrad ins Büro.", "Ich spiele jeden Dienstag Tennis.",
          "Ich bin von VS Code auf Neovim umgestiegen."]


def test_an_update_that_shares_no_words_with_the_question_is_found_through_its_lineage() -> None:
    store = make_store("chroma")
    writer = FactWriter(Replaces("VS Code", "Neovim"), clock=lambda: datetime(2026, 3, 1, tzinfo=timezone.utc))
    for text in EDITOR:
        run(writer.save(store, NS, text))
    found = current_facts(store, NS, "Mit welchem Editor programmiere ich?", k=3)
    texts = [rec.text for _, rec in found]
    assert texts[0] == "Ich bin von VS Code auf Neovim umgestiegen."
    assert "Ich programmiere am liebsten mit VS Code." not in texts
    _, recall = create_memory_tools(store=store, min_score=None, k=3)
    answer = recall.invoke({"frage": "Mit welchem Editor programmiere ich?"}, user("alice"))
    lines = answer.splitlines()[1:]
    assert lines[0].startswith("- Ich bin von VS Code auf Neovim umgestiegen.")
    assert "Ich programmiere am liebsten mit VS Code." not in answer


def test_the_replaced_version_itself_is_never_shown(clock: Clock) -> None:
    store, recall = _saved(clock, "Ich wohne in München.", "Ich habe eine Katze.",
                           "Ich bin nach Berlin gezogen.")
    found = current_facts(store, NS, "Wohne ich in München?", k=3)
    texts = [rec.text for _, rec in found]
    assert "Ich wohne in München." not in texts
    assert texts[0] == "Ich bin nach Berlin gezogen."
    assert all(rec.current for _, rec in found)
    answer = recall.invoke({"frage": "Wohne ich in München?"}, user("alice"))
    assert "Berlin" in answer and "Ich wohne in München." not in answer


def test_an_ended_fact_brings_nothing_back(clock: Clock) -> None:
    store, _ = _saved(clock, "Ich habe einen Hund namens Bello.", "Ich spiele Tennis.",
                      "Ich habe keinen Hund mehr.")
    texts = [rec.text for _, rec in current_facts(store, NS, "Habe ich einen Hund?", k=3)]
    assert not any("Bello" in t for t in texts)


def test_another_users_successor_is_never_found(clock: Clock) -> None:
    store = make_store("chroma")
    save, _ = create_memory_tools(store=store, clock=clock, min_score=None)
    save.invoke({"information": "Ich wohne in München."}, user("alice"))
    save.invoke({"information": "Ich wohne in München."}, user("bob"))
    clock.set(2026, 6, 1)
    save.invoke({"information": "Ich bin nach Berlin gezogen."}, user("bob"))
    texts = [rec.text for _, rec in current_facts(store, NS, "Wohne ich in München?", k=3)]
    assert texts == ["Ich wohne in München."]
