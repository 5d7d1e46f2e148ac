"""When a fact became true: a date expression in its text, resolved against the message's time.

"Ich wohne seit letzter Woche in Berlin", "I have worked at Globex since last March", "2019
habe ich geheiratet": the expression is found by a small pattern catalogue (German and
English: days, weeks, months, years before now, month names, years, written dates) and then
resolved by ``dateparser`` with the message's time as ``RELATIVE_BASE``, so nothing depends
on the machine's clock. A fact without an expression became true when it was said.

A phrase that looks like a date ("seit Ostern", "since the wedding") but cannot be resolved
keeps the message's time and says so (:attr:`ResolvedDate.note`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

logger = logging.getLogger(__name__)

_MONTHS_DE = (
    "januar|jänner|februar|märz|maerz|april|mai|juni|juli|august|september|oktober|november"
    "|dezember"
)
_MONTHS_EN = "january|february|march|april|may|june|july|august|september|october|november|december"
_MONTHS = f"{_MONTHS_DE}|{_MONTHS_EN}"
_DAYS = (
    "montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|monday|tuesday|wednesday"
    "|thursday|friday|saturday|sunday"
)
_UNITS = (
    "tag|tagen|woche|wochen|monat|monaten|jahr|jahren|day|days|week|weeks|month|months|year|years"
)
_COUNT = r"\d+|einem|einer|eins|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|a|an|one|two|three|four|five|six|seven|eight|nine|ten"
_LAST = r"letzte[nmrs]?|vorige[nmrs]?|vergangene[nmrs]?|diese[nmrs]?|nächste[nmrs]?|kommende[nmrs]?|last|past|this|next|coming"

# Most specific first: the first pattern that matches anywhere in the text wins.
_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE | re.UNICODE)
    for p in (
        r"\b\d{4}-\d{2}-\d{2}\b",
        r"\b\d{1,2}\.\s?\d{1,2}\.\s?\d{2,4}\b",
        rf"\b\d{{1,2}}\.?\s+(?:{_MONTHS})\s+\d{{4}}\b",
        rf"\b(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b",
        rf"\b(?:seit|since|for)\s+(?:{_COUNT})\s+(?:{_UNITS})\b",
        rf"\b(?:vor\s+(?:{_COUNT})\s+(?:{_UNITS}))\b",
        rf"\b(?:(?:{_COUNT})\s+(?:{_UNITS})\s+ago)\b",
        rf"\b(?:{_LAST})\s+(?:woche|monat|jahr|week|month|year|{_DAYS}|{_MONTHS})\b",
        rf"\b(?:anfang|mitte|ende|early|mid|late)?\s*(?:{_MONTHS})(?:\s+\d{{4}})?\b",
        r"\b(?:anfang|mitte|ende|early|mid|late)\s+(?:19|20)\d{2}\b",
        r"\b(?:vorgestern|gestern|heute|yesterday|today)\b",
        r"(?<![\w.])(?:19|20)\d{2}(?![\w.])",
    )
)
_UNRESOLVED_HINT = re.compile(r"\b(?:seit|since)\s+((?:dem\s+|der\s+|the\s+)?[\w.-]+)", re.IGNORECASE)
"""Text after "seit"/"since" that names a time no pattern knows (kept as a note when unparsed)."""

_FUTURE_HINT = re.compile(
    r"\b(?:ab|nächste[nmrs]?|kommende[nmrs]?|werde|wird|will|going to|next|coming|from)\b",
    re.IGNORECASE,
)
_RELATIVE = re.compile(
    rf"\b(?:vor|ago|{_LAST}|gestern|vorgestern|heute|yesterday|today)\b", re.IGNORECASE
)
_GERMAN_FORMS = (
    # dateparser knows the nominative forms; the text has the dative ones ("seit letzter Woche").
    (re.compile(r"\b(?:letzte[nmrs]?|vorige[nmrs]?|vergangene[nmrs]?)\s+woche\b", re.I),
     "letzte Woche"),
    (re.compile(r"\b(?:letzte[nmrs]?|vorige[nmrs]?|vergangene[nmrs]?)\s+jahr\b", re.I),
     "letztes Jahr"),
    (re.compile(r"\b(?:letzte[nmrs]?|vorige[nmrs]?|vergangene[nmrs]?)\s+monat\b", re.I),
     "letzten Monat"),
    (re.compile(r"\bdiese[nmrs]?\s+jahr\b", re.I), "dieses Jahr"),
    (re.compile(r"\bdiese[nmrs]?\s+monat\b", re.I), "diesen Monat"),
    (re.compile(r"\bdiese[nmrs]?\s+woche\b", re.I), "diese Woche"),
    (re.compile(r"\b(?:nächste[nmrs]?|kommende[nmrs]?)\s+woche\b", re.I), "nächste Woche"),
    (re.compile(r"\b(?:nächste[nmrs]?|kommende[nmrs]?)\s+jahr\b", re.I), "nächstes Jahr"),
    (re.compile(r"\b(?:nächste[nmrs]?|kommende[nmrs]?)\s+monat\b", re.I), "nächsten Monat"),
    # "letzten Montag", "last March": the weekday / month itself, taken from the past below.
    (re.compile(rf"\b(?:letzte[nmrs]?|vorige[nmrs]?|vergangene[nmrs]?|last|past)\s+((?:{_DAYS}|{_MONTHS}))\b", re.I),
     r"\1"),
    (re.compile(r"\b(?:anfang|mitte|ende|early|mid|late)\s+", re.I), ""),
    # A duration up to now ("seit drei Jahren", "for two years") began that long ago.
    (re.compile(rf"\bseit\s+((?:{_COUNT})\s+(?:{_UNITS}))\b", re.I), r"vor \1"),
    (re.compile(rf"\b(?:since|for)\s+((?:{_COUNT})\s+(?:{_UNITS}))\b", re.I), r"\1 ago"),
    (re.compile(r"\bvor\s+(?:einem|einer|eins)\b", re.I), "vor 1"),
    (re.compile(r"\bmaerz\b", re.I), "März"),
)


@dataclass(frozen=True)
class ResolvedDate:
    """When a fact became true, and how that was found.

    ``when`` is timezone-aware (UTC). ``expression`` is the phrase of the text it came from
    (``None``: the message's time). ``precision`` is ``"year"``, ``"month"`` or ``"day"`` (for
    display). ``note`` says when a phrase looked like a date but could not be resolved.
    """

    when: datetime
    expression: str | None = None
    precision: str = "day"
    note: str | None = None


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC (a naive datetime is taken as UTC)."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


_MONTH = re.compile(rf"\b(?:{_MONTHS})\b", re.IGNORECASE)


_DEADLINE = re.compile(r"\b(?:bis|bis zum|bis zur|until|till|by|before|bevor|vor dem)\s*$", re.I)
_LAST_MONTH = re.compile(
    rf"\b(?:letzte[nmrs]?|vorige[nmrs]?|vergangene[nmrs]?|last|past)\s+(?:{_MONTHS})\b",
    re.IGNORECASE,
)


def _lowercase_month(expression: str) -> bool:
    """A month name written in lower case ("may", "mai"): months are capitalised in both
    languages, so this is a word, not a date."""
    return any(m.group(0)[0].islower() for m in _MONTH.finditer(expression))


def _language(text: str) -> list[str]:
    german = len(re.findall(r"\b(?:ich|seit|und|der|die|das|ist|bin|habe|wohne|arbeite|mein|meine|nicht|mehr|vor|bei|nach|im|jetzt)\b", text, re.I))
    english = len(re.findall(r"\b(?:i|since|and|the|is|am|have|live|work|my|not|ago|at|to|in|now|anymore)\b", text, re.I))
    if german > english:
        return ["de", "en"]
    return ["en", "de"]


def _normalised(expression: str) -> str:
    out = expression
    for pattern, replacement in _GERMAN_FORMS:
        out = pattern.sub(replacement, out)
    return out.strip()


def _precision(expression: str) -> str:
    duration = re.search(rf"\b(?:{_COUNT})\s+({_UNITS})\b", expression, re.I)
    if duration is not None:
        unit = duration.group(1).casefold()
        return "year" if unit.startswith(("jahr", "year")) else (
            "month" if unit.startswith(("monat", "month")) else "day")
    if re.search(r"\d{1,2}\.\s?\d{1,2}\.|\d{4}-\d{2}-\d{2}|\d{1,2}\.?\s+[a-zä]|[a-z]\s+\d{1,2}(?:st|nd|rd|th)?,", expression, re.I):
        return "day"
    if re.search(rf"\b(?:{_MONTHS}|monat|month)\b", expression, re.I):
        return "month"
    if re.search(r"\b(?:jahr|jahren|year|years)\b|^(?:19|20)\d{2}$|(?:19|20)\d{2}$", expression, re.I):
        return "year"
    return "day"


def _parse(expression: str, base: datetime, languages: list[str], future: bool) -> datetime | None:
    import dateparser  # imported on first use: loading its language data takes a while

    normalised = _normalised(expression)
    relative = _RELATIVE.search(normalised) is not None and _MONTH.search(expression) is None
    settings: dict[str, Any] = {
        "RELATIVE_BASE": base.replace(tzinfo=None),
        "PREFER_DATES_FROM": "future" if future else "past",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    if re.search(r"\d{1,2}\.\s?\d{1,2}\.", expression):
        settings["DATE_ORDER"] = "DMY"
    if not relative:
        # "März", "2019": the period's start, not today's day of that month.
        settings["PREFER_DAY_OF_MONTH"] = "first"
        settings["PREFER_MONTH_OF_YEAR"] = "first"
    found = dateparser.parse(normalised, languages=languages, settings=settings)
    if found is None:
        return None
    if (_LAST_MONTH.search(expression) and (found.year, found.month) == (base.year, base.month)):
        found = found.replace(year=found.year - 1)  # "last June", said in June
    return found.replace(tzinfo=timezone.utc)


def resolve_date(text: str, said_at: datetime) -> ResolvedDate:
    """When the fact in ``text`` became true, relative to ``said_at`` (the message's time).

    >>> from datetime import datetime, timezone
    >>> now = datetime(2026, 6, 15, 12, tzinfo=timezone.utc)
    >>> resolve_date("Ich wohne seit letzter Woche in Berlin.", now).when.date()
    datetime.date(2026, 6, 8)
    >>> resolve_date("I have worked at Globex since 2019.", now).when.date()
    datetime.date(2019, 1, 1)
    >>> resolve_date("Ich wohne in Berlin.", now).expression is None
    True
    """
    base = as_utc(said_at)
    languages = _language(text)
    future = _FUTURE_HINT.search(text) is not None
    for pattern in _PATTERNS:
        match = pattern.search(text)
        if match is None or not match.group(0).strip():
            continue
        expression = match.group(0).strip()
        if _lowercase_month(expression):
            continue  # "I may move", "im mai" as a verb or typo: not a date
        if _DEADLINE.search(text[: match.start()]):
            return ResolvedDate(base)  # "bis Juni", "by 2027": an end or a goal, not a start
        when = _parse(expression, base, languages, future)
        if when is not None:
            return ResolvedDate(when, expression, _precision(expression))
        logger.info("date %r in %r not understood; using the message's time", expression, text)
        return ResolvedDate(base, expression, "day", note=f"Datum nicht erkannt: {expression!r}")
    hint = _UNRESOLVED_HINT.search(text)
    if hint is not None:
        phrase = hint.group(0)
        # A bare count ("seit drei ..." of no known unit) is no date: dateparser would read it as
        # a day of this month.
        countless = re.fullmatch(_COUNT, hint.group(1), re.IGNORECASE) is None
        when = _parse(hint.group(1), base, languages, future) if countless else None
        if when is not None:
            return ResolvedDate(when, phrase, _precision(hint.group(1)))
        return ResolvedDate(base, phrase, "day", note=f"Datum nicht erkannt: {phrase!r}")
    return ResolvedDate(base)


_MONTH_NAMES = {
    "de": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
           "Oktober", "November", "Dezember"),
    "en": ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"),
}


def format_date(moment: datetime, precision: str = "month", *, locale: str = "de") -> str:
    """``moment`` for an answer: ``"März 2026"`` / ``"March 2026"``, ``"2019"`` for a year,
    ``"8. Juni 2026"`` / ``"8 June 2026"`` for a day.

    >>> from datetime import datetime
    >>> format_date(datetime(2026, 3, 1), "month")
    'März 2026'
    >>> format_date(datetime(2026, 3, 8), "day", locale="en")
    '8 March 2026'
    """
    lang = "en" if locale.startswith("en") else "de"
    month = _MONTH_NAMES[lang][moment.month - 1]
    if precision == "year":
        return str(moment.year)
    if precision == "day":
        return f"{moment.day}. {month} {moment.year}" if lang == "de" else (
            f"{moment.day} {month} {moment.year}")
    return f"{month} {moment.year}"
