"""A fact's life as an ordinary store value: when it became true, when it was recorded, and
once replaced, when it stopped and what replaced it.

A fact is one store item (``{"text": ..., "kind": "fact", ...}``), so filters, TTL, export and
forgetting work on it as on any item. Its versions are separate items: the current one has
``current=True`` and ``valid_to=None``; a replaced one keeps its text and gets ``valid_to``
and ``superseded_by`` (the key of its successor), or ``ended_by`` when the fact just stopped
("Ich habe keinen Hund mehr"). All versions of one fact share ``lineage`` (the key of the
first). Times are UTC ISO strings of one fixed shape, so they also compare as strings
(``filter={"valid_from": {"$lte": ...}}`` works on every store).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from typing import Any

from .dates import as_utc

FACT_KIND = "fact"
"""The ``kind`` of every fact record."""

CURRENT_FILTER: dict[str, Any] = {"current": {"$ne": False}}
"""The search filter that keeps current facts (and memories stored before facts had periods:
they have no ``current`` field) and drops every replaced version. ``$ne`` matches a missing
field on ``InMemoryStore`` and ``ChromaStore`` alike."""

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def to_iso(moment: datetime) -> str:
    """``moment`` as the records' time string (UTC, microseconds, ``Z``): sorts as it compares.

    >>> to_iso(datetime(2026, 3, 1, tzinfo=timezone.utc))
    '2026-03-01T00:00:00.000000Z'
    """
    return as_utc(moment).strftime(_FORMAT)


def from_iso(text: str) -> datetime:
    """The datetime of a record's time string (also accepts other ISO forms)."""
    try:
        return datetime.strptime(text, _FORMAT).replace(tzinfo=timezone.utc)
    except ValueError:
        return as_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))


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
        """The record in a store value, or None when the value is no fact with a period."""
        if not isinstance(value, Mapping) or value.get("kind") != FACT_KIND:
            return None
        text, lineage, since = value.get("text"), value.get("lineage"), value.get("valid_from")
        if not (isinstance(text, str) and isinstance(lineage, str) and isinstance(since, str)):
            return None
        known = {f: value[f] for f in cls.__dataclass_fields__ if f in value}
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
