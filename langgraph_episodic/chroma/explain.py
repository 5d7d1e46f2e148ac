"""What a search's scores are made of: one :class:`ScoreBreakdown` per hit, for
:meth:`.ChromaStore.explain` (and the inspector's search page).

The parts are read from the products of the same stages the search runs
(:class:`.search.Ranked`, :class:`.ranking.hybrid.Fused`): a hybrid score is
``(1 - w) * clip(cosine above baseline) + w * clip(lexical share)`` with ``w`` the lexical weight,
plus the shared-field lift when it acted; a dense score is the cosine, a lexical one BM25.
"""

from __future__ import annotations

from dataclasses import dataclass

from langgraph.store.base import SearchItem

from .ranking.fusion import LEXICAL_WEIGHT
from .ranking.hybrid import Fused
from .search import Method, Ranked


@dataclass(frozen=True)
class ScoreBreakdown:
    """One hit of a search and the parts of its score."""

    item: SearchItem
    """The hit as ``store.search`` returns it (``item.score`` is the final score)."""
    rank: int
    """Its place in the results, from 1 (``offset + 1`` for the first of a later page)."""
    score: float | None
    """The final score (the one results are ordered by)."""
    fused: float | None
    """Hybrid: the fused score before the shared-field lift."""
    cosine: float | None
    """The raw cosine similarity of the question and the hit's best vector (None: no vector)."""
    dense: float | None
    """Hybrid: the cosine measured from the question's baseline, as it enters the fusion."""
    lexical_share: float | None
    """Hybrid: BM25 over the best BM25 any memory could reach (None: no term matched)."""
    lift: float
    """Hybrid: what the shared-field lift added (``score - fused``; 0 when it did not act)."""
    below_floor: bool
    """Whether the score falls under the floor asked for (False without a floor)."""
    lexical_weight: float = LEXICAL_WEIGHT
    """Hybrid: the lexical side's share ``w`` for this question (smaller for a German question
    with the two-language default, :data:`~langgraph_episodic.bilingual.GERMAN_LEXICAL`)."""
    second: float | None = None
    """Hybrid: the score the question's second reading gives the hit (the two-language
    default: an English question's multilingual score of a German memory; None: no second
    reading, or one of 0 or less). ``fused`` is the larger of it and the two parts' sum."""

    @property
    def dense_part(self) -> float:
        """``(1 - w) * clip(dense)``: the dense side's share of the fused score."""
        return (1.0 - self.lexical_weight) * _clip(self.dense)

    @property
    def lexical_part(self) -> float:
        """``w * clip(lexical share)``: the lexical side's share of the fused score."""
        return self.lexical_weight * _clip(self.lexical_share)


@dataclass(frozen=True)
class Explanation:
    """A search's hits with their score breakdowns, in result order."""

    mode: str
    """``"hybrid"``, ``"dense"``, ``"lexical"`` or ``"scan"`` (no query)."""
    baseline: float
    """Hybrid: the question's baseline cosine (``0`` for embedders without one)."""
    lexical_weight: float
    floor: float | None
    hits: tuple[ScoreBreakdown, ...]

    @property
    def above_floor(self) -> tuple[ScoreBreakdown, ...]:
        """The hits at or above the floor (all of them without a floor)."""
        return tuple(h for h in self.hits if not h.below_floor)

    @property
    def under_floor(self) -> tuple[ScoreBreakdown, ...]:
        """The hits the floor removes."""
        return tuple(h for h in self.hits if h.below_floor)


def _clip(value: float | None) -> float:
    return 0.0 if value is None else min(1.0, max(0.0, value))


def _seconds(fused: Fused | None, method: Method) -> dict[str, float]:
    """Entry key -> the second reading's score, where it is above 0 (it can raise a score)."""
    reading = method.calibration.second
    if fused is None or fused.second is None or reading is None:
        return {}
    at, cosines = fused.second
    scores = reading.calibration.dense(cosines)
    return {fused.ids[n]: v for n, v in zip(at.tolist(), scores.tolist(), strict=True) if v > 0}


def explanation(ranked: Ranked, method: Method, offset: int, floor: float | None) -> Explanation:
    """The breakdown of ``ranked``, the result of :func:`.search.run` for ``method``."""
    hits = []
    fused = ranked.fused
    parts = fused.parts() if fused is not None else {}
    seconds = _seconds(fused, method)
    first = dict(fused.ranking) if fused is not None else {}
    for n, hit in enumerate(ranked.page):
        score = hit.item.score
        key = ranked.keys[n] if n < len(ranked.keys) else None
        cosine, share = parts.get(key, (None, None)) if key is not None else (None, None)
        before = first.get(key) if key is not None else None
        if method.kind == "dense":  # the score is the (scaled) cosine
            cosine = score / method.calibration.scale if score is not None else None
        hits.append(
            ScoreBreakdown(
                item=hit.item,
                rank=offset + n + 1,
                score=score,
                fused=before,
                cosine=cosine,
                dense=method.calibration.dense(cosine) if cosine is not None else None,
                lexical_share=share,
                lift=(score - before) if score is not None and before is not None else 0.0,
                below_floor=floor is not None and (score is None or score < floor),
                lexical_weight=method.calibration.lexical_weight,
                second=seconds.get(key) if key is not None else None,
            )
        )
    weight = method.calibration.lexical_weight
    return Explanation(method.kind, method.calibration.baseline, weight, floor, tuple(hits))
