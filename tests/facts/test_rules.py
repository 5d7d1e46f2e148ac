"""The rule path decides each of the four cases, in German and English, and names only a
candidate it was given."""

from __future__ import annotations

import pytest

from langgraph_episodic.facts import Candidate, decide_by_rules, slot_of
from langgraph_episodic.facts.rules import value_topic_of_question


def cands(*texts: str) -> list[Candidate]:
    return [Candidate(f"k{i}", t, slot_of(t)) for i, t in enumerate(texts)]


CASES = [
    # (new text, current facts, action, index of the target)
    ("Ich wohne in München.", ["Ich wohne in München."], "same", 0),
    ("Ich lebe in München.", ["Ich wohne in München."], "same", 0),
    ("I live in Munich.", ["I live in Munich"], "same", 0),
    ("Ich bin nach Berlin gezogen.", ["Ich mag Jazz.", "Ich wohne in München."], "update", 1),
    ("Ich arbeite jetzt bei SAP.", ["Ich arbeite bei Siemens.", "Ich habe einen Hund."], "update", 0),
    ("Mein Lieblingsessen ist Sushi.", ["Mein Lieblingsessen ist Pizza."], "update", 0),
    ("I moved to Berlin.", ["I live in Munich.", "I play chess."], "update", 0),
    ("I now work at Globex.", ["I work at Initech.", "I play chess."], "update", 0),
    ("My favourite colour is green.", ["My favourite colour is blue."], "update", 0),
    ("Ich habe keinen Hund mehr.", ["Ich wohne in Köln.", "Ich habe einen Hund namens Bello."], "end", 1),
    ("Ich habe gekündigt.", ["Ich arbeite bei Siemens."], "end", 0),
    ("I quit my job.", ["I play chess.", "I work at Initech."], "end", 1),
    ("I don't have a cat anymore.", ["I have a cat called Tom."], "end", 0),
    ("I no longer play tennis.", ["I play tennis on Sundays."], "end", 0),
    ("Ich habe eine Katze.", ["Ich habe einen Hund namens Bello."], "new", None),
    ("Ich spreche Spanisch.", ["Ich spreche Deutsch.", "Ich wohne in Köln."], "new", None),
    ("I have a cat.", ["I have a dog."], "new", None),
    ("I play the guitar.", ["I live in Munich."], "new", None),
    ("Ich habe keine Katze mehr.", ["Ich wohne in Köln."], "new", None),
    # Liking is many-valued: a second thing one likes replaces nothing.
    ("Ich mag Jazz.", ["Ich mag Tee."], "new", None),
    ("Alice mag Jazz.", ["Alice mag Tee."], "new", None),
    ("Ich trinke gerne Kaffee.", ["Ich trinke gerne Tee."], "new", None),
    ("I like jazz.", ["I like tea."], "new", None),
    ("I love hiking.", ["I love sailing."], "new", None),
    # Said of someone by name, as an agent saves what the user said: having is many-valued,
    # and "Jonas ist ..." is no frame (as "Ich bin ..." is none).
    ("Jonas hat Höhenangst.", ["Jonas hat eine Laktoseintoleranz."], "new", None),
    ("Maya has a cat.", ["Maya has a dog."], "new", None),
    ("Jonas ist Fan des VfL.", ["Jonas ist Elektriker."], "new", None),
    ("Jonas' Lieblingsessen ist Sushi.", ["Jonas' Lieblingsessen ist Pizza."], "update", 0),
    # A change said of someone, with an abbreviation, with words between name and verb.
    ("Maya left St. Luke's and now works as the school nurse at Ridgeway Academy.",
     ["Maya works night shifts as a nurse at St. Luke's hospital.", "Maya plays the cello."],
     "update", 0),
    ("Jonas zieht mit Selin nach Münster.",
     ["Jonas hat einen Kater.", "Jonas wohnt in einer Wohnung in Bochum-Langendreer."], "update", 1),
    ("Jonas hat bei den Stadtwerken gekündigt und ist jetzt selbstständig mit Becker Elektro.",
     ["Jonas arbeitet als Elektriker bei den Stadtwerken."], "update", 0),
    ("Maya sold her Honda Civic and now drives a Toyota Prius.", ["Maya drives a Honda Civic."],
     "update", 0),
    ("Ab nächstem Monat arbeite ich bei SAP.", ["Ich arbeite bei Siemens."], "update", 0),
    # Night shifts at no named employer are no new job.
    ("I work night shifts now.", ["I work at ACME."], "new", None),
    # A role at a named employer is the job; being somewhere is none.
    ("I'm a lecturer at Sussex now.",
     ["I'm a teacher at Hillside Primary."], "update", 0),
    ("Lena left Spotify and is now lead designer at Monzo.",
     ["Lena works as a UX designer at Spotify.", "Lena plays padel."], "update", 0),
    ("Ich bin jetzt Dozentin bei der Uni Bonn.", ["Ich bin Lehrerin bei Siemens."], "update", 0),
    ("I'm a bit tired at Christmas.", ["I work at ACME."], "new", None),
    ("I am a regular at The Crown.", ["I'm a teacher at Hillside Primary."], "new", None),
    ("Ich bin oft bei Anna.", ["Ich arbeite bei Siemens."], "new", None),
    # At an institution too ("an der", "am"); a student there has no job, being there is none.
    ("Ich bin jetzt Ärztin am Klinikum Nord.", ["Ich bin Lehrerin an der Grundschule am Park."],
     "update", 0),
    ("Ich bin Studentin an der TU Berlin.", ["Ich bin Lehrerin an der Grundschule am Park."],
     "new", None),
    ("Ich bin gern am Meer.", ["Ich arbeite bei Siemens."], "new", None),
    ("Ich bin Samstag an der Ostsee.", ["Ich arbeite bei Siemens."], "new", None),
    ("Ich bin Sonntag bei Oma.", ["Ich arbeite bei Siemens."], "new", None),
    # Seeing someone is a partner; a person's own partner is that person's, named or not.
    ("I've been seeing Arjun for a few weeks now.", ["My girlfriend is called Priya."], "update", 0),
    ("Ethan broke up with Chloe and is now seeing Jess, a midwife.",
     ["Ethan's girlfriend is Chloe.", "Ethan drives a Ford Fiesta."], "update", 0),
    ("Ethan's girlfriend is Jess.", ["My girlfriend is Chloe."], "new", None),
    # A new home or a new boss somewhere says where one lives or works.
    ("Unsere neue Wohnung in Dresden ist endlich eingerichtet.", ["Ich wohne in Leipzig."],
     "update", 0),
    ("Mein neuer Chef bei Bosch ist sehr entspannt.", ["Ich arbeite bei Siemens."], "update", 0),
    ("My new manager at Southmead Hospital is really supportive.", ["I work at Initech."],
     "update", 0),
    ("My sister's new flat in Leeds is huge.", ["I live in York."], "new", None),
]


