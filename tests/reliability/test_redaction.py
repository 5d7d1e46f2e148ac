"""Redaction: personal data never reaches the stored value, the embedder or Chroma's records."""

from __future__ import annotations

import doctest
import re
from typing import Any

import phonenumbers
import pytest
from fakes import RecordingEmbeddings
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from phonenumbers import PhoneNumberFormat, PhoneNumberType

from langgraph_episodic.privacy import (
    DEFAULT_RULES,
    RedactingStore,
    Redactor,
    luhn_valid,
    redact_text,
    redact_value,
)
from langgraph_episodic.privacy import forget as forget_module
from langgraph_episodic.privacy import redacting_store as redacting_store_module
from langgraph_episodic.privacy import redaction as redaction_module
from langgraph_episodic.privacy import text_view as text_view_module

from .conftest import hash_index, raw_records

SECRETS = {
    "email": ["bob.smith+news@example.co.uk", "a@b.io", "Maria.Muster@firma-x.de"],
    "phone": ["+49 30 1234567", "+1 (415) 555-0100", "030 1234567", "(030) 123 45 67",
              "0151-23456789", "030/1234567", "+44 20 7946 0958", "0049 89 12345678",
              "+43 1 5123456", "+41 44 668 18 00"],
    "iban": ["DE89 3704 0044 0532 0130 00", "DE89370400440532013000",
             "GB82 WEST 1234 5698 7654 32", "FR14 2004 1010 0505 0001 3M02 606"],
    "card": ["4111 1111 1111 1111", "4111111111111111", "5555-5555-5555-4444",
             "378282246310005", "6011 1111 1111 1117"],
}
PLACEHOLDER = {"email": "[EMAIL]", "phone": "[PHONE]", "iban": "[IBAN]", "card": "[CARD]"}

# Text that looks numeric but is not personal data: must survive untouched.
HARMLESS = [
    "Order 4111 1111 1111 1112 shipped",  # 16 digits failing Luhn: an order number
    "Order number 1234567890123",
    "Invoice 20240115-0042 of 2024-01-15, due 01.02.2024 or 01/02/2024 at 09:30",
    "Version 1.2.3, pi is 3.14159265, 1,000,000 users, 42 km, room 101",
    "Call me at 5 pm; the meeting has 12 people and costs 1500 EUR",
    "ISBN 978-3-16-148410-0 and PLZ 10115 Berlin",
]


@pytest.mark.parametrize(
    ("kind", "secret"), [(k, s) for k, values in SECRETS.items() for s in values]
)
def test_default_rules_redact_each_kind(kind: str, secret: str) -> None:
    text = f"Kontakt: {secret}. Danke!"
    out = redact_text(text)
    assert secret not in out
    assert out == f"Kontakt: {PLACEHOLDER[kind]}. Danke!"


@pytest.mark.parametrize("text", HARMLESS)
def test_ordinary_numbers_are_left_alone(text: str) -> None:
    assert redact_text(text) == text


def test_luhn() -> None:
    assert luhn_valid("4111 1111 1111 1111")
    assert not luhn_valid("4111 1111 1111 1112")
    assert not luhn_valid("4111")  # too short to be a card


def test_users_can_add_replace_and_remove_rules() -> None:
    redactor = Redactor().with_rule("customer", r"\bKD-\d{6}\b")
    assert redactor.redact_text("Kunde KD-123456, mail x@y.de") == "Kunde [CUSTOMER], mail [EMAIL]"
    assert redactor.names == (*(r.name for r in DEFAULT_RULES), "customer")
    masked = redactor.with_rule("email", r"\S+@\S+", "<mail>")
    assert masked.names == redactor.names  # replaced in place, order kept
    assert masked.redact_text("mail x@y.de") == "mail <mail>"
    no_phone = Redactor().without("phone")
    assert no_phone.redact_text("call +49 30 1234567") == "call +49 30 1234567"
    checked = Redactor(rules=()).with_rule(
        "even", r"\b\d+\b", "[EVEN]", check=lambda m: int(m) % 2 == 0
    )
    assert checked.redact_text("1 2 3 4") == "1 [EVEN] 3 [EVEN]"
    with pytest.raises(KeyError, match="known"):
        Redactor().without("nope")
    with pytest.raises(TypeError, match="with_rule"):
        Redactor(rules=("not a rule",))  # type: ignore[arg-type]  # the wrong type is the test
    with pytest.raises(TypeError, match="redact_value"):
        Redactor().redact_text({"text": "x"})  # type: ignore[arg-type]  # the wrong type is the test


