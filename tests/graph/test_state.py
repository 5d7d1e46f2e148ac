"""The state schema and its entity-merging reducer."""

from __future__ import annotations

from typing import get_type_hints

from langgraph.graph import StateGraph

from langgraph_episodic.graph.state import EpisodicState, merge_entities


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
