"""``benchmarks/lived_in.py``: its conversations are consistent, and the harness computes its
metrics on a tiny slice (one short session, one question of each kind) with a hash embedder.

The figures themselves come from ``python benchmarks/lived_in.py`` (docs/benchmarks.md)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from script_modules import script_module

from langgraph_episodic.embeddings import HashEmbeddings

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    with script_module("lived_in_benchmark", BENCHMARKS / "lived_in.py") as module:
        yield module


@pytest.fixture(scope="module")
def data(bench: ModuleType) -> ModuleType:
    return bench.sys.modules["_lived_in_data"]


def _said(persona: object) -> str:
    return " ".join(t.text for s in persona.sessions for t in s.turns)  # type: ignore[attr-defined]


def test_each_half_has_an_english_a_german_and_a_mixed_persona_none_shared(
        data: ModuleType) -> None:
    halves = data.HALVES
    assert set(halves) == {"tune", "held-out"}
    for personas in halves.values():
        assert sorted(p.language for p in personas) == ["de", "en", "mixed"]
    ids = [p.user_id for ps in halves.values() for p in ps]
    assert len(ids) == len(set(ids))


def test_every_marker_was_said_and_every_question_kind_is_there(
        bench: ModuleType, data: ModuleType) -> None:
    for personas in data.HALVES.values():
        for p in personas:
            said = _said(p)
            kinds = [q.kind for q in p.questions]
            assert kinds.count("answerable") >= 15 and kinds.count("never") >= 4, p.user_id
            assert kinds.count("cross") >= 3 and kinds.count("changed") >= 3, p.user_id
            for q in p.questions:
                assert q.kind in data.KINDS
                assert (q.kind == "never") == (not q.markers), q.text
                for markers in (q.markers, q.old):  # alternatives: one of them was said
                    assert not markers or bench.has(said, markers), q.text


def test_a_changed_fact_is_said_after_the_one_it_replaces(
        bench: ModuleType, data: ModuleType) -> None:
    for personas in data.HALVES.values():
        for p in personas:
            for q in (q for q in p.questions if q.kind == "changed"):
                texts = [t.text for s in p.sessions for t in s.turns]
                first_old = min(i for i, t in enumerate(texts) if bench.has(t, q.old))
                first_new = min(i for i, t in enumerate(texts) if bench.has(t, q.markers))
                assert first_old < first_new, q.text


def test_a_request_holds_no_fact(data: ModuleType) -> None:
    turns = [t for ps in data.HALVES.values() for p in ps for s in p.sessions for t in s.turns]
    assert not [t.text for t in turns if t.ask and t.facts]
    assert sum(t.ask for t in turns) >= 20 and sum(bool(t.facts) for t in turns) >= 120


def test_a_changed_fact_scores_current_first_unless_an_old_line_comes_before(
        bench: ModuleType, data: ModuleType) -> None:
    q = data.changed("Where do I live?", "Manchester", "Leeds")
    answer = bench.Answer
    assert bench.score(q, answer(("I moved from Leeds to Manchester.", "My flat in Leeds.")))
    assert not bench.score(q, answer(("My flat in Leeds.", "We moved to Manchester.")))
    assert not bench.score(q, answer(("a", "b", "c", "We moved to Manchester.")))
    assert bench.score(data.never("Blood type?"), answer(()))


def test_the_harness_measures_a_tiny_slice(bench: ModuleType, data: ModuleType) -> None:
    maya = data.MAYA
    kinds = ("answerable", "never", "cross", "changed")
    questions = tuple(next(q for q in maya.questions if q.kind == k) for k in kinds)
    first = replace(maya.sessions[0], turns=maya.sessions[0].turns[:4])
    moved = replace(maya.sessions[3], turns=maya.sessions[3].turns[:1])
    tiny = replace(maya, sessions=(first, moved), questions=questions)
    index = {"dims": 64, "embed": HashEmbeddings(64)}
    outcomes = [o for row in bench.ROWS for o in bench.run_persona(tiny, row, index)]
    assert len(outcomes) == len(questions) * len(bench.ROWS) * len(bench.VIEWS)
    for o in outcomes:  # each view returned lines the scorer read, and no question was stored
        assert all(isinstance(line, str) and line for line in o.answer.lines)
        assert not any(q.text in line for q in questions for line in o.answer.lines)
    middleware = [o for o in outcomes if o.view == "middleware" and o.question.kind != "never"]
    assert any(o.answer.prompt for o in middleware)  # the request carried memory
    table = bench.table(outcomes)
    for row in ("A-tool", "A-middleware", "B-tool", "B-middleware"):
        assert row in table
    assert all(name in table for name in bench.METRICS)
    failed = list(bench.failures(outcomes))
    assert len([f for f in failed if f.startswith("[")]) == sum(not o.ok for o in outcomes)


def test_saved_facts_and_replies_are_told_apart(bench: ModuleType, data: ModuleType) -> None:
    kinds = bench.Kinds.of(data.MAYA)
    request = next(t for t in data.MAYA.sessions[0].turns if t.ask)
    assert kinds.is_noise(f"Monday, 12 January 2026, you said: {data.MAYA.sessions[0].turns[0].reply}")
    assert kinds.is_noise(data.MAYA.sessions[0].turns[0].reply)
    assert kinds.is_noise(f"Monday, 12 January 2026, the user said: {request.text}")
    assert not kinds.is_noise("Maya plays the cello.")
    assert not kinds.is_noise(data.MAYA.sessions[0].turns[0].text)
