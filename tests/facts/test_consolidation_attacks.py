"""A save closes a fact only when it sets the same attribute of the same subject.

The attack set: after a base of 15 facts per language, saves that are not changes (a topic
word without a new value, the past, a wish, a negation, somebody else) and saves that are (a
new value, an ending, a correction, a switch), each decided against all 15 base facts at once
(:func:`measure`; ``python -m tests.facts.test_consolidation_attacks`` prints what it finds).
Then the reported sequences through the writer and the tools: a correction replaces what it
corrects, an ending ends the version it names (never its successor), periods never overlap
(also over random sequences, by hypothesis), and "ever"/"jemals" asks about the past.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_episodic._effects import run
from langgraph_episodic.facts import (
    Candidate,
    FactRecord,
    FactWriter,
    asks_about_past,
    current_facts,
    decide_by_rules,
    fact_history,
    slot_of,
)
from langgraph_episodic.facts.phrasing import correction_of, speaker_of
from langgraph_episodic.tools import create_memory_tools

from .conftest import Clock, make_store, user

NS = ("memories", "alice")

BASE_EN = [
    "I live in Munich.",                        # 0
    "I work at a logistics company.",           # 1
    "My husband Daniel does most of the cooking.",  # 2
    "I drive a Volkswagen Golf.",               # 3
    "My dog is called Bruno.",                  # 4
    "I am vegetarian.",                         # 5
    "My favourite band is Radiohead.",          # 6
    "I study computer science part-time.",      # 7
    "My phone number is 0171 555 0101.",        # 8
    "I play tennis on Sundays.",                # 9
    "I take my coffee as a flat white.",        # 10
    "I am married to Daniel.",                  # 11
    "My sister lives in Vienna.",               # 12
    "I speak Spanish.",                         # 13
    "I am 34 years old.",                       # 14
]

KEPT_EN = [
    "At work I mostly write TypeScript.",
    "I work from home on Fridays.",
    "My husband does the cooking on weekdays.",
    "Work has been really busy this month.",
    "I live for the weekends.",
    "I love living close to the river.",
    "I lived in London for two years as a student.",
    "I might move to Lisbon one day.",
    "We are thinking about moving to Spain.",
    "My parents live in Hamburg.",
    "I drive to the office twice a week.",
    "My car is in the garage for repairs.",
    "I walk to work instead of driving when it is sunny.",
    "I had a vegan burger for lunch.",
    "I cooked my favourite meal yesterday.",
    "I study every evening after dinner.",
    "I played tennis with my brother yesterday.",
    "Bruno loves long walks.",
    "I also speak a little Italian.",
    "My husband's birthday is in May.",
    "My boss is very supportive.",
    "I started a new project at work.",
    "I am working late tonight.",
    "I worked at a bakery when I was a teenager.",
    "I never drink coffee after 4pm.",
    "My daughter is studying law in Leipzig.",
    "I don't work on Mondays.",
    "I live a quiet life.",
    "I married young.",
    "My husband and I live in a small flat.",
    "I no longer go climbing on Fridays.",
    "I don't live in Berlin.",
]

CHANGES_EN = [
    # (text, index of the base fact it closes)
    ("I moved to Berlin.", 0),
    ("I now work at Siemens.", 1),
    ("I drive a Tesla now.", 3),
    ("I sold my car.", 3),
    ("I am vegan now.", 5),
    ("My favourite band is Blur now.", 6),
    ("I no longer study computer science.", 7),
    ("My phone number is now 0160 222 3333.", 8),
    ("I no longer play tennis.", 9),
    ("I quit my job.", 1),
    ("My sister moved to Graz.", 12),
    ("I am 35 years old now.", 14),
    ("Correction: I live in Augsburg, not Munich.", 0),
    ("Actually, my dog is called Rocky, not Bruno.", 4),
    ("I switched from tennis to squash.", 9),
    ("I don't order flat whites anymore.", 10),
]

BASE_DE = [
    "Ich wohne in München.",                    # 0
    "Ich arbeite bei einer Spedition.",         # 1
    "Mein Mann Daniel kocht meistens.",         # 2
    "Ich fahre einen VW Golf.",                 # 3
    "Mein Hund heißt Bruno.",                   # 4
    "Ich bin Vegetarierin.",                    # 5
    "Meine Lieblingsband ist Radiohead.",       # 6
    "Ich studiere Informatik in Teilzeit.",     # 7
    "Meine Handynummer ist 0171 5550101.",      # 8
    "Ich spiele sonntags Tennis.",              # 9
    "Ich trinke meinen Kaffee als Flat White.",  # 10
    "Ich bin mit Daniel verheiratet.",          # 11
    "Meine Schwester wohnt in Wien.",           # 12
    "Ich spreche Spanisch.",                    # 13
    "Ich bin 34 Jahre alt.",                    # 14
]

KEPT_DE = [
    "Bei der Arbeit schreibe ich hauptsächlich TypeScript.",
    "Freitags arbeite ich von zu Hause.",
    "Ich arbeite gern mit Menschen.",
    "Ich arbeite heute lange.",
    "Mein Mann kocht unter der Woche.",
    "Ich wohne gern in der Nähe vom Fluss.",
    "Früher habe ich zwei Jahre in London gewohnt.",
    "Ich würde gern irgendwann nach Lissabon ziehen.",
    "Wir überlegen, nach Spanien zu ziehen.",
    "Meine Eltern wohnen in Hamburg.",
    "Ich fahre zweimal pro Woche mit dem Auto ins Büro.",
    "Mein Auto ist in der Werkstatt.",
    "Bei Sonnenschein gehe ich statt mit dem Auto zu Fuß zur Arbeit.",
    "Ich hatte mittags einen veganen Burger.",
    "Ich habe gestern mein Lieblingsessen gekocht.",
    "Ich lerne jeden Abend nach dem Essen.",
    "Ich habe gestern mit meinem Bruder Tennis gespielt.",
    "Bruno liebt lange Spaziergänge.",
    "Ich spreche auch ein bisschen Italienisch.",
    "Mein Mann hat im Mai Geburtstag.",
    "Meine Chefin ist sehr nett.",
    "Ich habe ein neues Projekt auf der Arbeit angefangen.",
    "Als Teenager habe ich in einer Bäckerei gearbeitet.",
    "Nach 16 Uhr trinke ich nie Kaffee.",
    "Meine Tochter studiert Jura in Leipzig.",
    "Montags arbeite ich nicht.",
    "Ich lebe ein ruhiges Leben.",
    "Mein Mann und ich wohnen in einer kleinen Wohnung.",
    "Ich arbeite seit Jahren viel zu viel.",
    "Unser Auto braucht neue Reifen.",
    "Ich gehe freitags nicht mehr klettern.",
    "Ich wohne nicht in Berlin.",
]

CHANGES_DE = [
    ("Ich bin nach Berlin gezogen.", 0),
    ("Ich arbeite jetzt bei Siemens.", 1),
    ("Ich fahre jetzt einen Tesla.", 3),
    ("Ich habe mein Auto verkauft.", 3),
    ("Ich bin jetzt Veganerin.", 5),
    ("Meine Lieblingsband ist jetzt Blur.", 6),
    ("Ich studiere nicht mehr Informatik.", 7),
    ("Meine Handynummer ist jetzt 0160 2223333.", 8),
    ("Ich spiele kein Tennis mehr.", 9),
    ("Ich habe gekündigt.", 1),
    ("Meine Schwester ist nach Graz gezogen.", 12),
    ("Ich bin jetzt 35 Jahre alt.", 14),
    ("Korrektur: Ich wohne in Augsburg, nicht in München.", 0),
    ("Eigentlich heißt mein Hund Rocky, nicht Bruno.", 4),
    ("Ich bin von Tennis auf Squash umgestiegen.", 9),
    ("Ich bestelle keinen Flat White mehr.", 10),
]

SETS = [(BASE_EN, KEPT_EN, CHANGES_EN), (BASE_DE, KEPT_DE, CHANGES_DE)]


def measure(
    decide: Callable[[str, Sequence[Any]], Any], candidate: Callable[[str, str], Any]
) -> tuple[list[str], list[str]]:
    """``(wrongly closed, missed)``: the saves that closed a fact they did not change (with the
    fact), and the changes that did not close theirs. ``candidate(key, text)`` builds one
    candidate, ``decide(text, candidates)`` decides."""
    wrong: list[str] = []
    missed: list[str] = []
    for base, kept, changes in SETS:
        shown = [candidate(f"k{i}", text) for i, text in enumerate(base)]
        for text in kept:
            decision = decide(text, shown)
            if decision.action in ("update", "end"):
                wrong.append(f"{text!r} closed {base[int(decision.target[1:])]!r}")
        for text, target in changes:
            decision = decide(text, shown)
            closed = decision.target if decision.action in ("update", "end") else None
            if closed is None:
                missed.append(text)
            elif closed != f"k{target}":
                wrong.append(f"{text!r} closed {base[int(closed[1:])]!r}")
                missed.append(text)
    return wrong, missed


def _candidate(key: str, text: str) -> Candidate:
    return Candidate(key, text, slot_of(text))


def test_the_attack_set_closes_nothing_it_does_not_change_and_misses_no_change() -> None:
    wrong, missed = measure(decide_by_rules, _candidate)
    assert wrong == []
    assert missed == []


def _writer(clock: Clock) -> FactWriter:
    return FactWriter(clock=clock)


def _history(store: Any) -> dict[str, tuple[str, FactRecord]]:
    """Every version by its text: ``text -> (key, record)``."""
    return {rec.text: (key, rec) for key, rec in fact_history(store, NS)}


def _save_all(store: Any, writer: FactWriter, clock: Clock, texts: Sequence[str]) -> list[Any]:
    """Save ``texts`` a week apart from 1 March 2026."""
    outcomes = []
    for week, text in enumerate(texts):
        clock.now = datetime(2026, 3, 1, 12, tzinfo=timezone.utc) + timedelta(weeks=week)
        outcomes.append(run(writer.save(store, NS, text)))
    return outcomes


@pytest.mark.parametrize("base", [0, 1], ids=["en", "de"])
def test_a_lived_in_conversation_closes_only_what_changed(base: int, clock: Clock) -> None:
    """Through the writer (its own candidate reads): the base facts, every save that changes
    nothing, then one change per fact, each closing the fact it changes and no other."""
    facts, kept, changes = SETS[base]
    store, writer = make_store("memory"), _writer(clock)
    _save_all(store, writer, clock, facts)
    for text in kept:
        outcome = run(writer.save(store, NS, text))
        assert outcome.replaced is None, f"{text!r} closed {outcome.replaced.text!r}"
    done: set[int] = set()
    for text, target in changes:
        if target in done:
            continue  # the first change of a fact closed it; the next would close its successor
        done.add(target)
        outcome = run(writer.save(store, NS, text))
        assert outcome.replaced is not None, f"{text!r} closed nothing"
        assert outcome.replaced.text == facts[target], text


def test_correction_is_no_speaker() -> None:
    assert speaker_of("Correction: I moved to Hamburg, not Berlin.") is None
    assert speaker_of("Korrektur: Ich wohne in Augsburg.") is None
    assert speaker_of("Jon: I moved to Seattle.") == "jon"
    assert correction_of("Ich wohne in Augsburg, nicht in München.") == (
        "Ich wohne in Augsburg.", "in München", False)


CORRECTED = [
    ("I live in Munich.", "I moved to Berlin.", "Correction: I moved to Hamburg, not Berlin.",
     "I no longer live in Hamburg."),
    ("Ich wohne in München.", "Ich bin nach Berlin gezogen.",
     "Korrektur: Ich bin nach Hamburg gezogen, nicht nach Berlin.",
     "Ich wohne nicht mehr in Hamburg."),
    ("I live in Munich.", "I moved to Berlin.", "Actually, I moved to Hamburg.",
     "I no longer live in Hamburg."),
    ("Ich wohne in München.", "Ich bin nach Berlin gezogen.",
     "Ich bin nicht nach Berlin, sondern nach Hamburg gezogen.",
     "Ich wohne nicht mehr in Hamburg."),
]


@pytest.mark.parametrize(("first", "moved", "correction", "ending"), CORRECTED)
def test_a_correction_replaces_what_it_corrects_and_its_ending_ends_it(
    first: str, moved: str, correction: str, ending: str, clock: Clock
) -> None:
    store, writer = make_store("memory"), _writer(clock)
    _save_all(store, writer, clock, [first, moved, correction])
    versions = _history(store)
    _, berlin = versions[moved]
    hamburg_key, hamburg = versions[correction]
    assert hamburg.current and not berlin.current and berlin.superseded_by == hamburg_key
    # Berlin never held: Hamburg starts when Berlin was said to, Berlin held for no time.
    assert hamburg.valid_from == berlin.valid_from == berlin.valid_to
    assert hamburg.date_note is not None
    assert [rec.text for _, rec in current_facts(store, NS, "Wo wohne ich?")] == [correction]

    clock.set(2026, 7, 1)
    outcome = run(writer.save(store, NS, ending))
    assert outcome.action == "end" and outcome.key == hamburg_key
    versions = _history(store)
    assert versions[correction][1].ended_by == ending
    assert versions[moved][1] == berlin  # the corrected version is left as it was
    assert current_facts(store, NS, "Wo wohne ich?") == []


@pytest.mark.parametrize(("first", "moved", "ending"), [
    ("Ich wohne in München.", "Ich bin nach Berlin gezogen.", "Ich wohne nicht mehr in München."),
    ("I live in Munich.", "I moved to Berlin.", "I no longer live in Munich."),
])
def test_an_ending_that_names_an_earlier_version_ends_nothing(
    first: str, moved: str, ending: str, clock: Clock
) -> None:
    store, writer = make_store("memory"), _writer(clock)
    _save_all(store, writer, clock, [first, moved])
    before = _history(store)
    clock.set(2026, 7, 1)
    outcome = run(writer.save(store, NS, ending))
    assert outcome.action == "new" and outcome.replaced is None
    after = _history(store)
    assert after[moved] == before[moved] and after[moved][1].current
    assert after[first] == before[first]


def test_a_successor_dated_before_the_old_start_never_overlaps_it() -> None:
    """"I live in Berlin." and "We relocated to Hamburg last month." said on the same day: the
    later statement is the better witness. Berlin ends when Hamburg began (November), and its
    start, only the day it was said, moves back to that end, with a note."""
    clock = Clock(datetime(2026, 12, 10, 12, tzinfo=timezone.utc))
    store, writer = make_store("memory"), _writer(clock)
    run(writer.save(store, NS, "I live in Berlin."))
    outcome = run(writer.save(store, NS, "We relocated to Hamburg last month."))
    assert outcome.action == "update" and outcome.record is not None
    versions = _history(store)
    _, berlin = versions["I live in Berlin."]
    _, hamburg = versions["We relocated to Hamburg last month."]
    assert hamburg.valid_from.startswith("2026-11-10")
    assert berlin.valid_from <= berlin.valid_to == hamburg.valid_from  # type: ignore[operator]
    assert berlin.date_note is not None
    held = current_facts(store, NS, "Where do I live?", as_of=datetime(2026, 11, 20, tzinfo=timezone.utc))
    assert [rec.text for _, rec in held] == ["We relocated to Hamburg last month."]


def test_an_earlier_dated_change_shortens_the_versions_before_too(clock: Clock) -> None:
    store, writer = make_store("memory"), _writer(clock)
    _save_all(store, writer, clock, ["Ich wohne in München.", "Ich bin nach Berlin gezogen."])
    clock.set(2026, 7, 15)  # München said on 1 March, Berlin on 8 March
    run(writer.save(store, NS, "Ich bin im Februar nach Hamburg gezogen."))
    _check_periods(store)
    versions = _history(store)
    assert versions["Ich bin im Februar nach Hamburg gezogen."][1].valid_from.startswith("2026-02-01")
    assert versions["Ich wohne in München."][1].valid_to == versions[
        "Ich bin im Februar nach Hamburg gezogen."][1].valid_from


def _check_periods(store: Any) -> None:
    """For every lineage: each version's valid_from <= valid_to, and a closed version ends
    no later than its successor begins."""
    pairs = fact_history(store, NS)
    by_key = dict(pairs)
    for key, rec in pairs:
        if rec.valid_to is not None:
            assert rec.valid_from <= rec.valid_to, (key, rec)
        if rec.superseded_by is not None and rec.superseded_by in by_key:
            successor = by_key[rec.superseded_by]
            assert rec.valid_to is not None and rec.valid_to <= successor.valid_from, (rec, successor)


STATEMENTS = [
    "Ich wohne in München.", "Ich bin nach Berlin gezogen.", "Ich wohne seit 2019 in Köln.",
    "Ich bin letzten Monat nach Hamburg gezogen.", "Ich wohne seit drei Jahren in Bonn.",
    "Ich wohne nicht mehr in Berlin.", "Korrektur: Ich wohne in Augsburg, nicht in München.",
    "I live in Leeds.", "I moved to York last week.", "I have lived in Bath since March.",
    "Actually, I live in Hull.", "I no longer live in York.", "I moved to Derby two years ago.",
    "Ich arbeite bei Siemens.", "Ich arbeite seit letztem Jahr bei Bosch.", "Ich habe gekündigt.",
    "I work at Initech.", "I have worked at Globex since 2021.", "I quit my job.",
    "Ich fahre einen VW Golf.", "Ich fahre seit gestern einen Tesla.", "Ich habe mein Auto verkauft.",
    "I drive a Ford Fiesta.", "I drive a Skoda since last May.", "I sold my car.",
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(STATEMENTS), st.integers(-400, 400)), min_size=2,
                max_size=7))
def test_periods_never_overlap_over_random_saves(saves: list[tuple[str, int]]) -> None:
    """Random residence, work and car statements (German and English, some dated) said on
    random days, the clock going back and forth: every lineage keeps ordered periods."""
    start = datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
    clock = Clock(start)
    store, writer = make_store("memory"), _writer(clock)
    for text, days in saves:
        clock.now = start + timedelta(days=days)
        run(writer.save(store, NS, text))
    _check_periods(store)


PAST = ["Did I ever live in Berlin?", "Habe ich jemals in Berlin gelebt?",
        "At any time, did I stay in Berlin?", "Wohne ich schon mal in Berlin?",
        "Habe ich früher mal in Berlin gewohnt?", "Have I lived in Berlin at any point?"]


@pytest.mark.parametrize("question", PAST)
def test_ever_asks_about_the_past_and_the_tool_returns_past_versions(question: str) -> None:
    clock = Clock(datetime(2026, 3, 1, 12, tzinfo=timezone.utc))
    save, recall = create_memory_tools(store=make_store("memory"), clock=clock, min_score=None)
    save.invoke({"information": "I live in Berlin."}, user("alice"))
    clock.set(2026, 6, 1)
    save.invoke({"information": "I moved to Hamburg."}, user("alice"))
    assert asks_about_past(question)
    answer = recall.invoke({"frage": question}, user("alice"))
    assert "früher: I live in Berlin. (März 2026 bis Juni 2026)" in answer


def replay(events: Sequence[tuple[int, str, str, str]]) -> tuple[list[str], list[str]]:
    """``(wrongly closed, missed)`` of a timeline of ``(day, topic, op, text)`` events (as in
    ``benchmarks/_facts_data.py``), each decided against all facts current at that point."""
    current: dict[str, tuple[str, str]] = {}
    wrong: list[str] = []
    missed: list[str] = []
    for n, (_, topic, op, text) in enumerate(events):
        decision = decide_by_rules(text, [_candidate(k, t) for k, (_, t) in current.items()])
        closes = decision.action in ("update", "end")
        closed = current[decision.target] if closes and decision.target else None
        if closed is not None and closed[0] != topic:
            wrong.append(f"{text!r} closed {closed[1]!r}")
        if op in ("update", "end") and (closed is None or closed[0] != topic):
            missed.append(text)
        if closed is not None:
            del current[str(decision.target)]
        if decision.action in ("update", "new"):
            current[f"k{n}"] = (topic, text)
    return wrong, missed


if __name__ == "__main__":
    from benchmarks._facts_data import SETS as TIMELINES

    wrong, missed = measure(decide_by_rules, _candidate)
    kept = sum(len(k) for _, k, _ in SETS)
    changes = sum(len(c) for _, _, c in SETS)
    print(f"attack set: {kept} saves that change nothing, {changes} changes")
    print(f"wrongly closed: {len(wrong)}", *wrong, sep="\n  ")
    print(f"missed changes: {len(missed)}", *missed, sep="\n  ")
    for lang, (events, *_) in TIMELINES.items():
        wrong, missed = replay(events)
        changes = sum(op in ("update", "end") for _, _, op, _ in events)
        print(f"timeline {lang}: {changes} changes")
        print(f"wrongly closed: {len(wrong)}", *wrong, sep="\n  ")
        print(f"missed changes: {len(missed)}", *missed, sep="\n  ")
