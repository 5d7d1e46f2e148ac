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
  Lieblingsessen ist Pizza" / "... ist Sushi", or "... zwei Tassen Kaffee" / "... nur noch
  eine Tasse Kaffee"): the new one replaces it. A switch replaces the fact naming what it
  switched from ("von VS Code auf Neovim umgestiegen", "statt Klavier", "switched from the
  iPhone", "instead of the violin").
* A fact is never closed by one about another known topic (shifts are not the employer).
* **new** otherwise: both stay current (a second pet, another language one speaks).

The topic (``slot``) is stored with every fact, so the same-topic candidates are found by a
store filter, not by chance in the similarity ranking.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import snowballstemmer

from ..chroma.ranking.lexical import tokenize

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
        # Shifts before work: "I work night shifts now" is not a new employer.
        ("shift", r"schicht(?:en|dienst)?\b|\bshifts?\b"),
        ("work", r"\b(?:arbeite|arbeitet|arbeitete|angestellt|beschäftigt|job|stelle|"
                 r"arbeitgeber|gekündigt|work|works|working|worked|employed|employer|"
                 r"joined|hired|quit)\b"),
        ("partner", r"\b(?:verheiratet|verlobt|freundin|ehefrau|ehemann|partnerin|partner|"
                    r"geschieden|getrennt|single|married|engaged|wife|husband|girlfriend|"
                    r"boyfriend|divorced|broke up|mit \w+ zusammen|zusammen mit|together with)\b"),
        ("car", r"\b(?:auto|fahre ein|fahre einen|wagen|car|drive a|drive an|drives a)\b"),
        ("diet", r"\b(?:vegetarier\w*|veganer\w*|vegan|fleisch|vegetarian|meat)\b"),
        ("phone", r"\b(?:handynummer|telefonnummer|phone number|mobile number)\b"),
        ("study", r"\b(?:studiere|studiert|studium|study|studying|studies|university|"
                  r"universität|studiengang|degree|master'?s|bachelor'?s|phd)\b"),
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
_SWITCH = tuple(
    re.compile(pattern, re.IGNORECASE | re.UNICODE)
    for pattern in (
        r"\bvon\s+(?P<old>[^,.;]+?)\s+(?:auf|zu|zum|zur|nach|in)\s+[^,.;]+?\s+"
        r"(?:umgestiegen|gewechselt|umgezogen|gezogen|umgesattelt)\b",
        r"\b(?:statt|anstatt|anstelle von|anstelle|nicht mehr)\s+(?P<old>[^,.;]+?)"
        r"(?:,|\.|;|$|\s+sondern\b)",
        r"\b(?:switched|changed|moved|went|upgraded|converted)\s+(?:over\s+)?from\s+"
        r"(?P<old>[^,.;]+?)\s+to\b",
        r"\b(?:instead of|rather than|in place of)\s+(?P<old>[^,.;]+)",
    )
)
"""A switch names the old object: "von VS Code auf Neovim umgestiegen", "statt Klavier",
"switched from the iPhone to a Pixel", "instead of the violin"."""
_CHANGE_WORDS = ("nur noch", "jetzt", "nun", "inzwischen", "mittlerweile", "neuerdings",
                 "now", "only", "these days", "currently", "nowadays")
"""Words saying that a statement changed; dropped before two statements are compared."""
_CHANGE = re.compile(r"\b(?:" + "|".join(_CHANGE_WORDS) + r")\b", re.IGNORECASE | re.UNICODE)
_COMPATIBLE = re.compile(
    r"\b(?:auch|außerdem|zusätzlich|zweite[nmrs]?|(?<!nur )noch eine?[nmrs]?|also|too|as well|another|"
    r"second|additionally)\b", re.IGNORECASE | re.UNICODE)
"""Words saying that a statement adds to what holds ("auch", "a second", "too")."""
_YEAR = re.compile(r"^(?:19|20)\d\d$")
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


def stems(text: str, *, like: str | None = None) -> list[str]:
    """The text's content words, stop words dropped and stemmed (German or English, by the
    language of ``like`` when given: a part of a sentence is stemmed as the sentence)."""
    stemmer = _GERMAN if _is_german(like if like is not None else text) else _ENGLISH
    return [stemmer.stemWord(w) for w in tokenize(text)]


def _topic_free(text: str) -> set[str]:
    """The content stems of ``text`` without its topic words and numbers (years; an age is a topic word)."""
    for _, pattern in _SLOTS:
        text = pattern.sub(" ", text)
    return {s for s in stems(text) if not _YEAR.match(s) and s not in _TIME_STEMS}


_POSSESSED = re.compile(
    r"^\W*(?:mein|meine|meinem|meinen|meiner|unser|unsere|unserem|unseren|my|our)\s+(\w+)",
    re.IGNORECASE | re.UNICODE,
)
_NAMED = re.compile(
    r"^\W*([A-ZÄÖÜ][\w-]+)\s+(?:wohnt|lebt|arbeitet|studiert|zog|ist|hat|lives|works|studies|"
    r"moved|is|has)\b",
    re.UNICODE,
)
_SELF = frozenset(["ich", "wir", "i", "we", "mein", "meine", "my", "our", "unser", "unsere"])


def _other_subject(text: str, topic: re.Pattern[str]) -> str | None:
    """The stem of the person or thing a fact is about when that is not the user ("Meine
    Schwester lebt in Wien", "My brother works at Google", "Anna lebt in Wien"); None for the
    user's own facts, also when the noun names the topic itself (``topic``: "Mein Wohnort ist
    Berlin", "My employer is Initech")."""
    possessed = _POSSESSED.match(text)
    if possessed is not None:
        noun = possessed.group(1)
        if topic.search(noun):
            return None
        return (_GERMAN if _is_german(text) else _ENGLISH).stemWord(noun.casefold())
    named = _NAMED.match(text)
    if named is not None and named.group(1).casefold() not in _SELF:
        return named.group(1).casefold()
    return None


def slot_of(text: str) -> str | None:
    """The single-valued topic a fact is about, or None (see the module docstring). A fact
    about somebody else has that person's topic: the sister's home is not the user's.

    >>> slot_of("Ich bin nach Berlin gezogen."), slot_of("My favourite food is sushi.")
    ('residence', 'favourite:food')
    >>> slot_of("Meine Schwester lebt in Wien."), slot_of("Mein Wohnort ist jetzt Bonn.")
    ('residence:schwest', 'residence')
    """
    favourite = _FAVOURITE.search(text)
    if favourite is not None:
        word = (favourite.group(1) or favourite.group(2)).casefold()
        stemmer = _GERMAN if favourite.group(1) else _ENGLISH
        return f"favourite:{stemmer.stemWord(word)}"
    for name, pattern in _SLOTS:
        if pattern.search(text):
            other = _other_subject(text, pattern)
            return name if other is None else f"{name}:{other}"
    return None


_QUESTION_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE | re.UNICODE))
    for name, pattern in (
        # Past participles ask about a topic that a statement's present tense names; in a
        # statement they mislead ("Ich bin es gewohnt", "vegan gelebt"), so only questions.
        ("residence", r"\b(?:wo|wohin|where)\b.*\b(?:(?<!es )gewohnt|gelebt|lived|stayed)\b"),
        ("work", r"\b(?:wo|bei wem|für wen|where|who|which company)\b.*\b(?:gearbeitet|"
                 r"angestellt|beschäftigt|worked|employed)\b|\b(?:arbeitgeber|employer)\b"),
        ("partner", r"\b(?:mit wem|who)\b.*\b(?:zusammen|verheiratet|verlobt|together|"
                    r"married|engaged|dating|dated)\b"),
    )
)