def test_redact_value_walks_dicts_and_lists_and_keeps_keys_and_numbers() -> None:
    value = {
        "text": "mail a@b.io",
        "a@b.io": "key stays",
        "n": 4111111111111111,
        "ok": True,
        "none": None,
        "nested": {"list": ["+49 30 1234567", {"deep": "DE89 3704 0044 0532 0130 00"}]},
        "pair": ("x@y.de", 1),
    }
    original = repr(value)
    out = redact_value(value)
    assert out == {
        "text": "mail [EMAIL]",
        "a@b.io": "key stays",
        "n": 4111111111111111,
        "ok": True,
        "none": None,
        "nested": {"list": ["[PHONE]", {"deep": "[IBAN]"}]},
        "pair": ("[EMAIL]", 1),
    }
    assert repr(value) == original, "the input must not be modified"
    assert Redactor()(value) == out


emails = st.from_regex(r"[a-z][a-z0-9.]{0,10}@[a-z]{2,8}\.(de|com|org)", fullmatch=True)
filler = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prefix=filler, email=emails, suffix=filler)
def test_an_email_anywhere_never_survives_and_redaction_is_idempotent(
    prefix: str, email: str, suffix: str
) -> None:
    text = f"{prefix} {email} {suffix}"
    once = redact_text(text)
    assert email not in once
    assert redact_text(once) == once


def _luhn_complete(body: str) -> str:
    for d in "0123456789":
        if luhn_valid(body + d):
            return body + d
    raise AssertionError("unreachable: one check digit always fits")


@settings(max_examples=60, deadline=None)
@given(body=st.from_regex(r"[3-6][0-9]{14}", fullmatch=True), sep=st.sampled_from(["", " ", "-"]))
def test_every_luhn_valid_card_is_redacted(body: str, sep: str) -> None:
    digits = _luhn_complete(body)
    card = sep.join(re.findall(".{1,4}", digits))
    out = redact_text(f"pay with {card} today")
    assert out == "pay with [CARD] today"


REGIONS = ["DE", "DE", "DE", "AT", "CH", "GB", "FR", "IT", "NL", "PL", "US"]  # Germany most
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzäöüß ,.;:!?", max_size=30)


@st.composite
def valid_numbers(draw: st.DrawFn) -> tuple[str, phonenumbers.PhoneNumber]:
    """A valid fixed-line or mobile number of one of REGIONS (its example number, last digits
    drawn), as written internationally, in E.164 or, for Germany, nationally."""
    region = draw(st.sampled_from(REGIONS))
    kind = draw(st.sampled_from([PhoneNumberType.FIXED_LINE, PhoneNumberType.MOBILE]))
    example = phonenumbers.example_number_for_type(region, kind)
    assert example is not None
    nsn = str(example.national_number)
    tail = draw(st.text(alphabet="0123456789", min_size=3, max_size=3))
    number = phonenumbers.parse(f"+{example.country_code}{nsn[:-3]}{tail}")
    assume(phonenumbers.is_valid_number(number))
    formats = [PhoneNumberFormat.INTERNATIONAL, PhoneNumberFormat.E164]
    if region == "DE":
        formats.append(PhoneNumberFormat.NATIONAL)
    return phonenumbers.format_number(number, draw(st.sampled_from(formats))), number


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prefix=words,
    found=valid_numbers(),
    glue=st.sampled_from([" ", "", ": ", "\n"]),
    after=st.sampled_from([" ", ""]),
    split=st.booleans(),
    suffix=words,
)
def test_every_valid_number_is_redacted_glued_or_split_across_lines(
    prefix: str,
    found: tuple[str, phonenumbers.PhoneNumber],
    glue: str,
    after: str,
    split: bool,
    suffix: str,
) -> None:
    written, number = found
    if split and " " in written.strip():
        head, _, tail = written.rpartition(" ")
        written = f"{head}\n{tail}"
    text = f"{prefix} Tel{glue}{written}{after}bitte {suffix}"
    out = redact_text(text)
    assert "[PHONE]" in out and not any(c.isdigit() for c in out), (text, out, number)


