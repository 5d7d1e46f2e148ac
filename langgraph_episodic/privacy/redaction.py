"""Redact personal data (e-mail, phone, IBAN, card numbers) before anything is stored or embedded.

Embeddings can leak what they encode, so redaction must run *before* a value reaches the
embedder or the database. :class:`Redactor` holds named rules (a regex, a replacement and an
optional check of each match); the defaults cover e-mail addresses, phone numbers, IBANs and
card numbers, the latter Luhn-checked so that order numbers are left alone. Add your own with
:meth:`Redactor.with_rule`.

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

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from langgraph.store.base import BaseStore, Op, PutOp, Result, SearchOp

Check = Callable[[str], bool]
"""Decides whether a regex match really is what the rule redacts (e.g. a Luhn check)."""


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


def _digit_count(low: int, high: int) -> Check:
    def check(text: str) -> bool:
        return low <= sum(c.isdigit() for c in text) <= high

    return check


@dataclass(frozen=True)
class RedactionRule:
    """One kind of personal data: a regex, what replaces each match, and an optional check.

    A match is replaced only when ``check`` (if given) returns True for the matched text.
    """

    name: str
    pattern: re.Pattern[str]
    replacement: str
    check: Check | None = None

    def apply(self, text: str) -> str:
        """Return ``text`` with every (checked) match replaced."""
        if self.check is None:
            return self.pattern.sub(self.replacement, text)
        check = self.check

        def sub(match: re.Match[str]) -> str:
            return self.replacement if check(match.group(0)) else match.group(0)

        return self.pattern.sub(sub, text)


EMAIL = RedactionRule(
    "email",
    re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}"),
    "[EMAIL]",
)
IBAN = RedactionRule(
    "iban",
    # Country code, check digits, then 11-30 alphanumerics in groups of four (spaces optional).
    # Not checksum-validated on purpose: a mistyped IBAN is still personal data.
    re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"),
    "[IBAN]",
    check=lambda text: 15 <= len(text.replace(" ", "")) <= 34,
)
CARD = RedactionRule(
    "card",
    # 13-19 digits, optionally grouped by single spaces or hyphens; Luhn-checked.
    re.compile(r"(?<![\w+])\d(?:[ \-]?\d){12,18}\b"),
    "[CARD]",
    check=luhn_valid,
)
PHONE = RedactionRule(
    "phone",
    re.compile(
        r"(?<![\w+])(?:"
        # international: +49 30 1234567, +1 (415) 555-0100, +44-20-7946-0958
        r"\+\d{1,3}(?:[ \-./]?\(?\d{1,5}\)?){2,6}"
        # national with a leading 0: 030 1234567, (030) 123 45 67, 0151-23456789, 030/1234567
        r"|\(?0\d{1,4}\)?[ \-/]?\d{3,}(?:[ \-]\d{2,})*"
        # North American: (415) 555-0100, 415-555-0100, 415.555.0100
        r"|\(\d{3}\) ?\d{3}[ \-.]\d{4}|\d{3}[\-.]\d{3}[\-.]\d{4}"
        r")(?!\w)"
    ),
    "[PHONE]",
    check=_digit_count(7, 15),
)

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
