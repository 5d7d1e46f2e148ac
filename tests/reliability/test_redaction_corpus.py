"""The redaction corpus: every positive is redacted, every look-alike kept (German and English).

See ``redaction_corpus.py`` for the cases; ``benchmarks/redaction_corpus.py`` prints the counts.
"""

from __future__ import annotations

import pytest

from langgraph_episodic.privacy import RedactionRule, Redactor, iban_valid, redact_text

from .redaction_corpus import NEGATIVE, POSITIVE, US_NATIONAL


def test_the_corpus_is_large_enough() -> None:
    assert len(POSITIVE) >= 60 and len(NEGATIVE) >= 60
    kinds = {placeholder for _, _, placeholder in POSITIVE}
    assert kinds == {"[EMAIL]", "[PHONE]", "[IBAN]", "[CARD]"}


@pytest.mark.parametrize(("text", "secret", "placeholder"), POSITIVE)
def test_personal_data_is_redacted(text: str, secret: str, placeholder: str) -> None:
    out = redact_text(text)
    assert secret not in out and placeholder in out, out


@pytest.mark.parametrize("text", NEGATIVE)
def test_look_alikes_are_kept(text: str) -> None:
    assert redact_text(text) == text


NORTH_AMERICA = Redactor(phone_regions=("DE", "US"))


@pytest.mark.parametrize(("text", "secret", "placeholder"), POSITIVE + US_NATIONAL)
def test_with_us_among_the_phone_regions_north_american_numbers_are_redacted_too(
    text: str, secret: str, placeholder: str
) -> None:
    out = NORTH_AMERICA.redact_text(text)
    assert secret not in out and placeholder in out, out


def test_numbers_without_a_country_code_are_read_in_the_phone_regions_only() -> None:
    text = "call (415) 555-0100 or 030 1234567"
    assert redact_text(text) == "call [PHONE] or [PHONE]"  # Germany and the US by default
    assert Redactor(phone_regions="de").redact_text(text) == "call (415) 555-0100 or [PHONE]"
    assert Redactor(phone_regions="us").redact_text(text) == "call [PHONE] or 030 1234567"
    assert NORTH_AMERICA.redact_text(text) == "call [PHONE] or [PHONE]"
    assert NORTH_AMERICA.without("email").phone_regions == ("DE", "US")
    assert NORTH_AMERICA.with_rule("x", r"xyz").redact_text(text) == "call [PHONE] or [PHONE]"
    with pytest.raises(ValueError, match=r"phone_regions=.*DE"):
        Redactor(phone_regions=("Germany",))
    with pytest.raises(ValueError, match="phone_regions"):
        Redactor(phone_regions=())
    with pytest.raises(ValueError, match="pattern or a find"):
        RedactionRule("nothing", None, "[X]")


def test_lines_and_glued_words_keep_their_place() -> None:
    assert redact_text("Büro:\n030 1234567\n040 7654321\nEnde") == "Büro:\n[PHONE]\n[PHONE]\nEnde"
    assert redact_text("Tel.: 030\n1234567\nGruß") == "Tel.: [PHONE]\nGruß"
    assert redact_text("Mobil017612345678, IBANDE89370400440532013000") == "Mobil[PHONE], IBAN[IBAN]"
    assert redact_text("anna.schmidt(at)web(dot)de, danke") == "[EMAIL], danke"
    assert redact_text("lena at beispiel punkt de oder at home") == "[EMAIL] oder at home"


def test_only_the_personal_data_is_replaced() -> None:
    text = "Bestellung 1000234567: IBAN de89-3704-0044-0532-0130-00, Tel. 030 1234567."
    assert redact_text(text) == "Bestellung 1000234567: IBAN [IBAN], Tel. [PHONE]."


def test_iban_mod_97() -> None:
    assert iban_valid("GB82 WEST 1234 5698 7654 32")
    assert not iban_valid("GB82 WEST 1234 5698 7654 33")
    assert not iban_valid("DE89")


ADVERSARIAL = {
    "international digits": "+49" + "1" * 5000 + "x",
    "00 prefix": "0049" + "1" * 5000 + "a",
    "national groups": "030" + " 12" * 2000 + "x",
    "card groups": "4" + " 1" * 5000 + "x",
    "iban groups": "DE89" + " ABCD" * 2000 + "!",
    "e-mail domain": "a@" + "b-" * 10000,
    "digits": "1234567890" * 500,
    "digit words": "one two " * 3000 + "x",
}
BOUND_S = 20.0
"""A bound, not a speed check: exponential backtracking took 25 s on 64 characters."""


@pytest.mark.parametrize("text", list(ADVERSARIAL.values()), ids=list(ADVERSARIAL))
def test_adversarial_text_cannot_stall_redaction(text: str) -> None:
    import threading

    done: list[str] = []
    worker = threading.Thread(target=lambda: done.append(redact_text(text)), daemon=True)
    worker.start()
    worker.join(BOUND_S)
    assert done, f"redaction of {len(text)} characters did not finish in {BOUND_S} s"
