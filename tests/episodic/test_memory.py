"""EpisodicMemory on InMemoryStore and ChromaStore (hybrid and dense): record, recall, isolation."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from langgraph.store.base import BaseStore, Op, Result, SearchOp
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import MissingConfigError
from langgraph_episodic.embeddings import HashEmbeddings, simple_hash_embedding
from langgraph_episodic.episodic import (
    EARLY_WEIGHTS,
    NORMAL_WEIGHTS,
    EpisodeConflictError,
    EpisodicMemory,
    OutcomeStatus,
    PrioritizedResult,
    ReplayWeights,
    TaskCategory,
    TaskDescription,
    compute_priority,
    compute_skill_profiles,
    cosine_similarity,
)

from .conftest import DAY, HOUR, STORE_KINDS, make_episode

NOW = 1_700_000_000.0


class SpyStore(BaseStore):
    """Delegates to another store and records every op it is asked to run."""

    def __init__(self, inner: BaseStore) -> None:
        self.inner = inner
        self.index_config = getattr(inner, "index_config", None)
        self.ops: list[Op] = []

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self.ops += ops
        return self.inner.batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self.ops += ops
        return await self.inner.abatch(ops)


def ids(results: Iterable[PrioritizedResult]) -> list[str]:
    return [r.episode.episode_id for r in results]


def test_record_then_recall_with_priority_components(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice")
    ep = make_episode("e1", "Fix the failing date parser test", timestamp=NOW - 12 * HOUR,
                      reward=0.9)
    assert memory.record(ep) is True
    (result,) = memory.recall("date parser test fails", current_time=NOW)
    assert result.episode == ep
    assert result.similarity > 0
    expected = compute_priority(PrioritizedResult(ep, result.similarity), NOW, EARLY_WEIGHTS)
    assert result.priority == pytest.approx(expected.priority)
    assert result.components == expected.components
    assert store.get(("episodes", "alice"), "e1").value == ep.to_dict()  # type: ignore[union-attr]


def test_record_is_idempotent_and_episodes_are_immutable(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice")
    ep = make_episode("e1", reward=0.5)
    assert memory.record(ep) is True
    assert memory.record(ep) is False
    assert memory.count() == 1
    assert len(store.search(("episodes", "alice"))) == 1
    with pytest.raises(EpisodeConflictError, match="immutable"):
        memory.record(make_episode("e1", reward=0.6))
    assert memory.get("e1") == ep
    assert memory.get("missing") is None


def test_short_term_window_is_fifo_and_survives_a_restart(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice", short_term_limit=3)
    for i in range(6):
        memory.record(make_episode(f"e{i}", timestamp=NOW + i))
        assert [e.episode_id for e in memory.short_term()] == [
            f"e{j}" for j in range(max(0, i - 2), i + 1)
        ]
    restarted = EpisodicMemory.for_user(store, "alice", short_term_limit=3)
    assert [e.episode_id for e in restarted.short_term()] == ["e3", "e4", "e5"]
    assert restarted.count() == 6


def test_short_term_window_keeps_the_newest_by_timestamp(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice", short_term_limit=2)
    for name, ts in [("mid", 5.0), ("new", 9.0), ("old", 1.0)]:
        memory.record(make_episode(name, timestamp=ts))
    assert [e.episode_id for e in memory.short_term()] == ["mid", "new"]
    assert [e.episode_id for e in EpisodicMemory.for_user(store, "alice",
                                                            short_term_limit=2).short_term()] \
        == ["mid", "new"]


@pytest.mark.parametrize(("top_k", "factor"), [(3, 2), (2, 5)])
def test_recall_asks_for_top_k_times_candidate_factor(
    store: BaseStore, top_k: int, factor: int
) -> None:
    spy = SpyStore(store)
    memory = EpisodicMemory(spy, ("episodes", "alice"), candidate_factor=factor)
    for i in range(12):
        memory.record(make_episode(f"e{i}", f"parser task number {i}"))
    spy.ops.clear()
    results = memory.recall("parser task", top_k=top_k)
    queries = [op for op in spy.ops if isinstance(op, SearchOp) and op.query]
    assert [op.limit for op in queries] == [top_k * factor]
    assert len(results) == top_k


def _near_old_failure_and_far_new_success(memory: EpisodicMemory) -> None:
    memory.record(make_episode("near-old-failure", "parse the csv file", reward=0.0,
                               outcome=OutcomeStatus.FAILURE, timestamp=NOW - 10 * DAY))
    memory.record(make_episode("far-new-success", "parse the big csv file quickly with pandas",
                               reward=1.0, timestamp=NOW))


def test_priority_reranks_the_semantic_candidates(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice", weights=NORMAL_WEIGHTS)
    _near_old_failure_and_far_new_success(memory)
    near, far = sorted(memory.recall("parse the csv file", top_k=2, current_time=NOW),
                       key=lambda r: r.episode.episode_id != "near-old-failure")
    assert near.similarity > far.similarity  # the failure is the closer match...
    by_priority = memory.recall("parse the csv file", top_k=1, current_time=NOW)
    assert ids(by_priority) == ["far-new-success"]  # ...but the recent success ranks first
    similarity_only = ReplayWeights(1.0, 0.0, 0.0, 0.0)
    assert ids(memory.recall("parse the csv file", top_k=1, current_time=NOW,
                             weights=similarity_only)) == ["near-old-failure"]


def test_candidate_factor_bounds_what_priority_can_rerank(store: BaseStore) -> None:
    narrow = EpisodicMemory.for_user(store, "alice", candidate_factor=1, weights=NORMAL_WEIGHTS)
    _near_old_failure_and_far_new_success(narrow)
    # Only the single most similar candidate is fetched, so it is returned despite its priority.
    assert ids(narrow.recall("parse the csv file", top_k=1, current_time=NOW)) == [
        "near-old-failure"
    ]


def test_filters_by_category_and_outcome(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice")
    memory.record(make_episode("d-ok", "fix the parser", category=TaskCategory.DEBUGGING))
    memory.record(make_episode("d-bad", "fix the parser crash", category=TaskCategory.DEBUGGING,
                               outcome=OutcomeStatus.FAILURE, reward=0.1))
    memory.record(make_episode("t-ok", "test the parser", category=TaskCategory.TESTING))
    assert set(ids(memory.recall("parser", top_k=5, category="debugging"))) == {"d-ok", "d-bad"}
    assert ids(memory.recall("parser", top_k=5, category=TaskCategory.DEBUGGING,
                             outcome="failure")) == ["d-bad"]
    assert set(ids(memory.recall("parser", top_k=5, outcome=OutcomeStatus.SUCCESS))) == {
        "d-ok", "t-ok"
    }
    assert [e.episode_id for e in memory.episodes(category="testing")] == ["t-ok"]
    with pytest.raises(ValueError, match="category must be one of"):
        memory.recall("parser", category="cooking")


def test_users_never_see_each_other(store: BaseStore) -> None:
    alice = EpisodicMemory.for_user(store, "alice")
    alice2 = EpisodicMemory.for_user(store, "alice2")
    alice.record(make_episode("a1", "fix the parser"))
    alice2.record(make_episode("b1", "fix the parser too"))
    alice2.record(make_episode("b2", "fix the parser again"))
    assert ids(alice.recall("fix the parser", top_k=5)) == ["a1"]
    assert set(ids(alice2.recall("fix the parser", top_k=5))) == {"b1", "b2"}
    assert [e.episode_id for e in alice.episodes()] == ["a1"]
    assert [e.episode_id for e in alice.short_term()] == ["a1"]
    assert (alice.count(), alice2.count()) == (1, 2)
    assert alice.get("b1") is None
    # A memory on the parent namespace does not see the users' episodes either.
    parent = EpisodicMemory(store, ("episodes",))
    assert parent.episodes() == [] and parent.recall("fix the parser") == []


def test_episodes_are_oldest_first_and_profiles_match(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice")
    eps = [
        make_episode("late", timestamp=30.0, strategy="defensive"),
        make_episode("early", timestamp=10.0, outcome=OutcomeStatus.FAILURE, reward=0.0),
        make_episode("mid", timestamp=20.0, category=TaskCategory.TESTING,
                     outcome=OutcomeStatus.PARTIAL),
    ]
    for ep in eps:
        memory.record(ep)
    assert [e.episode_id for e in memory.episodes()] == ["early", "mid", "late"]
    assert memory.skill_profiles() == compute_skill_profiles(eps)
    restarted = EpisodicMemory.for_user(store, "alice")
    assert restarted.skill_profiles() == compute_skill_profiles(eps)


def test_weights_follow_the_memory_size_unless_fixed(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice")
    for i in range(19):
        memory.record(make_episode(f"e{i}", f"parser task {i}"))
    (first,) = memory.recall("parser task", top_k=1)
    assert first.components is not None and first.components.weights == EARLY_WEIGHTS
    memory.record(make_episode("e19", "parser task 19"))
    (second,) = memory.recall("parser task", top_k=1)
    assert second.components is not None and second.components.weights == NORMAL_WEIGHTS
    fixed = EpisodicMemory.for_user(store, "alice", weights=ReplayWeights(0.25, 0.25, 0.25, 0.25))
    (third,) = fixed.recall("parser task", top_k=1)
    assert third.components is not None and third.components.weights.similarity == 0.25


def test_refresh_sees_another_writer(store: BaseStore) -> None:
    reader = EpisodicMemory.for_user(store, "alice")
    assert reader.count() == 0
    EpisodicMemory.for_user(store, "alice").record(make_episode("e1", timestamp=5.0))
    assert reader.count() == 0  # cached until refreshed
    reader.refresh()
    assert reader.count() == 1
    assert [e.episode_id for e in reader.short_term()] == ["e1"]


async def test_async_twins_match_sync(store: BaseStore) -> None:
    sync_mem = EpisodicMemory.for_user(store, "sync")
    async_mem = EpisodicMemory.for_user(store, "async")
    eps = [make_episode(f"e{i}", f"refactor the billing job part {i}", timestamp=NOW - i * HOUR,
                        reward=i / 10) for i in range(6)]
    for ep in eps:
        assert sync_mem.record(ep) is True
        assert await async_mem.arecord(ep) is True
    assert await async_mem.arecord(eps[0]) is False
    q = TaskDescription("refactor the billing job", TaskCategory.DEBUGGING)
    want = sync_mem.recall(q, top_k=3, current_time=NOW)
    got = await async_mem.arecall(q, top_k=3, current_time=NOW)
    assert [(r.episode, r.priority) for r in got] == [(r.episode, r.priority) for r in want]
    assert await async_mem.aepisodes() == sync_mem.episodes()
    assert await async_mem.ashort_term() == sync_mem.short_term()
    assert await async_mem.acount() == sync_mem.count() == 6
    assert await async_mem.askill_profiles() == sync_mem.skill_profiles()
    assert await async_mem.aget("e3") == eps[3]
    await async_mem.arefresh()
    await async_mem.aload()
    assert await async_mem.acount() == 6


async def test_concurrent_async_records_are_all_counted(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice")
    await asyncio.gather(*(memory.arecord(make_episode(f"e{i}", timestamp=float(i)))
                           for i in range(8)))
    assert await memory.acount() == 8
    assert len(await memory.aepisodes()) == 8


@pytest.mark.parametrize("kind", STORE_KINDS[:2])
@pytest.mark.parametrize(
    "embeddings", [HashEmbeddings(64), simple_hash_embedding], ids=["Embeddings", "function"]
)
def test_store_without_index_uses_given_embeddings(
    make_store: Callable[..., BaseStore], kind: str, embeddings: Any
) -> None:
    memory = EpisodicMemory.for_user(make_store(kind, indexed=False), "alice",
                                     embeddings=embeddings)
    memory.record(make_episode("parser", "fix the parser crash"))
    memory.record(make_episode("ui", "restyle the settings page"))
    results = memory.recall("parser crash fix", top_k=2, min_score=None)  # both, unfloored
    expected = {
        "parser": cosine_similarity(simple_hash_embedding("parser crash fix"),
                                    simple_hash_embedding("fix the parser crash")),
        "ui": cosine_similarity(simple_hash_embedding("parser crash fix"),
                                simple_hash_embedding("restyle the settings page")),
    }
    assert {r.episode.episode_id: r.similarity for r in results} == pytest.approx(expected)
    assert ids(memory.recall("parser crash fix", top_k=1, weights=ReplayWeights(1, 0, 0, 0))) \
        == ["parser"]


@pytest.mark.parametrize("kind", STORE_KINDS[:2])
def test_store_without_index_or_embeddings_ranks_without_similarity(
    make_store: Callable[..., BaseStore], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="langgraph_episodic.episodic.memory"):
        memory = EpisodicMemory.for_user(make_store(kind, indexed=False), "alice")
    assert "no semantic index" in caplog.text
    memory.record(make_episode("old", timestamp=NOW - 5 * DAY, reward=0.5))
    memory.record(make_episode("new", timestamp=NOW, reward=0.5))
    results = memory.recall("anything", top_k=2, current_time=NOW)
    assert ids(results) == ["new", "old"]
    assert [r.similarity for r in results] == [0.0, 0.0]


def test_unreadable_items_are_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    store = InMemoryStore()
    store.put(("episodes", "alice"), "junk", {"text": "not an episode"})
    memory = EpisodicMemory.for_user(store, "alice")
    memory.record(make_episode("e1"))
    with caplog.at_level(logging.WARNING, logger="langgraph_episodic.episodic.memory"):
        assert [e.episode_id for e in memory.episodes()] == ["e1"]
    assert "'junk'" in caplog.text and "schema_version" in caplog.text


def test_from_config_fills_the_namespace_from_configurable() -> None:
    store = InMemoryStore()
    memory = EpisodicMemory.from_config(store, {"configurable": {"user_id": "bob"}})
    assert memory.namespace == ("episodes", "bob")
    with pytest.raises(MissingConfigError, match="thread_id"):
        EpisodicMemory.from_config(store, {"configurable": {"thread_id": "t1"}})


@pytest.mark.parametrize(
    ("namespace", "error"),
    [("alice", TypeError), ((), TypeError), (("episodes", "a.b"), ValueError),
     (("episodes", ""), ValueError), (("langgraph", "x"), ValueError)],
)
def test_bad_namespaces_are_refused(namespace: Any, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"namespace|label"):
        EpisodicMemory(InMemoryStore(), namespace)


def test_bad_arguments_are_refused() -> None:
    store = InMemoryStore()
    with pytest.raises(TypeError, match="BaseStore"):
        EpisodicMemory({}, ("episodes", "a"))  # type: ignore[arg-type]  # the error under test
    with pytest.raises(ValueError, match="candidate_factor"):
        EpisodicMemory(store, ("episodes", "a"), candidate_factor=0)
    memory = EpisodicMemory(store, ("episodes", "a"))
    with pytest.raises(ValueError, match="top_k"):
        memory.recall("x", top_k=0)
    with pytest.raises(ValueError, match="non-empty"):
        memory.recall("  ")
    with pytest.raises(TypeError, match="Episode"):
        memory.record({"episode_id": "x"})  # type: ignore[arg-type]  # the error under test
