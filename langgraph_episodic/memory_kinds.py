"""What a memory in a user's namespace is, and how much it counts as an answer to a question.

A user's memory (``("memories", user_id)`` and below) holds different kinds of evidence: facts
the memory tools saved, and the remembered turns of earlier conversations
(:mod:`langgraph_episodic.kinds.turns`): what the user said, the user's own questions and
requests, and the assistant's replies. For a question about the user they are not worth the
same. A saved fact or a statement of the user's says something about the user; a question the
user once asked ("Can you help me write to my landlord?") shares the question's words but
answers nothing; an assistant's reply repeats the user's words at second hand.

:func:`decide` is the one relevance decision of the recall tools (``memory_abrufen`` /
``recall_memory``) and of the memory the middleware and the graph's recall node put before
the model. It ranks the hits of the store's search by their *evidence*, the score times the
kind's weight (:data:`WEIGHTS`), and answers "nothing relevant" when the best evidence is under
the floor; a hit after the best one needs :data:`RUNNER_UP_SHARE` of the floor. Among the hits
kept, what the user said (facts and the user's own statements) comes before the assistant's
replies, which never outrank it. The store's score keeps its meaning (the same for every
query, :doc:`docs/retrieval.md`); only this decision weighs kinds.

Each hit's :class:`Verdict` says why it was kept or withheld; :func:`decide` returns them all
(``langgraph_episodic.explain_recall`` shows them for a question).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import SearchItem

TURN_KIND = "turn"
"""The ``kind`` of a remembered turn (:mod:`langgraph_episodic.kinds.turns`)."""
USER, ASSISTANT = "user", "assistant"
"""The ``role`` of a remembered turn."""
ASKS_FIELD = "asks"
"""A user turn's field: True when the turn only asks (questions, requests) and states nothing."""

FACT, STATEMENT, ASK, REPLY = "fact", "statement", "ask", "reply"
"""The kinds of evidence: a saved fact (or any memory that is no turn), a user turn that
states something, a user turn that only asks, an assistant's reply."""

WEIGHTS: Mapping[str, float] = {FACT: 1.0, STATEMENT: 1.25, ASK: 0.25, REPLY: 1.0}
"""How much a hit of each kind counts: its evidence is ``score * weight``. A saved fact counts
its score (the floor keeps the meaning it has on the German and English memory sets); what the
user said in a conversation counts a quarter more, as it is said in passing, inside longer
turns that score lower than a saved sentence; a question or request of the user's counts a
quarter, since it shares the question's words and answers nothing. Chosen on the tune half of
``benchmarks/lived_in.py``; the figures are in ``docs/retrieval.md``."""

DEFAULT_MIN_SCORE = 0.10
"""The recall tools' relevance floor on ``ChromaStore``'s hybrid score (with the packaged model
its cosine is measured from the question's baseline, :mod:`.language.baseline`). Chosen on the
tune half of our German and English memory sets (``benchmarks/german.py``) as the lowest floor
at which about half of the questions about things never said come back empty in both
languages, with English recall nearly unchanged (German loses more: the English model's German
cosines carry almost no signal, what is left is found by its words). The figures:
``docs/retrieval.md``, "Relevance floor: `min_score`"."""

