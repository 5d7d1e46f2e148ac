"""The seed document's API, as its names and defaults are written there, in one test.

The seed document itself is not in the repository; its API section is restated name by name in
issue 3 (records, retrieval and replay, skills, strategy, learning), issue 5 (the tools) and
issue 17 (``SearchResult``, ``rolling_avg_reward``, ``EmbeddingStore``). Every name below is
imported from ``langgraph_episodic`` (the product's names) or, for the rest, from the subpackage
that holds it (``langgraph_episodic.episodic``, ``langgraph_episodic.embeddings``; listed in
docs/api.md), and checked against those texts.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

import langgraph_episodic
import langgraph_episodic.embeddings
import langgraph_episodic.episodic


class _Seed:
    """The seed's names, wherever the package keeps them public (top level first)."""

    def __getattr__(self, name: str) -> Any:
        for module in (langgraph_episodic, langgraph_episodic.episodic,
                       langgraph_episodic.embeddings):
            if name in module.__all__:
                return getattr(module, name)
        raise AttributeError(f"the seed's {name!r} is public nowhere in langgraph_episodic")


lib = _Seed()

HOUR = 3600.0


def _defaults(func: Any) -> dict[str, Any]:
    return {
        name: p.default
        for name, p in inspect.signature(func).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def _params(func: Any) -> list[str]:
    return [n for n in inspect.signature(func).parameters if n != "self"]


def test_every_name_and_default_of_the_seed_api() -> None:
    # Records
    assert [s.value for s in lib.OutcomeStatus] == ["success", "partial", "failure"]
    assert [c.value for c in lib.TaskCategory] == [
        "code_generation", "debugging", "refactoring", "testing", "architecture", "unknown"]
    assert _params(lib.TaskDescription)[:3] == ["description", "category", "complexity"]
    assert _defaults(lib.TaskDescription) == {
        "category": lib.TaskCategory.UNKNOWN, "complexity": 0.5}
    assert _params(lib.Feedback) == ["reward", "message", "tests_passed", "tests_total"]
    assert _defaults(lib.Feedback) == {"message": "", "tests_passed": 0, "tests_total": 0}
    assert lib.Feedback(1.0).pass_rate == 0 and lib.Feedback(1.0, "", 1, 2).pass_rate == 0.5
    assert _params(lib.Episode) == ["episode_id", "task", "solution", "feedback", "outcome",
                                    "timestamp", "iterations", "strategy_used"]
    assert _defaults(lib.Episode) == {"timestamp": 0.0, "iterations": 1,
                                      "strategy_used": "default"}

    # Retrieval and replay
    assert lib.cosine_similarity([1.0, 0.0], [1.0, 0.0]) == pytest.approx(1.0)
    assert _defaults(lib.simple_hash_embedding) == {"dim": 64}
    assert len(lib.simple_hash_embedding("x")) == 64
    assert _params(lib.temporal_decay)[:4] == [
        "similarity", "episode_time", "current_time", "half_life"]
    assert _defaults(lib.temporal_decay)["half_life"] == 86400.0
    table = {0: 1.00, 12 * HOUR: 0.71, 24 * HOUR: 0.50, 48 * HOUR: 0.25, 168 * HOUR: 0.008}
    for age, expected in table.items():
        assert round(lib.temporal_decay(1.0, 0.0, age), 3 if expected < 0.01 else 2) == expected
    assert _defaults(lib.ReplayWeights) == {
        "similarity": 0.4, "recency": 0.3, "reward": 0.2, "outcome_bonus": 0.1}
    presets = {"EARLY_WEIGHTS": (0.6, 0.1, 0.2, 0.1), "NORMAL_WEIGHTS": (0.4, 0.3, 0.2, 0.1),
               "LATE_WEIGHTS": (0.3, 0.4, 0.2, 0.1)}
    for name, values in presets.items():
        w = getattr(lib, name)
        assert (w.similarity, w.recency, w.reward, w.outcome_bonus) == values, name
    assert _params(lib.compute_priority)[:4] == ["result", "current_time", "weights", "half_life"]
    assert _defaults(lib.compute_priority)["half_life"] == 86400.0

    episode = lib.Episode("e1", lib.TaskDescription("fix the login bug"), "patched",
                          lib.Feedback(1.0), lib.OutcomeStatus.SUCCESS)
    result = lib.SearchResult(episode, 0.8)  # the seed's name and positional form
    assert isinstance(result, lib.PrioritizedResult)
    assert (result.episode, result.similarity) == (episode, 0.8)
    scored = lib.compute_priority(result, current_time=0.0)
    assert scored.components is not None and scored.components.outcome == 1.0
    outcome_scores = {}
    for status in lib.OutcomeStatus:
        other_result = lib.SearchResult(lib.Episode("x", episode.task, "", lib.Feedback(0.0), status), 0.0)
        components = lib.compute_priority(other_result, 0.0).components
        assert components is not None
        outcome_scores[status] = components.outcome
    assert outcome_scores == {lib.OutcomeStatus.SUCCESS: 1.0, lib.OutcomeStatus.PARTIAL: 0.5,
                              lib.OutcomeStatus.FAILURE: 0.0}

    assert _params(lib.EpisodicMemory)[:2] == ["store", "namespace"]
    memory_defaults = _defaults(lib.EpisodicMemory)
    assert memory_defaults["short_term_limit"] == 5 and memory_defaults["candidate_factor"] == 2
    assert memory_defaults["half_life"] == 86400.0
    assert _params(lib.EpisodicMemory.record)[:1] == ["episode"]
    extra = inspect.signature(lib.EpisodicMemory.record).parameters["context"]
    assert extra.kind is inspect.Parameter.KEYWORD_ONLY and extra.default is None  # seed calls work
    assert _params(lib.EpisodicMemory.recall)[:5] == [
        "query", "top_k", "current_time", "weights", "half_life"]
    recall = _defaults(lib.EpisodicMemory.recall)
    assert recall["top_k"] == 3 and recall["current_time"] is None and recall["weights"] is None
    assert recall["half_life"] in (None, 86400.0)  # None: the memory's own, 86400 by default
    assert hasattr(lib, "ReplayContext")
    assert _params(lib.build_replay_context)[:1] == ["results"]
    assert _params(lib.format_replay_prompt)[:2] == ["context", "task"]

    # Skills, strategy, learning
    assert hasattr(lib.SkillProfile, "success_rate")
    assert _params(lib.compute_skill_profiles)[:1] == ["episodes"]
    assert _params(lib.identify_weak_skills)[:2] == ["profiles", "threshold"]
    assert _defaults(lib.identify_weak_skills)["threshold"] == 0.5
    assert list(lib.STRATEGY_POOL)[:5] == [
        "conservative", "exploratory", "defensive", "iterative", "example_driven"]
    assert _params(lib.select_strategy)[:3] == ["task", "memory", "current_time"]
    assert _defaults(lib.select_strategy)["current_time"] is None
    assert _params(lib.compute_learning_curve)[:2] == ["episodes", "window"]
    assert _defaults(lib.compute_learning_curve)["window"] == 5
    snap = lib.compute_learning_curve([episode])[0]
    assert snap.rolling_avg_reward == snap.rolling_average_reward == 1.0
    assert snap.cumulative_reward == 1.0 and snap.rolling_success_rate == 1.0
    assert callable(lib.plot_learning_curve)

    # EmbeddingStore: add(episode), search(query, top_k=3) -> tuple[SearchResult, ...]
    assert _defaults(lib.EmbeddingStore.search) == {"top_k": 3}
    store = lib.EmbeddingStore(InMemoryStore(), embeddings=lib.HashEmbeddings())
    other = lib.Episode("e2", lib.TaskDescription("write the billing report"), "done",
                        lib.Feedback(0.0), lib.OutcomeStatus.FAILURE)
    assert store.add(episode) and store.add(other)
    found = store.search("login bug")
    assert isinstance(found, tuple) and all(isinstance(r, lib.SearchResult) for r in found)
    assert found[0].episode == episode and found[0].similarity > found[-1].similarity
    assert len(store.search("login bug", top_k=1)) == 1

    # Tools (issue 5)
    assert (lib.memory_speichern.name, lib.memory_abrufen.name) == (
        "memory_speichern", "memory_abrufen")
    tools = _defaults(lib.create_memory_tools)
    assert tools["store"] is None and tools["namespace"] == ("memories", "{user_id}")
    assert tools["k"] == 3 and tools["locale"] == "de" and tools["ttl"] is None
    assert "should_store" in tools
    assert list(lib.memory_speichern.args) == ["information"]
    assert list(lib.memory_abrufen.args) == ["frage"]
    for tool in (lib.memory_speichern, lib.memory_abrufen):  # sync and async functions
        assert tool.func is not None and tool.coroutine is not None, tool.name
    english = lib.create_memory_tools(store=InMemoryStore(), locale="en")
    assert [t.name for t in english] == ["save_memory", "recall_memory"]
