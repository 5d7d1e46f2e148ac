"""The docstring examples run, and the episodic names the package root exports are the same
objects."""

from __future__ import annotations

import doctest
import importlib

import pytest

import langgraph_episodic
import langgraph_episodic.episodic as episodic

MODULES = ["records", "similarity", "priority", "memory", "replay", "skills", "change",
           "evidence", "strategy",
           "learning", "plot"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(f"langgraph_episodic.episodic.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no runnable example"
    assert result.failed == 0


def test_every_public_name_has_a_docstring() -> None:
    for name in episodic.__all__:
        obj = getattr(episodic, name)
        if callable(obj):
            assert obj.__doc__ and obj.__doc__.strip(), name


def test_the_root_exports_episodic_names_as_they_are() -> None:
    assert len(set(episodic.__all__)) == len(episodic.__all__)
    at_root = [name for name in episodic.__all__ if name in langgraph_episodic.__all__]
    assert "EpisodicMemory" in at_root and "Episode" in at_root
    for name in at_root:
        assert getattr(langgraph_episodic, name) is getattr(episodic, name)


def test_issue_api_is_present() -> None:
    expected = {
        "OutcomeStatus", "TaskCategory", "TaskDescription", "Feedback", "Episode",
        "cosine_similarity", "temporal_decay", "ReplayWeights", "compute_priority",
        "PrioritizedResult", "EpisodicMemory", "ReplayContext", "build_replay_context",
        "format_replay_prompt", "SkillProfile", "compute_skill_profiles", "identify_weak_skills",
        "STRATEGY_POOL", "select_strategy", "LearningSnapshot", "compute_learning_curve",
        "plot_learning_curve",
    }
    assert expected <= set(episodic.__all__)
    memory_api = {"record", "arecord", "recall", "arecall", "episodes", "aepisodes",
                  "short_term", "ashort_term", "get", "aget", "count", "acount",
                  "skill_profiles", "askill_profiles", "refresh", "arefresh", "load", "aload"}
    assert memory_api <= set(dir(episodic.EpisodicMemory))
