"""The memory tools keep facts current: updates close the old period, endings close it with no
successor, recall shows current facts (and their history when asked), ``as_of`` answers
what was true then. Every test runs on InMemoryStore and ChromaStore, sync and async."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph.store.base import BaseStore

from langgraph_episodic.facts import FactRecord, current_facts, fact_history
from langgraph_episodic.facts.records import memory_key
from langgraph_episodic.tools import create_memory_tools
from tests.tools.conftest import Call, bullets

from .conftest import Clock, user

NS = ("memories", "alice")


def tools(store: BaseStore, clock: Clock, **kwargs: Any) -> Any:
    return create_memory_tools(store=store, clock=clock, min_score=None, **kwargs)


def records(store: BaseStore) -> dict[str, FactRecord]:
    found = {}
    for item in store.search(NS, limit=100):
        rec = FactRecord.from_value(item.value)
        assert rec is not None, item.value
        found[item.key] = rec
    return found


def at(cfg: dict[str, Any], when: str) -> dict[str, Any]:
    return {"configurable": {**cfg["configurable"], "as_of": when}}


async def test_an_update_closes_the_old_fact_and_recall_shows_only_the_new(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, recall = tools(store, clock)
    await call(save, {"information": "Ich wohne in München."}, user("alice"))
    clock.set(2026, 6, 15)
    answer = await call(save, {"information": "Ich bin nach Berlin gezogen."}, user("alice"))
    assert answer == "Gespeichert: Ich bin nach Berlin gezogen. (ersetzt: „Ich wohne in München.“)"
    found = bullets(await call(recall, {"frage": "Wo wohne ich?"}, user("alice")))
    assert found == ["Ich bin nach Berlin gezogen. (seit Juni 2026)"]
    recs = records(store)
    old, new = recs[memory_key("Ich wohne in München.")], recs[memory_key("Ich bin nach Berlin gezogen.")]
    assert (old.current, old.superseded_by, old.valid_to) == (False, memory_key(new.text), new.valid_from)
    assert (new.current, new.supersedes, new.lineage) == (True, memory_key(old.text), old.lineage)
    assert old.valid_from.startswith("2026-03-10") and new.valid_from.startswith("2026-06-15")


async def test_a_superseded_fact_never_comes_back_even_for_its_own_words(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, recall = tools(store, clock, k=5)
    await call(save, {"information": "Ich wohne in München."}, user("alice"))
    await call(save, {"information": "Ich trinke gern Tee am Morgen."}, user("alice"))
    clock.set(2026, 6, 15)
    await call(save, {"information": "Ich bin nach Berlin gezogen."}, user("alice"))
    found = bullets(await call(recall, {"frage": "Ich wohne in München."}, user("alice")))
    assert not any("München" in line for line in found), found
    assert any("Berlin" in line for line in found), found


async def test_as_of_answers_with_what_was_true_then(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, recall = tools(store, clock)
    await call(save, {"information": "Ich wohne in München."}, user("alice"))
    clock.set(2026, 6, 15)
    await call(save, {"information": "Ich bin nach Berlin gezogen."}, user("alice"))
    april = bullets(await call(recall, {"frage": "Wo wohne ich?"},
                               at(user("alice"), "2026-04-01T00:00:00Z")))
    assert april == ["früher: Ich wohne in München. (März 2026 bis Juni 2026)"]
    july = bullets(await call(recall, {"frage": "Wo wohne ich?"},
                              at(user("alice"), "2026-07-01T00:00:00Z")))
    assert [line.split(" (")[0] for line in july] == ["Ich bin nach Berlin gezogen."]
    before = await call(recall, {"frage": "Wo wohne ich?"}, at(user("alice"), "2025-01-01T00:00:00Z"))
    assert before == "Keine relevanten Informationen im Gedächtnis gefunden."
    then = current_facts(store, NS, "Wo wohne ich?", as_of=datetime(2026, 5, 1, tzinfo=timezone.utc))
    assert [rec.text for _, rec in then] == ["Ich wohne in München."]


async def test_a_question_about_the_past_adds_the_earlier_versions(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, recall = tools(store, clock)
    await call(save, {"information": "Ich wohne in München."}, user("alice"))
    clock.set(2026, 6, 15)
    await call(save, {"information": "Ich bin nach Berlin gezogen."}, user("alice"))
    found = bullets(await call(recall, {"frage": "Wo habe ich früher gewohnt?"}, user("alice")))
    assert "Ich bin nach Berlin gezogen. (seit Juni 2026)" in found
    assert "früher: Ich wohne in München. (März 2026 bis Juni 2026)" in found


async def test_an_ending_closes_the_fact_without_successor(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, recall = tools(store, clock)
    await call(save, {"information": "Ich habe einen Hund namens Bello."}, user("alice"))
    clock.set(2026, 6, 15)
    answer = await call(save, {"information": "Ich habe keinen Hund mehr."}, user("alice"))
    assert answer == "Gespeichert: „Ich habe einen Hund namens Bello.“ gilt nicht mehr."
    recs = list(records(store).values())
    assert len(recs) == 1 and not recs[0].current
    assert (recs[0].superseded_by, recs[0].ended_by) == (None, "Ich habe keinen Hund mehr.")
    now = await call(recall, {"frage": "Habe ich einen Hund?"}, user("alice"))
    assert "Bello" not in now
    past = bullets(await call(recall, {"frage": "Hatte ich früher einen Hund?"}, user("alice")))
    assert past == ["früher: Ich habe einen Hund namens Bello. (März 2026 bis Juni 2026, beendet)"]


async def test_english_tools_update_and_end(store: BaseStore, call: Call, clock: Clock) -> None:
    save, recall = tools(store, clock, locale="en")
    cfg = user("alice")
    await call(save, {"information": "I work at Initech."}, cfg)
    clock.set(2026, 9, 1)
    assert "(replaces: 'I work at Initech.')" in await call(
        save, {"information": "I joined Globex last month."}, cfg)
    found = await call(recall, {"query": "Where do I work?"}, cfg)
    assert "I joined Globex last month. (since August 2026)" in found and "Initech" not in found
    history = await call(recall, {"query": "Where did I work before?"}, cfg)
    assert "earlier: I work at Initech. (March 2026 to August 2026)" in history


async def test_a_relative_date_sets_when_the_fact_began_and_when_the_old_one_ended(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, _ = tools(store, clock)
    await call(save, {"information": "Ich wohne in München."}, user("alice"))
    clock.set(2026, 6, 15)
    await call(save, {"information": "Ich wohne seit letzter Woche in Berlin."}, user("alice"))
    recs = records(store)
    new = recs[memory_key("Ich wohne seit letzter Woche in Berlin.")]
    old = recs[memory_key("Ich wohne in München.")]
    assert new.valid_from.startswith("2026-06-08") and new.recorded_at.startswith("2026-06-15")
    assert old.valid_to == new.valid_from


async def test_an_unparsable_date_is_kept_with_a_note(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, _ = tools(store, clock)
    await call(save, {"information": "Ich trinke seit Ostern keinen Kaffee."}, user("alice"))
    (rec,) = records(store).values()
    assert rec.valid_from == rec.recorded_at
    assert rec.date_note is not None and "Ostern" in rec.date_note


async def test_a_future_fact_is_honoured_by_as_of(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, recall = tools(store, clock)
    clock.set(2026, 6, 15)
    await call(save, {"information": "Ich arbeite bei Siemens."}, user("alice"))
    await call(save, {"information": "Ab nächstem Monat arbeite ich bei SAP."}, user("alice"))
    now = bullets(await call(recall, {"frage": "Wo arbeite ich?"},
                             at(user("alice"), "2026-06-20T00:00:00Z")))
    assert [line.split(" (")[0] for line in now] == ["früher: Ich arbeite bei Siemens."]
    later = bullets(await call(recall, {"frage": "Wo arbeite ich?"},
                               at(user("alice"), "2026-08-01T00:00:00Z")))
    assert [line.split(" (")[0] for line in later] == ["Ab nächstem Monat arbeite ich bei SAP."]


async def test_a_memory_saved_before_facts_had_periods_is_superseded_in_place(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    store.put(NS, memory_key("Ich wohne in München."), {"text": "Ich wohne in München.", "kind": "fact"})
    clock.now = datetime.now(timezone.utc) + timedelta(days=1)  # said after the old put
    save, recall = tools(store, clock)
    await call(save, {"information": "Ich bin nach Berlin gezogen."}, user("alice"))
    recs = records(store)
    assert recs[memory_key("Ich wohne in München.")].current is False
    assert "München" not in await call(recall, {"frage": "Wo wohne ich?"}, user("alice"))


async def test_saying_an_old_fact_again_starts_a_new_period_and_keeps_history(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, _ = tools(store, clock)
    for month, text in [(3, "Ich wohne in München."), (6, "Ich bin nach Berlin gezogen."),
                        (9, "Ich wohne in München.")]:
        clock.set(2026, month, 1)
        await call(save, {"information": text}, user("alice"))
    history = fact_history(store, NS)
    assert [(rec.text, rec.current) for _, rec in history] == [
        ("Ich wohne in München.", False), ("Ich bin nach Berlin gezogen.", False),
        ("Ich wohne in München.", True)]
    assert len({rec.lineage for _, rec in history}) == 1
    assert len(store.search(NS, limit=100)) == 3  # nothing was deleted


async def test_consolidation_never_reaches_another_users_facts(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, _ = tools(store, clock)
    await call(save, {"information": "Ich wohne in München."}, user("bob"))
    await call(save, {"information": "Ich bin nach Berlin gezogen."}, user("alice"))
    (bob,) = [FactRecord.from_value(i.value) for i in store.search(("memories", "bob"))]
    assert bob is not None and bob.current


async def test_a_question_about_a_topics_past_finds_versions_sharing_no_word_with_it(
    store: BaseStore, call: Call, clock: Clock
) -> None:
    save, recall = create_memory_tools(store=store, clock=clock)  # the default min_score
    await call(save, {"information": "Ich fahre einen Opel Corsa."}, user("alice"))
    await call(save, {"information": "Ich spiele dienstags Badminton."}, user("alice"))
    clock.set(2026, 6, 15)
    saved = await call(save, {"information": "Mein Auto ist jetzt ein Skoda Octavia."},
                       user("alice"))
    assert "Opel" in saved  # replaced
    found = await call(recall, {"frage": "Welchen Wagen hatte ich vorher?"}, user("alice"))
    assert "früher: Ich fahre einen Opel Corsa. (März 2026 bis Juni 2026)" in bullets(found)
    english = await call(recall, {"frage": "What car did I use to drive?"}, user("alice"))
    assert "Opel Corsa" in english
    other = await call(recall, {"frage": "Welchen Wagen hatte ich vorher?"}, user("bob"))
    assert "Opel" not in other
