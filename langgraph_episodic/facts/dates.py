"""When a fact became true: a date expression in its text, resolved against the message's time.

"Ich wohne seit letzter Woche in Berlin", "I have worked at Globex since last March", "2019
habe ich geheiratet": the expression is found by a small pattern catalogue (German and
English: days, weeks, months, years before now, month names, years, written dates) and then
resolved by ``dateparser`` with the message's time as ``RELATIVE_BASE``, so nothing depends
on the machine's clock. A fact without an expression became true when it was said.

A phrase that looks like a date ("seit Ostern", "since the wedding", "seit dem 32. Mai",
"seit -5 Jahren") but cannot be resolved keeps the message's time and says so
(:attr:`ResolvedDate.note`). A number that is a model year or a count ("a 2015 Toyota", "2019
stamps") is no date at all. Years are 1-9999 ("seit dem Jahr 800").
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ..errors import InvalidValueError

logger = logging.getLogger(__name__)


def word_set(text: str) -> frozenset[str]:
    """The words of ``text`` (split at whitespace): a rule's word list written as data."""
    return frozenset(text.split())


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

_YEAR_OF = (
    r"(?:im|(?:seit|ab|in|nach)\s+dem|(?:since|in|from|after)\s+the)\s+(?:jahre?|year)"
)
"""Words that make the number after them a year ("seit dem Jahr 800", "in the year 1850")."""

# Most specific first: the first pattern that matches anywhere in the text wins. A ``day``
# group is the written day, checked against the parsed date ("32. Mai" is no day of May); a
# ``year`` group is a year taken as it is written (years 1-9999, not through dateparser).
_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE | re.UNICODE)
    for p in (
        r"\b\d{4}-\d{2}-(?P<day>\d{2})\b",
        r"\b(?P<day>\d{1,2})\.\s?\d{1,2}\.\s?\d{2,4}\b",
        rf"\b(?P<day>\d{{1,2}})\.?\s+(?:{_MONTHS})\s+\d{{4}}\b",
        rf"\b(?:{_MONTHS})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+\d{{4}}\b",
        rf"\b(?P<day>\d{{1,2}})\.?\s+(?:{_MONTHS})\b",
        rf"\b(?:{_MONTHS})\s+(?P<day>\d{{1,2}})(?:(?:st|nd|rd|th)\b|(?=\s*(?:[,.;!?)]|$)))",
        rf"\b(?:seit|since|for)\s+(?:{_COUNT})\s+(?:{_UNITS})\b",
        rf"\b(?:vor\s+(?:{_COUNT})\s+(?:{_UNITS}))\b",
        rf"\b(?:(?:{_COUNT})\s+(?:{_UNITS})\s+ago)\b",
        rf"\b(?:{_LAST})\s+(?:woche|monat|jahr|week|month|year|{_DAYS}|{_MONTHS})\b",
        rf"\b{_YEAR_OF}\s+(?P<year>\d{{1,4}})\b(?![.,:]\d)",
        rf"\b(?:anfang|mitte|ende|early|mid|late)?\s*(?:{_MONTHS})(?:\s+\d{{4}})?\b",
        r"\b(?:anfang|mitte|ende|early|mid|late)\s+(?:19|20)\d{2}\b",
        r"\b(?:vorgestern|gestern|heute|yesterday|today)\b",
        r"(?<![\w.])(?P<bare>(?P<year>(?:19|20)\d{2}))(?!\w|[.,:]\d)",
        r"\b(?:seit|since)\s+(?P<year>\d{4})\b(?![.,:]\d)",
    )
)
_NEGATIVE_SPAN = re.compile(
    rf"(?:\b(?:seit|since|for|vor)\s+)?(?<!\w)[-−–]\s?\d+\s+(?:{_UNITS})\b(?:\s+ago\b)?",
    re.IGNORECASE,
)
"""A span below zero ("seit -5 Jahren", "-5 years ago"): no date, kept as a note."""

