"""What a sentence does, beside what it is about: corrects an earlier one ("Correction:",
"actually", "not X but Y"), ends something ("nicht mehr", "I quit"), says that it changed
lately ("now", "last week", "Mein neuer Chef"), and who said it ("Name: ..."). German and
English; :mod:`.rules` decides with these, :mod:`.recall` orders with :func:`says_changed`.
"""

from __future__ import annotations

import re

from ..language.analysis import sentences

_F = re.IGNORECASE | re.UNICODE

_ENDING = re.compile(
    r"\bnicht mehr\b|\bkein(?:e|en|em|er|es)?\b[^.]*\bmehr\b|\bnicht länger\b|\bgekündigt\b|"
    r"\baufgehört\b|\bgetrennt\b|\bverkauft\b|\bweggezogen\b|\bausgezogen\b|\bgestorben\b|"
    r"\bverstorben\b|\babgeschafft\b|\bno longer\b|\bany ?more\b|\bquit\b|\bleft my\b|"
    r"\bsold\b|\bbroke up\b|\bstopped\b|\bgave up\b|\bdied\b|\bpassed away\b|\bdivorced\b|"
    r"\bmoved away\b|\bmoved out\b",
    re.IGNORECASE | re.UNICODE,
)
_REPLACEMENT = re.compile(r"\b(?:sondern|stattdessen|instead|but now|jetzt|now)\b", re.IGNORECASE)
CHANGE_WORDS = ("nur noch", "jetzt", "nun", "inzwischen", "mittlerweile", "neuerdings",
                "now", "only", "these days", "currently", "nowadays")
"""Words saying that a statement changed; dropped before two statements are compared."""
CHANGE = re.compile(r"\b(?:" + "|".join(CHANGE_WORDS) + r")\b", re.IGNORECASE | re.UNICODE)
_LABELS = ("correction", "korrektur", "berichtigung")
_CORRECTION_LABEL = rf"(?:{'|'.join(_LABELS)})"
_CORRECTION_MARK = re.compile(
    rf"^\W*{_CORRECTION_LABEL}\s*:\s*|\b(?:actually|eigentlich|i meant|ich meinte|i mean)\b"
    r"\s*[,:]?\s*", _F)
_CORRECTED = tuple(
    re.compile(pattern, _F)
    for pattern in (
        r"\bnot\s+(?P<wrong>[^,.;]+?)\s*,?\s+but\b",
        r"\bnicht\s+(?P<wrong>(?!mehr\b)[^,.;]+?)\s*,?\s+sondern\b",
        r",\s*(?:and\s+|und\s+)?(?:not|nicht)\s+(?P<wrong>(?!mehr\b)[^,.;]+)",
    )
)
"""The value a correction takes back: "not Berlin but Hamburg", "Hamburg, not Berlin",
"nicht München, sondern Augsburg", "in Augsburg, nicht in München". "..., not at Initech
anymore" is a change, not a correction (:data:`_STOPPED`)."""
_STOPPED = re.compile(r"\b(?:anymore|any more|any longer|mehr|länger)\b", _F)


def correction_of(text: str) -> tuple[str, str | None, bool]:
    """``(stated, wrong, marked)``: the text without a correction's label and taken-back value,
    the value it takes back (None), and whether it is marked as a correction ("Correction:",
    "Korrektur:", "actually", "eigentlich", "I meant", "ich meinte").

    >>> correction_of("Correction: I moved to Hamburg, not Berlin.")
    ('I moved to Hamburg.', 'Berlin', True)
    >>> correction_of("Ich wohne nicht in Köln, sondern in Bonn.")
    ('Ich wohne in Bonn.', 'in Köln', False)
    """
    mark = _CORRECTION_MARK.search(text)
    # "Actually, I live in Hamburg now" reports a change; "Correction:" always corrects.
    marked = mark is not None and (mark.group(0).strip(" :").casefold() in _LABELS
                                   or CHANGE.search(text) is None)
    stated = _CORRECTION_MARK.sub("", text, count=1).strip()
    wrong = None
    for pattern in _CORRECTED:
        match = pattern.search(stated)
        if match is not None and not _STOPPED.search(match.group("wrong")):
            wrong = match.group("wrong").strip()
            stated = pattern.sub("", stated, count=1)
            break
    stated = re.sub(r"\s+([,.;!?])", r"\1", re.sub(r"\s{2,}", " ", stated)).strip()
    return (stated[:1].upper() + stated[1:] if mark else stated), wrong, marked


