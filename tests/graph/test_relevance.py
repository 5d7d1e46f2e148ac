"""The relevance filter the memory nodes use (``langgraph_episodic.relevance``)."""

from __future__ import annotations

import pytest

from langgraph_episodic.relevance import TRIVIAL_WORDS, is_worth_storing


@pytest.mark.parametrize(
    "text",
    ["Hallo!", "Danke, alles klar!", "Vielen Dank, super!", "ok", "Guten Morgen",
     "hi there", "Thank you very much!", "Ja, gut, verstanden.", "   ", "Short one"],
)
def test_trivial_or_short_texts_are_not_worth_storing(text: str) -> None:
    assert not is_worth_storing(text)


@pytest.mark.parametrize(
    "text",
    ["Ich bevorzuge Python für Datenanalyse", "My manager is called Bob Smith",
     "Danke, und bitte merke dir: ich arbeite bei Siemens",
     "Thanks! I deploy on AWS every Friday"],
)
def test_texts_with_content_are_worth_storing(text: str) -> None:
    assert is_worth_storing(text)


def test_the_obvious_one_liner_is_wrong_and_ours_is_not() -> None:
    """``not all(word in text for word in TRIVIA)`` is true for nearly everything."""
    trivial = "Danke, alles klar, super!"

    def naive(text: str) -> bool:
        return not all(word in text for word in TRIVIAL_WORDS)

    assert naive(trivial)  # the one-liner would store a pure acknowledgement
    assert not is_worth_storing(trivial)
