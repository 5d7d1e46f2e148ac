"""The episodic nodes: recall, select-strategy and record-episode, sync and async."""

from __future__ import annotations

import random
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import BaseStore

from langgraph_episodic import MissingConfigError
from langgraph_episodic.episodic import (
    STRATEGY_POOL,
    Episode,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)
from langgraph_episodic.graph.episode_nodes import (
    recall_node,
    record_episode_node,
    select_strategy_node,
)
from langgraph_episodic.kinds.episodes import (
    EpisodeMemories,
    outcome_from_feedback,
    recalled_episodes,
    task_from_state,
)

from .conftest import cfg

SORT_TASK = TaskDescription("Sort a list of numbers in Python", TaskCategory.CODE_GENERATION, 0.5)


def seed(store: BaseStore, user: str = "alice", n: int = 4) -> list[Episode]:
    memory = EpisodicMemory(store, ("episodes", user))
    episodes = [
        Episode.new(TaskDescription(f"Sort a list of numbers variant {i}",
                                    TaskCategory.CODE_GENERATION, 0.5),
                    f"sorted(xs) # {user} {i}", Feedback(0.9, "tests pass", 3, 3),
                    OutcomeStatus.SUCCESS, strategy_used="example_driven")
        for i in range(n)
    ]
    for episode in episodes:
        memory.record(episode)
    return episodes


def state_for(task: Any = None, answer: str | None = "Use sorted().", **extra: Any) -> dict[str, Any]:
    messages: list[Any] = [HumanMessage("Sort a list of numbers in Python")]
    if answer is not None:
        messages.append(AIMessage(answer, id="answer-1"))
    state: dict[str, Any] = {"messages": messages, **extra}
    if task is not None:
        state["task"] = task
    return state


def test_task_from_state_variants() -> None:
    assert task_from_state({"task": SORT_TASK}) == SORT_TASK
    assert task_from_state({"task": SORT_TASK.to_dict()}) == SORT_TASK
    assert task_from_state({"task": {"description": "x"}}) == TaskDescription("x")
    assert task_from_state({"task": " Do it "}) == TaskDescription("Do it")
    assert task_from_state(state_for()) == TaskDescription("Sort a list of numbers in Python")
    assert task_from_state({"messages": []}) is None


def test_recall_writes_episodes_and_prompt(store: BaseStore) -> None:
    seeded = seed(store)
    seed(store, "bob")
    update = recall_node(store=store, top_k=2).invoke(state_for(SORT_TASK.to_dict()), cfg())
    assert len(update["recalled"]) == 2
    ids = {e.episode_id for e in seeded}
    assert all(d["episode_id"] in ids for d in update["recalled"])
    assert update["recalled"][0]["priority"] >= update["recalled"][1]["priority"]
    assert "components" in update["recalled"][0]
    assert "Sort a list of numbers in Python" in update["replay_prompt"]
    assert "example_driven" in update["replay_prompt"]
    assert "bob" not in update["replay_prompt"]
    episodes = recalled_episodes(update)
    assert {e.episode_id for e in episodes} <= ids


async def test_recall_async_matches_sync(store: BaseStore) -> None:
    seed(store)
    node = recall_node(store=store, top_k=3)
    sync = node.invoke(state_for(), cfg())
    async_ = await node.ainvoke(state_for(), cfg())
    assert [d["episode_id"] for d in sync["recalled"]] == [d["episode_id"] for d in async_["recalled"]]


def test_recall_without_task_or_message_is_empty(store: BaseStore) -> None:
    update = recall_node(store=store).invoke({"messages": []}, cfg())
    assert update == {"recalled": [], "replay_prompt": ""}


def test_recall_for_new_user_finds_nothing(store: BaseStore) -> None:
    seed(store)
    update = recall_node(store=store).invoke(state_for(), cfg("carol"))
    assert update["recalled"] == []
    assert "No similar past episodes" in update["replay_prompt"]


def test_select_strategy_reuses_what_worked(store: BaseStore) -> None:
    seed(store)
    greedy = select_strategy_node(store=store, policy="greedy")
    update = greedy.invoke(state_for(SORT_TASK), cfg())
    assert update == {"strategy": "example_driven",
                      "strategy_instruction": STRATEGY_POOL["example_driven"]}
    fresh = greedy.invoke(state_for(SORT_TASK), cfg("carol"))
    assert fresh["strategy"] == "iterative"  # complexity 0.5, no experience


async def test_select_strategy_thompson_async(store: BaseStore) -> None:
    seed(store)
    node = select_strategy_node(store=store, policy="thompson", rng=random.Random(3))
    update = await node.ainvoke(state_for(SORT_TASK), cfg())
    assert update["strategy"] in STRATEGY_POOL
    assert update["strategy_instruction"] == STRATEGY_POOL[update["strategy"]]
    with pytest.raises(ValueError, match="policy"):
        select_strategy_node(policy="random")


def test_record_from_state_feedback_once(store: BaseStore) -> None:
    memories = EpisodeMemories(store)
    node = record_episode_node(memories=memories)
    state = state_for(SORT_TASK.to_dict(), feedback={"reward": 1.0, "message": "ok",
                                                     "tests_passed": 2, "tests_total": 2},
                      strategy="conservative")
    first = node.invoke(state, cfg())
    second = node.invoke(state, cfg())
    assert first == second
    assert first["feedback"] is None and first["outcome"] is None
    memory = memories.for_config(cfg())
    assert memory.count() == 1
    episode = memory.get(first["episode_id"])
    assert episode is not None
    assert episode.task == SORT_TASK
    assert episode.solution == "Use sorted()."
    assert episode.outcome is OutcomeStatus.SUCCESS
    assert episode.strategy_used == "conservative"
    assert EpisodicMemory(store, ("episodes", "bob")).count() == 0


