"""Pseudo-relevance feedback (``ChromaStore(feedback=True)``): memories sharing context with the
best hits join them, scores stay monotone, are never lowered and never reach the best hit's (it
stays first), a floor keeps its meaning, and filtered-out memories never shape the answer."""

from __future__ import annotations

from typing import Any

import pytest

from ._support import CHROMA_BACKENDS, Orthogonal

INDEX: dict[str, Any] = {"dims": 2, "embed": Orthogonal(), "fields": ["text", "time"]}
NS = ("alice", "memories")

DAY_TRIP = {
    "trip": {"text": "We went on a kayak trip on the lake", "time": "8 May 2023"},
    "fish": {"text": "Afterwards we grilled fish by the water", "time": "8 May 2023"},
    "report": {"text": "The quarterly report is due soon", "time": "2 June 2023"},
    "dentist": {"text": "Dentist appointment moved again", "time": "17 July 2023"},
    "garden": {"text": "Planted tomatoes and basil in the garden", "time": "3 August 2023"},
}


@pytest.fixture(params=CHROMA_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _fill(make_store: Any, memories: dict[str, dict[str, str]], **options: Any) -> Any:
    options.setdefault("field_lift", False)  # feedback alone (the lift: test_shared_fields.py)
    store = make_store(index=INDEX, search_mode=None, **options)
    for key, value in memories.items():
        store.put(NS, key, value)
    return store


def _ranked(store: Any, query: str, **kwargs: Any) -> list[tuple[str, float]]:
    return [(r.key, r.score) for r in store.search(NS, query=query, limit=10, **kwargs)]


def test_off_by_default(make_store: Any) -> None:
    store = make_store(index=INDEX, search_mode=None)
    assert store.feedback is False


def test_a_memory_of_the_same_day_joins_the_best_hit(make_store: Any) -> None:
    plain = _fill(make_store, DAY_TRIP)
    with_feedback = _fill(make_store, DAY_TRIP, feedback=True)
    before = dict(_ranked(plain, "kayak trip"))
    after = _ranked(with_feedback, "kayak trip")
    assert max(before, key=before.__getitem__) == "trip"
    assert before["fish"] == 0.0  # shares no word with the question
    assert [key for key, _ in after[:2]] == ["trip", "fish"]  # same date as the best hit
    others = [score for key, score in after if key not in ("trip", "fish")]
    assert after[1][1] > 0.0 and all(score < after[1][1] for score in others)


def test_scores_are_monotone_and_never_above_the_best_hit(make_store: Any) -> None:
    memories = {
        **DAY_TRIP,
        "trip2": {"text": "Another kayak outing, longer this time", "time": "2 June 2023"},
        "paddle": {"text": "Bought a new paddle for the kayak", "time": "17 July 2023"},
    }
    plain = _fill(make_store, memories)
    with_feedback = _fill(make_store, memories, feedback=True)
    for query in ("kayak trip", "kayak", "lake water fish", "report dentist"):
        first = _ranked(plain, query)
        after = _ranked(with_feedback, query)
        scores = [score for _, score in after]
        assert scores == sorted(scores, reverse=True), query
        assert max(scores) <= first[0][1] + 1e-9, query
        assert all(0.0 <= s <= 1.0 for s in scores)
        assert after[0] == first[0], query  # the best hit stays first, with its score
        before = dict(first)
        assert all(score >= before[key] - 1e-9 for key, score in after), query  # none lowered


def test_a_floor_still_empties_an_unrelated_question(make_store: Any) -> None:
    store = _fill(make_store, DAY_TRIP, feedback=True)
    results = _ranked(store, "quantum chromodynamics lecture")
    assert all(score == 0.0 for _, score in results)  # nothing relates: nothing is spread
    assert [key for key, score in results if score >= 0.05] == []
    # A related question keeps a score a floor lets through.
    best = _ranked(store, "kayak trip")[0]
    assert best[0] == "trip" and best[1] >= 0.05


def test_filtered_out_memories_do_not_shape_the_answer(make_store: Any) -> None:
    memories = {
        # The strongest match for "kayak" is private; its day-mate must not be pulled in.
        "secret": {"text": "kayak kayak kayak", "time": "1 June 2023", "kind": "private"},
        "secret_day": {
            "text": "Barbecue with the neighbours",
            "time": "1 June 2023",
            "kind": "public",
        },
        "public": {
            "text": "Rented a kayak at the harbour",
            "time": "3 July 2023",
            "kind": "public",
        },
        "public_day": {
            "text": "Lunch at the harbour cafe",
            "time": "3 July 2023",
            "kind": "public",
        },
    }
    store = _fill(make_store, memories, feedback=True)
    keys = [key for key, _ in _ranked(store, "kayak", filter={"kind": "public"})]
    assert keys[0] == "public"
    assert "secret" not in keys
    assert keys[1] == "public_day"  # pulled in by the public hit, not by the private one
