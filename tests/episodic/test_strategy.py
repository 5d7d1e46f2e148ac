"""Strategy selection: the greedy hierarchy level by level, and Thompson sampling."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from langgraph.store.base import BaseStore

from langgraph_episodic.episodic import (
    STRATEGY_POOL,
    EpisodicMemory,
    OutcomeStatus,
    PrioritizedResult,
    StrategyEvidence,
    TaskCategory,
    TaskDescription,
    aselect_strategy,
    choose_strategy,
    compute_skill_profiles,
    select_strategy,
)

from .conftest import make_episode

S, F = OutcomeStatus.SUCCESS, OutcomeStatus.FAILURE
DEBUG = TaskCategory.DEBUGGING


def similar(*rows: tuple[str, OutcomeStatus]) -> tuple[PrioritizedResult, ...]:
    return tuple(
        PrioritizedResult(make_episode(f"s{i}", strategy=name, outcome=o), 0.5, priority=0.5)
        for i, (name, o) in enumerate(rows)
    )


def task(complexity: float = 0.5, category: TaskCategory = DEBUG) -> TaskDescription:
    return TaskDescription("Fix the parser", category, complexity)


def test_pool_has_the_five_strategies_with_instructions() -> None:
    assert set(STRATEGY_POOL) == {"conservative", "exploratory", "defensive", "iterative",
                                  "example_driven"}
    assert all(len(text) > 20 for text in STRATEGY_POOL.values())


def test_level_one_reuses_what_succeeded_on_similar_tasks() -> None:
    evidence = StrategyEvidence(similar(("example_driven", S), ("example_driven", S),
                                        ("example_driven", F), ("iterative", F)))
    choice = choose_strategy(task(), evidence, policy="greedy")
    assert choice.name == "example_driven"
    assert choice.instruction == STRATEGY_POOL["example_driven"]
    assert "2/3" in choice.reason and choice.policy == "greedy"


def test_level_one_needs_more_than_sixty_percent() -> None:
    rows = [("conservative", S)] * 3 + [("conservative", F)] * 2  # exactly 0.6
    choice = choose_strategy(task(0.2), StrategyEvidence(similar(*rows)), policy="greedy")
    assert choice.name == "exploratory"  # fell through to the complexity rule


def test_strategies_outside_the_pool_are_ignored() -> None:
    evidence = StrategyEvidence(similar(("default", S), ("default", S)))
    assert choose_strategy(task(0.9), evidence, policy="greedy").name == "iterative"
    pool = {"careful": "Be careful.", "defensive": "Guard."}
    custom = StrategyEvidence(similar(("careful", S)))
    assert choose_strategy(task(), custom, pool=pool, policy="greedy").name == "careful"


def test_level_two_gives_defensive_to_a_weak_category() -> None:
    history = [make_episode(f"h{i}", outcome=F if i else S, strategy="iterative")
               for i in range(4)]  # 1/4 successes
    profile = compute_skill_profiles(history)[DEBUG]
    choice = choose_strategy(task(0.9), StrategyEvidence(similar(("iterative", F)), profile),
                             policy="greedy")
    assert choice.name == "defensive" and "weak" in choice.reason
    short = compute_skill_profiles(history[1:3])[DEBUG]  # 0/2: too few attempts to judge
    assert choose_strategy(task(0.9), StrategyEvidence((), short), policy="greedy").name == "iterative"


@pytest.mark.parametrize(
    ("complexity", "expected"),
    [(0.95, "iterative"), (0.71, "iterative"), (0.7, "iterative"), (0.5, "iterative"),
     (0.3, "iterative"), (0.29, "exploratory"), (0.0, "exploratory")],
)
def test_level_three_complexity_rule(complexity: float, expected: str) -> None:
    assert choose_strategy(task(complexity), StrategyEvidence(), policy="greedy").name == expected


def test_thompson_is_reproducible_with_a_seeded_rng() -> None:
    def run(seed: int) -> list[str]:
        rng = random.Random(seed)
        return [choose_strategy(task(), StrategyEvidence(), policy="thompson", rng=rng).name
                for _ in range(20)]

    assert run(3) == run(3)
    assert len(set(run(3))) > 1


def test_thompson_explores_without_evidence_and_exploits_with_it() -> None:
    rng = random.Random(0)
    untried = Counter(
        choose_strategy(task(), StrategyEvidence(), policy="thompson", rng=rng).name
        for _ in range(300)
    )
    assert set(untried) == set(STRATEGY_POOL)
    history = [make_episode(f"w{i}", strategy="conservative", outcome=S) for i in range(30)]
    history += [make_episode(f"l{i}-{name}", strategy=name, outcome=F)
                for name in STRATEGY_POOL if name != "conservative" for i in range(5)]
    evidence = StrategyEvidence((), compute_skill_profiles(history)[DEBUG])
    picks = Counter(
        choose_strategy(task(), evidence, policy="thompson", rng=rng).name for _ in range(300)
    )
    assert picks["conservative"] >= 290


def test_thompson_on_unknown_category_uses_similar_episodes() -> None:
    evidence = StrategyEvidence(similar(*[("defensive", S)] * 20, *[("iterative", F)] * 20))
    rng = random.Random(1)
    picks = Counter(
        choose_strategy(task(category=TaskCategory.UNKNOWN), evidence, policy="thompson",
                        rng=rng).name
        for _ in range(100)
    )
    assert picks.most_common(1)[0][0] == "defensive"


def test_invalid_options_are_refused() -> None:
    with pytest.raises(ValueError, match="policy"):
        choose_strategy(task(), StrategyEvidence(), policy="epsilon")  # type: ignore[arg-type]  # the error under test
    with pytest.raises(ValueError, match="empty"):
        choose_strategy(task(), StrategyEvidence(), pool={})
    with pytest.raises(ValueError, match="prior"):
        choose_strategy(task(), StrategyEvidence(), policy="thompson", prior=(0.0, 1.0))


def _record_history(memory: EpisodicMemory) -> None:
    for i in range(3):
        memory.record(make_episode(f"ok{i}", f"fix the parser bug {i}", strategy="example_driven",
                                   timestamp=float(i)))
    memory.record(make_episode("other", "fix the parser bug again", strategy="iterative",
                               outcome=F, reward=0.0, timestamp=5.0))


def test_select_strategy_reads_the_memory(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice")
    assert select_strategy(task(0.1), memory, policy="greedy").name == "exploratory"
    _record_history(memory)
    choice = select_strategy(task(0.1), memory, current_time=10.0, policy="greedy")
    assert choice.name == "example_driven" and "3/3" in choice.reason
    other_category = select_strategy(task(0.1, TaskCategory.TESTING), memory, policy="greedy")
    assert other_category.name == "exploratory"


async def test_aselect_strategy_matches_sync(store: BaseStore) -> None:
    memory = EpisodicMemory.for_user(store, "alice")
    _record_history(memory)
    want = select_strategy(task(0.1), memory, current_time=10.0)
    got = await aselect_strategy(task(0.1), memory, current_time=10.0)
    assert got == want
    sync_t = select_strategy(task(), memory, policy="thompson", rng=random.Random(5))
    async_t = await aselect_strategy(task(), memory, policy="thompson", rng=random.Random(5))
    assert sync_t == async_t
