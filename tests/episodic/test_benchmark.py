"""The learning benchmark runs end to end on a short stream and says the stream is simulated."""

from __future__ import annotations

import random
import re

import pytest

from ._support import learning_benchmark


def test_learning_benchmark_prints_its_table(capsys: pytest.CaptureFixture[str]) -> None:
    with learning_benchmark("learning_benchmark") as module:
        worlds = module.main(["--episodes", "60", "--seeds", "2", "--window", "10",
                              "--world", "abrupt3"])
    out = capsys.readouterr().out
    assert "SIMULATED task stream" in out
    assert "% of oracle" in out and "recovery" in out
    assert list(worlds) == ["abrupt3"]
    tails = worlds["abrupt3"]
    for policy in ("no-memory", "greedy", "thompson", "greedy-decay", "thompson-decay",
                   "thompson-v1", "thompson-disc", "oracle"):
        assert policy in out
        assert len(tails[policy]) == 2 and all(0.0 <= t <= 1.0 for t in tails[policy])
    assert re.search(r"oracle .* 100\.0% +-  0 / 0 / 0  \(0 / 0 / 0\)", out)  # itself, each change


def test_learning_benchmark_without_a_store_plays_the_same_policies(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with learning_benchmark("learning_benchmark_none") as module:
        worlds = module.main(["--episodes", "60", "--seeds", "2", "--window", "10",
                              "--world", "abrupt", "--store", "none"])
    out = capsys.readouterr().out
    assert "Store: none (skill counts only, no recall)" in out
    assert set(worlds["abrupt"]) == set(module.POLICIES)


def test_recovery_counts_episodes_until_the_window_reaches_the_target() -> None:
    with learning_benchmark("learning_benchmark_r") as module:
        oracle = [1.0] * 20
        policy = [0.0] * 5 + [1.0] * 15
        assert module.recovery(policy, oracle, 0, 20, 4) == 5
        assert module.recovery(policy, oracle, 0, 20, 4, target=0.75) == 4  # 3 of 4 suffice
        assert module.recovery([0.0] * 20, oracle, 0, 20, 4) is None
        world = module.make_world("gradual", 0, 100)
        start, end = world.changes
        cat = module.CATEGORIES[0]
        mid = world.rates((start + end) // 2, cat)
        old, new = world.phases[0][cat], world.phases[1][cat]
        assert mid == {s: pytest.approx((old[s] + new[s]) / 2) for s in old}
        assert world.rates(end, cat) == new and world.recovery_points() == (end,)


def test_partial_world_changes_one_or_two_categories_and_own_recovery_counts_their_episodes(
) -> None:
    with learning_benchmark("learning_benchmark_p") as module:
        for seed in range(10):
            world = module.make_world("partial", seed, 200)
            affected = world.affected(0)
            assert 1 <= len(affected) <= 2
            for cat in module.CATEGORIES:
                same = world.phases[0][cat] == world.phases[1][cat]
                assert same == (cat not in affected)  # the others keep their rates
                assert (world.best(99, cat) != world.best(100, cat)) == (cat in affected)
        # Own-episode recovery: rows are averaged position by position (up to the shortest).
        policy = [[0.0, 0.0, 1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0]]
        oracle = [[1.0] * 5, [1.0] * 4]
        # means 0, 0.5, 1, 1 over the shortest row: windows of 2 reach 90% from index 2
        assert module.own_recovery(policy, oracle, 2) == 2
        assert module.own_recovery(policy, oracle, 2, target=0.75) == 1
        assert module.own_recovery([], [], 2) is None
        world = module.make_world("abrupt", 0, 100)
        episodes, _ = module.run_policy("oracle", world, module.make_stream(
            random.Random(0), 100), seed=0, store_kind="none")
        rows = module.own_hits(episodes, world, 50, 100, 0)
        assert len(rows) == len(world.affected(0))
        for row, cat in zip(rows, world.affected(0), strict=True):
            assert len(row) == sum(e.task.category is cat for e in episodes[50:])


def test_policies_option_runs_only_the_named_policies_and_the_oracle(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with learning_benchmark("learning_benchmark_sel") as module:
        worlds = module.main(["--episodes", "60", "--seeds", "2", "--window", "10",
                              "--world", "partial", "--store", "none",
                              "--policies", "thompson-decay"])
        assert list(worlds["partial"]) == ["thompson-decay", "oracle"]
        with pytest.raises(SystemExit, match="unknown policies"):
            module.main(["--episodes", "60", "--seeds", "1", "--policies", "nope"])
    assert "thompson-v1" not in capsys.readouterr().out


def test_first_seed_plays_the_same_worlds_as_the_longer_run() -> None:
    # Tuning on other seeds (--first-seed) must replay exactly those seeds of a longer run.
    common = ["--episodes", "60", "--window", "10", "--world", "abrupt", "--store", "none",
              "--policies", "thompson-decay"]
    with learning_benchmark("learning_benchmark_seeds") as module:
        four = module.main([*common, "--seeds", "4"])["abrupt"]
        last = module.main([*common, "--seeds", "1", "--first-seed", "3"])["abrupt"]
    assert last == {policy: tails[3:] for policy, tails in four.items()}
