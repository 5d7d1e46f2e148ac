"""Consolidation without a model: German and English rules that compare a new fact with the
user's current ones.

* **same**: the same words (up to case, spacing, stop words and word endings) as a current
  fact, or the same single-valued topic with the same content ("Ich lebe in Berlin" after
  "Ich wohne in Berlin").
* **end**: the text says something stopped ("Ich habe keinen Hund mehr", "I quit my job",
  "nicht mehr", "no longer", "any more") and a current fact shares its topic or a content
  word: that fact ends, nothing replaces it.
* **update**: the text is about a single-valued topic (where one lives, where one works, one's
  partner, car, diet, name, age, a favourite thing) and a current fact is about the same
  topic, or the two sentences say the same thing about different objects ("Mein
  Lieblingsessen ist Pizza" / "... ist Sushi"): the new one replaces it.
* **new** otherwise: both stay current (a second pet, another language one speaks).

The topic (``slot``) is stored with every fact, so the same-topic candidates are found by a
store filter, not by chance in the similarity ranking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import snowballstemmer

from ..chroma.lexical import tokenize

_GERMAN = snowballstemmer.stemmer("german")
_ENGLISH = snowballstemmer.stemmer("english")

_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE | re.UNICODE))
    for name, pattern in (
        ("name", r"\b(?:heiße|heisse|mein name ist|my name is|call me|i am called)\b"),
        ("age", r"\b(?:\d+\s+jahre\s+alt|\d+\s+years?\s+old|i am \d+\b|ich bin \d+\b)"),
        ("residence", r"\b(?:wohne|wohnt|wohnen|lebe|lebt|wohnort|wohnhaft|umgezogen|gezogen|"
                      r"ziehe|zog|weggezogen|ausgezogen|live|lives|living|lived|moved|move|"
                      r"relocated|reside|resides|home town|hometown)\b"),
        ("work", r"\b(?:arbeite|arbeitet|arbeitete|angestellt|beschäftigt|job|stelle|"
                 r"arbeitgeber|gekündigt|work|works|working|worked|employed|employer|"
                 r"joined|hired|quit)\b"),
        ("partner", r"\b(?:verheiratet|verlobt|freundin|ehefrau|ehemann|partnerin|partner|"
                    r"geschieden|getrennt|single|married|engaged|wife|husband|girlfriend|"
                    r"boyfriend|divorced|broke up)\b"),
        ("car", r"\b(?:auto|fahre ein|fahre einen|wagen|car|drive a|drive an|drives a)\b"),
        ("diet", r"\b(?:vegetarier\w*|veganer\w*|vegan|fleisch|vegetarian|meat)\b"),
        ("phone", r"\b(?:handynummer|telefonnummer|phone number|mobile number)\b"),
        ("study", r"\b(?:studiere|studiert|studium|study|studying|studies|university|"
                  r"universität)\b"),
    )
)
_FAVOURITE = re.compile(r"\blieblings[-\s]?(\w+)|\bfavou?rite\s+(\w+)", re.IGNORECASE | re.UNICODE)
_ENDING = re.compile(
    r"\bnicht mehr\b|\bkein(?:e|en|em|er|es)?\b[^.]*\bmehr\b|\bnicht länger\b|\bgekündigt\b|"
    r"\baufgehört\b|\bgetrennt\b|\bverkauft\b|\bweggezogen\b|\bausgezogen\b|\bgestorben\b|"
    r"\bverstorben\b|\babgeschafft\b|\bno longer\b|\bany ?more\b|\bquit\b|\bleft my\b|"
    r"\bsold\b|\bbroke up\b|\bstopped\b|\bgave up\b|\bdied\b|\bpassed away\b|\bdivorced\b|"
    r"\bmoved away\b|\bmoved out\b",
    re.IGNORECASE | re.UNICODE,
)
_REPLACEMENT = re.compile(r"\b(?:sondern|stattdessen|instead|but now|jetzt|now)\b", re.IGNORECASE)
_ENDING_WORDS = frozenset(
    ["mehr", "länger", "gekündigt", "aufgehört", "getrennt", "verkauft", "weggezogen", "ausgezogen", "gestorben", "verstorben", "abgeschafft", "longer", "anymore", "quit", "left", "sold", "broke", "stopped", "gave", "died", "passed", "divorced", "moved", "away"]
)
_TIME_STEMS = frozenset(
    _GERMAN.stemWord(w) for w in ["seit", "jetzt", "nun", "inzwischen", "mittlerweile", "neuerdings"]
) | frozenset(_ENGLISH.stemWord(w) for w in ["since", "now", "currently", "recently"])
_FRAME_WORDS = frozenset(["ist", "sind", "bin", "war", "heißt", "lautet", "is", "are", "am", "was"])
"""Copulas: "X ist A" then "X ist B" says the same thing of another object. Verbs of liking are
not among them: one likes many things at once."""
_LIKING = frozenset(
    ["gern", "gerne", "mag", "mögen", "liebe", "like", "likes", "love", "loves", "enjoy", "enjoys"]
)


@dataclass(frozen=True)
class Candidate:
    """A current fact a new one is compared with: its store key, text and topic."""

    key: str
    text: str
    slot: str | None = None


@dataclass(frozen=True)
class Decision:
    """What a new fact is relative to the current ones: ``"same"``, ``"update"``, ``"new"`` or
    ``"end"``; ``target`` is the key of the fact it confirms, replaces or ends."""

    action: str
    target: str | None = None
    reason: str = ""


def _is_german(text: str) -> bool:
    words = re.findall(r"\w+", text.casefold())
    de = sum(w in {"ich", "mein", "meine", "habe", "bin", "und", "ist", "nicht", "bei", "in",
                   "seit", "der", "die", "das", "keinen", "mehr", "wohne", "arbeite"} for w in words)
    en = sum(w in {"i", "my", "have", "am", "and", "is", "not", "at", "the", "since", "live",
                   "work", "anymore", "longer"} for w in words)
    return de > en


def stems(text: str) -> list[str]:
    """The text's content words, stop words dropped and stemmed (German or English)."""
    stemmer = _GERMAN if _is_german(text) else _ENGLISH
    return [stemmer.stemWord(w) for w in tokenize(text)]


