"""The language a question is scored in: ``language="auto"`` detects it (words that are function
words of both languages count for neither), a fixed ``language`` decides it, and German
questions through the German tools find their facts or answer that nothing is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from langgraph_episodic import ChromaStore
from langgraph_episodic.language import baseline as baseline_module
from langgraph_episodic.language.analysis import Language, detect, words
from langgraph_episodic.language.baseline import Baseline
from langgraph_episodic.tools import create_memory_tools

from .test_baseline import DENSE_WEIGHT, PackagedAngles, cos, scores, store_with

NOTHING = "Keine relevanten Informationen im Gedächtnis gefunden."

# German texts of benchmarks/data/german_memory.jsonl that were taken for English while "in",
# "an" and "am" counted as English function words.
ONCE_MISREAD = [
    "Ich wohne seit drei Jahren in Leipzig.",
    "Meine Schwester Anna lebt in Wien.",
    "Unsere Hochzeit war am 5. Juni 2015.",
    "Ich bevorzuge Besprechungen am Vormittag.",
    "An welchem Tag wurde ich geboren?",
    "Was mache ich in meiner Freizeit?",
    "Welcher runde Geburtstag steht in der Familie an?",
]
ENGLISH = [
    "I live in Leipzig.",
    "An apple a day.",
    "I am in Vienna.",
    "What was the name of my dog?",
    "The war in the film was long.",
]


@pytest.mark.parametrize("text", ONCE_MISREAD)
def test_german_texts_with_shared_function_words_are_german(text: str) -> None:
    assert detect(words(text)) == "de"


@pytest.mark.parametrize("text", ENGLISH)
def test_english_texts_with_those_words_stay_english(text: str) -> None:
    assert detect(words(text)) == "en"


@pytest.fixture
def fake_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in test_baseline: German questions have baseline 0.5, English ones 0.2."""
    fake = Baseline("fake", {"de": np.array([0.5, 0.0]), "en": np.array([0.2, 0.0])})
    monkeypatch.setattr(baseline_module, "packaged_baseline", lambda: fake)


@pytest.mark.usefixtures("fake_baseline")
def test_a_once_misread_german_question_gets_the_german_baseline() -> None:
    """Auto and a fixed ``language="de"`` score it alike (German baseline 0.5 of the fake);
    before, auto measured it from the English baseline (0.2)."""
    question = "An welchem Tag wurde ich geboren?"
    auto = store_with(PackagedAngles())
    fixed = store_with(PackagedAngles(), language="de")
    for store in (auto, fixed):
        store.put(("u",), "m", {"text": "Lena Neovim Bruno @30"})  # no word of the question
    expected = DENSE_WEIGHT * (cos(30) - 0.5) / 0.5
    assert scores(auto, question)["m"] == pytest.approx(expected)
    assert scores(fixed, question)["m"] == pytest.approx(expected)
    english = scores(auto, "On which day was I born?")["m"]
    assert english == pytest.approx(DENSE_WEIGHT * (cos(30) - 0.2) / 0.8)
    assert not math.isclose(english, expected)


GERMAN_FACTS = [
    "Ich arbeite als Krankenpfleger in der Notaufnahme.",
    "Mein Lieblingseditor ist Neovim.",
    "Ich trinke keinen Kaffee, nur grünen Tee.",
    "Meine Tochter heißt Lena und ist sieben Jahre alt.",
    "Ich wohne seit drei Jahren in Leipzig.",
    "Unser Hund ist ein Labrador namens Bruno.",
    "Mein Geburtstag ist am 14. März.",
    "Meine Schwester Anna lebt in Wien.",
]
PARAPHRASES = {
    "Mit welchem Editor schreibe ich am liebsten Code?": "Neovim",
    "Mag ich Kaffee?": "Kaffee",
    "Wie lautet der Name meiner Tochter?": "Lena",
    "Wie heißt unser Hund?": "Bruno",
    "Wann habe ich Geburtstag?": "März",
    "Wo wohnt meine Schwester?": "Wien",
}
NEVER_SAID = [
    "Welche Blutgruppe habe ich?",
    "Wie hoch ist der Mount Everest?",
    "Welches Parfüm benutze ich?",
    "Wie ist das Wetter morgen?",
]


@pytest.mark.model
@pytest.mark.parametrize("language", ["auto", "de"])
def test_german_tools_find_paraphrased_facts_and_nothing_for_the_never_said(
    language: Language,
) -> None:
    store = ChromaStore.ephemeral(language=language)
    save, recall = create_memory_tools(store=store)
    config = {"configurable": {"user_id": "alice"}}
    for fact in GERMAN_FACTS:
        save.invoke({"information": fact}, config)
    for question, word in PARAPHRASES.items():
        answer = recall.invoke({"frage": question}, config)
        assert answer != NOTHING, question
        assert word in answer.splitlines()[1], (question, answer)
    for question in NEVER_SAID:
        assert recall.invoke({"frage": question}, config) == NOTHING, question
