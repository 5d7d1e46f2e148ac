"""Numbers written the ways people write them: North American numbers without +1, dots, bare
digits, full-width digits, digits spelled out in English and German words; and the numbers that
must stay (order numbers, years, prices, versions, counting words).

``redaction_corpus.py`` holds the cases (``SPELLINGS``, ``NUMBER_LOOK_ALIKES``);
``python benchmarks/redaction_corpus.py`` prints the counts.
"""

from __future__ import annotations

import pytest

from langgraph_episodic.privacy import Redactor, redact_text
from langgraph_episodic.privacy.redaction import spelled

from .redaction_corpus import NEGATIVE, NUMBER_LOOK_ALIKES, SPELLINGS


def test_the_set_holds_every_kind_and_spelling() -> None:
    assert len(SPELLINGS) >= 37
    assert {placeholder for _, _, placeholder in SPELLINGS} == {
        "[EMAIL]", "[PHONE]", "[IBAN]", "[CARD]"
    }
    texts = " ".join(text for text, _, _ in SPELLINGS)
    for spelling in ("(415) 555-0100", "415-555-0100", "4155550100", "415.555.0100",
                     "４１５５５５０１００", "four one five", "null drei null", "+1 ", "+49"):
        assert spelling in texts


@pytest.mark.parametrize(("text", "secret", "placeholder"), SPELLINGS)
def test_every_spelling_is_redacted_by_default(text: str, secret: str, placeholder: str) -> None:
    out = redact_text(text)
    assert secret not in out and placeholder in out, out


@pytest.mark.parametrize("text", NUMBER_LOOK_ALIKES + NEGATIVE)
def test_numbers_that_are_not_personal_data_are_kept(text: str) -> None:
    assert redact_text(text) == text


def test_north_american_numbers_as_usually_written() -> None:
    assert redact_text("call (415) 555-0100 or 415-555-0100 or 4155550100") == (
        "call [PHONE] or [PHONE] or [PHONE]"
    )


def test_a_number_spelled_out_in_words() -> None:
    assert redact_text("four one five, five five five, zero one zero zero") == "[PHONE]"
    assert redact_text("Ruf an: null drei null, eins zwei drei vier fünf sechs sieben!") == (
        "Ruf an: [PHONE]!"
    )
    assert spelled("plus vier neun, drei null") == "+4930"
    # counting is not a number: the digits they spell are no valid phone number
    assert redact_text("one, two, three, four, five, six, seven") == (
        "one, two, three, four, five, six, seven"
    )


def test_regions_after_the_first_are_read_only_in_their_own_grouping() -> None:
    order = "Auftrag A-2024-000187"  # 202-400-0187 in the US, grouped as no US number is
    assert Redactor(phone_regions=("DE", "US")).redact_text(order) == order
    assert Redactor(phone_regions=("US",)).redact_text(order) == "Auftrag A-[PHONE]"


def test_a_bare_number_after_an_order_label_is_the_order_number() -> None:
    assert redact_text("Bestellnr. 2024000187, Tel.-Nr. 0301234567") == (
        "Bestellnr. 2024000187, Tel.-Nr. [PHONE]"
    )
    assert redact_text("invoice #4155550100, phone 4155550100") == (
        "invoice #4155550100, phone [PHONE]"
    )
