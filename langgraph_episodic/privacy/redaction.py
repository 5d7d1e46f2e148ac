"""Redact personal data (e-mail, phone, IBAN, card numbers) before anything is stored or embedded.

Embeddings can leak what they encode, so redaction must run *before* a value reaches the
embedder or the database. :class:`Redactor` holds named rules (a regex, a replacement and an
optional check of each match); the defaults cover e-mail addresses, phone numbers, IBANs and
card numbers. Add your own with :meth:`Redactor.with_rule`.

Matching runs on a normalised view of the text, and replacements go into the original: every
character is NFKC-normalised (full-width digits become ASCII digits), every space-like character
but a line break becomes a space (tabs, non-breaking and thin spaces), every dash-like character
a hyphen. Separators between digits may be spaces, dots, slashes, underscores or hyphens, single
or doubled. Checks keep false positives low: IBANs must pass ISO 13616's mod-97 check, card
numbers the Luhn check (and start with 2-6, as card numbers do), phone numbers have 7-15 digits
and are never dates. When a check fails on a match that ran into the following words or numbers,
shorter prefixes ending at a separator are tried.

:class:`RedactingStore` wraps any LangGraph store and redacts every value put into it (and every
search query) on the way in; everything else goes straight to the inner store.

What is *not* redacted, on purpose: namespace labels and keys (they identify items; keep
personal data out of them), dict keys, and numbers (only strings are rewritten).

>>> redactor = Redactor()
>>> redactor.redact_text("Mail bob@example.org or call +49 30 1234567, card 4111 1111 1111 1111")
'Mail [EMAIL] or call [PHONE], card [CARD]'
>>> redactor.redact_text("Order 4111 1111 1111 1112 shipped")  # fails Luhn: not a card
'Order 4111 1111 1111 1112 shipped'
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, Op, PutOp, Result, SearchOp

Check = Callable[[str], bool]
"""Decides whether a regex match really is what the rule redacts (e.g. a Luhn check)."""

SEPARATORS = " .-/_()"
"""Where a failed match may be cut back to a shorter candidate (see the module docstring)."""

_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d")


@functools.lru_cache(maxsize=4096)
def _normal_char(ch: str) -> str:
    out = []
    for c in unicodedata.normalize("NFKC", ch):
        if c.isspace() and c not in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029":
            c = " "
        elif c in _DASHES:
            c = "-"
        out.append(c)
    return "".join(out)


def normalise(text: str) -> tuple[str, list[int]]:
    """The matching view of ``text`` and, per character of it, the index it came from.

    >>> normalise("０３０\u00a01234")[0]
    '030 1234'
    """
    if text.isascii() and "\t" not in text:
        return text, list(range(len(text)))
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        mapped = _normal_char(ch)
        chars.append(mapped)
        origin.extend([i] * len(mapped))
    return "".join(chars), origin


def luhn_valid(text: str) -> bool:
    """Whether the digits of ``text`` (13-19 of them) pass the Luhn checksum of card numbers.

    >>> luhn_valid("4111 1111 1111 1111"), luhn_valid("4111 1111 1111 1112")
    (True, False)
    """
    digits = [int(c) for c in text if c.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """Whether ``text`` (separators and case ignored) is an IBAN passing the mod-97 check.

    >>> iban_valid("de89-3704-0044-0532-0130-00"), iban_valid("DE89 3704 0044 0532 0130 01")
    (True, False)
    """
    compact = "".join(c for c in text if c.isalnum()).upper()
    if not (15 <= len(compact) <= 34 and compact[:2].isalpha() and compact[2:4].isdigit()):
        return False
    if not compact.isascii():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


_DATE = re.compile(r"\d{1,4}[./-]\d{1,2}[./-]\d{1,4}")


def phone_plausible(text: str) -> bool:
    """7-15 digits and not a date such as ``01.02.2024``."""
    return 7 <= sum(c.isdigit() for c in text) <= 15 and not _DATE.fullmatch(text.strip("()"))


def card_plausible(text: str) -> bool:
    """13-19 digits passing Luhn (the pattern already requires a first digit of 2-6)."""
    return luhn_valid(text)


@dataclass(frozen=True)
class RedactionRule:
    """One kind of personal data: a regex, what replaces each match, and an optional check.

    A match is replaced only when ``check`` (if given) returns True for the matched text; when
    it does not, shorter prefixes of the match that end before a separator are tried.
    """

    name: str
    pattern: re.Pattern[str]
    replacement: str
    check: Check | None = None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where in ``text`` (already normalised) this rule replaces, in order."""
        found: list[tuple[int, int]] = []
        pos = 0
        while pos <= len(text):
            match = self.pattern.search(text, pos)
            if match is None:
                break
            start, end = match.span()
            if end == start:
                pos = end + 1
                continue
            accepted = self._accepted_end(text, start, end)
            if accepted is not None:
                found.append((start, accepted))
            pos = end if accepted is None else accepted
        return found

    def _accepted_end(self, text: str, start: int, end: int) -> int | None:
        if self.check is None or self.check(text[start:end]):
            return end
        for cut in range(end - 1, start, -1):
            if text[cut] not in SEPARATORS or text[cut - 1] in SEPARATORS:
                continue
            if self.pattern.fullmatch(text, start, cut) and self.check(text[start:cut]):
                return cut
        return None

    def apply(self, text: str) -> str:
        """Return ``text`` with every (checked) match replaced."""
        view, origin = normalise(text)
        spans = self.spans(view)
        if not spans:
            return text
        out: list[str] = []
        last = 0
        for start, end in spans:
            o_start, o_end = origin[start], origin[end - 1] + 1
            out.append(text[last:o_start])
            out.append(self.replacement)
            last = o_end
        out.append(text[last:])
        return "".join(out)


