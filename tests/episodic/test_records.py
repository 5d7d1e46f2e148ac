"""Episode records: validation, immutability and the exact dict round trip."""

from __future__ import annotations

import dataclasses
import json
import math
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_episodic.episodic import (
    SCHEMA_VERSION,
    Episode,
    EpisodeSchemaError,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)

from .conftest import make_episode

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
text = st.text(max_size=200)
nonblank = st.text(min_size=1, max_size=200).filter(lambda s: s.strip())


@st.composite
def episodes(draw: st.DrawFn) -> Episode:
    total = draw(st.integers(0, 50))
    return Episode(
        episode_id=draw(nonblank),
        task=TaskDescription(
            draw(nonblank), draw(st.sampled_from(TaskCategory)), draw(unit)
        ),
        solution=draw(text),
        feedback=Feedback(draw(unit), draw(text), draw(st.integers(0, total)), total),
        outcome=draw(st.sampled_from(OutcomeStatus)),
        timestamp=draw(st.floats(-1e12, 1e12, allow_nan=False)),
        iterations=draw(st.integers(0, 1000)),
        strategy_used=draw(nonblank),
    )


@given(episodes())
def test_round_trip_through_json_is_exact(episode: Episode) -> None:
    data = json.loads(json.dumps(episode.to_dict(), allow_nan=False))
    restored = Episode.from_dict(data)
    assert restored == episode
    assert restored.to_dict() == episode.to_dict()


def test_dict_has_schema_version_and_filterable_scalars() -> None:
    ep = make_episode("e1", "Sort the list", category=TaskCategory.TESTING, reward=0.25,
                      outcome=OutcomeStatus.PARTIAL, timestamp=12.5, strategy="defensive")
    data = ep.to_dict()
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["text"] == "Sort the list"
    assert (data["category"], data["outcome"]) == ("testing", "partial")
    assert (data["reward"], data["timestamp"], data["strategy_used"]) == (0.25, 12.5, "defensive")


def test_from_dict_refuses_missing_or_newer_schema() -> None:
    data = make_episode("e1").to_dict()
    with pytest.raises(EpisodeSchemaError, match="Upgrade"):
        Episode.from_dict({**data, "schema_version": SCHEMA_VERSION + 1})
    without = {k: v for k, v in data.items() if k != "schema_version"}
    with pytest.raises(EpisodeSchemaError, match="schema_version"):
        Episode.from_dict(without)
    with pytest.raises(EpisodeSchemaError, match="'solution'"):
        Episode.from_dict({k: v for k, v in data.items() if k != "solution"})


def test_from_dict_validates_values_again() -> None:
    data = make_episode("e1").to_dict()
    data["feedback"] = {**data["feedback"], "reward": 1.5}
    with pytest.raises(ValueError, match="reward"):
        Episode.from_dict(data)


@pytest.mark.parametrize("bad", [-0.01, 1.01, math.nan, math.inf, -math.inf])
def test_reward_and_complexity_must_be_finite_in_unit_interval(bad: float) -> None:
    with pytest.raises(ValueError, match="reward"):
        Feedback(bad)
    with pytest.raises(ValueError, match="complexity"):
        TaskDescription("task", complexity=bad)


def test_booleans_are_not_numbers() -> None:
    with pytest.raises(TypeError):
        Feedback(True)
    with pytest.raises(TypeError):
        Feedback(0.5, tests_total=True)


def test_counts_are_checked() -> None:
    with pytest.raises(ValueError, match="cannot exceed"):
        Feedback(0.5, tests_passed=3, tests_total=2)
    with pytest.raises(ValueError, match="non-negative"):
        Feedback(0.5, tests_passed=-1, tests_total=2)
    with pytest.raises(ValueError, match="iterations"):
        dataclasses.replace(make_episode("e1"), iterations=-1)


@pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
def test_description_and_id_must_not_be_blank(blank: str) -> None:
    with pytest.raises(ValueError, match="description"):
        TaskDescription(blank)
    with pytest.raises(ValueError, match="episode_id"):
        make_episode(blank)


def test_enum_values_given_as_strings_are_coerced_and_checked() -> None:
    task = TaskDescription("t", "refactoring")  # type: ignore[arg-type]  # str is accepted
    assert task.category is TaskCategory.REFACTORING
    with pytest.raises(ValueError, match="code_generation"):
        TaskDescription("t", "cooking")  # type: ignore[arg-type]  # the invalid value under test
    ep = dataclasses.replace(make_episode("e1"), outcome="failure")
    assert ep.outcome is OutcomeStatus.FAILURE


def test_timestamp_must_be_finite() -> None:
    with pytest.raises(ValueError, match="timestamp"):
        make_episode("e1", timestamp=math.nan)


def test_pass_rate() -> None:
    assert Feedback(0.5).pass_rate == 0.0
    assert Feedback(0.5, tests_passed=3, tests_total=4).pass_rate == 0.75


def test_records_are_frozen() -> None:
    ep = make_episode("e1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ep.solution = "changed"  # type: ignore[misc]  # assigning is the error under test
    with pytest.raises(dataclasses.FrozenInstanceError):
        ep.feedback.reward = 0.0  # type: ignore[misc]  # assigning is the error under test


def test_new_fills_a_fresh_id_and_the_current_time() -> None:
    before = time.time()
    a = Episode.new(TaskDescription("t"), "s", Feedback(0.5), "success")
    b = Episode.new(TaskDescription("t"), "s", Feedback(0.5), OutcomeStatus.SUCCESS)
    after = time.time()
    assert a.episode_id != b.episode_id
    assert before <= a.timestamp <= after
    assert a.outcome is OutcomeStatus.SUCCESS
    fixed = Episode.new(TaskDescription("t"), "s", Feedback(0.5), "partial", timestamp=5.0,
                        episode_id="mine")
    assert (fixed.episode_id, fixed.timestamp) == ("mine", 5.0)
