"""The tuning set of the rule path: update, ending and new statements written for the rules
(German and English), separate from the benchmark's timelines. Each case names the current
facts, the new statement, and what the rules must do: switches ("von X auf Y umgestiegen",
"switched from X to Y", "statt", "instead of") replace the fact naming the old object; a
changed amount ("nur noch", "only ... now") replaces the same statement; a fact is never
closed by a statement about another topic ("Ich bin Veganerin" does not end "Ich bin mit Anna
zusammen", "I work night shifts now" does not replace the employer)."""

from __future__ import annotations

import pytest

from langgraph_episodic.facts import Candidate, asks_about_past, decide_by_rules, slot_of
from langgraph_episodic.facts.rules import topic_of_question


def cands(*texts: str) -> list[Candidate]:
    return [Candidate(f"k{i}", t, slot_of(t)) for i, t in enumerate(texts)]


UPDATES = [
    # (current facts, new statement, index of the fact it replaces)
    (["Ich wohne in Köln.", "Ich benutze Firefox als Browser."],
     "Ich bin von Firefox auf Chrome umgestiegen.", 1),
    (["Ich nutze Windows.", "Ich habe einen Hund."], "Ich habe von Windows zu Linux gewechselt.", 0),
    (["Ich spiele Geige."], "Ich spiele jetzt Cello statt Geige.", 0),
    (["Ich esse mittags in der Kantine.", "Ich lese gern Krimis."],
     "Ich lese jetzt lieber Fantasy anstatt Krimis.", 1),
    (["Ich trinke abends zwei Gläser Wasser."], "Ich trinke abends nur noch ein Glas Wasser.", 0),
    (["Ich lese abends drei Seiten."], "Ich lese abends nur noch eine Seite.", 0),
    (["Meine Telefonnummer ist 0171 2345."], "Meine Telefonnummer ist jetzt 0160 9876.", 0),
    (["Meine Kundennummer lautet 12345."], "Meine Kundennummer lautet jetzt 67890.", 0),
    (["Ich bin mit Lisa zusammen."], "Ich bin mit Lisa verlobt.", 0),
    (["Ich arbeite bei der Telekom.", "Ich arbeite in der Frühschicht."],
     "Ich arbeite jetzt in der Spätschicht.", 1),
    (["Ich wohne in Köln."], "Ich bin von Köln nach Bonn gezogen.", 0),
    (["I live in Leeds.", "I use Firefox."], "I switched from Firefox to Safari.", 1),
    (["I play the guitar."], "I play the drums instead of the guitar now.", 0),
    (["I walk five kilometres a day."], "I only walk two kilometres a day now.", 0),
    (["My phone number is 555 1234."], "My phone number is now 555 9876.", 0),
    (["I am studying law."], "I switched my degree to economics.", 0),
    (["I drink coffee every morning."], "I drink tea instead of coffee every morning.", 0),
    (["I work at Google.", "I work night shifts."], "I work early shifts now.", 1),
    (["I live in Leeds.", "I use vim."], "I moved from vim to Emacs.", 1),
    # A fact about somebody else replaces that person's fact, not the user's.
    (["Ich wohne in Leipzig.", "Meine Schwester wohnt in Wien."],
     "Meine Schwester ist nach Graz gezogen.", 1),
    (["I work at SAP.", "My brother works at Google."], "My brother works at Apple now.", 1),
    (["Ich wohne in Leipzig."], "Mein Wohnort ist jetzt Bonn.", 0),
]

ENDINGS = [
    (["Ich wohne in Köln.", "Ich gehe gern schwimmen."], "Ich gehe nicht mehr schwimmen.", 1),
    (["Ich rauche.", "Ich spiele Handball."], "Ich spiele kein Handball mehr.", 1),
    (["I live in Leeds.", "I go climbing on Fridays."], "I no longer go climbing.", 1),
    (["I own a bike.", "I work at Google."], "I sold my bike.", 0),
]

NEW = [
    (["Ich arbeite bei Bosch.", "Ich bin mit Anna zusammen."], "Ich bin Veganerin."),
    (["Ich arbeite bei der Telekom."], "Ich arbeite jetzt in der Spätschicht."),
    (["Ich habe eine Katze."], "Ich habe auch einen Hamster."),
    (["Ich spreche Englisch."], "Ich spreche jetzt auch Italienisch."),
    (["Ich lese gern Krimis."], "Ich spreche Französisch."),
    (["I work at Google."], "I work night shifts now."),
    (["I am vegetarian.", "I am married to Sam."], "I am a nurse."),
    (["I have a dog called Max."], "I also have a cat."),
    (["I use a Samsung phone."], "I am learning Spanish."),
    (["I speak French."], "I now speak some Italian too."),
    # Somebody else's home, job or partner is not the user's.
    (["Ich wohne seit drei Jahren in Leipzig."], "Meine Schwester Anna lebt in Wien."),
    (["Ich arbeite bei Bosch."], "Meine Frau arbeitet bei SAP."),
    (["Ich wohne in Köln."], "Anna lebt in Wien."),
    (["I live in Leeds."], "My sister lives in Vienna."),
    (["I work at Initech."], "My husband works at Globex."),
]


