"""The public names of ``langgraph_episodic.facts`` and the doctests of its modules."""

from __future__ import annotations

import doctest
import importlib

import pytest

import langgraph_episodic.facts as facts

MODULES = ["dates", "records", "rules", "model_decider", "consolidate", "recall"]


def test_public_names() -> None:
    assert sorted(facts.__all__) == sorted([
        "CURRENT_FILTER", "Candidate", "Clock", "Decision", "FactDecision", "FactRecord",
        "FactWriter", "ModelDecider", "Outcome", "ResolvedDate", "RuleDecider",
        "acurrent_facts", "afact_history", "asks_about_past", "current_facts",
        "decide_by_rules", "describe_history", "fact_history", "format_date", "is_ending",
        "resolve_date", "slot_of", "topic_of_question", "wording",
    ])
    assert all(hasattr(facts, name) for name in facts.__all__)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(f"langgraph_episodic.facts.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