_NOT_BEFORE_A_YEAR = word_set(
    "a an my our your his her their ein eine einen einem einer eines mein meine meinen meinem "
    "meiner meines unser unsere unseren unserem unserer dein deine deinen deinem deiner sein "
    "seine seinen seinem seiner ihre ihren ihrem ihrer baujahr modelljahr jahrgang model vintage"
)
"""Words after which a four-digit number is a model year or a count, never a time ("a 2015
Toyota", "meinen 2015 Golf", "Baujahr 2015")."""
_TIME_WORDS = word_set(
    "seit since in im ab from bis until till by von vom um around circa ca anno of after before "
    "nach vor anfang mitte ende early mid late jahr year sommer winter summer"
)
"""Words after which a four-digit number is a year ("seit 2019 Briefmarken")."""
_NOT_A_NOUN_EN = word_set(
    "and or but when where as after before until till in at on to with for from of i we he she "
    "they it was were is has had have onwards then so because while already still ago"
)
"""English words that can follow a year ("2019 and", "2019 I moved"): any other word after
the number is read as its noun ("2019 stamps")."""

_UNRESOLVED_HINT = re.compile(r"\b(?:seit|since)\s+((?:dem\s+|der\s+|the\s+)?[\w.-]+)", re.IGNORECASE)
"""Text after "seit"/"since" that names a time no pattern knows (kept as a note when unparsed)."""

