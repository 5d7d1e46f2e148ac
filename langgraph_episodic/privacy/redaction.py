"""Redact personal data (e-mail, phone, IBAN, card numbers) before anything is stored or embedded.

Embeddings can leak what they encode, so redaction must run *before* a value reaches the
embedder or the database. :class:`Redactor` holds named rules; the defaults cover e-mail
addresses, phone numbers, IBANs and card numbers. Add your own with :meth:`Redactor.with_rule`.

Phone numbers: :class:`PhoneNumbers`. IBANs must pass ``python-stdnum``'s check (country
format and mod 97), card numbers its Luhn check (13-19 digits, starting with 2-6). E-mail
addresses are also caught as ``name [at] domain [dot] de`` or ``name at domain dot com``.
Rules match on a normalised view of the text (:mod:`.text_view`) and replace in the original; a
line break between two digits is read both ways, and a number glued to a word
(``Tel.017612345678``) is still a number. :class:`.RedactingStore` wraps a store with a
:class:`Redactor`.

What is *not* redacted, on purpose: namespace labels and keys (they identify items; keep
personal data out of them), dict keys, and numbers (only strings are rewritten).

>>> redactor = Redactor()
>>> redactor.redact_text("Mail bob@example.org or call +49 30 1234567, card 4111 1111 1111 1111")
'Mail [EMAIL] or call [PHONE], card [CARD]'
>>> redactor.redact_text("Order 4111 1111 1111 1112 shipped")  # fails Luhn: not a card
'Order 4111 1111 1111 1112 shipped'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import phonenumbers
from stdnum import iban, luhn

from ..errors import InvalidTypeError, InvalidValueError, KeyNotFoundError
from .text_view import Span, join_split_numbers, merge, normalise

Check = Callable[[str], bool]
"""Decides whether a regex match really is what the rule redacts (e.g. a Luhn check)."""

Finder = Callable[[str], Iterable[Span]]
"""Finds what a rule redacts in a normalised text, as (start, end) spans."""

SEPARATORS = " .-/_()"
"""Where a failed match may be cut back to a shorter candidate (see :class:`RedactionRule`)."""


def luhn_valid(text: str) -> bool:
    """Whether the digits of ``text`` (13-19 of them) pass the Luhn checksum of card numbers.

    >>> luhn_valid("4111 1111 1111 1111"), luhn_valid("4111 1111 1111 1112")
    (True, False)
    """
    digits = "".join(c for c in text if c.isdigit())
    return 13 <= len(digits) <= 19 and digits.isascii() and luhn.is_valid(digits)


def iban_valid(text: str) -> bool:
    """Whether ``text`` (separators and case ignored) is an IBAN: country format and mod 97.

    >>> iban_valid("de89-3704-0044-0532-0130-00"), iban_valid("DE89 3704 0044 0532 0130 01")
    (True, False)
    """
    compact = "".join(c for c in text if c.isalnum())
    return compact.isascii() and iban.is_valid(compact)


@dataclass(frozen=True)
class PhoneNumbers:
    """Finds phone numbers with ``phonenumbers.PhoneNumberMatcher``, in digits or in words.

    Numbers with a country code (``+49``, ``0049``, ``+1``) are found whatever the regions. One
    without is read as a national number of each of ``regions`` in turn: of the first in any
    grouping (leniency ``VALID``), of the others only grouped as that country writes them
    (``STRICT_GROUPING``: ``(415) 555-0100``, ``415.555.0100`` or ten bare digits, not
    ``2024-000187``). A word glued to a number (``Mobil017612345678``) is read as if a space
    stood between them. A bare run of digits right after the label of an order, invoice,
    customer or ticket number (``Bestellnr. 2024000187``) is that number, not a phone number.
    Seven or more digits spelled out in English or German words (``four one five, five five
    five, zero one zero zero``, ``null drei null ...``) are found when the digits they spell
    are a valid number.
    """

    regions: tuple[str, ...] = ("DE", "US")

    def __call__(self, view: str) -> list[Span]:
        found: list[Span] = []
        for start, end in merge(
            (max(m.start() - _CONTEXT, 0), m.end() + _CONTEXT) for m in _DIGITS.finditer(view)
        ):
            window = _GLUED_WORD.sub(" ", view[start:end])
            for i, region in enumerate(self.regions):
                leniency = phonenumbers.Leniency.VALID if i == 0 else _FOREIGN_LENIENCY
                for match in phonenumbers.PhoneNumberMatcher(window, region, leniency=leniency):
                    at = start + match.start
                    if match.raw_string.isdigit() and _ID_LABEL.search(view, max(at - 40, 0), at):
                        continue
                    found.append((at, start + match.end))
        found.extend(m.span() for m in _SPELLED_RUN.finditer(view) if self._valid(spelled(m[0])))
        return merge(found)

    def _valid(self, number: str) -> bool:
        for region in self.regions:
            try:
                parsed = phonenumbers.parse(number, region)
            except phonenumbers.NumberParseException:
                continue
            if phonenumbers.is_valid_number(parsed):
                return True
        return False


_DIGITS = re.compile(r"\d(?:[^\w\n]{0,3}\d){4,}")
"""Five digits or more close together: the matcher reads only around them (much faster)."""
_CONTEXT = 12
"""Characters the matcher sees on each side (``+49 (0)``, what a number is glued to)."""
_GLUED_WORD = re.compile(r"(?<=[^\W\d_])[^\W\d_](?=[+(]?\d)|(?<=\d)[^\W\d_](?=[^\W\d_])")
"""The letter of a word (two letters or more) that touches a digit."""
_FOREIGN_LENIENCY = phonenumbers.Leniency.STRICT_GROUPING
"""How national numbers of the regions after the first are read: only in that country's
grouping, so ``A-2024-000187`` is not read as the North American ``202-400-0187``."""
_ID_LABEL = re.compile(
    r"(?i)(?<![^\W\d_])(?:order|invoice|customer|ticket|tracking|bestell|auftrag|rechnung"
    r"|kunden|sendung|artikel|vorgang)\w*(?:[ .\-]*(?:nr|no|number|nummer|id)\b)?\W{0,3}$"
)
"""The label of an order, invoice, customer or ticket number, right before a run of digits."""

SPELLED_DIGITS: dict[str, str] = {
    "zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9",
    "null": "0", "eins": "1", "zwei": "2", "zwo": "2", "drei": "3", "vier": "4", "fünf": "5",
    "fuenf": "5", "sechs": "6", "sieben": "7", "acht": "8", "neun": "9",
}  # fmt: skip
"""Digit words, English and German, as people read a phone number out digit by digit."""
_DIGIT_WORD = "|".join(sorted(SPELLED_DIGITS, key=len, reverse=True))
_SPELLED_RUN = re.compile(
    rf"(?i)(?<!\w)(?:plus[ ,\-]{{1,3}})?(?:{_DIGIT_WORD})(?:[ ,;/\-]{{1,3}}(?:{_DIGIT_WORD})){{6,}}"
    r"(?!\w)"
)
"""Seven digit words or more, separated by spaces, commas or hyphens, ``plus`` before them."""


def spelled(words: str) -> str:
    """The digits that ``words`` spell (``plus`` as ``+``).

    >>> spelled("plus vier neun, drei null"), spelled("Four-One-Five oh")
    ('+4930', '4150')
    """
    digits = "".join(SPELLED_DIGITS[w.lower()] for w in re.findall(rf"(?i){_DIGIT_WORD}", words))
    return f"+{digits}" if words[:4].lower() == "plus" else digits


@dataclass(frozen=True)
class RedactionRule:
    """One kind of personal data: how to find it and what replaces each find.

    A rule finds with either ``pattern`` or ``find`` (such as :class:`PhoneNumbers`). A
    pattern's match is replaced only when ``check`` (if given) returns True for the matched text;
    when it does not, shorter prefixes of the match that end before a separator, or where a
    word is glued to a digit, are tried.
    """

    name: str
    pattern: re.Pattern[str] | None
    replacement: str
    check: Check | None = None
    find: Finder | None = None

    def __post_init__(self) -> None:
        if (self.pattern is None) == (self.find is None):
            raise InvalidValueError(
                f"Redaction rule {self.name!r} needs a pattern or a find, not both."
            )

    def spans(self, text: str) -> list[Span]:
        """Where in ``text`` (already normalised) this rule replaces, in order."""
        if self.find is not None:
            return merge(self.find(text))
        pattern = self.pattern
        if pattern is None:  # never: __post_init__ requires a pattern or a find
            return []
        found: list[Span] = []
        pos = 0
        while pos <= len(text):
            match = pattern.search(text, pos)
            if match is None:
                break
            start, end = match.span()
            if end == start:
                pos = end + 1
                continue
            accepted = self._accepted_end(pattern, text, start, end)
            if accepted is not None:
                found.append((start, accepted))
            pos = end if accepted is None else accepted
        return found

    def _accepted_end(
        self, pattern: re.Pattern[str], text: str, start: int, end: int
    ) -> int | None:
        if self.check is None or self.check(text[start:end]):
            return end
        for cut in range(end - 1, start, -1):
            before, at = text[cut - 1], text[cut]
            glued = before.isdigit() and at.isalpha()  # 013000bitte: a word glued to a number
            if not glued and (at not in SEPARATORS or before in SEPARATORS):
                continue
            if pattern.fullmatch(text, start, cut) and self.check(text[start:cut]):
                return cut
        return None

    def apply(self, text: str) -> str:
        """Return ``text`` with every (checked) find replaced."""
        view, origin = normalise(text)
        spans = self.spans(view)
        joined = join_split_numbers(view)
        if joined != view:
            spans = merge([*spans, *self.spans(joined)])
        out: list[str] = []
        last = 0
        for start, end in spans:
            out += [text[last : origin[start]], self.replacement]
            last = origin[end - 1] + 1
        return "".join([*out, text[last:]])


_LOCAL = r"[\w.!#$%&'*+/=?^`{|}~\-]"
_LABEL = r"[^\W_](?:[\w\-]{0,61}[^\W_])?"
_TLD = r"(?:[^\W\d_]{2,}|xn--[a-z0-9\-]{2,})(?![\w\-])"


def _spelled(words: str) -> str:
    """``(at)``, ``[at]``, ``<at>``, with optional spaces around and inside."""
    return rf" ?[\[(<] ?(?i:{words}) ?[\])>] ?"


EMAIL = RedactionRule(
    "email",
    re.compile(
        rf"(?<!{_LOCAL})(?:\"[^\"\n]{{1,64}}\"|{_LOCAL}++)(?:"
        # name@example.de, "john doe"@example.com, jörg@müller-bau.de
        rf"@(?:{_LABEL}\.)+{_TLD}"
        # name [at] example [dot] de, name(at)example(punkt)de, name[at]example.org
        rf"|{_spelled('at|ät|@')}"
        rf"(?:{_LABEL}(?:{_spelled('dot|punkt|[.]')}|\.| (?i:dot|punkt) ))+{_TLD}"
        # name at example dot com, name at beispiel punkt de (never "at example.com": a website)
        rf"| (?i:at) (?:{_LABEL} (?i:dot|punkt) )+{_TLD}"
        r")"
    ),
    "[EMAIL]",
)
IBAN = RedactionRule(
    "iban",
    # Country code, check digits, then 11-30 letters or digits, separators allowed; glued to
    # a word is fine (IBANDE89...): the check decides.
    re.compile(r"(?i)[a-z]{2}\d{2}(?:[ .\-]{0,2}[a-z0-9]){11,30}(?![a-z0-9])"),
    "[IBAN]",
    check=iban_valid,
)
CARD = RedactionRule(
    "card",
    # 13-19 digits starting with 2-6, grouped by any separators; Luhn-checked.
    re.compile(r"(?<![\d+])(?<!\d[ ._/\-])(?<!\d[ ._/\-]{2})[2-6](?:[ ._/\-]{0,2}\d){12,18}(?!\d)"),
    "[CARD]",
    check=luhn_valid,
)
PHONE = RedactionRule("phone", None, "[PHONE]", find=PhoneNumbers())

DEFAULT_RULES: tuple[RedactionRule, ...] = (EMAIL, IBAN, CARD, PHONE)
"""The rules of ``Redactor()``, applied in this order (IBANs and cards before phone numbers)."""


@dataclass(frozen=True)
class Redactor:
    """Rewrites strings so that personal data is replaced by a placeholder such as ``[EMAIL]``.

    Rules run in order over each string. Extend the defaults with :meth:`with_rule`, or pass
    your own ``rules``. A ``Redactor`` is also a callable on store values
    (``redactor(value) == redactor.redact_value(value)``), the shape a ``redact=`` hook takes.

    >>> r = Redactor().with_rule("ticket", r"TICKET-\\d+", "[TICKET]")
    >>> r.redact_value({"text": "see TICKET-42, mail a@b.io", "n": 3, "tags": ["x@y.de"]})
    {'text': 'see [TICKET], mail [EMAIL]', 'n': 3, 'tags': ['[EMAIL]']}
    """

    rules: tuple[RedactionRule, ...] = field(default=DEFAULT_RULES)
    phone_regions: tuple[str, ...] = ("DE", "US")
    """Where a phone number written without a country code is read as a national number
    (ISO 3166 codes, each tried; the first in any grouping, the others only in their own, see
    :class:`PhoneNumbers`): ``("DE", "AT", "CH")`` for German-speaking users."""

    def __post_init__(self) -> None:
        for rule in self.rules:
            if not isinstance(rule, RedactionRule):
                raise InvalidTypeError(
                    f"Redactor rules must be RedactionRule objects, got {type(rule).__name__}. "
                    "Add a regex with Redactor().with_rule(name, pattern, replacement)."
                )
        regions = self.phone_regions
        regions = tuple(
            str(r).upper() for r in ((regions,) if isinstance(regions, str) else regions)
        )
        if not regions or not set(regions) <= phonenumbers.SUPPORTED_REGIONS:
            raise InvalidValueError(
                f"phone_regions must be ISO 3166 country codes phonenumbers knows, got "
                f"{self.phone_regions!r}; e.g. phone_regions=('DE', 'AT', 'CH')."
            )
        phones = PhoneNumbers(regions)  # the phone rules read numbers in these regions
        rules = tuple(
            replace(r, find=phones) if isinstance(r.find, PhoneNumbers) else r for r in self.rules
        )
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "phone_regions", regions)

    @property
    def names(self) -> tuple[str, ...]:
        """The rule names, in the order they run."""
        return tuple(rule.name for rule in self.rules)

    def with_rule(
        self,
        name: str,
        pattern: str | re.Pattern[str],
        replacement: str | None = None,
        *,
        check: Check | None = None,
    ) -> Redactor:
        """A new redactor with one more rule (run after the existing ones).

        ``replacement`` defaults to ``[NAME]``. A rule with an existing name replaces it in place.
        """
        if not name:
            raise InvalidValueError("A redaction rule needs a non-empty name, e.g. 'customer_id'.")
        rule = RedactionRule(name, re.compile(pattern), replacement or f"[{name.upper()}]", check)
        if name in self.names:
            return replace(self, rules=tuple(rule if r.name == name else r for r in self.rules))
        return replace(self, rules=(*self.rules, rule))

    def without(self, *names: str) -> Redactor:
        """A new redactor without the named rules (unknown names raise ``KeyError``)."""
        unknown = set(names) - set(self.names)
        if unknown:
            raise KeyNotFoundError(
                f"No redaction rules named {sorted(unknown)}; known: {list(self.names)}."
            )
        return replace(self, rules=tuple(r for r in self.rules if r.name not in names))

    def redact_text(self, text: str) -> str:
        """Return ``text`` with every rule applied."""
        if not isinstance(text, str):
            raise InvalidTypeError(
                f"redact_text takes a str, got {type(text).__name__}; use redact_value for "
                "dicts and lists."
            )
        for rule in self.rules:
            text = rule.apply(text)
        return text

    def redact_value(self, value: Any) -> Any:
        """Return a copy of ``value`` with every string inside dicts, lists and tuples redacted.

        Dict keys and non-string scalars (numbers, booleans, None) are kept as they are.
        """
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, Mapping):
            return {k: self.redact_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.redact_value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.redact_value(v) for v in value)
        return value

    def __call__(self, value: Any) -> Any:
        return self.redact_value(value)


DEFAULT_REDACTOR = Redactor()
"""The redactor with :data:`DEFAULT_RULES`."""


SaveRedactor = Callable[[Any], Any]
"""Rewrites a value a model decided to save (``Redactor()`` is one); ``None`` turns it off."""

T = TypeVar("T")


def redact_saved(value: T, redact: SaveRedactor | None) -> T:
    """``value`` as the memory tools, user profiles and entity extraction save it.

    What a model decides to save is redacted by default: those components take
    ``redact=DEFAULT_REDACTOR`` and call this before anything reaches the store (and, for
    entity extraction, before the text reaches the model). Pass ``redact=None`` to them to
    keep personal data verbatim, or your own :class:`Redactor`. A store's own ``redact=``
    (``ChromaStore(redact=...)``, :class:`RedactingStore`) stays opt-in and covers every write.

    >>> redact_saved("mail a@b.io", DEFAULT_REDACTOR), redact_saved("mail a@b.io", None)
    ('mail [EMAIL]', 'mail a@b.io')
    """
    return value if redact is None else redact(value)


def redact_text(text: str, redactor: Redactor = DEFAULT_REDACTOR) -> str:
    """Redact one string with ``redactor`` (the default rules unless given)."""
    return redactor.redact_text(text)


def redact_value(value: Any, redactor: Redactor = DEFAULT_REDACTOR) -> Any:
    """Redact every string inside a store value (see :meth:`Redactor.redact_value`)."""
    return redactor.redact_value(value)