@pytest.mark.parametrize(("current", "text", "target"), UPDATES)
def test_updates(current: list[str], text: str, target: int) -> None:
    decision = decide_by_rules(text, cands(*current))
    assert (decision.action, decision.target) == ("update", f"k{target}"), decision.reason


@pytest.mark.parametrize(("current", "text", "target"), ENDINGS)
def test_endings(current: list[str], text: str, target: int) -> None:
    decision = decide_by_rules(text, cands(*current))
    assert (decision.action, decision.target) == ("end", f"k{target}"), decision.reason


@pytest.mark.parametrize(("current", "text"), NEW)
def test_new_statements_close_nothing(current: list[str], text: str) -> None:
    decision = decide_by_rules(text, cands(*current))
    assert (decision.action, decision.target) == ("new", None), decision.reason


PAST_QUESTIONS = [
    # (an earlier statement, a question about the past that must find its topic)
    ("Ich wohne in Freiburg.", "Wo habe ich vorher gewohnt?"),
    ("Ich lebe in Graz.", "Wo hatte ich davor gelebt?"),
    ("Ich arbeite bei der Post.", "Bei wem habe ich früher gearbeitet?"),
    ("Ich arbeite als Koch im Adler.", "Wo war ich vorher angestellt?"),
    ("Ich bin mit Tim zusammen.", "Mit wem war ich damals zusammen?"),
    ("Ich fahre einen alten Passat.", "Welchen Wagen hatte ich vorher?"),
    ("Ich fahre einen Opel Corsa.", "Bis wann hatte ich das Auto?"),
    ("Ich studiere Jura in Köln.", "Was habe ich vorher studiert?"),
    ("Meine Handynummer ist 0151 2233.", "Welche Handynummer hatte ich früher?"),
    ("Mein Lieblingsfilm ist Alien.", "Was war vorher mein Lieblingsfilm?"),
    ("Ich bin Vegetarier.", "Seit wann bin ich kein Vegetarier mehr?"),
    ("I live in Bristol.", "Where did I live before?"),
    ("I work for Acme Corp.", "Which company did I work for previously?"),
    ("I am married to Sam.", "Who was I married to before?"),
    ("I drive a Ford Fiesta.", "What car did I use to drive?"),
    ("My favourite band is Blur.", "What was my favourite band before?"),
    ("I am studying biology.", "What did I study before?"),
]


@pytest.mark.parametrize(("statement", "question"), PAST_QUESTIONS)
def test_a_question_about_the_past_names_the_statements_topic(
    statement: str, question: str
) -> None:
    assert asks_about_past(question)
    assert topic_of_question(question) == slot_of(statement) is not None


@pytest.mark.parametrize("question", ["Wo bin ich es gewohnt, einzukaufen?",
                                      "Was habe ich früher gern gelesen?",
                                      "What did I use to read?"])
def test_a_question_without_a_single_valued_topic_names_none(question: str) -> None:
    assert topic_of_question(question) is None


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("Tarek works as a backend engineer at N26.",
         "Tarek left N26 and now works as a staff engineer at Zalando."),
        ("Maya lives in a flat in Leeds.", "Maya has moved to Manchester."),
        ("Lena wohnt in Camden.", "Lena ist letzten Monat mit Marco nach Hackney gezogen und wohnt jetzt dort."),
    ],
)
def test_a_fact_saved_in_the_third_person_keeps_its_subject_however_the_sentence_goes_on(
    before: str, after: str
) -> None:
    """The save tool asks for facts in the third person: "Tarek left N26 and now works at
    Zalando" is about the same person and attribute as "Tarek works at N26", so it replaces it."""
    assert slot_of(before) == slot_of(after) is not None
    assert decide_by_rules(after, [Candidate("k", before, slot_of(before))]).action == "update"


@pytest.mark.parametrize(
    ("own", "theirs"),
    [("Tarek wohnt in Neukölln.", "Tareks Mutter lebt in Hamburg."),
     ("Tarek lives in Neukölln.", "Tarek's mother lives in Hamburg.")],
)
def test_a_named_persons_relative_is_someone_else(own: str, theirs: str) -> None:
    assert slot_of(theirs) is not None and slot_of(theirs) != slot_of(own)
    assert decide_by_rules(theirs, [Candidate("k", own, slot_of(own))]).action == "new"
