"""Cosine similarity, temporal decay (the issue's table) and hash embeddings across processes."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_episodic.embeddings import simple_hash_embedding
from langgraph_episodic.episodic import cosine_similarity, decay_factor, temporal_decay

from .conftest import DAY, HOUR

# The table: age -> decay with the default one-day half-life, to two decimals
# (one week is given to three: 2 ** -7 = 0.0078).
DECAY_TABLE = [(0.0, 1.00), (12 * HOUR, 0.71), (DAY, 0.50), (2 * DAY, 0.25), (7 * DAY, 0.008)]


@pytest.mark.parametrize(("age", "expected"), DECAY_TABLE)
def test_decay_reproduces_the_table(age: float, expected: float) -> None:
    now = 1_700_000_000.0
    assert abs(temporal_decay(1.0, now - age, now) - expected) < 0.005


def test_decay_follows_the_half_life_formula() -> None:
    # 0.5 ** (age / half_life): 12 h is half a half-life, so 2 ** -0.5; one week is 2 ** -7.
    assert temporal_decay(1.0, 0.0, 12 * HOUR) == pytest.approx(2**-0.5, abs=1e-12)
    assert temporal_decay(1.0, 0.0, 7 * DAY) == pytest.approx(2**-7, abs=1e-12)
    assert temporal_decay(0.6, 0.0, DAY) == pytest.approx(0.3, abs=1e-12)


@given(
    st.floats(1.0, 1e7),
    st.floats(0.0, 20.0),
    st.floats(-1.0, 1.0),
)
def test_decay_halves_every_half_life(half_life: float, periods: float, sim: float) -> None:
    value = temporal_decay(sim, 0.0, periods * half_life, half_life)
    assert value == pytest.approx(sim * 0.5**periods, rel=1e-9, abs=1e-12)


def test_floor_keeps_old_experience_but_does_not_lift_young_one() -> None:
    assert temporal_decay(1.0, 0.0, 30 * DAY, floor=0.2) == 0.2
    assert temporal_decay(1.0, 0.0, 12 * HOUR, floor=0.2) == pytest.approx(2**-0.5)
    assert decay_factor(0.0, 30 * DAY) < 1e-8


def test_future_episodes_count_as_new() -> None:
    assert temporal_decay(0.7, 100.0, 50.0) == 0.7


@pytest.mark.parametrize("half_life", [0.0, -1.0, math.inf, math.nan])
def test_half_life_must_be_positive_and_finite(half_life: float) -> None:
    with pytest.raises(ValueError, match="half_life"):
        temporal_decay(1.0, 0.0, 1.0, half_life)


def test_floor_must_be_in_unit_interval() -> None:
    with pytest.raises(ValueError, match="floor"):
        decay_factor(0.0, 1.0, floor=1.5)


def test_cosine_basic_angles() -> None:
    assert cosine_similarity([1.0, 2.0], [2.0, 4.0]) == pytest.approx(1.0)
    assert cosine_similarity([1.0, 0.0], [0.0, 3.0]) == 0.0
    assert cosine_similarity([1.0, 1.0], [-1.0, -1.0]) == pytest.approx(-1.0)
    assert cosine_similarity([1.0, 0.0], [1.0, 1.0]) == pytest.approx(2**-0.5)


def test_cosine_of_zero_vector_is_zero_and_lengths_must_match() -> None:
    assert cosine_similarity([0.0, 0.0], [1.0, 2.0]) == 0.0
    with pytest.raises(ValueError, match="same model"):
        cosine_similarity([1.0], [1.0, 2.0])


vectors = st.lists(st.floats(-100, 100), min_size=3, max_size=3)


@given(vectors, vectors, st.floats(0.01, 100))
def test_cosine_is_bounded_symmetric_and_scale_free(a: list[float], b: list[float],
                                                    k: float) -> None:
    value = cosine_similarity(a, b)
    assert -1.0 <= value <= 1.0
    assert value == pytest.approx(cosine_similarity(b, a), abs=1e-12)
    if math.sqrt(sum(x * x for x in a)) > 1e-3 and math.sqrt(sum(y * y for y in b)) > 1e-3:
        assert cosine_similarity([k * x for x in a], b) == pytest.approx(value, abs=1e-9)


def test_hash_embedding_is_the_same_in_other_processes() -> None:
    texts = ["fix the parser", "Refactor the billing job", "ünïcode tèxt"]
    code = (
        "import json, sys\n"
        "from langgraph_episodic.embeddings import simple_hash_embedding\n"
        "print(json.dumps([simple_hash_embedding(t, 64) for t in json.loads(sys.argv[1])]))"
    )
    local = [simple_hash_embedding(t, 64) for t in texts]
    # Another process with another str-hash seed computes the same vectors.
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(texts)],
        capture_output=True, text=True, env=env, check=True,
    )
    assert json.loads(out.stdout) == local
    assert cosine_similarity(local[0], simple_hash_embedding("fix the parser bug")) > 0.5