_SEP = r"[ ._/\-]{0,2}"

EMAIL = RedactionRule(
    "email",
    re.compile(
        r"(?<![\w.!#$%&'*+/=?^`{|}~\-])"
        r"(?:\"[^\"\n]{1,64}\"|[\w.!#$%&'*+/=?^`{|}~\-]+)"
        r"@(?:[^\W_](?:[\w\-]{0,61}[^\W_])?\.)+(?:[^\W\d_]{2,}|xn--[a-z0-9\-]{2,})(?![\w\-])"
    ),
    "[EMAIL]",
)
IBAN = RedactionRule(
    "iban",
    # Country code, check digits, then 11-30 letters or digits, separators allowed; mod-97.
    re.compile(r"(?i)(?<![\w])[a-z]{2}\d{2}(?:[ .\-]{0,2}[a-z0-9]){11,30}(?![a-z0-9])"),
    "[IBAN]",
    check=iban_valid,
)
CARD = RedactionRule(
    "card",
    # 13-19 digits starting with 2-6, grouped by any separators; Luhn-checked.
    re.compile(rf"(?<![\w+])(?<!\d[ ._/\-])(?<!\d[ ._/\-]{{2}})[2-6](?:{_SEP}\d){{12,18}}(?!\d)"),
    "[CARD]",
    check=card_plausible,
)
PHONE = RedactionRule(
    "phone",
    re.compile(
        # Not inside a longer run of digit groups (e.g. the tail of a number that failed a check).
        r"(?<![\w+])(?<!\d[ .\-/])(?<!\d[ .\-/]{2})(?:"
        # international: +49 30 1234567, +49 (0)30 1234567, 0049 30 1234567, +1 (415) 555-0100
        r"(?:\+|00)[1-9]\d{0,3}(?:[ .\-/]{0,3}(?:\(0\)|\(\d{1,5}\)|\d{1,12}+)){1,7}+"
        # national with a leading 0: 030 1234567, (030) 123 45 67, 0151-23456789, 030/1234567
        r"|\(?0[1-9]\d{0,4}\)?(?:[ .\-/]{0,3}\d{2,}+){1,5}+"
        # North American: (415) 555-0100, 415-555-0100, 415.555.0100, 4155550100
        r"|(?:\(\d{3}\)[ .\-]{0,2}|[2-9]\d{2}[ .\-]{1,2})[2-9]\d{2}[ .\-]{1,2}\d{4}"
        r"|[2-9]\d{2}[2-9]\d{6}(?![.,]\d)"
        r")(?!\w)"
    ),
    "[PHONE]",
    check=phone_plausible,
)
# Possessive digit runs (``\d{1,12}+``) and group counts: a long run of digits is split into
# groups one way only, so a failing match costs linear time, never exponential backtracking.

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

    def __post_init__(self) -> None:
        rules = tuple(self.rules)
        for rule in rules:
            if not isinstance(rule, RedactionRule):
                raise TypeError(
                    f"Redactor rules must be RedactionRule objects, got {type(rule).__name__}. "
                    "Add a regex with Redactor().with_rule(name, pattern, replacement)."
                )
        object.__setattr__(self, "rules", rules)

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
            raise ValueError("A redaction rule needs a non-empty name, e.g. 'customer_id'.")
        compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
        rule = RedactionRule(name, compiled, replacement or f"[{name.upper()}]", check)
        if name in self.names:
            return replace(self, rules=tuple(rule if r.name == name else r for r in self.rules))
        return replace(self, rules=(*self.rules, rule))

    def without(self, *names: str) -> Redactor:
        """A new redactor without the named rules (unknown names raise ``KeyError``)."""
        unknown = set(names) - set(self.names)
        if unknown:
            raise KeyError(f"No redaction rules named {sorted(unknown)}; known: {list(self.names)}.")
        return replace(self, rules=tuple(r for r in self.rules if r.name not in names))

    def redact_text(self, text: str) -> str:
        """Return ``text`` with every rule applied."""
        if not isinstance(text, str):
            raise TypeError(
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
    if redact is None:
        return value
    out: T = redact(value)
    return out


def redact_text(text: str, redactor: Redactor = DEFAULT_REDACTOR) -> str:
    """Redact one string with ``redactor`` (the default rules unless given)."""
    return redactor.redact_text(text)


def redact_value(value: Any, redactor: Redactor = DEFAULT_REDACTOR) -> Any:
    """Redact every string inside a store value (see :meth:`Redactor.redact_value`)."""
    return redactor.redact_value(value)


class RedactingStore(BaseStore):
    """A store wrapper that redacts every value put and every search query, then delegates.

    Redaction happens before the inner store sees the op, so neither its database nor its
    embedder ever receives the original text. Reads, deletes and listings pass through
    unchanged; other attributes (``index_config``, ``sweep_ttl``, ``close`` ...) are the inner
    store's. Filters are not rewritten: a filter on a redacted field matches the placeholder.

    >>> from langgraph.store.memory import InMemoryStore
    >>> store = RedactingStore(InMemoryStore())
    >>> store.put(("users", "alice"), "contact", {"text": "write to alice@example.com"})
    >>> store.get(("users", "alice"), "contact").value
    {'text': 'write to [EMAIL]'}
    """

    def __init__(self, inner: BaseStore, redactor: Redactor | None = None) -> None:
        if not isinstance(inner, BaseStore):
            raise TypeError(
                f"RedactingStore wraps a LangGraph BaseStore, got {type(inner).__name__}."
            )
        self.inner = inner
        self.redactor = redactor or DEFAULT_REDACTOR
        self.supports_ttl = inner.supports_ttl
        self.ttl_config = inner.ttl_config

    def _rewrite(self, ops: Iterable[Op]) -> list[Op]:
        out: list[Op] = []
        for op in ops:
            if isinstance(op, PutOp) and op.value is not None:
                op = op._replace(value=self.redactor.redact_value(op.value))
            elif isinstance(op, SearchOp) and isinstance(op.query, str):
                op = op._replace(query=self.redactor.redact_text(op.query))
            out.append(op)
        return out

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Redact puts and queries, then run the batch on the inner store."""
        return self.inner.batch(self._rewrite(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async version of :meth:`batch`."""
        return await self.inner.abatch(self._rewrite(ops))

    def __getattr__(self, name: str) -> Any:
        # Only called for attributes this wrapper lacks: expose the inner store's.
        if name == "inner" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"RedactingStore({self.inner!r}, rules={list(self.redactor.names)})"
