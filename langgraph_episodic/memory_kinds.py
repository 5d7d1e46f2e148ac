"""What a memory in a user's namespace is, and how much it counts as an answer to a question.

A user's memory holds saved facts and the remembered turns of earlier conversations
(:mod:`langgraph_episodic.kinds.turns`). For a question about the user they are not worth the
same: a fact or a statement of the user's says something about the user; a question the user
once asked shares the question's words but answers nothing; an assistant's reply repeats the
user's words at second hand.

:func:`decide` is the one relevance decision of the recall tools, the middleware and the
graph's recall node. It ranks the store's hits by their *evidence*, the score times the kind's
weight (:data:`WEIGHTS`), and answers "nothing relevant" when the best evidence is under the
floor; a hit after the best one needs :data:`RUNNER_UP_SHARE` of the floor. Among the hits
kept, what the user said comes before the assistant's replies. Each hit's :class:`Verdict` says
why it was kept or withheld (``langgraph_episodic.explain_recall`` shows them).
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
"""How much a hit of each kind counts: its evidence is ``score * weight``. What the user said
in a conversation counts a quarter more than a saved fact (it is said in passing, inside longer
turns that score lower); a question of the user's counts a quarter (it shares the question's
words and answers nothing). Chosen on ``benchmarks/lived_in.py``; see ``docs/retrieval.md``."""

DEFAULT_MIN_SCORE = 0.10
"""The recall tools' relevance floor on ``ChromaStore``'s hybrid score: the lowest floor at
which about half of the questions about things never said come back empty in both languages
(``benchmarks/german.py``; ``docs/retrieval.md``, "Relevance floor: `min_score`")."""

RUNNER_UP_SHARE = 0.5
"""Share of the floor the hits after the best one need, once the best reaches the floor.

The floor answers "does the memory know anything about this question?"; it is a poor test of
each hit, as a paraphrase scores lower than the wording it paraphrases. The largest share that
keeps "the right fact is in the answer" at its best (``benchmarks/german_tools.py``)."""

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


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
    if not isinstance(flag, bool):  # written before the flag existed
        flag = only_questions(str(value.get("text") or ""))
    return ASK if flag else STATEMENT


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
        rows = zip(items, kinds, scores, strict=True)
        return Decision(tuple(items), tuple(Verdict(item, k, s, True, why) for item, k, s in rows))
    order = sorted(range(len(items)),
                   key=lambda i: (scores[i] is None, -(scores[i] or 0.0), i))
    best = scores[order[0]] or 0.0
    second = floor * RUNNER_UP_SHARE
    verdicts: list[Verdict] = []
    for rank, i in enumerate(order):
        s = scores[i]
        if s is None:
            keep, why = False, "no score: not ranked for the question"
        elif best < floor:
            keep, why = False, (f"nothing relevant: the best evidence {best:.3f} is under "
                                f"the floor {floor:.3f}")
        elif rank == 0:
            keep, why = True, f"best evidence, over the floor {floor:.3f}"
        else:
            keep = s >= second
            why = (f"over {RUNNER_UP_SHARE:g} of the floor" if keep
                   else f"under {RUNNER_UP_SHARE:g} of the floor ({second:.3f})")
        verdicts.append(Verdict(items[i], kinds[i], s, keep, why))

    def place(v: Verdict) -> int:
        """A saved fact that reaches the floor by itself first, the assistant's replies last."""
        return 0 if v.kind == FACT and (v.evidence or 0.0) >= floor else 2 if v.kind == REPLY else 1

    shown = sorted((v for v in verdicts if v.kept), key=place)
    return Decision(tuple(v.item for v in shown), tuple(verdicts))


def first_on_topic(decision: Decision, on_topic: Sequence[SearchItem]) -> Decision:
    """``decision`` with ``on_topic`` shown first, whatever their score: the current fact on
    the single-valued topic a question asks about ("Where do I live?"), read by filter
    (:func:`~langgraph_episodic.facts.recall.topic_now_ops`), is the answer even when the
    question shares no word with it."""
    if not on_topic:
        return decision
    spots = {(tuple(i.namespace), i.key) for i in on_topic}
    rest = [i for i in decision.kept if (tuple(i.namespace), i.key) not in spots]
    why = "the current fact on the topic the question asks about (read by filter)"
    verdicts = [Verdict(i, kind_of(i.value), i.score, True, why) for i in on_topic]
    verdicts += [v for v in decision.verdicts if (tuple(v.item.namespace), v.item.key) not in spots]
    return Decision((*on_topic, *rest), tuple(verdicts))


def passing(items: Sequence[SearchItem], floor: float | None) -> list[SearchItem]:
    """The hits a recall answers with, in the order they are shown (:func:`decide`)."""
    return list(decide(items, floor).kept)
