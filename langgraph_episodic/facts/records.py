"""A fact's life as an ordinary store value: when it became true, when it was recorded, and
once replaced, when it stopped and what replaced it.

A fact is one store item (``{"text": ..., "kind": "fact", ...}``), so filters, TTL, export and
forgetting work on it as on any item. Its versions are separate items: the current one has
``current=True`` and ``valid_to=None``; a replaced one keeps its text and gets ``valid_to``
and ``superseded_by`` (the key of its successor), or ``ended_by`` when the fact just stopped
("Ich habe keinen Hund mehr"). All versions of one fact share ``lineage`` (the key of the
first), and :func:`lineage_op` reads them. Times are UTC ISO strings of one fixed shape, so they also compare as strings
(``filter={"valid_from": {"$lte": ...}}`` works on every store): :func:`to_iso` writes them and
:func:`from_iso` reads them, here and nowhere else.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from langgraph.store.base import Item, SearchOp

from ..errors import InvalidValueError
from .dates import as_utc

logger = logging.getLogger(__name__)

FACT_KIND = "fact"
"""The ``kind`` of every fact record."""

_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Return ``text`` casefolded with runs of whitespace collapsed, the basis of dedup keys."""
    return _SPACE.sub(" ", text).strip().casefold()


def memory_key(text: str, *, scope: str = "") -> str:
    """Return a deterministic key for a fact: the same text (up to case and spacing) gives one key.

    ``scope`` is mixed in when keys share one flat id space (a vector store), so the same fact
    saved by two users gets two keys.
    """
    digest = hashlib.blake2b(f"{scope}\x00{normalise(text)}".encode(), digest_size=16)
    return f"fact-{digest.hexdigest()}"


CURRENT_FILTER: dict[str, Any] = {"current": {"$ne": False}}
"""The search filter that keeps current facts (and memories stored before facts had periods:
they have no ``current`` field) and drops every replaced version. ``$ne`` matches a missing
field on ``InMemoryStore`` and ``ChromaStore`` alike."""
FACT_FILTER: dict[str, Any] = {"kind": FACT_KIND, **CURRENT_FILTER}
"""Current fact records (and facts saved before they had periods)."""
LINEAGE_SCAN = 50
"""Most versions read of one fact (its lineage)."""


def lineage_op(ns: Iterable[str], lineage: str, current: bool | None = None, *,
               refresh_ttl: bool = False) -> SearchOp:
    """The read of a fact's versions in ``ns``: all of them, or the current (``current=True``)
    or the replaced ones (``False``)."""
    where: dict[str, Any] = {"lineage": lineage}
    if current is not None:
        where["current"] = current
    return SearchOp(tuple(ns), filter=where, limit=LINEAGE_SCAN, refresh_ttl=refresh_ttl)


def own_items(items: Iterable[Item | None], ns: tuple[str, ...]) -> list[Item]:
    """Items of exactly ``ns`` (a search also returns sub-namespaces), once each, in order."""
    kept: dict[str, Item] = {}
    for item in items:
        if item is not None and tuple(item.namespace) == ns:
            kept.setdefault(item.key, item)
    return list(kept.values())


TIME_RANGE = (
    "an ISO date or time between 0001-01-01 and 9999-12-31 (UTC), e.g. 2026-03-01 or "
    "2026-03-01T12:00:00Z"
)
"""What :func:`from_iso` accepts, for error messages."""

_UNPADDED_YEAR = re.compile(r"\d{1,3}(?=-\d)")
"""A year of fewer than four digits at the start ("800-01-01T..."): records were written so
before the format padded the year."""

_TIME_FIELDS = ("valid_from", "recorded_at", "valid_to", "confirmed_at")
"""The record fields that hold times (normalised by :meth:`FactRecord.from_value`)."""


def to_iso(moment: datetime) -> str:
    """``moment`` as the records' time string (UTC, four-digit year, microseconds, ``Z``), the
    one shape every record time is written in: for years 1-9999 these strings sort as the
    moments do. A naive ``moment`` is taken as UTC; one outside the years 1-9999 in UTC raises
    ``ValueError``.

    >>> to_iso(datetime(2026, 3, 1))
    '2026-03-01T00:00:00.000000Z'
    >>> to_iso(datetime(800, 1, 1))
    '0800-01-01T00:00:00.000000Z'
    """
    u = as_utc(moment)
    # By hand, not strftime("%Y"): glibc does not pad years below 1000 ("800-01-01").
    return (f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:"
            f"{u.second:02d}.{u.microsecond:06d}Z")


