"""The recall decision weighs what kind of memory a hit is (``langgraph_episodic.memory_kinds``).

A saved fact and what the user said are evidence about the user; a question or request the
user once asked shares the question's words and answers nothing; the assistant's replies repeat
the user's words at second hand and never come before them. ``explain_recall`` says why each
hit was kept or withheld.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import SearchItem
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import explain_recall
from langgraph_episodic.kinds.turns import only_asks, turn_items
from langgraph_episodic.memory_kinds import (
    ASK,
    FACT,
    REPLY,
    STATEMENT,
    WEIGHTS,
    decide,
    kind_of,
    passing,
)
from langgraph_episodic.tools import create_memory_tools
from langgraph_episodic.tools.texts import ENGLISH

from .conftest import bullets, hash_index, user

NOW = datetime(2026, 5, 8, 12, tzinfo=timezone.utc)


def hit(key: str, score: float | None, **value: Any) -> SearchItem:
    value.setdefault("text", key)
    return SearchItem(("memories", "u"), key, value, NOW, NOW, score=score)


def turn(key: str, score: float | None, role: str = "user", **extra: Any) -> SearchItem:
    return hit(key, score, kind="turn", role=role, **extra)


def test_kinds_of_values() -> None:
    assert kind_of({"text": "I am vegetarian.", "kind": "fact"}) == FACT
    assert kind_of({"text": "anything"}) == FACT  # a plain memory counts as a fact
    assert kind_of({"text": "I moved.", "kind": "turn", "role": "user", "asks": False}) == STATEMENT
    assert kind_of({"text": "Ideas?", "kind": "turn", "role": "user", "asks": True}) == ASK
    assert kind_of({"text": "Sure!", "kind": "turn", "role": "assistant"}) == REPLY
    # Turns written before the flag: an ask when every sentence is a question.
    assert kind_of({"text": "Any ideas for dinner?", "kind": "turn", "role": "user"}) == ASK
    assert kind_of({"text": "I cook. Ideas?", "kind": "turn", "role": "user"}) == STATEMENT


def test_a_turn_is_flagged_when_it_only_asks() -> None:
    config = {"configurable": {"user_id": "u", "thread_id": "u:s1"}}
    for text, asks in [("Can you help me write an email to my landlord?", True),
                       ("Write me a short poem about autumn.", True),
                       ("Kannst du mir ein ähnliches Buch empfehlen?", True),
                       ("Ugh, night shifts at the hospital are killing me.", False),
                       ("What should I cook tonight? I am vegetarian.", False)]:
        assert only_asks(text) is asks, text
        items = turn_items([HumanMessage(text, id="m1"), AIMessage("OK, gladly.", id="a1")],
                           config, NOW, redact=None, replies=True)
        user_items = [i for i in items if i.value["role"] == "user"]
        assert [i.value["asks"] for i in user_items] == [asks], text
        assert all("asks" not in i.value for i in items if i.value["role"] == "assistant")


def test_a_question_the_user_asked_does_not_outrank_the_fact() -> None:
    """"Which language does Alice use?" ranked Alice's own earlier question (0.373) and the
    assistant's canned reply (0.207) above the fact (0.179)."""
    items = [turn("Which language should I learn next?", 0.373, asks=True),
             turn("Great question! Spanish is popular.", 0.207, role="assistant"),
             hit("Alice speaks German at home.", 0.179, kind="fact")]
    kept = [i.key for i in passing(items, 0.10)]
    assert kept[0] == "Alice speaks German at home."
    # The question counts a quarter (0.093): after the fact; the reply after the user's words.
    assert kept[1:] == ["Which language should I learn next?", "Great question! Spanish is popular."]


def test_replies_never_come_before_what_the_user_said() -> None:
    items = [turn("You said you moved to Lisbon.", 0.40, role="assistant"),
             turn("I moved to Lisbon last week.", 0.20, asks=False),
             hit("I live in Lisbon.", 0.12, kind="fact")]
    kept = [i.key for i in passing(items, 0.10)]
    assert kept[-1] == "You said you moved to Lisbon."
    assert set(kept[:-1]) == {"I moved to Lisbon last week.", "I live in Lisbon."}


