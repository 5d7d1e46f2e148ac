"""The state schema and its entity-merging reducer."""

from __future__ import annotations

from typing import get_type_hints

from hypothesis import example, given
from hypothesis import strategies as st
from langgraph.graph import StateGraph

from langgraph_episodic.graph.state import (
    MAX_DESCRIPTION_SENTENCES,
    EpisodicState,
    merge_description,
    merge_entities,
)

sentences = st.lists(
    st.sampled_from(["Alice likes tea.", "She works at ACME.", "Alice likes tea a lot.",
                     "She lives in Berlin.", "alice likes tea", "Bob is her manager."]),
    max_size=5,
).map(" ".join)


def test_merge_appends_only_new_sentences() -> None:
    merged = merge_description("Alice likes tea.", "Alice likes tea. She works at ACME.")
    assert merged == "Alice likes tea. She works at ACME."


def test_merge_ignores_case_and_punctuation_repeats() -> None:
    assert merge_description("Alice likes tea.", "ALICE likes tea!") == "ALICE likes tea!"


def test_longer_sentence_replaces_the_one_it_extends() -> None:
    merged = merge_description("Alice is a developer. She likes tea.", "Alice is a developer at ACME.")
    assert merged == "Alice is a developer at ACME. She likes tea."


def test_description_keeps_the_newest_sentences() -> None:
    text = None
    for i in range(MAX_DESCRIPTION_SENTENCES + 3):
        text = merge_description(text, f"Fact number {i} is true.")
    assert text is not None
    assert text.startswith(f"Fact number {MAX_DESCRIPTION_SENTENCES + 2} is true.")
    assert text.endswith("Fact number 3 is true.")


def test_regression_a_correction_replaces_the_fact_it_restates() -> None:
    """Issue 15, bug 7: corrections piled up in one description."""
    merged = merge_description("Alice works at ACME. She likes tea.",
                               "Alice no longer works at ACME, she now works at Globex.")
    assert merged == "Alice no longer works at ACME, she now works at Globex. She likes tea."


@given(sentences, sentences)
@example("Alice likes tea. alice likes tea", "She works at ACME.")  # unterminated, repeated
@example("She works at ACME. Alice likes tea.", "Alice likes tea a lot. alice likes tea She works at ACME.")
def test_merge_is_idempotent(a: str, b: str) -> None:
    once = merge_description(a, b)
    assert merge_description(a, once) == once
    assert merge_description(once, b) == once


def test_reducer_replaces_by_name_case_insensitively_and_keeps_first_spelling() -> None:
    merged = merge_entities({"Alice": "A developer."}, {"ALICE": "Works at ACME.", "Bob": "A manager."})
    assert merged == {"Alice": "Works at ACME.", "Bob": "A manager."}


def test_reducer_none_removes_and_handles_missing_sides() -> None:
    assert merge_entities({"Alice": "x."}, {"alice": None}) == {}
    assert merge_entities(None, {"Bob": "y."}) == {"Bob": "y."}
    assert merge_entities({"Bob": "y."}, None) == {"Bob": "y."}


def test_state_extends_messages_state_and_can_be_mixed_in() -> None:
    class MyState(EpisodicState):
        attempts: int

    hints = get_type_hints(MyState, include_extras=True)
    for key in ("messages", "summary", "entities", "task", "recalled", "replay_prompt",
                "strategy", "attempts"):
        assert key in hints
    builder = StateGraph(MyState)

    def node(state: MyState) -> dict[str, object]:
        return {"entities": {"alice": "Works at ACME."}, "attempts": 1}

    builder.add_node("n", node)
    builder.set_entry_point("n")
    graph = builder.compile()
    out = graph.invoke({"messages": [], "entities": {"Alice": "A developer."}})
    assert out["entities"] == {"Alice": "Works at ACME."}
    assert out["attempts"] == 1