def from_iso(text: str) -> datetime:
    """The UTC datetime of a record's time string. Lenient: also other ISO forms (a date,
    an offset, no fraction) and the unpadded years records were once written with
    (``"800-01-01T00:00:00.000000Z"``); a time without offset is UTC. Anything else, or a time
    outside the years 1-9999 in UTC, raises ``ValueError`` naming what is accepted.

    >>> from_iso("0800-01-01T00:00:00.000000Z") == from_iso("800-01-01")
    True
    """
    raw = text.strip()
    if raw[-1:] in ("Z", "z"):
        raw = raw[:-1] + "+00:00"
    short = _UNPADDED_YEAR.match(raw)
    if short is not None:
        raw = short.group(0).zfill(4) + raw[short.end():]
    try:
        return as_utc(datetime.fromisoformat(raw))
    except ValueError:
        raise InvalidValueError(f"{text!r} is not {TIME_RANGE}.") from None


_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")
"""The shape :func:`to_iso` writes."""


def _written(text: str) -> bool:
    """Whether ``text`` is a time as :func:`to_iso` writes it (shape and values: no month 13)."""
    if _SHAPE.fullmatch(text) is None:
        return False
    try:
        datetime.fromisoformat(text[:-1])
    except ValueError:
        return False
    return True


def canonical(text: str) -> str:
    """``text`` (any form :func:`from_iso` reads) in the records' one shape (:func:`to_iso`);
    ``ValueError`` as :func:`from_iso`. A time already in that shape is returned as it is."""
    return text if _written(text) else to_iso(from_iso(text))


@dataclass(frozen=True)
class FactRecord:
    """One version of a fact (see the module docstring for the fields' meaning).

    ``slot`` is the single-valued topic the rules found (``"residence"``, ``"work"``,
    ``"favourite:food"``; None for none): consolidation finds same-topic facts by filtering on it.
    ``version`` counts the changes of this item (1 when written, +1 when confirmed or closed):
    a writer that read version ``n`` and finds another version later knows someone else
    changed it meanwhile. ``subject`` is the key of the entity a fact is about (``"acme"``;
    None for a fact about the user) and ``subject_name`` its name as first written: facts of
    one namespace about different subjects are consolidated separately.
    """

    text: str
    lineage: str
    valid_from: str
    recorded_at: str
    valid_to: str | None = None
    current: bool = True
    superseded_by: str | None = None
    supersedes: str | None = None
    ended_by: str | None = None
    confirmed_at: str | None = None
    precision: str = "day"
    date_expression: str | None = None
    date_note: str | None = None
    method: str = "rules"
    slot: str | None = None
    version: int = 1
    subject: str | None = None
    subject_name: str | None = None
    context: dict[str, str] | None = None
    """Where it was said: ``{"day": ..., "thread": ...}`` (:mod:`langgraph_episodic.memory_context`)."""
    kind: str = FACT_KIND

    def to_value(self) -> dict[str, Any]:
        """The store value (every field; ``None`` fields are kept so exports show them)."""
        return asdict(self)

    @classmethod
    def from_value(cls, value: Mapping[str, Any]) -> FactRecord | None:
        """The record in a store value, or None when the value is no fact with a period.
        Its times are read leniently and given back in the one shape (:func:`canonical`), so
        records written in another form compare right; one that cannot be read makes the
        value no fact with a period (None), never an error."""
        if not isinstance(value, Mapping) or value.get("kind") != FACT_KIND:
            return None
        text, lineage, since = value.get("text"), value.get("lineage"), value.get("valid_from")
        if not (isinstance(text, str) and isinstance(lineage, str) and isinstance(since, str)):
            return None
        known = {f: value[f] for f in cls.__dataclass_fields__ if f in value}
        for field in _TIME_FIELDS:
            stamp = known.get(field)
            if stamp is None:
                continue
            try:
                known[field] = canonical(stamp) if isinstance(stamp, str) else None
            except ValueError:
                known[field] = None
            if known[field] is None:
                # Shown as a plain memory (its text is kept); it just has no period to read.
                logger.warning("fact %r has no readable %s (%r)", lineage, field, stamp)
                return None
        try:
            return cls(**known)
        except TypeError:
            return None

    def closed(self, at: str, *, by: str | None = None, ended_by: str | None = None) -> FactRecord:
        """This version, no longer true from ``at`` (never before it began)."""
        return replace(
            self,
            valid_to=max(at, self.valid_from),
            current=False,
            superseded_by=by,
            ended_by=ended_by,
            version=self.version + 1,
        )

    def confirmed(self, at: str, text: str | None = None) -> FactRecord:
        """This version, said again at ``at`` (in the words ``text``, when given)."""
        return replace(self, confirmed_at=at, text=text or self.text, version=self.version + 1)

    def holds_at(self, moment: str) -> bool:
        """True when the fact was true at ``moment`` (``valid_from <= moment < valid_to``)."""
        return self.valid_from <= moment and (self.valid_to is None or moment < self.valid_to)


def legacy_record(key: str, value: Mapping[str, Any], created_at: datetime) -> FactRecord | None:
    """A memory saved before facts had periods, read as a current fact from its creation."""
    text = value.get("text") if isinstance(value, Mapping) else None
    if not isinstance(text, str) or "lineage" in value or value.get("current") is False:
        return None
    when = to_iso(created_at)
    return FactRecord(text=text, lineage=key, valid_from=when, recorded_at=when)