def test_nothing_relevant_when_the_best_evidence_is_under_the_floor() -> None:
    items = [turn("Any tips for the trip?", 0.30, asks=True), hit("I like tea.", 0.05, kind="fact")]
    decision = decide(items, 0.10)
    assert not decision.answered
    assert all(not v.kept and "nothing relevant" in v.reason for v in decision.verdicts)


def test_no_floor_keeps_the_store_order() -> None:
    items = [turn("Ideas?", 0.3, asks=True), hit("a fact", 0.1, kind="fact")]
    assert [i.key for i in passing(items, None)] == ["Ideas?", "a fact"]


scores = st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0))
kinds = st.sampled_from(["fact", "statement", "ask", "reply"])


def _item(i: int, kind: str, score: float | None) -> SearchItem:
    if kind == "fact":
        return hit(f"k{i}", score, kind="fact")
    if kind == "reply":
        return turn(f"k{i}", score, role="assistant")
    return turn(f"k{i}", score, asks=kind == "ask")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(kinds, scores), max_size=8), st.floats(min_value=0.01, max_value=0.5))
def test_decision_properties(drawn: list[tuple[str, float | None]], floor: float) -> None:
    items = [_item(i, k, s) for i, (k, s) in enumerate(drawn)]
    decision = decide(items, floor)
    kept = list(decision.kept)
    evidence = {v.item.key: v.evidence for v in decision.verdicts}
    scored = [e for e in evidence.values() if e is not None]
    assert len(decision.verdicts) == len(items)
    if not scored:
        assert kept == items  # the store ranks nothing: every hit
        return
    best = max(scored)
    if best < floor:
        assert kept == []
        return
    # Every kept hit has evidence over the runner-up share, every withheld one has not.
    for v in decision.verdicts:
        assert v.kept == (v.evidence is not None and v.evidence >= floor * 0.5), v
    # Saved facts that reach the floor come first, then the rest of what the user said,
    # then the replies; each part by evidence.
    facts = [i for i in kept if kind_of(i.value) == FACT and (evidence[i.key] or 0.0) >= floor]
    said = [i for i in kept if kind_of(i.value) != REPLY and i not in facts]
    replies = [i for i in kept if kind_of(i.value) == REPLY]
    assert kept == facts + said + replies
    for part in (facts, said, replies):
        values = [evidence[i.key] or 0.0 for i in part]
        assert values == sorted(values, reverse=True)
    for v in decision.verdicts:
        if v.evidence is not None and v.item.score is not None:
            assert v.evidence == pytest.approx(v.item.score * WEIGHTS[v.kind])


def test_explain_recall_says_why() -> None:
    store = InMemoryStore(index=hash_index())  # type: ignore[arg-type]
    store.put(("memories", "alice"), "f1", {"text": "Alice drinks her coffee black", "kind": "fact"})
    store.put(("memories", "alice", "turns"), "t1",
              {"text": "How do I make coffee at home?", "kind": "turn", "role": "user",
               "asks": True})
    decision = explain_recall(store, "coffee black", {"configurable": {"user_id": "alice"}},
                              min_score=0.01)
    by_key = {v.item.key: v for v in decision.verdicts}
    assert by_key["f1"].kept and by_key["f1"].kind == FACT
    assert by_key["t1"].kind == ASK
    assert decision.kept[0].key == "f1"
    assert all(v.reason for v in decision.verdicts)


def test_the_recall_tool_answers_with_the_fact_before_the_users_question() -> None:
    """Through the tool: the user's own question shares every word of the new question, the
    fact fewer; the fact still comes first."""
    store = InMemoryStore(index=hash_index())  # type: ignore[arg-type]
    _, recall = create_memory_tools(store=store, locale="en")
    ns = ("memories", "alice")
    store.put(ns, "f1", {"text": "Alice speaks German at home", "kind": "fact"})
    store.put((*ns, "turns"), "t1", {"text": "Which language does Alice speak at home?",
                                     "kind": "turn", "role": "user", "asks": True})
    answer = recall.invoke({ENGLISH.recall_arg: "Which language does Alice speak at home?"},
                           user("alice"))
    assert bullets(answer, ENGLISH)[0].startswith("Alice speaks German at home")