def is_correction(text: str) -> bool:
    """True when ``text`` corrects an earlier statement (see :func:`correction_of`): what it
    replaces was never true, so its successor takes over that statement's start.

    >>> is_correction("Korrektur: Ich wohne in Augsburg."), is_correction("I live in Bonn.")
    (True, False)
    """
    _, wrong, marked = correction_of(SPEAKER.sub("", text, count=1))
    return marked or wrong is not None


def is_ending(text: str) -> bool:
    """True when the text says that something stopped, without saying what holds instead.

    >>> is_ending("Ich habe keinen Hund mehr."), is_ending("I quit my job.")
    (True, True)
    >>> is_ending("Ich wohne nicht mehr in München, sondern in Berlin.")
    False
    """
    return (_ENDING.search(text) is not None and _REPLACEMENT.search(text) is None
            and NEGATED_ENDING.search(text) is None)


_CHANGED = re.compile(
    # Now, lately, again, instead, a new one.
    r"\b(?:now|these days|nowadays|currently|recently|lately|since|instead|again|anymore|"
    r"any more|no longer|newly|new|finally|from now on|"
    r"jetzt|nun|inzwischen|mittlerweile|neuerdings|seit|stattdessen|statt|anstatt|wieder|"
    r"nicht mehr|endlich|ab sofort|neue[nmrs]?|neu|"
    # A change done: switched, replaced, moved, started.
    r"switched|swapped|changed|replaced|traded|moved|relocated|started|began|took up|"
    r"picked up|got rid of|gewechselt|umgestiegen|getauscht|ersetzt|umgezogen|gezogen|"
    r"angefangen|begonnen|abgegeben|"
    # When: last week, two months ago, vor zwei Wochen, after the move.
    r"(?:last|this|past) (?:week|month|year|spring|summer|autumn|fall|winter|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|ago|"
    r"(?:letzte[nmrs]?|diese[nmrs]?|vergangene[nmrs]?) (?:woche|monat|jahr|frühling|sommer|"
    r"herbst|winter|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)|"
    r"vor (?:\w+ )?(?:tagen|wochen|monaten|jahren)|after the|nach dem|nach der|"
    r"for (?:a few |a couple of |\w+ )?(?:days|weeks|months))\b", _F)
"""Words saying that what a statement tells holds since lately: it may replace an earlier
statement on its topic ("We relocated to Bristol about two months ago", "Mein neuer Chef
...", "These days I cycle")."""


def says_changed(text: str) -> bool:
    """True when ``text`` says that what it tells began lately or replaced something ("now",
    "new", "seit", "stattdessen", "last week", "vor zwei Wochen", "switched"): recall lets
    such a fact lead an older one on its topic.

    >>> says_changed("Mein neuer Chef bei Bosch ist sehr entspannt."), says_changed("I like tea.")
    (True, False)
    """
    return _CHANGED.search(text) is not None


SPEAKER = re.compile(
    rf"^\s*(?!(?i:{_CORRECTION_LABEL}|update|edit|note|notiz|nachtrag|ps)\s*:)"
    r"([A-ZÄÖÜ][\w.'-]*(?: [A-ZÄÖÜ][\w.'-]*)?):\s+", re.UNICODE)
"""A conversation turn's "Name: " ("Jon: ..."); a label ("Correction: ", "Update: ") is none."""
NEGATED_ENDING = re.compile(
    r"\b(?:won'?t|will not|don'?t|do not|never|not going to|wouldn'?t|can'?t|nie|niemals)\s+"
    r"(?:\w+\s+)?(?:quit|stop|give up|leave|aufhören|aufgeben|kündigen)\b",
    re.IGNORECASE | re.UNICODE,
)


def speaker_of(text: str) -> str | None:
    """Who said a conversation turn written ``"Name: text"`` (casefolded), or None.

    >>> speaker_of("Caroline: I went to a pride parade last week."), speaker_of("I live in Bonn.")
    ('caroline', None)
    """
    match = SPEAKER.match(text)
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
    body = SPEAKER.sub("", text, count=1).strip()
    if not body or "?" in body:
        return False
    return len(sentences(body)) == 1
