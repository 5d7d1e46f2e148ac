"""Episode recall decides relevance: a task unlike every past one recalls no past task.

Before, ``EpisodicMemory.recall`` and the recall node kept every candidate (``min_score=None``),
so an unrelated question to the example graph still answered "Similar past tasks: 2". Now a
past task scoring below the floor for the store's kind of score (``min_score="auto"``: the
hybrid score's or the raw cosine's, chosen on ``benchmarks/episode_relevance.py``) is not
recalled; a related task still recalls its past ones; ``min_score=None`` keeps every candidate;
a memory that cannot score similarity still ranks by recency, reward and outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langgraph.store.base import BaseStore

from langgraph_episodic import build_memory_graph
from langgraph_episodic.episodic import EpisodicMemory, TaskCategory
from langgraph_episodic.episodic.memory import COSINE_FLOOR, HYBRID_FLOOR
from langgraph_episodic.graph import EpisodeMemories, recall_node
from langgraph_episodic.graph.threads import thread_config

from .conftest import make_episode

PAST = (
    ("e1", "Fix the crash in the login flow when the password is empty", TaskCategory.DEBUGGING),
    ("e2", "Add unit tests for the edge cases of the date parser", TaskCategory.TESTING),
    ("e3", "Behebe den Speicherfehler im Session-Cache", TaskCategory.DEBUGGING),
)
RELATED = (
    ("The login flow crashes when the password is empty", "e1"),
    ("Write unit tests for the date parser edge cases", "e2"),
    ("Finde den Speicherfehler im Session-Cache", "e3"),
)
UNRELATED = (
    "How does Alice take her coffee?",
    "Plan a birthday party for my daughter",
    "Wie backe ich einen Apfelkuchen?",
    "Wann fährt der nächste Zug nach Hamburg?",
)
NOW = 1_700_000_000.0

MakeStore = Callable[..., BaseStore]


def _memory(store: BaseStore) -> EpisodicMemory:
    memory = EpisodicMemory.for_user(store, "alice")
    for n, (episode_id, text, category) in enumerate(PAST):
        memory.record(make_episode(episode_id, text, category=category,
                                   timestamp=NOW - 3600.0 * (n + 1)))
    return memory


def test_an_unrelated_task_recalls_no_past_task(store: BaseStore) -> None:
    memory = _memory(store)
    for text in UNRELATED:
        assert memory.recall(text, current_time=NOW) == [], text


def test_a_related_task_still_recalls_its_past_one(store: BaseStore) -> None:
    memory = _memory(store)
    for text, episode_id in RELATED:
        found = memory.recall(text, current_time=NOW)
        assert episode_id in [r.episode.episode_id for r in found], text
        assert all(r.similarity >= min(HYBRID_FLOOR, COSINE_FLOOR) for r in found)


def test_no_floor_keeps_every_candidate(store: BaseStore) -> None:
    memory = _memory(store)
    assert len(memory.recall(UNRELATED[0], top_k=3, current_time=NOW, min_score=None)) == 3


def test_an_unknown_floor_name_is_refused(store: BaseStore) -> None:
    memory = _memory(store)
    with pytest.raises(ValueError, match="None \\(no floor\\) or 'auto'"):
        memory.recall(UNRELATED[0], min_score="high")  # type: ignore[arg-type]


def test_without_similarity_recall_ranks_by_recency_alone(make_store: MakeStore) -> None:
    memory = _memory(make_store("memory", indexed=False))
    found = memory.recall(UNRELATED[0], top_k=3, current_time=NOW)
    assert [r.episode.episode_id for r in found] == ["e1", "e2", "e3"]


def test_the_recall_node_replays_nothing_for_an_unrelated_task(make_store: MakeStore) -> None:
    store = make_store("chroma-hybrid")
    _memory(store)
    node = recall_node(memories=EpisodeMemories(store))
    config = {"configurable": {"user_id": "alice"}}
    assert node.invoke({"task": UNRELATED[0]}, config)["recalled"] == []
    related = node.invoke({"task": RELATED[0][0]}, config)["recalled"]
    assert [r["episode_id"] for r in related][:1] == ["e1"]


def _offline_agent(state: dict[str, Any]) -> dict[str, Any]:
    """The example server's offline agent: it says how many past tasks were recalled."""
    recalled = len(state.get("recalled") or [])
    return {"messages": [("ai", f"Similar past tasks: {recalled}.")]}


@pytest.mark.parametrize("kind", ["chroma-hybrid"])
def test_the_example_graph_reports_no_similar_task_for_an_unrelated_question(
    make_store: MakeStore, kind: str
) -> None:
    store = make_store(kind)
    graph = build_memory_graph(_offline_agent, model=None, store=store, summarize=False)
    for n, (_, text, _) in enumerate(PAST[:2]):
        graph.invoke({"messages": [("user", text)], "feedback": {"reward": 1.0}},
                     thread_config("alice", f"s{n}"))
    asked = graph.invoke({"messages": [("user", UNRELATED[0])]}, thread_config("alice", "s9"))
    assert asked["messages"][-1].content == "Similar past tasks: 0."
    again = graph.invoke({"messages": [("user", RELATED[0][0])]}, thread_config("alice", "s10"))
    assert again["messages"][-1].content != "Similar past tasks: 0."
