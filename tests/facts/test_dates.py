"""Relative and absolute dates in German and English, resolved against a fixed message time."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from langgraph_episodic.facts import format_date, resolve_date

SAID = datetime(2026, 6, 15, 12, tzinfo=timezone.utc)

CASES = [
    ("Ich wohne seit letzter Woche in Berlin.", date(2026, 6, 8), "letzter Woche"),
    ("Seit gestern habe ich eine Katze.", date(2026, 6, 14), "gestern"),
    ("Letztes Jahr bin ich nach Hamburg gezogen.", date(2025, 6, 15), "Letztes Jahr"),
    ("Ich arbeite seit 2019 bei Siemens.", date(2019, 1, 1), "2019"),
    ("Ich bin seit März 2024 verheiratet.", date(2024, 3, 1), "März 2024"),
    ("Seit dem 12.03.2024 wohne ich in Köln.", date(2024, 3, 12), "12.03.2024"),
    ("Vor drei Monaten habe ich mit Yoga angefangen.", date(2026, 3, 15), "Vor drei Monaten"),
    ("Seit letztem Juni arbeite ich bei SAP.", date(2025, 6, 1), "letztem Juni"),
    ("I have lived in Berlin since last March.", date(2026, 3, 1), "last March"),
    ("I started at Globex two weeks ago.", date(2026, 6, 1), "two weeks ago"),
    ("I quit my job yesterday.", date(2026, 6, 14), "yesterday"),
    ("Since 2019 I drive a Tesla.", date(2019, 1, 1), "2019"),
    ("I moved to Paris in May.", date(2026, 5, 1), "May"),
    ("Since last year I have been vegetarian.", date(2025, 6, 15), "last year"),
    # A duration up to now began that long before the message.
    ("Ich wohne seit drei Jahren in Leipzig.", date(2023, 6, 15), "seit drei Jahren"),
    ("Ich bin seit einem Jahr verheiratet.", date(2025, 6, 15), "seit einem Jahr"),
    ("Ich arbeite seit 2 Monaten bei SAP.", date(2026, 4, 15), "seit 2 Monaten"),
    ("I have lived in Leeds for three years.", date(2023, 6, 15), "for three years"),
    ("I have been vegan for two weeks.", date(2026, 6, 1), "for two weeks"),
]


def test_a_bare_count_after_seit_is_no_day_of_the_month() -> None:
    resolved = resolve_date("Ich trinke seit drei Stunden nur Wasser.", SAID)
    assert resolved.when == SAID and resolved.note is not None


@pytest.mark.parametrize(("text", "expected", "expression"), CASES)
def test_a_date_in_the_text_is_resolved_against_the_message_time(
    text: str, expected: date, expression: str
) -> None:
    resolved = resolve_date(text, SAID)
    assert (resolved.when.date(), resolved.expression, resolved.note) == (expected, expression, None)
    assert resolved.when.tzinfo is not None


@pytest.mark.parametrize("text", ["Ich wohne in Berlin.", "I work at Google now.", "I may move.",
                                  "Der Nutzer möchte bis Juni einen Marathon laufen."])
def test_without_a_start_date_the_fact_begins_when_it_was_said(text: str) -> None:
    resolved = resolve_date(text, SAID)
    assert (resolved.when, resolved.note) == (SAID, None)


def test_the_same_words_resolve_against_another_message_time() -> None:
    later = datetime(2027, 1, 20, 9, tzinfo=timezone.utc)
    assert resolve_date("Seit gestern habe ich eine Katze.", later).when.date() == date(2027, 1, 19)


@pytest.mark.parametrize("text", ["Ich trinke seit Ostern keinen Kaffee.",
                                  "I have been sober since the wedding."])
def test_an_unparsable_date_keeps_the_message_time_and_says_so(text: str) -> None:
    resolved = resolve_date(text, SAID)
    assert resolved.when == SAID
    assert resolved.note is not None and resolved.expression is not None
    assert resolved.expression.split()[-1] in resolved.note


def test_a_date_in_the_future_is_kept() -> None:
    resolved = resolve_date("Ab nächstem Monat arbeite ich bei SAP.", SAID)
    assert resolved.when > SAID


def test_dates_read_in_both_languages() -> None:
    assert format_date(datetime(2026, 3, 1), "month") == "März 2026"
    assert format_date(datetime(2026, 3, 1), "month", locale="en") == "March 2026"
    assert format_date(datetime(2019, 1, 1), "year") == "2019"
