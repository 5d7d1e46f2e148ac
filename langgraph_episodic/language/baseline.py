"""The packaged model's baseline: how similar a question is to *any* text of its language.

all-MiniLM-L6-v2 is an English model. Any two German texts have a cosine of 0.4-0.6 to it,
whatever they say (English ones 0-0.3), so a raw cosine means different things in the two
languages and no single floor fits both. The fix measured in ``benchmarks/german.py``: subtract
the question's *baseline*, its cosine with the mean vector of ordinary texts of its language
(``b = q . m``, the average cosine of the question with those texts), and rescale so that an
identical text still scores 1:

    dense score = (cosine - b) / (1 - b)           (negative counts as 0 in the fusion)

For a given question this is a fixed increasing function of the cosine, so it ranks the
memories exactly as the cosine does; it only moves what "0" means: a memory no more similar to
the question than an ordinary text of its language scores 0 in German and in English alike.

The mean vectors were computed once from our own background sentences
(``benchmarks/data/background_{de,en}.txt``, CC0; ``scripts/baseline_vectors.py`` rebuilds
``background_means.json``, :func:`background_means`). They belong to the packaged model only:
:func:`baseline_for` returns them for the packaged embedder (``is_packaged``) and ``None`` for
any other, whose cosines are used unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, TypeVar

import numpy as np

from .analysis import Language, detect, words

LEXICAL_WEIGHT = 0.65
"""The lexical side's share in the store's calibrated hybrid score (chosen on LoCoMo; the
fusion is :mod:`langgraph_episodic.chroma.ranking.fusion`)."""

Cosine = TypeVar("Cosine", float, np.ndarray)


@dataclass(frozen=True)
class Baseline:
    """Mean vectors of ordinary texts per language, for one embedding model."""

    model: str
    """The model the means were computed with (they mean nothing for another one)."""
    means: Mapping[str, np.ndarray]
    """``"en"`` / ``"de"`` -> the mean of that language's background vectors (not unit length)."""

    def of(self, query_vector: np.ndarray, query: str, language: Language = "auto") -> float:
        """The question's baseline ``q . m``, with ``m`` the mean of the question's language
        (``language``, or detected from ``query`` when ``"auto"``)."""
        lang: Literal["en", "de"] = detect(words(query)) if language == "auto" else language
        mean = self.means[lang]
        q = np.asarray(query_vector, dtype=np.float64)
        norm = float(np.linalg.norm(q))
        if norm == 0.0 or q.shape != mean.shape:
            return 0.0
        return float(q @ mean) / norm


@lru_cache(maxsize=2)
def background_means(model: str) -> dict[str, np.ndarray]:
    """``"de"`` / ``"en"`` -> the mean vector of our background sentences of that language with
    ``model`` (``"all-MiniLM-L6-v2"`` or ``"Universal Sentence Encoder Multilingual v3"``), from
    ``background_means.json`` beside this module. Read-only: shared by every store of the process."""
    text = resources.files(__package__).joinpath("background_means.json").read_text("utf-8")
    means = {}
    for lang, vector in json.loads(text)[model]["means"].items():
        mean = means[lang] = np.asarray(vector, dtype=np.float64)
        mean.setflags(write=False)
    return means


@lru_cache(maxsize=1)
def packaged_baseline() -> Baseline:
    """The baseline of the packaged all-MiniLM-L6-v2."""
    return Baseline(model="all-MiniLM-L6-v2", means=background_means("all-MiniLM-L6-v2"))


def baseline_for(embeddings: Any) -> Baseline | None:
    """The packaged baseline when ``embeddings`` is the packaged model, else ``None``.

    An embedder says it is the packaged model with ``is_packaged = True``
    (:class:`~langgraph_episodic.embeddings.SentenceTransformerEmbeddings` over the packaged
    folder does). Any other embedder, including wrappers that do not pass the attribute on,
    keeps plain cosines.
    """
    return packaged_baseline() if getattr(embeddings, "is_packaged", False) is True else None


def above_baseline(cosine: Cosine, baseline: float) -> Cosine:
    """A cosine (or an array of them) measured from the question's baseline:
    ``(cosine - b) / (1 - b)``. The one place this formula is written.

    Increasing in ``cosine``; ``1`` stays ``1``; ``b = 0`` (no baseline) leaves the cosine as it
    is, and so does a degenerate ``b`` (``>= 1``, or NaN).

    >>> round(above_baseline(0.55, 0.5), 6), above_baseline(0.3, 0.0)
    (0.1, 0.3)
    """
    if not baseline < 1.0:
        return cosine
    return (cosine - baseline) / (1.0 - baseline)


@dataclass(frozen=True, eq=False)
class SecondReading:
    """A second reading of a question, for the memories its own model cannot read: a memory
    the reading applies to scores the larger of its hybrid score and the reading's dense
    score, ``calibration.dense(cosine)`` (no lexical part).

    The two-language default (:mod:`langgraph_episodic.bilingual`) gives an English question
    one: its multilingual vector, for the memories the English model reads as German.
    """

    query: np.ndarray
    """The reading's query vector, in the store's space."""
    gate: np.ndarray
    """A memory's vector row is read when its product with ``gate`` is above ``gate_at``."""
    gate_at: float
    calibration: Calibration
    """How the reading's raw cosines become its score (its lexical weight is unused)."""


@dataclass(frozen=True)
class Calibration:
    """How one question's raw cosines become the dense side of its hybrid score, and the
    lexical side's share: ``dense = above_baseline(scale * cosine, baseline)``.

    The packaged model: ``Calibration(b)`` with ``b`` the question's baseline; an embedder
    without one: ``Calibration()`` (the cosine as it is). The two-language default
    (:mod:`langgraph_episodic.bilingual`) scales its half-length cosines back, gives German
    questions a smaller lexical share (``lexical_weight``) and English ones a
    ``second`` reading (:class:`SecondReading`).
    """

    baseline: float = 0.0
    """The question's baseline cosine, on its model's own scale."""
    scale: float = 1.0
    """The raw cosine is multiplied by this first."""
    lexical_weight: float = LEXICAL_WEIGHT
    """The lexical side's share of the hybrid score."""
    first: np.ndarray | None = field(default=None, compare=False)
    """The vector the question ranks by, when not its embedding (the embedding also carries
    the ``second`` reading's vector)."""
    second: SecondReading | None = field(default=None, compare=False)
    """A reading scored alone for the memories it applies to (None: the hybrid score only)."""

    def dense(self, cosine: Cosine) -> Cosine:
        """The dense score of a raw cosine (or an array of them)."""
        return above_baseline(cosine * self.scale if self.scale != 1.0 else cosine, self.baseline)


def calibration_of(embeddings: Any) -> Any:
    """The embedder's ``calibration(query_vector) -> Calibration`` method (the two-language
    default has one, :mod:`langgraph_episodic.bilingual`), or ``None`` when it has none."""
    method = getattr(embeddings, "calibration", None)
    return method if callable(method) else None


def as_calibration(value: float | Calibration) -> Calibration:
    """A :class:`Calibration`; a bare number is a baseline (the packaged model's form)."""
    return value if isinstance(value, Calibration) else Calibration(float(value))