def topic_of_question(question: str) -> str | None:
    """The single-valued topic a question asks about (as :func:`slot_of` finds it in a
    statement), or None: recall uses it to find the topic's earlier versions by filter.

    >>> topic_of_question("Wo habe ich früher gewohnt?"), topic_of_question("Welches Auto hatte ich?")
    ('residence', 'car')
    >>> topic_of_question("Mit wem war ich früher zusammen?")
    'partner'
    """
    slot = slot_of(question)
    if slot is not None:
        return slot
    for name, pattern in _QUESTION_TOPICS:
        if pattern.search(question):
            return name
    return None


def is_ending(text: str) -> bool:
    """True when the text says that something stopped, without saying what holds instead.

    >>> is_ending("Ich habe keinen Hund mehr."), is_ending("I quit my job.")
    (True, True)
    >>> is_ending("Ich wohne nicht mehr in München, sondern in Berlin.")
    False
    """
    return (_ENDING.search(text) is not None and _REPLACEMENT.search(text) is None
            and _NEGATED_ENDING.search(text) is None)


_SPEAKER = re.compile(r"^\s*([A-ZÄÖÜ][\w.'-]*(?: [A-ZÄÖÜ][\w.'-]*)?):\s+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_NEGATED_ENDING = re.compile(
    r"\b(?:won'?t|will not|don'?t|do not|never|not going to|wouldn'?t|can'?t|nie|niemals)\s+"
    r"(?:\w+\s+)?(?:quit|stop|give up|leave|aufhören|aufgeben|kündigen)\b",
    re.IGNORECASE | re.UNICODE,
)


def speaker_of(text: str) -> str | None:
    """Who said a conversation turn written ``"Name: text"`` (casefolded), or None.

    >>> speaker_of("Caroline: I went to a pride parade last week."), speaker_of("I live in Bonn.")
    ('caroline', None)
    """
    match = _SPEAKER.match(text)
    return match.group(1).casefold() if match else None