@pytest.mark.parametrize(("text", "current", "action", "target"), CASES)
def test_rule_decisions(text: str, current: list[str], action: str, target: int | None) -> None:
    decision = decide_by_rules(text, cands(*current))
    assert (decision.action, decision.target) == (action, None if target is None else f"k{target}")


@pytest.mark.parametrize(("text", "slot"), [
    ("My name is Maya.", "name"), ("Mein Name ist Lena.", "name"), ("Ich heiße Lena.", "name"),
    ("Ethan's girlfriend is Chloe.", "partner:ethan"), ("Lenas Arbeitgeber ist SAP.", "work:lena"),
    ("My partner is Tom.", "partner"),
])
def test_a_topic_named_by_a_possessive_is_its_owner_s(text: str, slot: str) -> None:
    assert slot_of(text) == slot


def test_without_candidates_everything_is_new() -> None:
    assert decide_by_rules("Ich bin nach Berlin gezogen.", []).action == "new"
    assert decide_by_rules("I quit my job.", []).action == "new"


@pytest.mark.parametrize(("question", "topic"), [
    ("Where do I work?", "work"), ("Wo arbeite ich?", "work"), ("What do I do for work?", "work"),
    ("Welches Auto fahre ich?", "car"), ("Mit wem bin ich zusammen?", "partner"),
    ("How do I get to work?", None), ("What laptop do I use for work?", None),
    ("Where do I work out?", None), ("Wie komme ich zur Arbeit?", None),
    ("When did we get married?", None), ("How many animals live with me?", None),
    ("What does my spouse do for a living?", None), ("Wie lange wohne ich schon hier?", None),
    ("Wo wohnt meine Schwester?", "residence:schwest"),
    ("Where does my sister live?", "residence:sister"), ("What is my job?", "work"),
    ("Welche Farbe hat mein Auto?", "car"),
    # A name after the verb asks about that person.
    ("Where does Rachel live?", "residence:rachel"), ("Wo arbeitet Jonas?", "work:jonas"),
    ("Who is Maya dating?", "partner:maya"), ("Welches Auto fährt Jonas?", "car:jonas"),
])
def test_a_question_asks_for_a_topic_s_value_or_names_it_as_a_place(
    question: str, topic: str | None
) -> None:
    assert value_topic_of_question(question) == topic
