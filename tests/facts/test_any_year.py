"""Facts' times in any year 1-9999: one padded format that sorts as it compares, records written
before (unpadded years) still read, every bad ``as_of`` refused with a ValueError that names
what is accepted, and numbers that are no dates (a model year, a count, "32. Mai", "-5 Jahren")
never taken for a fact's start."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from starlette.testclient import TestClient

from langgraph_episodic.facts import (
    FactRecord,
    current_facts,
    describe_history,
    fact_history,
    resolve_date,
    wording,
)
from langgraph_episodic.facts.recall import parse_as_of
from langgraph_episodic.facts.records import from_iso, to_iso
from langgraph_episodic.mcp_server import MemoryToolset
from langgraph_episodic.tools import create_memory_tools
from tests.tools.conftest import Call, bullets
from tests.ui.conftest import make_inspector

from .conftest import Clock, user

NS = ("memories", "alice")
SAID = datetime(2026, 6, 15, 12, tzinfo=timezone.utc)
ACCEPTED = "between 0001-01-01 and 9999-12-31"
LEGACY = {  # a fact as it was stored with strftime("%Y"): the year 800 unpadded
    "text": "Ich sammle Briefmarken seit dem Jahr 800.", "kind": "fact", "lineage": "stamps",
    "valid_from": "800-01-01T00:00:00.000000Z", "recorded_at": "2026-03-10T12:00:00.000000Z",
    "current": True, "precision": "year", "date_expression": "seit dem Jahr 800",
}


def tools(store: BaseStore, clock: Clock, **kwargs: Any) -> Any:
    return create_memory_tools(store=store, clock=clock, min_score=None, **kwargs)


def legacy_store() -> InMemoryStore:
    store = InMemoryStore()
    store.put(NS, "stamps", dict(LEGACY))
    return store


# -- the one format ---------------------------------------------------------------------------

def test_years_below_1000_are_written_with_four_digits() -> None:
    assert to_iso(datetime(800, 1, 1, tzinfo=timezone.utc)) == "0800-01-01T00:00:00.000000Z"
    assert to_iso(datetime(1, 1, 1)) == "0001-01-01T00:00:00.000000Z"
    assert to_iso(datetime(800, 1, 1)) < to_iso(datetime(2026, 1, 1))


@pytest.mark.parametrize("text", ["800-01-01T00:00:00.000000Z", "0800-01-01T00:00:00.000000Z",
                                  "0800-01-01", "800-01-01T01:00:00+01:00"])
def test_earlier_and_other_iso_forms_are_read(text: str) -> None:
    assert from_iso(text) == datetime(800, 1, 1, tzinfo=timezone.utc)


def test_a_record_is_read_in_the_padded_format() -> None:
    rec = FactRecord.from_value(LEGACY)
    assert rec is not None and rec.valid_from == "0800-01-01T00:00:00.000000Z"
    assert rec.holds_at(to_iso(datetime(1000, 1, 1))) and not rec.holds_at(to_iso(datetime(799, 1, 1)))


def test_a_record_with_an_unreadable_time_is_no_fact_with_a_period() -> None:
    assert FactRecord.from_value({**LEGACY, "valid_from": "long ago"}) is None
    assert FactRecord.from_value({**LEGACY, "valid_to": 12}) is None


_OFFSETS = st.builds(lambda m: timezone(timedelta(minutes=m)), st.integers(-1439, 1439))


@settings(max_examples=300, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 1), timezones=_OFFSETS),
       st.datetimes(min_value=datetime(1, 1, 1), timezones=_OFFSETS))
def test_the_format_round_trips_and_sorts_for_every_year(a: datetime, b: datetime) -> None:
    try:
        a.astimezone(timezone.utc), b.astimezone(timezone.utc)
    except OverflowError:
        assume(False)
    assert from_iso(to_iso(a)) == a and from_iso(to_iso(a)).tzinfo == timezone.utc
    assert (to_iso(a) < to_iso(b)) == (a < b)
    assert from_iso(to_iso(a).lstrip("0")) == a  # the unpadded form records were written in


@settings(max_examples=100, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 1), timezones=_OFFSETS))
def test_a_time_outside_the_years_in_utc_is_a_value_error(moment: datetime) -> None:
    try:
        moment.astimezone(timezone.utc)
    except OverflowError:
        with pytest.raises(ValueError, match="0001-9999"):
            to_iso(moment)
        return
    assert len(to_iso(moment)) == 27


# -- a stored year below 1000 never breaks a reader ------------------------------------------

async def test_a_fact_since_the_year_800_is_saved_padded_and_recalled(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, recall = tools(store, clock)
    await call(save, {"information": "I have collected stamps since 0800."}, user("alice"))
    [item] = store.search(NS)
    assert item.value["valid_from"] == "0800-01-01T00:00:00.000000Z"
    found = bullets(await call(recall, {"frage": "stamps"}, user("alice")))
    assert found == ["I have collected stamps since 0800. (seit 800)"]
    assert [rec.text for _, rec in current_facts(store, NS, "stamps")] == [item.value["text"]]
    assert describe_history(fact_history(store, NS), wording("en")) == [
        "I have collected stamps since 0800. (since 800)"]


async def test_a_fact_stored_unpadded_is_read_by_every_reader() -> None:
    store = legacy_store()
    _, recall = tools(store, Clock(SAID))
    assert bullets(recall.invoke({"frage": "Briefmarken"}, user("alice"))) == [
        "Ich sammle Briefmarken seit dem Jahr 800. (seit 800)"]
    then = recall.invoke({"frage": "Briefmarken"},
                         {"configurable": {"user_id": "alice", "as_of": "1000-01-01"}})
    assert bullets(then) == ["Ich sammle Briefmarken seit dem Jahr 800. (seit 800)"]
    assert [k for k, _ in current_facts(store, NS, as_of=datetime(1000, 1, 1))] == ["stamps"]
    assert current_facts(store, NS, as_of=datetime(700, 1, 1)) == []
    mcp = MemoryToolset.create(store, clock=Clock(SAID), min_score=None)
    history = await mcp.call("memory_verlauf", {}, user="alice")
    assert "Ich sammle Briefmarken seit dem Jahr 800. (seit 800)" in history
    assert "(seit 800)" in await mcp.call("memory_abrufen", {"frage": "Briefmarken"}, user="alice")


def test_an_unpadded_fact_is_closed_in_the_padded_format() -> None:
    store = legacy_store()
    save, _ = tools(store, Clock(SAID))
    save.invoke({"information": "Ich sammle keine Briefmarken mehr."}, user("alice"))
    closed = store.get(NS, "stamps")
    assert closed is not None and closed.value["current"] is False
    assert closed.value["valid_from"] == "0800-01-01T00:00:00.000000Z"
    assert closed.value["valid_to"] == to_iso(SAID)


def test_a_fact_with_an_unreadable_time_is_recalled_as_its_text() -> None:
    store = InMemoryStore()
    store.put(NS, "odd", {**LEGACY, "valid_from": "im Mittelalter"})
    _, recall = tools(store, Clock(SAID))
    assert bullets(recall.invoke({"frage": "Briefmarken"}, user("alice"))) == [LEGACY["text"]]
    assert fact_history(store, NS) == []


# -- as_of ------------------------------------------------------------------------------------

BAD_AS_OF = [
    "9999-12-31T23:59:59-05:00",
    "0001-01-01T00:00:00+05:00",
    datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))),
    datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))),
    "0000-01-01",
    "10000-01-01",
    "2026-13-01",
    "garbage",
    "",
    5,
]


@pytest.mark.parametrize("value", BAD_AS_OF)
def test_a_bad_as_of_is_a_value_error_that_names_what_is_accepted(value: Any) -> None:
    with pytest.raises(ValueError, match=ACCEPTED):
        parse_as_of(value)
    _, recall = tools(legacy_store(), Clock(SAID))
    with pytest.raises(ValueError, match=ACCEPTED):
        recall.invoke({"frage": "Briefmarken"},
                      {"configurable": {"user_id": "alice", "as_of": value}})


@pytest.mark.parametrize("value", [datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))),
                                   datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5)))])
def test_current_facts_refuses_a_moment_outside_the_years(value: datetime) -> None:
    with pytest.raises(ValueError, match="0001-9999"):
        current_facts(legacy_store(), NS, as_of=value)


@pytest.mark.parametrize(("value", "expected"), [
    ("0001-01-01", datetime(1, 1, 1, tzinfo=timezone.utc)),
    (datetime(1, 1, 1), datetime(1, 1, 1, tzinfo=timezone.utc)),
    ("9999-12-31T23:59:59Z", datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)),
    (date(2026, 3, 1), datetime(2026, 3, 1, tzinfo=timezone.utc)),
    ("2026-03-01T13:00:00+01:00", datetime(2026, 3, 1, 12, tzinfo=timezone.utc)),
])
def test_as_of_in_the_years_is_read_as_utc(value: Any, expected: datetime) -> None:
    assert parse_as_of(value) == expected
    _, recall = tools(legacy_store(), Clock(SAID))
    recall.invoke({"frage": "Briefmarken"}, {"configurable": {"user_id": "alice", "as_of": value}})


def test_the_inspector_refuses_a_bad_as_of_and_shows_an_unpadded_fact(tmp_path: Path) -> None:
    app, secrets, store = make_inspector(tmp_path / "store")
    store.put(NS, "stamps", dict(LEGACY), index=False)
    try:
        with TestClient(app, base_url="http://127.0.0.1") as client:
            at = secrets.path  # the inspector's pages live under its random path
            assert client.get(f"{at}/?token={secrets.token}").status_code == 200
            bad = client.get(f"{at}/facts", params={"user": "alice",
                                                    "as_of": "9999-12-31T23:59:59-05:00"})
            assert bad.status_code == 400 and ACCEPTED in bad.text
            page = client.get(f"{at}/facts", params={"user": "alice", "as_of": "0900-01-01"})
            assert page.status_code == 200 and "0800-01-01" in page.text
    finally:
        store.close()


# -- numbers that are no dates, dates the parser is not sure of -------------------------------

@pytest.mark.parametrize("text", [
    "I drive a 2015 Toyota Prius.", "I have 2019 stamps.", "My 2018 Honda is red.",
    "Ich fahre einen 2015 Toyota Prius.", "Ich habe 2019 Briefmarken.",
    "Mein Auto ist Baujahr 2015.",
])
def test_a_model_year_or_a_count_is_no_date(text: str) -> None:
    assert resolve_date(text, SAID) == resolve_date("Ich wohne in Berlin.", SAID)


@pytest.mark.parametrize(("text", "expression"), [
    ("Ich wohne seit dem 32. Mai in Berlin.", "32. Mai"),
    ("I have lived in Leeds since May 32nd.", "May 32nd"),
    ("Seit -5 Jahren wohne ich in Berlin.", "Seit -5 Jahren"),
    ("I have lived in Leeds for -5 years.", "for -5 years"),
    ("I moved here -5 years ago.", "-5 years ago"),
    ("Ich sammle seit 800 Briefmarken.", "seit 800"),
    ("Ich wohne seit dem 31.02.2024 in Köln.", "31.02.2024"),
])
def test_a_date_the_parser_is_not_sure_of_keeps_the_message_time_with_a_note(
    text: str, expression: str
) -> None:
    resolved = resolve_date(text, SAID)
    assert (resolved.when, resolved.expression) == (SAID, expression)
    assert resolved.note is not None and expression in resolved.note


@pytest.mark.parametrize(("text", "expected", "expression"), [
    ("I have collected stamps since 0800.", date(800, 1, 1), "since 0800"),
    ("Ich sammle seit dem Jahr 800 Briefmarken.", date(800, 1, 1), "seit dem Jahr 800"),
    ("The house has stood here since the year 1850.", date(1850, 1, 1), "since the year 1850"),
    ("Ich habe 2019 geheiratet.", date(2019, 1, 1), "2019"),
    ("Ich bin 2019 nach Berlin gezogen.", date(2019, 1, 1), "2019"),
    ("Ich sammle seit 2019 Briefmarken.", date(2019, 1, 1), "2019"),
    ("I moved to Leeds in 2019 and stayed.", date(2019, 1, 1), "2019"),
    ("I drive a 2015 Toyota since 2019.", date(2019, 1, 1), "2019"),
    ("Seit dem 3. Mai wohne ich in Berlin.", date(2026, 5, 3), "3. Mai"),
    ("I have lived in Leeds since May 3rd.", date(2026, 5, 3), "May 3rd"),
])
def test_a_year_or_day_in_the_text_is_the_start(text: str, expected: date, expression: str) -> None:
    resolved = resolve_date(text, SAID)
    assert (resolved.when.date(), resolved.expression, resolved.note) == (expected, expression, None)


def test_a_car_with_its_model_year_is_not_dated_by_it(clock: Clock) -> None:
    store = InMemoryStore()
    save, recall = tools(store, clock)
    save.invoke({"information": "I drive a 2015 Toyota Prius."}, user("alice"))
    [(_, rec)] = fact_history(store, NS)
    assert (rec.valid_from, rec.date_expression, rec.date_note) == (to_iso(clock()), None, None)
    assert bullets(recall.invoke({"frage": "car"}, user("alice"))) == ["I drive a 2015 Toyota Prius."]
