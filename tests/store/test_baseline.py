"""The packaged model's baseline: the hybrid score's cosine is measured from the question's
baseline (its cosine with the mean of ordinary texts of its language), for the packaged model
only; every other embedder keeps the plain cosine."""

from __future__ import annotations

import doctest
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT
from langgraph_episodic.embeddings import MODEL_DIMS, SentenceTransformerEmbeddings, packaged_index
from langgraph_episodic.language import baseline as baseline_module
from langgraph_episodic.language.baseline import Baseline, above_baseline, baseline_for
from langgraph_episodic.tools import create_memory_tools

DENSE_WEIGHT = 1.0 - LEXICAL_WEIGHT
ROOT = Path(__file__).resolve().parents[2]


class AngleEmbeddings(Embeddings):
    """2-d unit vectors: a text ending in "@<degrees>" points that many degrees from the x-axis,
    everything else (questions) along it, so cos(text, question) = cos(degrees)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)

    @staticmethod
    def _vec(text: str) -> list[float]:
        angle = float(text.rsplit("@", 1)[1]) if "@" in text else 0.0
        return [math.cos(math.radians(angle)), math.sin(math.radians(angle))]


class PackagedAngles(AngleEmbeddings):
    """The same vectors, claiming to be the packaged model."""

    is_packaged = True


def cos(degrees: float) -> float:
    return math.cos(math.radians(degrees))


@pytest.fixture
def fake_baseline(monkeypatch: pytest.MonkeyPatch) -> Baseline:
    """A 2-d baseline in place of the packaged one: German questions have baseline 0.5 (mean
    (0.5, 0)), English ones 0.2."""
    fake = Baseline("fake", {"de": np.array([0.5, 0.0]), "en": np.array([0.2, 0.0])})
    monkeypatch.setattr(baseline_module, "packaged_baseline", lambda: fake)
    return fake


def store_with(embedder: Embeddings, **options: Any) -> ChromaStore:
    return ChromaStore.ephemeral(index={"dims": 2, "embed": embedder, "fields": ["text"]}, **options)


def scores(store: ChromaStore, query: str) -> dict[str, float]:
    return {h.key: h.score or 0.0 for h in store.search(("u",), query=query, limit=10)}


@pytest.mark.parametrize(
    ("cosine", "baseline"), [(0.9, 0.5), (0.5, 0.5), (0.2, 0.5), (0.6, 0.0), (0.6, -0.1)]
)
def test_above_baseline_is_increasing_keeps_one_and_zero_means_no_baseline(
    cosine: float, baseline: float
) -> None:
    value = above_baseline(cosine, baseline)
    assert above_baseline(cosine + 0.05, baseline) > value
    assert above_baseline(1.0, baseline) == pytest.approx(1.0)
    assert above_baseline(cosine, 0.0) == cosine
    assert above_baseline(baseline, baseline) == pytest.approx(0.0)


def test_docstring_examples_run() -> None:
    result = doctest.testmod(baseline_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_only_the_packaged_model_gets_the_baseline(tmp_path: Path) -> None:
    assert baseline_for(HashEmbeddings(8)) is None
    assert baseline_for(AngleEmbeddings()) is None
    assert baseline_for(SentenceTransformerEmbeddings(model_path=tmp_path)) is None
    packaged = baseline_for(SentenceTransformerEmbeddings())  # not loaded: the folder decides
    assert packaged is not None and packaged.model == "all-MiniLM-L6-v2"
    assert {lang: vec.shape for lang, vec in packaged.means.items()} == {
        "de": (MODEL_DIMS,),
        "en": (MODEL_DIMS,),
    }


@pytest.mark.usefixtures("fake_baseline")
def test_the_hybrid_cosine_is_measured_from_the_question_baseline() -> None:
    store = store_with(PackagedAngles())
    for key, angle in (("near", 20), ("mid", 55), ("far", 75)):
        store.put(("u",), key, {"text": f"unrelated words {key} @{angle}"})
    got = scores(store, "Was ist mein Beruf?")  # German: baseline 0.5, no shared word
    for key, angle in (("near", 20), ("mid", 55)):
        assert got[key] == pytest.approx(DENSE_WEIGHT * (cos(angle) - 0.5) / 0.5)
    assert got["far"] == 0.0  # below the baseline: no better than any German text
    assert list(got) == ["near", "mid", "far"]  # ranked as the cosine ranks


@pytest.mark.usefixtures("fake_baseline")
def test_the_question_language_picks_the_mean_and_a_fixed_language_wins() -> None:
    auto = store_with(PackagedAngles())
    auto.put(("u",), "m", {"text": "a memory @30"})
    english = scores(auto, "What is my job?")["m"]
    assert english == pytest.approx(DENSE_WEIGHT * (cos(30) - 0.2) / 0.8)
    german_store = store_with(PackagedAngles(), language="de")
    german_store.put(("u",), "m", {"text": "a memory @30"})
    assert scores(german_store, "What is my job?")["m"] == pytest.approx(
        DENSE_WEIGHT * (cos(30) - 0.5) / 0.5
    )


@pytest.mark.usefixtures("fake_baseline")
def test_other_embedders_and_dense_mode_keep_the_plain_cosine() -> None:
    plain = store_with(AngleEmbeddings())
    plain.put(("u",), "m", {"text": "a memory @30"})
    assert scores(plain, "Was ist mein Beruf?")["m"] == pytest.approx(DENSE_WEIGHT * cos(30))
    dense = store_with(PackagedAngles(), search_mode="dense")
    dense.put(("u",), "m", {"text": "a memory @30"})
    assert scores(dense, "Was ist mein Beruf?")["m"] == pytest.approx(cos(30))


@pytest.mark.usefixtures("fake_baseline")
async def test_async_search_and_every_namespace_give_the_same_score() -> None:
    store = store_with(PackagedAngles())
    store.put(("u",), "m", {"text": "a memory @30"})
    store.put(("v",), "other", {"text": "another memory @70"})
    expected = DENSE_WEIGHT * (cos(30) - 0.5) / 0.5
    (hit,) = await store.asearch(("u",), query="Was ist mein Beruf?")
    assert hit.score == pytest.approx(expected)
    everywhere = {h.key: h.score for h in store.search((), query="Was ist mein Beruf?")}
    assert everywhere["m"] == pytest.approx(expected)


def test_a_baseline_of_other_dimensions_is_not_applied(fake_baseline: Baseline) -> None:
    assert fake_baseline.of(np.ones(3), "Was ist mein Beruf?") == 0.0
    assert fake_baseline.of(np.zeros(2), "Was ist mein Beruf?") == 0.0
    assert fake_baseline.of(np.array([2.0, 0.0]), "Was ist mein Beruf?") == pytest.approx(0.5)


def test_the_packaged_means_cannot_be_changed_in_place() -> None:
    means = baseline_module.packaged_baseline().means
    with pytest.raises(ValueError, match="read-only"):
        means["de"][0] = 1.0


@pytest.mark.usefixtures("fake_baseline")
def test_lexical_evidence_still_counts_in_full() -> None:
    store = store_with(PackagedAngles())
    store.put(("u",), "m", {"text": "Neovim @80"})  # far below the baseline, but the word
    only_word = scores(store, "Neovim")["m"]
    assert only_word >= LEXICAL_WEIGHT * 0.45  # the whole question's one term, held once


@pytest.mark.model
def test_the_shipped_means_are_those_of_the_background_sentences() -> None:
    from langgraph_episodic.embeddings import default_embeddings

    model = default_embeddings()
    shipped = baseline_module.packaged_baseline()
    for lang in ("de", "en"):
        path = ROOT / "benchmarks" / "data" / f"background_{lang}.txt"
        lines = [t for t in path.read_text(encoding="utf-8").splitlines() if t.strip()]
        mean = np.asarray(model.embed_documents(lines), dtype=np.float64).mean(axis=0)
        np.testing.assert_allclose(shipped.means[lang], mean, atol=2e-5)


GERMAN_FACTS = [
    "Ich arbeite als Krankenpfleger in der Notaufnahme.",
    "Mein Lieblingseditor ist Neovim.",
    "Ich trinke keinen Kaffee, nur grünen Tee.",
    "Unser Hund ist ein Labrador namens Bruno.",
    "Ich spiele seit meiner Kindheit Klavier.",
]


@pytest.mark.model
def test_a_german_question_about_something_never_said_comes_back_empty() -> None:
    """With the packaged model and the default floor (before the baseline every German
    question found "something": German texts all have cosines of 0.4-0.6 to MiniLM)."""
    store = ChromaStore.ephemeral(index=packaged_index())
    save, recall = create_memory_tools(store=store)
    config = {"configurable": {"user_id": "alice"}}
    for fact in GERMAN_FACTS:
        save.invoke({"information": fact}, config)
    for question in ("Welche Blutgruppe habe ich?", "Wie hoch ist der Mount Everest?"):
        assert recall.invoke({"frage": question}, config) == (
            "Keine relevanten Informationen im Gedächtnis gefunden."
        )
    found = recall.invoke({"frage": "Wie heißt unser Hund?"}, config)
    assert "Bruno" in found.splitlines()[1]
    # and the raw scores: the baseline takes the German offset away
    raw = ChromaStore.ephemeral(index={"dims": MODEL_DIMS, "embed": _Plain(), "fields": ["$"]})
    for n, fact in enumerate(GERMAN_FACTS):
        raw.put(("u",), str(n), {"text": fact})
    unrelated = "Welche Blutgruppe habe ich?"
    plain_best = raw.search(("u",), query=unrelated, limit=1)[0].score or 0.0
    packaged_best = store.search(("memories", "alice"), query=unrelated, limit=1)[0].score or 0.0
    assert packaged_best < plain_best


class _Plain(Embeddings):
    """The packaged model behind a wrapper that does not say so: plain cosines."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        from langgraph_episodic.embeddings import default_embeddings

        return default_embeddings().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        from langgraph_episodic.embeddings import default_embeddings

        return default_embeddings().embed_query(text)
