"""Decide whether a text is worth storing as a memory.

Greetings, thanks and bare acknowledgements (German or English) and very short texts carry
nothing to remember. Note the tempting one-liner ``not all(word in text for word in TRIVIA)``
is wrong: it is true for almost any text. Here a text is trivial only when *every one of its
words* is a trivial word.
"""

from __future__ import annotations

import re

_TRIVIAL_TEXT = """
    hi hallo hello hey moin servus tschüss tschuess ciao bye goodbye danke dank thanks thank thx
    you ok okay okey ja nein yes no yep nope gut good super toll prima cool fine great nice sure
    alles klar verstanden understood got it bitte please gerne welcome genau right alright
    morgen guten abend tag good morning evening night gute nacht na wie gehts geht's how are
    lol haha hmm hm ah oh aha mhm jo jep vielen dank schön schoen sehr very much many
a lot so sounds dir passt schon perfekt perfect passt's wunderbar awesome cheers merci
"""
TRIVIAL_WORDS: frozenset[str] = frozenset(_TRIVIAL_TEXT.split())

_WORD = re.compile(r"[\w']+", re.UNICODE)


def is_worth_storing(text: str, *, min_chars: int = 12, min_words: int = 3) -> bool:
    """Return True when ``text`` holds something worth remembering.

    A text is refused when it is shorter than ``min_chars`` characters or ``min_words`` words,
    or when every word in it is a greeting, thanks or acknowledgement.

    >>> is_worth_storing("Ich bevorzuge Python für Datenanalyse")
    True
    >>> is_worth_storing("Danke, alles klar!")
    False
    """
    stripped = text.strip()
    if len(stripped) < min_chars:
        return False
    words = [w.lower() for w in _WORD.findall(stripped)]
    if len(words) < min_words:
        return False
    return not all(word in TRIVIAL_WORDS for word in words)


__all__ = ["TRIVIAL_WORDS", "is_worth_storing"]