def test_same_answer_in_another_session_is_a_new_episode(store: BaseStore) -> None:
    memories = EpisodeMemories(store)
    node = record_episode_node(memories=memories)
    state = state_for(feedback={"reward": 0.5}, outcome="partial")
    a = node.invoke(state, cfg("alice", "s1"))
    b = node.invoke(state, cfg("alice", "s2"))
    assert a["episode_id"] != b["episode_id"]
    assert memories.for_config(cfg()).count() == 2


async def test_record_with_async_score_function(store: BaseStore) -> None:
    seen: list[dict[str, Any]] = []

    async def score(state: dict[str, Any]) -> Any:
        seen.append(state)
        return Feedback(0.2, "tests fail", 0, 3), "failure"

    memories = EpisodeMemories(store)
    node = record_episode_node(memories=memories, score=score)
    update = await node.ainvoke(state_for(SORT_TASK), cfg())
    again = await node.ainvoke(state_for(SORT_TASK), cfg())
    assert update["episode_id"] == again["episode_id"] and len(seen) == 2
    episode = await memories.for_config(cfg()).aget(update["episode_id"])
    assert episode is not None and episode.outcome is OutcomeStatus.FAILURE
    assert (await memories.for_config(cfg()).acount()) == 1


def test_sync_graph_refuses_an_async_score_function(store: BaseStore) -> None:
    async def score(state: dict[str, Any]) -> Any:
        return None

    with pytest.raises(TypeError, match="ainvoke"):
        record_episode_node(store=store, score=score).invoke(state_for(), cfg())


def test_score_dict_with_derived_outcome(store: BaseStore) -> None:
    memories = EpisodeMemories(store)
    node = record_episode_node(memories=memories, score=lambda s: {"reward": 0.5, "message": "meh"})
    update = node.invoke(state_for(), cfg())
    episode = memories.for_config(cfg()).get(update["episode_id"])
    assert episode is not None and episode.outcome is OutcomeStatus.PARTIAL


def test_nothing_recorded_without_feedback_or_answer(store: BaseStore) -> None:
    memories = EpisodeMemories(store)
    node = record_episode_node(memories=memories)
    assert node.invoke(state_for(), cfg()) == {}
    assert node.invoke(state_for(answer=None, feedback={"reward": 1.0}), cfg()) == {}
    scored_none = record_episode_node(memories=memories, score=lambda s: None)
    assert scored_none.invoke(state_for(), cfg()) == {}
    assert memories.for_config(cfg()).count() == 0


@pytest.mark.parametrize(
    ("feedback", "expected"),
    [(Feedback(0.1, tests_passed=3, tests_total=3), OutcomeStatus.SUCCESS),
     (Feedback(0.9, tests_passed=1, tests_total=3), OutcomeStatus.PARTIAL),
     (Feedback(0.9, tests_passed=0, tests_total=3), OutcomeStatus.FAILURE),
     (Feedback(0.8), OutcomeStatus.SUCCESS), (Feedback(0.3), OutcomeStatus.PARTIAL),
     (Feedback(0.29), OutcomeStatus.FAILURE)],
)
def test_outcome_from_feedback(feedback: Feedback, expected: OutcomeStatus) -> None:
    assert outcome_from_feedback(feedback) is expected


def test_nodes_need_a_user_id(store: BaseStore) -> None:
    for node in (recall_node(store=store), select_strategy_node(store=store),
                 record_episode_node(store=store)):
        with pytest.raises(MissingConfigError, match="user_id"):
            node.invoke(state_for(), {"configurable": {"thread_id": "x"}})


def test_memories_are_shared_and_cached(store: BaseStore) -> None:
    memories = EpisodeMemories(store, max_cached=2)
    a = memories.for_config(cfg("alice"))
    assert memories.for_config(cfg("alice", "other-session")) is a
    memories.for_config(cfg("bob"))
    memories.for_config(cfg("carol"))
    assert memories.for_config(cfg("alice")) is not a  # evicted, rebuilt
    assert memories.for_config(cfg("alice")).namespace == ("episodes", "alice")


def test_evict_user_drops_only_that_users_cached_memories(store: BaseStore) -> None:
    seed(store, "alice")
    memories = EpisodeMemories(store)
    alice, alice2 = memories.for_config(cfg("alice")), memories.for_config(cfg("alice2"))
    assert alice.count() == 4
    assert memories.evict_user("alice") == 1
    assert memories.for_config(cfg("alice2")) is alice2
    assert memories.for_config(cfg("alice")) is not alice
    assert memories.evict_user("nobody") == 0


def test_forget_user_evicts_from_every_live_provider(store: BaseStore) -> None:
    from langgraph_episodic.privacy import forget_user

    seed(store, "alice")
    first, second = EpisodeMemories(store), EpisodeMemories(store)
    for memories in (first, second):
        assert memories.for_config(cfg("alice")).count() == 4
    bob = first.for_config(cfg("bob"))
    forget_user("alice", store=store)
    for memories in (first, second):
        assert memories.for_config(cfg("alice")).count() == 0
        assert memories.for_config(cfg("alice")).short_term() == []
    assert first.for_config(cfg("bob")) is bob


def test_providers_are_not_kept_alive_and_share_one_forget_listener(store: BaseStore) -> None:
    import gc
    import weakref

    from langgraph_episodic.privacy import report

    EpisodeMemories(store)  # the listener is subscribed by now
    listeners = len(report._listeners)
    providers = [EpisodeMemories(store) for _ in range(20)]
    assert len(report._listeners) == listeners
    ref = weakref.ref(providers[0])
    del providers
    gc.collect()
    assert ref() is None