RUNNER_UP_SHARE = 0.5
"""Share of the floor the hits after the best one need, once the best reaches the floor.

The floor answers "does the memory know anything about this question?"; it is a poor test of
each hit, because a paraphrase scores lower than the wording it paraphrases, and the right fact
is often second or third under a best hit that passes. Chosen through the tools on the tune
half of our German and English memory sets (``benchmarks/german_tools.py``) as the largest share
that keeps the tune half's "the right fact is in the answer" at its best, so that it adds the
fewest hits. See ``docs/retrieval.md``, "Relevance floor: `min_score`"."""

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*", re.UNICODE)


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped: runs up to ".", "!" or "?" (or a line's end).

    >>> sentences("I moved. Any tips? Thanks")
    ['I moved.', 'Any tips?', 'Thanks']
    """
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def kind_of(value: Mapping[str, Any]) -> str:
    """The kind of evidence a stored value is (:data:`FACT`, :data:`STATEMENT`, :data:`ASK`
    or :data:`REPLY`).

    A user turn written with its ``asks`` flag is an ask when the flag says so; one written
    before the flag existed is an ask when every sentence of it is a question.

    >>> kind_of({"text": "I am vegetarian.", "kind": "fact"})
    'fact'
    >>> kind_of({"text": "Any ideas for dinner?", "kind": "turn", "role": "user"})
    'ask'
    >>> kind_of({"text": "Great choice!", "kind": "turn", "role": "assistant"})
    'reply'
    """
    if value.get("kind") != TURN_KIND:
        return FACT
    if value.get("role") == ASSISTANT:
        return REPLY
    flag = value.get(ASKS_FIELD)
    if isinstance(flag, bool):
        return ASK if flag else STATEMENT
    return ASK if only_questions(str(value.get("text") or "")) else STATEMENT


def only_questions(text: str) -> bool:
    """True when every sentence of ``text`` is a question (ends with "?").

    >>> only_questions("Any ideas? Something quick?"), only_questions("I'm tired. Ideas?")
    (True, False)
    """
    found = sentences(text)
    return bool(found) and all(s.endswith("?") for s in found)


@dataclass(frozen=True)
class Verdict:
    """One hit of a recall search and what the decision made of it."""

    item: SearchItem
    kind: str
    evidence: float | None
    """``score * WEIGHTS[kind]`` (None: the hit has no score)."""
    kept: bool
    reason: str


@dataclass(frozen=True)
class Decision:
    """A recall's decision: the hits kept, in the order they are shown, and every hit's
    verdict in the order of the evidence."""

    kept: tuple[SearchItem, ...]
    verdicts: tuple[Verdict, ...]

    @property
    def answered(self) -> bool:
        """Whether anything was kept."""
        return bool(self.kept)


def decide(items: Sequence[SearchItem], floor: float | None) -> Decision:
    """The hits a recall answers with (see the module docstring).

    With ``floor=None`` every hit is kept, in the store's order. A hit with no score beside
    scored ones only fills a short page (an item put without an index, which a store returns
    after the ranked ones, as ``InMemoryStore`` does): it says nothing about the question, so
    it does not pass a floor. When no hit has a score the store ranks nothing (it has no
    index), and every hit is kept.
    """
    kinds = [kind_of(item.value) for item in items]
    scores = [None if item.score is None else item.score * WEIGHTS[k]
              for item, k in zip(items, kinds, strict=True)]
    if floor is None or all(s is None for s in scores):
        why = "no floor" if floor is None else "the store ranks nothing (no index)"
        return Decision(tuple(items), tuple(
            Verdict(item, k, s, True, why) for item, k, s in zip(items, kinds, scores, strict=True)))
    order = sorted(range(len(items)),
                   key=lambda i: (scores[i] is None, -(scores[i] or 0.0), i))
    best = scores[order[0]] or 0.0
    second = floor * RUNNER_UP_SHARE
    verdicts: list[Verdict] = []
    for rank, i in enumerate(order):
        item, k, s = items[i], kinds[i], scores[i]
        if s is None:
            verdicts.append(Verdict(item, k, s, False, "no score: not ranked for the question"))
        elif best < floor:
            verdicts.append(Verdict(item, k, s, False,
                                    f"nothing relevant: the best evidence {best:.3f} is under "
                                    f"the floor {floor:.3f}"))
        elif rank == 0:
            verdicts.append(Verdict(item, k, s, True, f"best evidence, over the floor {floor:.3f}"))
        elif s >= second:
            verdicts.append(Verdict(item, k, s, True, f"over {RUNNER_UP_SHARE:g} of the floor"))
        else:
            verdicts.append(Verdict(item, k, s, False,
                                    f"under {RUNNER_UP_SHARE:g} of the floor ({second:.3f})"))
    kept = [v for v in verdicts if v.kept]
    shown = [v.item for v in kept if v.kind != REPLY] + [v.item for v in kept if v.kind == REPLY]
    return Decision(tuple(shown), tuple(verdicts))


def passing(items: Sequence[SearchItem], floor: float | None) -> list[SearchItem]:
    """The hits a recall answers with, in the order they are shown (:func:`decide`)."""
    return list(decide(items, floor).kept)
