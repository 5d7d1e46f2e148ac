"""The view of a text that redaction rules match on, and the way back to the original.

Every character is NFKC-normalised (full-width digits become ASCII digits), every space-like
character but a line break becomes a space (tabs, non-breaking and thin spaces), every dash-like
character a hyphen. :func:`normalise` returns the view and, per character of it, the index in
the original it came from, so that a rule's spans in the view are replaced in the original.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

Span = tuple[int, int]
"""Where a find lies: (start, end) in the view."""

_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d")
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_SPLIT_NUMBER = re.compile(rf"(?<=\d) ?(?:\r\n|[{_LINE_BREAKS}]) ?(?=\d)")


_ODD = "".join(
    c for c in map(chr, range(0x3001)) if c.isspace() and c not in _LINE_BREAKS and c != " "
) + "".join(_DASHES)
_ODD_CHAR = re.compile(f"[{re.escape(_ODD)}]")
"""Characters the view maps one to one: space-likes to a space, dashes to a hyphen."""


def _one_to_one(text: str) -> str:
    return _ODD_CHAR.sub(lambda m: "-" if m.group() in _DASHES else " ", text)


def normalise(text: str) -> tuple[str, Sequence[int]]:
    """The matching view of ``text`` and, per character of it, the index it came from.

    >>> normalise("０３０\u00a01234")[0]
    '030 1234'
    """
    if unicodedata.is_normalized("NFKC", text):
        return _one_to_one(text), range(len(text))
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        mapped = _one_to_one(unicodedata.normalize("NFKC", ch))
        chars.append(mapped)
        origin.extend([i] * len(mapped))
    return "".join(chars), origin


def join_split_numbers(view: str) -> str:
    """``view`` with each line break between two digits (and a space beside it) as spaces.

    >>> join_split_numbers("Tel. 030\\n1234567\\nBerlin")
    'Tel. 030 1234567\\nBerlin'
    """
    return _SPLIT_NUMBER.sub(lambda m: " " * len(m.group()), view)


def merge(spans: Iterable[Span]) -> list[Span]:
    """Sorted spans with overlapping ones joined."""
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
