"""Conversation turns ("Name: text", as LoCoMo's and a chat's) are new events, not new values
of an old fact: the rules keep them as new memories, while a true change still replaces.
The pairs are of the kind the rules closed wrongly on LoCoMo's conversations."""

from __future__ import annotations

import pytest

from langgraph_episodic.facts import Candidate, decide_by_rules, slot_of
from langgraph_episodic.facts.phrasing import is_ending, is_statement, speaker_of


def cands(*texts: str) -> list[Candidate]:
    return [Candidate(f"k{i}", t, slot_of(t)) for i, t in enumerate(texts)]


KEPT = [
    # (current facts, new turn): several sentences, a question, another speaker, a negated "quit"
    (["Gina: Thanks, Jon! After losing my job, I wanted to take control of my own destiny."],
     "Jon: Hi! Since we last spoke I am still working on the dance studio and things are looking up!"),
    (["Jon: Thanks! Your backing means a lot. I'm trying to make my plan work."],
     "Jon: Thanks, Gina! I'm expanding my dance studio's social media presence and offering workshops."),
    (["Melanie: That's so cool, Caroline! That's a great way to show off."],
     "Caroline: Woohoo Melanie! I passed the adoption agency interviews last Friday! I'm so excited."),
    (["Caroline: Thanks, Mel! Painting helps me explore my identity."],
     "Caroline: Wow, Mel! Any more paintings coming up?"),
    (["Jon: It's been so inspiring to work with our young dancers."],
     "Jon: Thanks! I won't quit, no matter what."),
    (["Jon: I work at the dance studio."], "Jon: I won't quit on my dreams."),
    (["Caroline: I live in a small flat with my kids."],
     "Melanie: I moved the furniture around last week."),
    (["Caroline: I went to a support group on Monday."],
     "Caroline: I went to a pride parade last week."),
]


@pytest.mark.parametrize(("current", "text"), KEPT)
def test_conversation_turns_are_kept_as_new(current: list[str], text: str) -> None:
    decision = decide_by_rules(text, cands(*current))
    assert (decision.action, decision.target) == ("new", None), decision.reason


CHANGES = [
    (["Jon: I work as a banker.", "Gina: I work at a clothing store."],
     "Jon: I work at my own dance studio now.", "update", 0),
    (["Caroline: I live in Boston."], "Caroline: I moved to Seattle.", "update", 0),
    (["I live in Munich."], "I moved to Berlin last month.", "update", 0),
    (["Nate: I have a dog called Max.", "Nate: I play video games."],
     "Nate: I don't have a dog anymore.", "end", 0),
]


@pytest.mark.parametrize(("current", "text", "action", "target"), CHANGES)
def test_a_true_change_of_the_same_speaker_still_replaces(
    current: list[str], text: str, action: str, target: int
) -> None:
    decision = decide_by_rules(text, cands(*current))
    assert (decision.action, decision.target) == (action, f"k{target}"), decision.reason


def test_signals() -> None:
    assert speaker_of("Jon: I quit.") == "jon" and speaker_of("I quit.") is None
    assert is_statement("Jon: I moved to Seattle.") and not is_statement("Jon: Thanks! I moved.")
    assert not is_ending("I won't quit, no matter what.") and is_ending("I quit my job.")