_FUTURE_HINT = re.compile(
    r"\b(?:ab|nächste[nmrs]?|kommende[nmrs]?|werde|wird|will|going to|next|coming|from)\b",
    re.IGNORECASE,
)
_RELATIVE = re.compile(
    rf"\b(?:vor|ago|{_LAST}|gestern|vorgestern|heute|yesterday|today)\b", re.IGNORECASE
)
_BEFORE = r"(?:letzte[nmrs]?|vorige[nmrs]?|vergangene[nmrs]?)"
_NEXT = r"(?:nächste[nmrs]?|kommende[nmrs]?)"
_GERMAN_FORMS = (
    # dateparser knows the nominative forms; the text has the dative ones ("seit letzter Woche").
    *((re.compile(rf"\b{which}\s+{unit}\b", re.I), form) for which, unit, form in (
        (_BEFORE, "woche", "letzte Woche"), (_BEFORE, "jahr", "letztes Jahr"),
        (_BEFORE, "monat", "letzten Monat"), ("diese[nmrs]?", "jahr", "dieses Jahr"),
        ("diese[nmrs]?", "monat", "diesen Monat"), ("diese[nmrs]?", "woche", "diese Woche"),
        (_NEXT, "woche", "nächste Woche"), (_NEXT, "jahr", "nächstes Jahr"),
        (_NEXT, "monat", "nächsten Monat"))),
    # "letzten Montag", "last March": the weekday / month itself, taken from the past below.
    (re.compile(rf"\b(?:{_BEFORE}|last|past)\s+((?:{_DAYS}|{_MONTHS}))\b", re.I), r"\1"),
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
    """``moment`` in UTC (a naive datetime is taken as UTC). One whose offset moves it out of
    the years 1-9999 (``9999-12-31T23:00:00-05:00``) raises ``ValueError``."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:
        raise InvalidValueError(
            f"{moment.isoformat()} is outside the years 0001-9999 once converted to UTC."
        ) from None


_MONTH = re.compile(rf"\b(?:{_MONTHS})\b", re.IGNORECASE)


_DEADLINE = re.compile(r"\b(?:bis|bis zum|bis zur|until|till|by|before|bevor|vor dem)\s*$", re.I)
_LAST_MONTH = re.compile(rf"\b(?:{_BEFORE}|last|past)\s+(?:{_MONTHS})\b", re.IGNORECASE)


def _lowercase_month(expression: str) -> bool:
    """A month name written in lower case ("may", "mai"): months are capitalised in both
    languages, so this is a word, not a date."""
    return any(m.group(0)[0].islower() for m in _MONTH.finditer(expression))


def _language(text: str) -> list[str]:
    german = len(re.findall(r"\b(?:ich|seit|und|der|die|das|ist|bin|habe|wohne|arbeite|mein|meine|nicht|mehr|vor|bei|nach|im|jetzt)\b", text, re.I))
    english = len(re.findall(r"\b(?:i|since|and|the|is|am|have|live|work|my|not|ago|at|to|in|now|anymore)\b", text, re.I))
    return ["de", "en"] if german > english else ["en", "de"]


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
    if re.search(r"\d{1,2}\.\s?\d{1,2}\.|\d{4}-\d{2}-\d{2}|\d{1,2}\.?\s+[a-zä]|[a-z]\s+\d{1,2}(?:st|nd|rd|th)?\b", expression, re.I):
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
    try:
        found = dateparser.parse(normalised, languages=languages, settings=settings)
    except (OverflowError, ValueError):  # a span reaching before the year 1
        return None
    if found is None:
        return None
    if (_LAST_MONTH.search(expression) and (found.year, found.month) == (base.year, base.month)
            and found.year > 1):
        found = found.replace(year=found.year - 1)  # "last June", said in June
    return found.replace(tzinfo=timezone.utc)


def _a_number(text: str, match: re.Match[str], english: bool) -> bool:
    """Whether the four digits of ``match`` are a model year or a count, not a time: after an
    article, a possessive or "Baujahr" ("a 2015 Toyota"), or, with no time word before them,
    before a noun ("I have 2019 stamps", "Ich habe 2019 Briefmarken"; German nouns are
    capitalised, so "Ich habe 2019 geheiratet" stays a year)."""
    before = re.search(r"(\w+)\s+$", text[: match.start()])
    word = before.group(1).casefold() if before is not None else None
    if word in _NOT_BEFORE_A_YEAR:
        return True
    if word is None or word in _TIME_WORDS:
        return False
    after = re.match(r"\s+(\w+)", text[match.end():])
    if after is None:
        return False
    noun = after.group(1)
    if noun[0].isupper():
        return noun != "I"
    return english and noun.casefold() not in _NOT_A_NOUN_EN


def _unsure(base: datetime, expression: str) -> ResolvedDate:
    """The message's time, with a note that ``expression`` looked like a date but was none."""
    logger.info("date %r not understood; using the message's time", expression)
    return ResolvedDate(base, expression, "day", note=f"Datum nicht erkannt: {expression!r}")


def _resolved(
    match: re.Match[str], base: datetime, languages: list[str], future: bool
) -> ResolvedDate:
    """The date ``match`` names, or the message's time with a note when it names none."""
    expression = match.group(0).strip()
    groups = match.groupdict()
    if groups.get("year") is not None:
        year = int(groups["year"])
        if not 1 <= year <= 9999:
            return _unsure(base, expression)
        return ResolvedDate(datetime(year, 1, 1, tzinfo=timezone.utc), expression, "year")
    when = _parse(expression, base, languages, future)
    if when is None or (groups.get("day") is not None and when.day != int(groups["day"])):
        return _unsure(base, expression)  # dateparser reads "32. Mai" as May 1932
    return ResolvedDate(when, expression, _precision(expression))


def resolve_date(text: str, said_at: datetime) -> ResolvedDate:
    """When the fact in ``text`` became true, relative to ``said_at`` (the message's time).

    A phrase that looks like a date but names none ("seit dem 32. Mai", "seit -5 Jahren")
    keeps ``said_at`` and says so in :attr:`ResolvedDate.note`; a number that is a model year
    or a count ("a 2015 Toyota", "2019 stamps") is no date at all.

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
    negative = _NEGATIVE_SPAN.search(text)
    if negative is not None:
        return _unsure(base, negative.group(0).strip())
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            if not match.group(0).strip() or _lowercase_month(match.group(0)):
                continue  # "I may move", "im mai" as a verb or typo: not a date
            if "bare" in pattern.groupindex and _a_number(text, match, languages[0] == "en"):
                continue  # "a 2015 Toyota", "2019 stamps": a number, not a time
            if _DEADLINE.search(text[: match.start()]):
                return ResolvedDate(base)  # "bis Juni", "by 2027": an end or a goal, not a start
            return _resolved(match, base, languages, future)
    hint = _UNRESOLVED_HINT.search(text)
    if hint is not None:
        phrase = hint.group(0)
        # A bare number ("seit drei ..." of no known unit, "seit 800", "seit -5") is no date:
        # dateparser would read it as a day of this month.
        bare = re.sub(r"^(?:dem|der|the)\s+", "", hint.group(1), flags=re.IGNORECASE).rstrip(".")
        countless = re.fullmatch(rf"[-−–+]?(?:{_COUNT})", bare, re.IGNORECASE) is None
        when = _parse(hint.group(1), base, languages, future) if countless else None
        if when is not None:
            return ResolvedDate(when, phrase, _precision(hint.group(1)))
        return _unsure(base, phrase)
    return ResolvedDate(base)


_MONTH_NAMES = {
    "de": ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
           "Oktober", "November", "Dezember"),
    "en": ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"),
}
_DAY_FORMS = {"de": "{day}. {month} {year}", "en": "{day} {month} {year}"}


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
        return _DAY_FORMS[lang].format(day=moment.day, month=month, year=moment.year)
    return f"{month} {moment.year}"
