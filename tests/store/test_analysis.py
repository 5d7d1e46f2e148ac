"""German and English tokenisation of the lexical side (:mod:`langgraph_episodic.language.analysis`)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.language.analysis import (
    _APOSTROPHES,
    analyze,
    analyzer,
    compound_heads,
    detect,
    german_extras,
    normalise,
    words,
)


def test_german_is_stemmed_umlauts_and_sharp_s_folded() -> None:
    assert analyze("Häuser") == analyze("Haus") == ["haus"]
    assert analyze("Ich mag Käse") == analyze("Ich mag Kaese") == analyze("ICH MAG KÄSE")
    # A lone word without German letters or function words counts as English.
    assert analyze("Kaese") == ["kaes"]
    assert analyze("Straße", language="de") == analyze("Strasse", language="de")
    assert analyze("Füße", language="de") == analyze("Fuesse", language="de")
    # Inflections meet at one stem.
    assert analyze("Ich arbeite viel", language="de") == analyze("arbeitet", language="de")


def test_german_stop_words_are_dropped() -> None:
    terms = analyze("Ich war nicht in der Stadt und du bist es auch nicht")
    assert terms[0] == "stadt"
    assert terms == ["stadt", *german_extras("stadt")]


def test_a_german_verb_in_the_third_person_meets_the_first() -> None:
    assert "wohn" in analyze("Jonas wohnt in Bochum.")
    assert analyze("Wo wohne ich?") == ["wohn"]
    assert "fahr" in analyze("Sie fährt einen Skoda.") and "fahr" in analyze("Ich fahre Rad.")


def test_german_compounds_add_their_heads() -> None:
    terms = analyze("Mein Lieblingseditor ist Neovim.")
    assert terms[:2] == ["lieblingseditor", "neovim"]
    assert "editor" in terms
    assert "editor" in compound_heads("lieblingseditor")
    assert compound_heads("editor") == ()  # short words are not split
    # Without compounds only the whole word is indexed.
    assert analyzer("de", compounds=False)("Lieblingseditor") == ["lieblingseditor"]


def test_english_is_stemmed_with_snowball() -> None:
    assert analyze("running runs") == ["run", "run"]
    assert analyze("Caroline's dogs") == ["carolin", "dog"]
    assert analyze("the parties", language="en") == analyze("a party", language="en")


def test_english_text_is_not_split_as_a_german_compound() -> None:
    assert analyze("internationalisation matters") == ["internationalis", "matter"]


def test_language_is_detected_per_text() -> None:
    assert detect(words("Ich trinke keinen Kaffee")) == "de"
    assert detect(words("I do not drink coffee")) == "en"
    assert detect(words("Müller")) == "de"
    assert detect(words("Neovim")) == "en"


def test_an_unknown_language_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="language must be one of"):
        analyze("x", language="fr")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="language must be one of"):
        analyzer("fr")  # type: ignore[arg-type]


def test_a_german_question_finds_the_compound_and_the_inflected_fact() -> None:
    index = LexicalIndex()
    ns = ("memories", "u")
    index.upsert(ns, "editor", "Mein Lieblingseditor ist Neovim.")
    index.upsert(ns, "work", "Ich arbeite als Krankenpfleger in der Notaufnahme.")
    index.upsert(ns, "food", "Mein Lieblingsessen ist Lasagne.")
    assert [d for d, _ in index.search("Welchen Editor benutze ich?", [ns], 3)] == ["editor"]
    assert [d for d, _ in index.search("Wo arbeitet er?", [ns], 3)] == ["work"]


def test_the_index_language_can_be_fixed_before_anything_is_indexed() -> None:
    index = LexicalIndex()
    index.use_language("de")
    index.upsert(("n",), "a", "Die Kinder spielen")
    assert index.search("Kind", [("n",)], 1)[0][0] == "a"
    with pytest.raises(ValueError, match="language='de'"):
        index.use_language("en")
    index.use_language("de")  # the same language again is fine


def test_a_huge_word_is_not_split_and_analysis_stays_linear() -> None:
    word = "donaudampfschifffahrt" * 5_000  # about 100 kB, one word
    assert compound_heads(word) == ()
    assert len(analyze(f"Ich suche {word}")) == 2  # "such" and the whole word


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.characters(max_codepoint=127), max_size=40)
    | st.text(max_size=40)
    | st.lists(st.sampled_from(["Don\u2019t", "Ｆｕｌｌ", "ﬁle", "STRASSE", "Straße", "x's"]))
    .map(" ".join)
)
def test_ascii_text_is_normalised_as_any_text(text: str) -> None:
    # ASCII text takes a shortcut (casefold only); it must equal the full normalisation.
    full = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).casefold()
    assert normalise(text) == full