def _topic_free(text: str) -> set[str]:
    """The content stems of ``text`` without its topic words and numbers (dates, ages)."""
    for _, pattern in _SLOTS:
        text = pattern.sub(" ", text)
    return {s for s in stems(text) if not s.isdigit() and s not in _TIME_STEMS}


def slot_of(text: str) -> str | None:
    """The single-valued topic a fact is about, or None (see the module docstring).

    >>> slot_of("Ich bin nach Berlin gezogen."), slot_of("My favourite food is sushi.")
    ('residence', 'favourite:food')
    """
    favourite = _FAVOURITE.search(text)
    if favourite is not None:
        word = (favourite.group(1) or favourite.group(2)).casefold()
        stemmer = _GERMAN if favourite.group(1) else _ENGLISH
        return f"favourite:{stemmer.stemWord(word)}"
    for name, pattern in _SLOTS:
        if pattern.search(text):
            return name
    return None


def is_ending(text: str) -> bool:
    """True when the text says that something stopped, without saying what holds instead.

    >>> is_ending("Ich habe keinen Hund mehr."), is_ending("I quit my job.")
    (True, True)
    >>> is_ending("Ich wohne nicht mehr in München, sondern in Berlin.")
    False
    """
    return _ENDING.search(text) is not None and _REPLACEMENT.search(text) is None


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def _same_frame(new: str, old: str) -> bool:
    """Two sentences that say the same thing about different objects: a shared beginning of
    at least two words holding a content word or a copula, then one differing tail of at
    most three words each ("Mein Lieblingsessen ist Pizza" / "... ist Sushi")."""
    a, b = _words(new), _words(old)
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    if prefix < 2 or prefix == len(a) or prefix == len(b):
        return False
    if len(a) - prefix > 3 or len(b) - prefix > 3:
        return False
    shared = a[:prefix]
    if any(w in _LIKING for w in shared):
        return False
    return any(w in _FRAME_WORDS for w in shared) or len(tokenize(" ".join(shared))) >= 2


def decide_by_rules(text: str, candidates: Sequence[Candidate]) -> Decision:
    """Decide what ``text`` is relative to ``candidates`` (the user's current facts, best
    match first); the target is always one of them.

    >>> old = [Candidate("k1", "Ich wohne in München.", "residence")]
    >>> decide_by_rules("Ich bin nach Berlin gezogen.", old)
    Decision(action='update', target='k1', reason='same topic: residence')
    >>> decide_by_rules("Ich habe eine Katze.", old).action
    'new'
    """
    own = stems(text)
    own_set = set(own)
    for c in candidates:
        if stems(c.text) == own:
            return Decision("same", c.key, "same words")
    slot = slot_of(text)
    if is_ending(text):
        content = own_set - {_GERMAN.stemWord(w) for w in _ENDING_WORDS} - {
            _ENGLISH.stemWord(w) for w in _ENDING_WORDS}
        for c in candidates:
            if slot is not None and c.slot == slot:
                return Decision("end", c.key, f"ends topic: {slot}")
        for c in candidates:
            if content & set(stems(c.text)):
                return Decision("end", c.key, "ends a fact with a shared word")
        return Decision("new", None, "an ending with nothing to end")
    if slot is not None:
        for c in candidates:
            if c.slot == slot:
                if not _topic_free(text) - _topic_free(c.text):
                    return Decision("same", c.key, f"same topic and content: {slot}")
                return Decision("update", c.key, f"same topic: {slot}")
    for c in candidates:
        if _same_frame(text, c.text):
            return Decision("update", c.key, "same statement, another object")
    return Decision("new", None, "no current fact on this topic")
