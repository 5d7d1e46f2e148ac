"""Tool texts per locale, the public names of ``langgraph_episodic.tools``, and its doctests."""

from __future__ import annotations

import doctest
import importlib

import pytest

import langgraph_episodic
import langgraph_episodic.tools as tools
from langgraph_episodic.tools import ENGLISH, GERMAN, ToolTexts, create_memory_tools, texts_for

EXPECTED_ALL = {
    "DEFAULT_NAMESPACE",
    "ENGLISH",
    "GERMAN",
    "MemoryStoreMissingError",
    "ToolTexts",
    "create_memory_tools",
    "create_vectorstore_memory_tools",
    "memory_abrufen",
    "memory_speichern",
    "texts_for",
}
TOP_LEVEL = {
    "create_memory_tools",
    "create_vectorstore_memory_tools",
    "memory_speichern",
    "memory_abrufen",
    "MemoryStoreMissingError",
}


def test_public_names_are_pinned() -> None:
    assert set(tools.__all__) == EXPECTED_ALL
    for name in TOP_LEVEL:
        assert getattr(langgraph_episodic, name) is getattr(tools, name)
    assert set(langgraph_episodic.__all__) >= TOP_LEVEL


@pytest.mark.parametrize("module", ["texts", "_core", "memory_tools", "vectorstore_tools"])
def test_docstring_examples_run(module: str) -> None:
    mod = importlib.import_module(f"langgraph_episodic.tools.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_locales() -> None:
    assert texts_for("de") is GERMAN
    assert texts_for("de-DE") is GERMAN and texts_for("en_US") is ENGLISH
    assert (GERMAN.save_name, GERMAN.recall_name) == ("memory_speichern", "memory_abrufen")
    assert (GERMAN.save_arg, GERMAN.recall_arg) == ("information", "frage")
    assert (ENGLISH.save_name, ENGLISH.recall_name) == ("save_memory", "recall_memory")
    with pytest.raises(ValueError, match="Unknown locale"):
        texts_for("fr")


@pytest.mark.parametrize(
    ("texts", "use", "avoid"),
    [
        (GERMAN, ["Vorlieben", "persönliche", "Fakten", "Ziel"], ["Smalltalk", "Bestätigungen"]),
        (ENGLISH, ["preferences", "personal facts", "goals"], ["small talk", "confirmations"]),
    ],
)
def test_descriptions_say_when_to_use_and_when_not(
    texts: ToolTexts, use: list[str], avoid: list[str]
) -> None:
    for description in (texts.save_description, texts.recall_description):
        head, _, tail = description.partition("Nicht verwenden" if texts is GERMAN else "Do not")
        assert tail, description
        assert all(word in head for word in use), head
        assert all(word in tail for word in avoid), tail


def test_own_texts_override_the_locale() -> None:
    from dataclasses import replace

    texts = replace(
        GERMAN, save_name="merken", recall_name="erinnern", saved="Gemerkt: {information}"
    )
    save, recall = create_memory_tools(texts=texts, locale="en")
    assert (save.name, recall.name) == ("merken", "erinnern")


@pytest.mark.parametrize(("texts", "words"), [(GERMAN, ["Daten", "keine Anweisungen"]),
                                              (ENGLISH, ["data", "not instructions"])])
def test_recall_header_says_the_list_is_data_not_instructions(
    texts: ToolTexts, words: list[str]
) -> None:
    assert all(word in texts.recall_header for word in words)
    assert "\n" not in texts.recall_header and not texts.recall_header.startswith("- ")
