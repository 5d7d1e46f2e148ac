"""Reading facts back: what is true now (the default), what was true at a moment (``as_of``),
and a fact's earlier versions (its history).

Replaced versions are excluded by the search filter (:data:`.records.CURRENT_FILTER`), not by
re-ranking, so a stale fact can never outrank the current one: it is not a candidate. A
question may still be worded like an earlier version ("Mit welchem Editor programmiere ich?"
after "Ich programmiere mit VS Code" became "Ich bin auf Neovim umgestiegen"): replaced
versions that match it stand in for their lineage's current version (:func:`successors`),
which takes the replaced version's score when that is higher; the replaced version itself is
never shown, and an ended fact (no current version) brings nothing back. The ops are built
here and run by the caller in its own batch; the functions reading results are pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, Item, SearchItem, SearchOp

from .._effects import Plan, call, twins
from ..errors import InvalidValueError
from .dates import as_utc, format_date
from .phrasing import says_changed
from .records import (
    CURRENT_FILTER,
    FACT_FILTER,
    FACT_KIND,
    TIME_RANGE,
    FactRecord,
    from_iso,
    lineage_op,
    own_items,
    to_iso,
)
from .rules import asked_slot, topic_of, topic_of_question, value_topic_of_question

AS_OF_FACTOR = 10
"""An ``as_of`` search reads this many times ``k`` fact versions, to keep ``k`` that held then."""

_PAST = re.compile(
    r"\b(?:früher|vorher|zuvor|davor|damals|ehemals|ehemalig\w*|bis wann|seit wann|wann (?:habe|hatte|bin|war|wurde|hast|hat|ist)|"
    r"vorige[nmrs]?|wohnte|arbeitete|hatte|war ich|gewohnt|gearbeitet|gelebt|"
    r"jemals|je|schon (?:ein)?mal|irgendwann mal|zu irgendeine[mr] zeit|"
    r"before|used to|when did|until when|since when|previously|formerly|earlier|former|"
    r"did i (?:live|work|have|use)|was i|lived|worked|ever|at any (?:time|point))\b",
    re.IGNORECASE | re.UNICODE,
)

T = TypeVar("T", bound=Item)


def asks_about_past(question: str) -> bool:
    """True when a question is about earlier states ("früher", "bis wann", "used to", "when
    did I", "ever", "jemals", "at any time", "schon mal"): the recall then adds each fact's
    earlier versions.

    >>> asks_about_past("Wo habe ich früher gewohnt?"), asks_about_past("Wo wohne ich?")
    (True, False)
    >>> asks_about_past("Where did I use to work?"), asks_about_past("Did I ever live in Berlin?")
    (True, True)
    """
    return _PAST.search(question) is not None


def record_of(item: Item) -> FactRecord | None:
    """The fact record in a store item (None for other memories)."""
    return FactRecord.from_value(item.value)


def newest_per_lineage(items: Iterable[T]) -> list[T]:
    """``items`` with, per lineage, only the newest current version (in their order).

    Two current versions of one lineage exist only for a moment (between the two puts of an
    update, or two writers at once); a reader then keeps the one recorded last.
    """
    items = list(items)
    newest: dict[str, tuple[str, str]] = {}
    for item in items:
        if (rec := record_of(item)) is not None and rec.current:
            newest[rec.lineage] = max(newest.get(rec.lineage, ("", "")), (rec.recorded_at, item.key))
    return [item for item in items if (rec := record_of(item)) is None or not rec.current
            or newest[rec.lineage][1] == item.key]


def search_op(
    ns: tuple[str, ...], query: str | None, k: int, *, as_of: datetime | None = None
) -> SearchOp:
    """The search for facts true now (``as_of=None``) or at ``as_of``; other memories under
    ``ns`` are found as before when ``as_of`` is None."""
    if as_of is None:
        return SearchOp(ns, filter=dict(CURRENT_FILTER), limit=k, query=query)
    # Periods are checked on the results (:func:`held_at`): ``InMemoryStore`` compares
    # ``$lte`` as numbers only, so the ISO times cannot be filtered there.
    return SearchOp(ns, filter={"kind": FACT_KIND}, limit=k * AS_OF_FACTOR, query=query)


def past_op(ns: tuple[str, ...], query: str | None, k: int) -> SearchOp:
    """The search for replaced or ended versions matching ``query``."""
    return SearchOp(ns, filter={"kind": FACT_KIND, "current": False}, limit=k, query=query)


def _slots(topic: str | None, names: Iterable[str]) -> list[str]:
    """The slots holding ``topic`` for its subject: for the user (no subject, or one of the
    user's ``names``), the user's own slot and a slot per name, as an agent may save the
    user's facts in the third person ("Maya has moved to Manchester": ``residence:maya``).
    No slot without a topic."""
    if topic is None:
        return []
    base, _, who = topic.partition(":")
    if who and who not in names:
        return [topic]
    return [base, *(f"{base}:{name}" for name in sorted(set(names)))]


def topic_past_ops(ns: tuple[str, ...], question: str, k: int,
                   names: Iterable[str] = ()) -> list[SearchOp]:
    """The searches for the replaced or ended versions of the single-valued topic
    ``question`` asks about (:func:`.rules.topic_of_question`, of the subject it names), by
    filter: found also when the question shares no word with them ("Welches Auto hatte ich
    früher?" finds "Ich fahre einen VW Golf."). ``names``: the user's names
    (:func:`~langgraph_episodic._config.own_names`). None when the question names no such
    topic."""
    topic = asked_slot(question, topic_of_question(question))
    return [SearchOp(ns, filter={"kind": FACT_KIND, "slot": slot, "current": False},
                     limit=k, query=question, refresh_ttl=False)
            for slot in _slots(topic, names)]


def topic_now_ops(ns: tuple[str, ...], question: str,
                  names: Iterable[str] = ()) -> list[SearchOp]:
    """The searches for the current value of the single-valued topic ``question`` asks about
    (:func:`.rules.value_topic_of_question`), by filter: "Where do I work?" finds the current
    fact on work also when it shares no word with the question ("My first term lecturing at
    Sussex went well", saved as what replaced "I teach at Hillside"). ``names`` as in
    :func:`topic_past_ops`; :func:`newest` picks the answer from the results. None when the
    question names no such topic ("How do I get to work?" asks for no employer)."""
    topic = value_topic_of_question(question)
    return [SearchOp(ns, filter={"slot": slot, **CURRENT_FILTER}, limit=TOPIC_NOW,
                     query=question, refresh_ttl=False)
            for slot in _slots(topic, names)]


TOPIC_NOW = 4
"""How many current facts and turns of one slot a question's topic read takes (the newest
answers): a fact saved from a turn and the turn itself hold the same slot."""


def newest(found: Iterable[Iterable[T]]) -> list[T]:
    """The most recently begun fact, or said turn, of the searches' results (none when they
    found none)."""
    dated = [(since, item) for items in found for item in items
             if (since := _since(item)) is not None]
    return [max(dated, key=lambda pair: pair[0])[1]] if dated else []


def _since(item: Item) -> str | None:
    rec = record_of(item)
    said = item.value.get("said_at")
    return rec.valid_from if rec is not None else said if isinstance(said, str) else None


def successors(
    current_hits: Sequence[SearchItem],
    past_hits: Sequence[SearchItem],
    lineages: Sequence[tuple[tuple[str, ...], str]] = (),
    listings: Sequence[Sequence[Item]] = (),
) -> list[SearchItem]:
    """``current_hits`` with each replaced version of ``past_hits`` standing in for its
    lineage's current version (among ``current_hits``, or read by :func:`successors_plan`:
    ``lineages`` and their ``listings``). That version takes the replaced version's score when
    it is higher, and the list is ordered by score again (stable). Replaced versions are never
    in the result; a lineage with no current version (an ended fact) adds nothing. Pure."""
    fetched: list[Item] = []
    for (ns, lineage), listing in zip(lineages, listings, strict=True):
        own = [i for i in listing if tuple(i.namespace) == ns
               and (rec := record_of(i)) is not None and rec.current and rec.lineage == lineage]
        fetched += newest_per_lineage(own)[:1]
    best: dict[tuple[tuple[str, ...], str], float] = {}
    for hit in past_hits:
        rec = record_of(hit)
        if rec is not None and not rec.current and hit.score is not None:
            mark = (tuple(hit.namespace), rec.lineage)
            best[mark] = max(best.get(mark, hit.score), hit.score)
    ranked = []
    for item in [*current_hits, *fetched]:
        rec = record_of(item)
        scores = [item.score if isinstance(item, SearchItem) else None,
                  best.get((tuple(item.namespace), rec.lineage)) if rec and rec.current else None]
        ranked.append(SearchItem(item.namespace, item.key, item.value, item.created_at,
                                 item.updated_at,
                                 score=max((s for s in scores if s is not None), default=None)))
    ranked.sort(key=lambda i: -i.score if i.score is not None else float("inf"))
    return ranked


def held_at(items: Iterable[T], as_of: datetime, k: int) -> list[T]:
    """The first ``k`` of ``items`` that were true at ``as_of``."""
    moment = to_iso(as_of)
    kept = []
    for item in items:  # stops at the k-th: reading a record is not free
        rec = record_of(item)
        if rec is not None and rec.holds_at(moment):
            kept.append(item)
        if len(kept) == k:
            break
    return kept


def history_ops(ns: tuple[str, ...], lineages: Iterable[str]) -> list[SearchOp]:
    """One listing per lineage: all its versions."""
    return [lineage_op(ns, lineage) for lineage in dict.fromkeys(lineages)]


def versions(found: Iterable[Item]) -> list[tuple[str, FactRecord]]:
    """The versions in ``found``, oldest first (by when they became true, then recorded)."""
    pairs = [(item.key, rec) for item in found if (rec := record_of(item)) is not None]
    pairs.sort(key=lambda pair: (pair[1].valid_from, pair[1].recorded_at, pair[0]))
    return pairs


@dataclass(frozen=True)
class Wording:
    """How periods read in an answer, per language."""

    locale: str
    since: str
    """A period still open: a current version, or a replaced one with no end."""
    period: str
    earlier: str
    ended: str


WORDINGS = {
    "de": Wording("de", "seit {start}", "{start} bis {end}", "früher: ", "beendet"),
    "en": Wording("en", "since {start}", "{start} to {end}", "earlier: ", "ended"),
}


def wording(locale: str) -> Wording:
    """The wording for ``locale`` (German unless it is English)."""
    return WORDINGS["en" if locale.lower().startswith("en") else "de"]


def _date(text: str, precision: str, locale: str) -> str:
    return format_date(from_iso(text), "year" if precision == "year" else "month", locale=locale)


def describe_current(rec: FactRecord, words: Wording, *, dated: bool) -> str:
    """A current fact's line: its text, and ``(seit März 2026)`` when ``dated``."""
    if not dated:
        return rec.text
    return f"{rec.text} ({words.since.format(start=_date(rec.valid_from, rec.precision, words.locale))})"


def describe_past(rec: FactRecord, words: Wording) -> str:
    """A replaced or ended version's line: ``früher: ... (März 2026 bis Juni 2026)``."""
    start = _date(rec.valid_from, rec.precision, words.locale)
    if rec.valid_to is None:
        period = words.since.format(start=start)
    else:
        period = words.period.format(start=start, end=_date(rec.valid_to, "month", words.locale))
    if rec.ended_by is not None:
        period = f"{period}, {words.ended}"
    return f"{words.earlier}{rec.text} ({period})"


def describe_history(pairs: Iterable[tuple[str, FactRecord]], words: Wording) -> list[str]:
    """The lines of a history (:func:`fact_history`'s pairs): per fact, its current version
    first (``... (seit Juni 2026)``), then its earlier ones (``früher: ... (März 2026 bis Juni
    2026)``), newest first; an ended fact has only earlier lines."""
    groups: dict[str, list[FactRecord]] = {}
    for _, rec in pairs:
        groups.setdefault(rec.lineage, []).append(rec)
    return [describe_current(rec, words, dated=True) if rec.current else describe_past(rec, words)
            for group in groups.values()
            for rec in sorted(group, key=lambda r: (r.current, r.valid_from, r.recorded_at),
                              reverse=True)]


def is_dated(rec: FactRecord) -> bool:
    """Whether a current fact's answer line names its start: when it replaced an earlier
    version, or its text named a time."""
    return rec.supersedes is not None or rec.date_expression is not None


TOPIC_DEPTH = 8
"""How many current facts a recall reads (at least ``k``) to find a newer fact on the topic of
one it answers with (:func:`newer_first_plan`)."""
NEIGHBOURS = 4
"""A newer fact that says it changed ("now", "new", "last week": :func:`.phrasing.says_changed`)
is on an older one's topic when either is among the other's this many nearest current facts
(the store's search with its text)."""
PLAIN_NEIGHBOURS = 2
"""A newer fact that does not say it changed is on an older one's topic when it is among the
older one's this many nearest current facts (and no fact that says it changed is)."""

Spot = tuple[tuple[str, ...], str]
"""An item's place: (namespace, key)."""


def _spot(item: Item) -> Spot:
    return tuple(item.namespace), item.key


def _rivals(older: Item, pool: Sequence[T]) -> list[tuple[T, FactRecord]]:
    """The current facts of ``pool`` said on a later day than ``older`` that may be on its
    topic (another lineage, the same namespace, and not a known other topic), with their
    records, once each, newest first. Facts said on one day are told together: one never
    makes another look outdated (a correction on the spot is the rules' to see). A fact a
    model saved is no rival: the model was shown the current facts on its topic and closed
    what it replaced, so whatever it left current it judged still true."""
    old = record_of(older)
    if old is None or not old.current:
        return []
    found: dict[Spot, tuple[T, FactRecord]] = {}
    for item in pool:
        rec = record_of(item)
        if (rec is None or not rec.current or rec.lineage == old.lineage or rec.method != "rules"
                or tuple(item.namespace) != tuple(older.namespace)
                or rec.recorded_at[:10] <= old.recorded_at[:10]  # the UTC day
                or (old.slot is not None and rec.slot is not None and old.slot != rec.slot)
                or (old.slot is None and rec.slot is not None and not _on_topic(old, rec.slot))):
            continue
        found.setdefault(_spot(item), (item, rec))
    return sorted(found.values(), key=lambda pair: pair[1].recorded_at, reverse=True)


def _on_topic(rec: FactRecord, slot: str) -> bool:
    """True when ``rec``'s text names the topic of ``slot`` ("I have a flat in Leeds" names
    none, "Maya plays the cello" none either: a move does not lead them; the move answers a
    question on its topic by filter, :func:`topic_now_ops`)."""
    return (topic_of(rec.text) or "").split(":")[0] == slot.split(":")[0]


def _rank(neighbours: Mapping[Spot, Sequence[Item]], of: Spot, near: Spot,
          depth: int = NEIGHBOURS) -> int | None:
    """Where ``near`` is among the ``depth`` nearest facts of ``of`` (None: not there)."""
    spots = [_spot(n) for n in list(neighbours.get(of, ()))[:depth]]
    return spots.index(near) if near in spots else None


def newer_on_topic(
    chosen: Sequence[Item], pool: Sequence[T], neighbours: Mapping[Spot, Sequence[T]]
) -> dict[Spot, T]:
    """For each fact of ``chosen``, the newest current fact on its topic said after it: the
    same ``slot`` (the newest such, from ``pool``), else the nearest later fact that says it
    changed (:func:`.phrasing.says_changed`) and is among the older fact's ``NEIGHBOURS`` nearest
    or has it among its own, else the nearest later fact among its ``PLAIN_NEIGHBOURS``
    nearest or, when both answer (both in ``chosen``), that has it among its own
    (``neighbours``: per fact, the store's search with its text, by :func:`newer_first_plan`;
    a fact without a listing has no neighbours). A lead comes from ``pool`` or from the older
    fact's listing. Pure."""
    newer: dict[Spot, T] = {}
    answering = {_spot(c) for c in chosen}
    for item in chosen:
        old, here = record_of(item), _spot(item)
        if old is None:
            continue
        rivals = _rivals(item, [*pool, *neighbours.get(here, ())])
        same_slot = [r for r, rec in rivals if old.slot is not None and rec.slot == old.slot]
        if same_slot:
            newer[here] = same_slot[0]
            continue
        ranked = []
        for r, rec in rivals:
            there = _spot(r)
            if says_changed(rec.text):
                ranks = [_rank(neighbours, here, there), _rank(neighbours, there, here)]
            else:
                plain = _rank(neighbours, here, there, PLAIN_NEIGHBOURS)
                if plain is None and there in answering:  # both answer: either way
                    plain = _rank(neighbours, there, here, PLAIN_NEIGHBOURS)
                ranks = [None if plain is None else NEIGHBOURS + plain]  # after the changed
            ranked += [(n, r) for n in ranks if n is not None]
        if ranked:
            newer[here] = min(ranked, key=lambda pair: pair[0])[1]
    return newer


def newer_first(
    chosen: Sequence[T], newer: Mapping[Spot, T], k: int
) -> tuple[list[T], set[Spot]]:
    """``chosen`` with each fact's newer fact on its topic (``newer``) placed just before it,
    cut to ``k``, and the places of the facts that now follow a newer one on their topic (the
    answer marks them as possibly outdated). Pure.

    A rule path that did not see a change said in other words ("We relocated to Bristol" after
    "I live in Leeds") leaves both current; this keeps the later statement first."""
    ordered: dict[Spot, T] = {}  # in order, once each
    outdated: set[Spot] = set()
    for item in chosen:
        lead = newer.get(_spot(item))
        # A lead comes in only with the fact it leads: it never pushes an answer out alone.
        if lead is not None and (_spot(lead) in ordered or len(ordered) + 2 <= k):
            outdated.add(_spot(item))
            ordered.setdefault(_spot(lead), lead)
        ordered.setdefault(_spot(item), item)
    kept = list(ordered.values())[:k]
    # Marked only when its newer fact is shown before it.
    at = {_spot(item): i for i, item in enumerate(kept)}
    return kept, {spot for spot in outdated if spot in at
                  and at.get(_spot(newer[spot]), len(kept)) < at[spot]}


def newer_first_plan(
    store: BaseStore, chosen: Sequence[T], pool: Sequence[T], k: int
) -> Plan[tuple[list[T], set[Spot]]]:
    """Plan: :func:`newer_first` over ``chosen`` and the newer facts on their topics, reading
    (in one batch) the nearest current facts of each chosen fact without a newer one of its
    slot in ``pool``, and of each later fact of ``pool`` that says it changed."""
    asked: dict[Spot, str] = {}  # place: text
    for item in chosen:
        rec = record_of(item)
        rivals = _rivals(item, pool)
        if rec is None or (rec.slot is not None and any(r.slot == rec.slot for _, r in rivals)):
            continue
        asked.setdefault(_spot(item), rec.text)
        for rival, other in rivals:
            if says_changed(other.text):
                asked.setdefault(_spot(rival), other.text)
    # The current facts nearest to each asked fact's text (itself among them).
    ops = [SearchOp(ns, filter=dict(FACT_FILTER), limit=NEIGHBOURS + 1, query=text,
                    refresh_ttl=False) for (ns, _), text in asked.items()]
    found: list[list[T]] = (yield call(store.batch, store.abatch, ops)) if ops else []
    # Its nearest other facts; one scored 0 is no neighbour (the store found nothing in common).
    listings = {spot: [n for n in hits if _spot(n) != spot
                       and ((score := getattr(n, "score", None)) is None or score > 0)]
                for spot, hits in zip(asked, found, strict=True)}
    return newer_first(chosen, newer_on_topic(chosen, pool, listings), k)


def successors_plan(
    store: BaseStore, current_hits: Sequence[SearchItem], past_hits: Sequence[SearchItem]
) -> Plan[list[SearchItem]]:
    """Plan: :func:`successors`, reading in one batch the current version of each lineage of a
    replaced version in ``past_hits`` whose current version is not among ``current_hits``."""
    present = {(tuple(i.namespace), rec.lineage) for i in current_hits
               if (rec := record_of(i)) is not None and rec.current}
    lineages = list(dict.fromkeys(
        mark for item in past_hits if (rec := record_of(item)) is not None and not rec.current
        and (mark := (tuple(item.namespace), rec.lineage)) not in present))
    ops = [lineage_op(ns, lineage, True) for ns, lineage in lineages]
    listings = (yield call(store.batch, store.abatch, ops)) if ops else []
    return successors(current_hits, past_hits, lineages, listings)


def _fact_history(
    store: BaseStore, ns: Sequence[str], *, limit: int = 1000
) -> Plan[list[tuple[str, FactRecord]]]:
    """Every version of every fact saved in ``ns`` (exactly): ``(key, record)`` pairs, grouped
    by fact, each fact's versions oldest first, facts by their first version.

    >>> from langgraph.store.memory import InMemoryStore
    >>> fact_history(InMemoryStore(), ("memories", "alice"))
    []
    """
    space = tuple(ns)
    found = yield call(store.search, store.asearch, space, filter={"kind": FACT_KIND},
                       limit=limit, refresh_ttl=False)
    groups: dict[str, list[tuple[str, FactRecord]]] = {}
    for key, rec in versions(own_items(found, space)):
        groups.setdefault(rec.lineage, []).append((key, rec))
    return [pair for group in groups.values() for pair in group]


fact_history, afact_history = twins(_fact_history, "fact_history")


def _current_facts(
    store: BaseStore, ns: Sequence[str], query: str | None = None, *, k: int = 10,
    as_of: datetime | None = None,
) -> Plan[list[tuple[str, FactRecord]]]:
    """Up to ``k`` facts of ``ns`` that are true now, or were at ``as_of``, best match for
    ``query`` first (newest first without one); now, replaced versions matching ``query``
    stand in for their current ones (:func:`successors`)."""
    space = tuple(ns)
    ops = [search_op(space, query, k, as_of=as_of)]
    if as_of is None and query:
        ops.append(past_op(space, query, k))
    found = yield call(store.batch, store.abatch, ops)
    hits: list[SearchItem] = found[0]
    if len(found) > 1:
        hits = yield from successors_plan(store, hits, found[1])
    items = [item for item in hits if record_of(item) is not None]
    items = held_at(items, as_of, k) if as_of is not None else newest_per_lineage(items)[:k]
    return [(item.key, rec) for item in items if (rec := record_of(item)) is not None]


current_facts, acurrent_facts = twins(_current_facts, "current_facts")


def parse_as_of(value: Any) -> datetime | None:
    """``config["configurable"]["as_of"]`` as a UTC datetime: a datetime (naive: UTC), a date
    (its start, UTC) or an ISO string (:func:`.records.from_iso`); None stays None. Anything
    else, and a moment outside the years 1-9999 in UTC, raises ``ValueError`` naming what is
    accepted.

    >>> parse_as_of("2026-03-01")
    datetime.datetime(2026, 3, 1, 0, 0, tzinfo=datetime.timezone.utc)
    """
    if value is None:
        return None
    refused = InvalidValueError(f"as_of must be a datetime, a date or {TIME_RANGE}; got {value!r}.")
    try:
        if isinstance(value, datetime):
            return as_utc(value)
        if isinstance(value, date):
            return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
        if isinstance(value, str):
            return from_iso(value)
    except ValueError:
        raise refused from None
    raise refused
