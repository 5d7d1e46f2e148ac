"""The redaction corpus: every positive is redacted, every look-alike kept (German and English).

See ``redaction_corpus.py`` for the cases; ``benchmarks/redaction_corpus.py`` prints the counts.
"""

from __future__ import annotations

import pytest

from langgraph_episodic.privacy import iban_valid, redact_text

from .redaction_corpus import NEGATIVE, POSITIVE


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
