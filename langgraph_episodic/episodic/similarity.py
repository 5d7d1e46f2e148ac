"""Similarity and forgetting: cosine similarity and exponential temporal decay.

Decay halves a value every ``half_life`` seconds. With the default half-life of one day:

==========  ==============================
age         ``temporal_decay(1.0, ...)``
==========  ==============================
0 h         1.00
12 h        0.71  (2 ** -0.5)
1 day       0.50
2 days      0.25
1 week      0.008 (2 ** -7)
==========  ==============================

>>> round(temporal_decay(1.0, episode_time=0.0, current_time=86_400.0), 2)
0.5
>>> round(cosine_similarity([1.0, 0.0], [1.0, 1.0]), 4)  # cos 45° = 2 ** -0.5
0.7071
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import InvalidValueError

DEFAULT_HALF_LIFE = 86_400.0
"""One day, in seconds."""


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """Return the cosine of the angle between two vectors, in [-1, 1].

    0.0 for a zero vector; ``ValueError`` for vectors of different lengths."""
    if len(a) != len(b):
        raise InvalidValueError(
            f"Cannot compare vectors of {len(a)} and {len(b)} dimensions; embed both texts "
            "with the same model."
        )
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm_a = math.sqrt(math.fsum(x * x for x in a))
    norm_b = math.sqrt(math.fsum(y * y for y in b))
    if norm_a == 0.0 or norm_b == 0.0:
        return 0.0
    return max(-1.0, min(1.0, dot / (norm_a * norm_b)))


def clipped(similarity: float) -> float:
    """``similarity`` as priority and evidence count it: clipped to [0, 1], 0.0 if not finite."""
    return min(1.0, max(0.0, similarity)) if math.isfinite(similarity) else 0.0


def decay_factor(
    episode_time: float,
    current_time: float,
    half_life: float = DEFAULT_HALF_LIFE,
    *,
    floor: float = 0.0,
) -> float:
    """Return ``max(floor, 0.5 ** (age / half_life))`` with ``age = current_time - episode_time``.

    A negative age (clock skew) counts as 0."""
    if not (half_life > 0 and math.isfinite(half_life)):
        raise InvalidValueError(
            f"half_life must be a positive number of seconds; got {half_life!r}."
        )
    if not 0.0 <= floor <= 1.0:
        raise InvalidValueError(f"floor must be in [0, 1]; got {floor!r}.")
    age = max(0.0, current_time - episode_time)
    return max(floor, 0.5 ** (age / half_life))


def temporal_decay(
    similarity: float,
    episode_time: float,
    current_time: float,
    half_life: float = DEFAULT_HALF_LIFE,
    *,
    floor: float = 0.0,
) -> float:
    """Scale ``similarity`` down exponentially with the episode's age.

    ``similarity * decay_factor(episode_time, current_time, half_life, floor=floor)``.

    >>> temporal_decay(1.0, 0.0, 30 * 86_400.0, floor=0.1)
    0.1
    """
    return similarity * decay_factor(episode_time, current_time, half_life, floor=floor)