def is_statement(text: str) -> bool:
    """True when ``text`` (without a speaker's ``"Name: "``) is one declarative sentence: only
    a statement like that sets a topic's value or ends a fact. A conversation turn of several
    sentences tells ("Thanks! I'm still working on the studio."), a question asks ("Any more
    paintings coming up?"); neither replaces what was said before.

    >>> is_statement("Ich bin nach Berlin gezogen."), is_statement("I moved to Bristol")
    (True, True)
    >>> is_statement("Thanks, Gina! I won't quit."), is_statement("Have you made any more art?")
    (False, False)
    """
    body = _SPEAKER.sub("", text, count=1).strip()
    if not body or "?" in body:
        return False
    return len(_SENTENCE_END.split(body)) == 1


def _other_speaker(text: str, candidate: Candidate) -> bool:
    """A turn of one speaker never closes a turn of another: it is about someone else."""
    return speaker_of(text) != speaker_of(candidate.text)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.casefold())


def _conflict(a: str | None, b: str | None) -> bool:
    """Two facts about different known topics: one never closes the other."""
    return a is not None and b is not None and a != b


def _same_frame(new: str, old: str) -> bool:
    """Two sentences that say the same thing about different objects: a shared beginning of
    at least two words holding a content word or a copula, then one differing tail of at
    most three words each ("Mein Lieblingsessen ist Pizza" / "... ist Sushi"). When the new
    one says it changed ("nur noch", "jetzt", "only ... now"), those words are dropped and
    the two may also share an end ("Ich trinke morgens zwei Tassen Kaffee" / "... nur noch
    eine Tasse Kaffee"). A statement that adds ("auch", "too", "a second") is no update."""
    if _COMPATIBLE.search(new):
        return False
    changed = _CHANGE.search(new) is not None
    a, b = _words(_CHANGE.sub(" ", new)), _words(old)
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    if changed:
        while (suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]):
            suffix += 1
    if prefix < 2 or prefix + suffix >= min(len(a), len(b)):
        return False
    if len(a) - prefix - suffix > 3 or len(b) - prefix - suffix > 3:
        return False
    shared = a[:prefix] + a[len(a) - suffix:]
    if any(w in _LIKING for w in a[:prefix]):
        return False
    return any(w in _FRAME_WORDS for w in a[:prefix]) or len(tokenize(" ".join(shared))) >= 2


def _switched_from(text: str, candidates: Sequence[Candidate], slot: str | None) -> Candidate | None:
    """The candidate naming the old object of a switch in ``text`` (most shared words)."""
    old: set[str] = set()
    for pattern in _SWITCH:
        for match in pattern.finditer(text):
            old |= set(stems(match.group("old"), like=text)) - _TIME_STEMS
    if not old:
        return None
    best, shared = None, 0
    for c in candidates:
        if _conflict(slot, c.slot):
            continue
        n = len(old & set(stems(c.text)))
        if n > shared:
            best, shared = c, n
    return best


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
    if "?" in _SPEAKER.sub("", text, count=1):
        return Decision("new", None, "a question sets nothing")
    if _NEGATED_ENDING.search(text):
        return Decision("new", None, "a change denied changes nothing")
    # Only the same speaker's facts (all of them when no speaker is named) can be closed.
    candidates = [c for c in candidates if not _other_speaker(text, c)]
    slot = slot_of(text)
    statement = is_statement(text)
    if is_ending(text) and statement:
        content = own_set - {_GERMAN.stemWord(w) for w in _ENDING_WORDS} - {
            _ENGLISH.stemWord(w) for w in _ENDING_WORDS}
        for c in candidates:
            if slot is not None and c.slot == slot:
                return Decision("end", c.key, f"ends topic: {slot}")
        for c in candidates:
            if content & set(stems(c.text)) and not _conflict(slot, c.slot):
                return Decision("end", c.key, "ends a fact with a shared word")
        return Decision("new", None, "an ending with nothing to end")
    switched = _switched_from(text, candidates, slot)
    if switched is not None:
        return Decision("update", switched.key, "switched from what it names")
    if not statement:
        return Decision("new", None, "a turn of several sentences tells, it sets no value")
    if slot is not None:
        for c in candidates:
            if c.slot == slot:
                if not _topic_free(text) - _topic_free(c.text):
                    return Decision("same", c.key, f"same topic and content: {slot}")
                return Decision("update", c.key, f"same topic: {slot}")
    for c in candidates:
        if c.slot == slot and _same_frame(text, c.text):
            return Decision("update", c.key, "same statement, another object")
    return Decision("new", None, "no current fact on this topic")