SECRET_VALUE = {
    "text": "Call Alice on +49 30 1234567 or mail alice@example.com; IBAN DE89 3704 0044 0532 "
    "0130 00; card 4111 1111 1111 1111.",
    "meta": {"contact": "alice@example.com"},
}
SECRET_PARTS = ["+49 30 1234567", "1234567", "alice@example.com", "DE89", "3704 0044",
                "4111 1111", "4111111111111111"]  # fmt: skip


def _contains_secret(blob: str) -> list[str]:
    return [s for s in SECRET_PARTS if s in blob]


@pytest.mark.parametrize("kind", ["memory", "chroma"])
async def test_redacting_store_keeps_secrets_out_of_values_embedder_and_chroma(kind: str) -> None:
    embedder = RecordingEmbeddings()
    if kind == "memory":
        inner: BaseStore = InMemoryStore(index=hash_index(embedder))  # type: ignore[arg-type]  # IndexConfig is a TypedDict
    else:
        from langgraph_episodic import ChromaStore

        inner = ChromaStore.ephemeral(index=hash_index(embedder))
    store = RedactingStore(inner)
    store.put(("users", "alice"), "contact", SECRET_VALUE)
    await store.aput(("users", "alice"), "contact2", SECRET_VALUE)
    found = store.search(("users", "alice"), query="mail alice@example.com about DE89 3704 0044 0532 0130 00")
    found += await store.asearch(("users", "alice"), query="call +49 30 1234567")

    stored = [store.get(("users", "alice"), k) for k in ("contact", "contact2")]
    assert all(item is not None for item in stored)
    assert _contains_secret(repr([i.value for i in stored if i])) == []
    assert _contains_secret(repr([i.value for i in found])) == []
    assert stored[0] is not None and "[EMAIL]" in stored[0].value["text"]
    assert embedder.seen, "precondition: the embedder was used"
    assert _contains_secret(repr(embedder.seen)) == []
    if kind == "chroma":
        assert _contains_secret(repr(raw_records(inner))) == []


def test_redacting_store_delegates_everything_else() -> None:
    from langgraph_episodic import ChromaStore

    inner = ChromaStore.ephemeral(index=hash_index(), ttl={"default_ttl": 60.0})
    store = RedactingStore(inner, Redactor().with_rule("secret", r"s3cr3t"))
    assert store.supports_ttl is True
    assert store.ttl_config == {"default_ttl": 60.0}
    assert store.index_config is inner.index_config  # attributes come from the inner store
    store.put(("a",), "k", {"text": "the s3cr3t word"}, ttl=5.0)
    assert inner.get(("a",), "k").value == {"text": "the [SECRET] word"}  # type: ignore[union-attr]
    assert store.list_namespaces() == [("a",)]
    store.delete(("a",), "k")
    assert inner.get(("a",), "k") is None
    assert store.sweep_ttl() == 0
    assert "secret" in repr(store)
    with pytest.raises(TypeError, match="BaseStore"):
        RedactingStore({"not": "a store"})  # type: ignore[arg-type]  # the wrong type is the test
    plain = RedactingStore(InMemoryStore())
    assert plain.supports_ttl is False
    with pytest.raises(NotImplementedError):
        plain.put(("a",), "k", {"x": 1}, ttl=5.0)


@pytest.mark.parametrize(
    "module", [redaction_module, redacting_store_module, text_view_module, forget_module]
)
def test_docstring_examples_run(module: Any) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
