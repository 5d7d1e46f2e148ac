"""Consolidation on write: a new fact is compared with the user's current facts and is the
same, an update, new, or an ending (``docs/facts.md``, "Writes, crashes and concurrent writers").

One save, :meth:`FactWriter.save`, is a plan (:mod:`langgraph_episodic._effects`):

1. Read the candidates in one batch: the store's search for the text among the namespace's
   current facts, the current facts on the same topic (``slot``, a filter), and the key the
   text would have.
2. Decide (rules, or one structured model call over exactly those candidates).
3. Write in one batch, the new version first, then the old one closed: a reader between the
   two puts sees two current versions of one lineage, never none, and keeps the newest
   (:func:`.recall.newest_per_lineage`).
4. Repair, after an update: the lineage's current versions are read again and all but the
   newest (by ``recorded_at``, then key) are closed, by every writer alike, so concurrent
   writers converge. A new fact starts a lineage of its own: it needs no repair.

:meth:`FactWriter.save_many` batches these steps across facts about different subjects. In one
process the saves of one namespace take turns (:mod:`langgraph_episodic._keylock`); across
processes there is no compare-and-swap, so after a model's call the writer re-reads the version
it closes and decides again if it changed. Nothing is ever deleted: superseding only closes a
period.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any, Protocol, TypeVar

from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    Item,
    NotProvided,
    Op,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from .._effects import Effect, Plan, call
from .._keylock import arun_locked, run_locked
from ..memory_context import context_of, in_turn, index_paths
from .dates import resolve_date
from .phrasing import is_correction, is_ending
from .records import (
    FACT_FILTER,
    FactRecord,
    legacy_record,
    lineage_op,
    memory_key,
    own_items,
    to_iso,
)
from .rules import Candidate, Decision, decide_by_rules, slot_of, topic_of

logger = logging.getLogger(__name__)

Clock = Callable[[], datetime]
"""Returns "now" (timezone-aware); injectable so that tests run on a fixed clock."""

CANDIDATES = 8
"""Current facts the rules compare a new one with, per search (by text, and by topic)."""
ATTEMPTS = 3
"""How often a save decides again when the fact it would close changed meanwhile."""

_Decided = tuple[int, Decision, dict[str, FactRecord], bool]
"""A fact's place in its round, its decision, the candidates shown (by key) and whether its
text's key holds an older version."""
T = TypeVar("T")


def utc_now() -> datetime:
    """The default clock."""
    return datetime.now(timezone.utc)


class Decider(Protocol):
    """Decides what a new fact is relative to the shown candidates (rules or a model). An
    attribute ``candidates`` (optional) says how many current facts it wants to see."""

    method: str

    def decide(self, text: str, candidates: Sequence[Candidate]) -> Plan[Decision]: ...


class RuleDecider:
    """The rule path (:func:`.rules.decide_by_rules`)."""

    method = "rules"
    candidates = CANDIDATES

    def decide(self, text: str, candidates: Sequence[Candidate]) -> Plan[Decision]:
        """Plan without effects: the rules' decision."""
        return decide_by_rules(text, candidates)
        yield  # a plan: a generator with no effects


@dataclass(frozen=True)
class Outcome:
    """What a save did. ``action``: ``"same"``, ``"update"``, ``"new"`` or ``"end"``.

    ``record`` is the version written or confirmed (None for an ending), ``replaced`` the
    version closed (None for new and same), ``key`` the key of ``record`` (or of the ended
    fact).
    """

    action: str
    key: str
    record: FactRecord | None
    replaced: FactRecord | None = None
    reason: str = ""


def _record(item: Item) -> FactRecord | None:
    return FactRecord.from_value(item.value) or legacy_record(item.key, item.value, item.created_at)


@dataclass(frozen=True)
class _Place:
    """Where a save reads and writes: the store, the namespace, the TTL (minutes) it writes."""

    store: BaseStore
    ns: tuple[str, ...]
    ttl: float | None

    def batch(self, ops: Sequence[Any]) -> Effect:
        return call(self.store.batch, self.store.abatch, list(ops))

    def put(self, key: str, record: FactRecord) -> PutOp:
        value = record.to_value()
        return PutOp(self.ns, key, value, index=index_paths("text", value), ttl=self.ttl)

    def renewal(self, lineage: str) -> list[SearchOp]:
        """The read that renews the expiry of a fact's earlier versions to the written one's
        (run in the write's batch, before its puts; none without a TTL)."""
        return [] if self.ttl is None else [lineage_op(self.ns, lineage, False, refresh_ttl=True)]

    def shortened(self, earlier: Sequence[tuple[str, FactRecord]], at: str) -> list[PutOp]:
        """The puts that end the closed versions in ``earlier`` that ended after ``at`` at
        ``at`` (their start moved back too when it was later)."""
        return [self.put(key, replace(rec, valid_from=min(rec.valid_from, at), valid_to=at,
                                      date_note=_moved(at), version=rec.version + 1))
                for key, rec in earlier if rec.valid_to is not None and rec.valid_to > at]

    def written(self, ops: Sequence[Any], unchanged: Collection[str] = ()) -> Plan[None]:
        """Plan: write ``ops`` in order, in one batch.

        The puts of the keys ``unchanged`` write again a version whose text and context are
        the stored ones (closed or shortened). LangGraph's ``InMemoryStore`` fails on a batch
        in which two puts index one text (the day both versions of a fact were said) and keeps
        an item's vectors when a put indexes nothing: there, those puts index nothing, and what
        still shares a text is written in turn
        (:func:`~langgraph_episodic.memory_context.in_turn`)."""
        if not isinstance(self.store, InMemoryStore):
            yield self.batch(ops)
            return
        kept = [op._replace(index=False) if isinstance(op, PutOp) and op.key in unchanged else op
                for op in ops]
        for batch in in_turn(kept):
            yield self.batch(batch)

    def repair(self, lineages: Iterable[str]) -> Plan[None]:
        """Plan: close all but the newest current version of each of ``lineages``."""
        wanted = list(dict.fromkeys(lineages))
        if not wanted:
            return
        results = yield self.batch([lineage_op(self.ns, lineage, True) for lineage in wanted])
        puts = []
        for lineage, found in zip(wanted, results, strict=True):
            current = [(item.key, rec) for item in own_items(found, self.ns)
                       if (rec := FactRecord.from_value(item.value)) and rec.current]
            if len(current) < 2:
                continue
            current.sort(key=lambda pair: (pair[1].recorded_at, pair[0]))
            winner_key, winner = current[-1]
            puts += [self.put(key, _closed(rec, winner.valid_from, by=winner_key))
                     for key, rec in current[:-1]]
            logger.info("lineage %s had %d current versions; kept %s", lineage, len(current),
                        winner_key)
        if puts:
            yield from self.written(puts, [put.key for put in puts])


def _resolve_ttl(store: BaseStore, ttl: float | NotProvided | None) -> float | None:
    """``ttl``, or the store's ``default_ttl`` when none was given (as ``store.put`` does)."""
    if not isinstance(ttl, NotProvided):
        return ttl
    config = getattr(store, "ttl_config", None) or {}
    default = config.get("default_ttl")
    return float(default) if default is not None else None


class FactWriter:
    """Saves facts with consolidation on write (see the module docstring).

    Args:
        decider: :class:`RuleDecider` (default) or :class:`.model_decider.ModelDecider`.
        clock: Returns the message's time (default: now, UTC).
        candidates: How many current facts each candidate search returns (default: the
            decider's, :data:`CANDIDATES` for the rules, all of a subject's up to
            :data:`.model_decider.SHOWN` for a model).
        between_read_and_write: Called after deciding (and re-reading the fact it closes,
            after a model's decision), just before writing; tests use it to force
            interleavings of concurrent writers.
        key: The key of a new version from its text and a scope (``""``, or the time when the
            same text already has an older version); default: the memory tools' key.
    """

    def __init__(
        self,
        decider: Decider | None = None,
        *,
        clock: Clock | None = None,
        candidates: int | None = None,
        between_read_and_write: Callable[[], None] | None = None,
        key: Callable[[str, str], str] | None = None,
    ) -> None:
        self.decider: Decider = decider if decider is not None else RuleDecider()
        self.clock: Clock = clock if clock is not None else utc_now
        self.candidates = (candidates if candidates is not None
                           else getattr(self.decider, "candidates", CANDIDATES))
        self._pause = between_read_and_write
        self._key: Callable[[str, str], str] = key or (lambda text, scope: memory_key(text, scope=scope))

    @property
    def method(self) -> str:
        """``"rules"`` or ``"model"``."""
        return self.decider.method

    def save(
        self,
        store: BaseStore,
        ns: tuple[str, ...],
        text: str,
        *,
        said_at: datetime | None = None,
        ttl: float | NotProvided | None = NOT_PROVIDED,
        subject: str | None = None,
        subject_name: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> Plan[Outcome]:
        """Plan: save ``text`` in ``ns``, consolidated with the current facts there, under the
        namespace's lock.

        ``config`` (the run's) gives the new version its context, the day it was said and the
        run's ``thread_id``, stored and indexed beside the text unless
        ``configurable["memory_context"]`` is False (:mod:`langgraph_episodic.memory_context`).

        ``ttl`` (minutes; default: the store's ``default_ttl``) applies to the version written
        and to every version of the fact it touches: an update, a confirmation or an ending
        renews the expiry of the fact's earlier versions too, so its history lives as long
        as the fact and goes with it.

        ``subject`` (an entity's key, ``subject_name`` its name) keeps the fact apart from the
        facts of ``ns`` about other subjects: only facts about the same subject are candidates,
        and the key of the new version depends on it.
        """
        when = said_at if said_at is not None else self.clock()
        about = Subject(subject, subject_name or subject) if subject else None
        outcomes = yield from self.save_many(store, ns, [Said(text, about, when, config)],
                                             ttl=ttl)
        return outcomes[0]

    def save_many(
        self,
        store: BaseStore,
        ns: tuple[str, ...],
        told: Sequence[Said],
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
        then: Callable[[list[Outcome]], list[Op]] | None = None,
    ) -> Plan[list[Outcome]]:
        """Plan: save many facts in ``ns``, each consolidated as :meth:`save` does (each said
        at its own time, in its own run: a batch of turns formed later), under the namespace's
        lock, with the store calls of facts about different subjects batched: one read of all
        their candidates, one write, one repair read after updates. Facts about one subject are
        saved in their order (the second is consolidated with what the first wrote). ``then``
        is given every outcome once all are decided; the ops it returns are written in the
        same batch as the last facts (an entity's item rebuilt from them, for one). Returns the
        outcomes in the order of ``told``."""
        at = _Place(store, ns, _resolve_ttl(store, ttl))
        rounds: list[list[int]] = []  # round r: the r-th fact about each subject
        seen: dict[str | None, int] = {}
        for i, key in enumerate(f.subject.key if f.subject else None for f in told):
            r = seen[key] = seen.get(key, -1) + 1
            if r == len(rounds):
                rounds.append([])
            rounds[r].append(i)

        def plan() -> Plan[list[Outcome]]:
            outcomes: dict[int, Outcome] = {}  # by place in ``told``
            for r, members in enumerate(rounds):
                yield from self._save_round(at, {i: self._told(told[i]) for i in members},
                                            outcomes, then if r == len(rounds) - 1 else None)
            return [outcomes[i] for i in range(len(told))]

        outcomes: list[Outcome] = yield call(run_locked, arun_locked, ("facts", id(store), ns),
                                             plan)
        return outcomes

    def _told(self, fact: Said) -> FactRecord:
        """The version ``fact`` would be, before it is consolidated."""
        when = fact.said_at if fact.said_at is not None else self.clock()
        text, about = fact.text, fact.subject
        resolved = resolve_date(text, when)
        return FactRecord(
            text=text, lineage="", valid_from=to_iso(resolved.when), recorded_at=to_iso(when),
            precision=resolved.precision, date_expression=resolved.expression,
            date_note=resolved.note, method=self.method,
            # An ending sets no value; its topic finds the fact it may end by filter.
            slot=slot_of(text) or (topic_of(text) if is_ending(text) else None),
            subject=about.key if about else None, subject_name=about.name if about else None,
            context=context_of(fact.config, when) if fact.config is not None else None,
        )

    def _save_round(
        self, at: _Place, fresh: Mapping[int, FactRecord], outcomes: dict[int, Outcome],
        then: Callable[[list[Outcome]], list[Op]] | None = None,
    ) -> Plan[None]:
        """Consolidate and write facts that cannot be candidates of each other (one fact, or
        facts about different subjects), into ``outcomes``: their reads in one batch, their
        writes in one (with the ops ``then`` makes of all outcomes, once all are decided). A
        fact whose target changed while deciding at every attempt is written as new."""
        todo = list(fresh)
        for attempt in range(ATTEMPTS + 1):
            if not todo:
                break
            writes: list[Any] = []
            if attempt < ATTEMPTS:
                decided, waited = yield from self._decide_round(at, fresh, todo, outcomes, writes)
                earlier, changed = yield from _recheck(at, fresh, decided, waited)
            else:  # changed while deciding at every attempt: kept as new, it closes nothing
                decided = [(i, Decision("new", None, "contended"), {}, False) for i in todo]
                earlier, changed = {}, set()
            written = [d for d in decided if d[0] not in changed]
            if written and self._pause is not None and attempt < ATTEMPTS:
                self._pause()
            repair: list[str] = []
            unchanged: set[str] = set()
            for i, decision, records, taken in written:
                ops, outcome = self._write_ops(at, fresh[i], decision, records, taken,
                                               earlier.get(i, ()))
                outcomes[i] = outcome
                writes += ops
                if outcome.record is not None and outcome.replaced is not None:
                    repair.append(outcome.record.lineage)  # an update: its lineage
                repair += _doubled(records)
                unchanged |= {key for key, _ in earlier.get(i, ())}
                if decision.action in ("update", "end") and decision.target is not None:
                    unchanged.add(decision.target)
            if then is not None and not changed:
                writes += then([outcomes[i] for i in sorted(outcomes)])
            if writes:
                yield from at.written(writes, unchanged)
            yield from at.repair(repair)
            todo = [i for i in todo if i in changed]

    def _decide_round(
        self, at: _Place, fresh: Mapping[int, FactRecord], todo: Sequence[int],
        outcomes: dict[int, Outcome], writes: list[Any],
    ) -> Plan[tuple[list[_Decided], bool]]:
        """Plan: read the candidates of the facts ``todo`` in one batch and decide each (a fact
        whose key holds a current version is confirmed at once, into ``outcomes`` and
        ``writes``); the others' decisions, and whether deciding made a call."""
        reads = [self._candidate_ops(at.ns, fresh[i]) for i in todo]
        results = yield at.batch([op for ops in reads for op in ops])
        decided: list[_Decided] = []
        waited = False
        start = 0
        for i, ops in zip(todo, reads, strict=True):
            found, start = results[start:start + len(ops)], start + len(ops)
            by_topic = found[2] if len(ops) > 2 else []
            same_key = found[1]
            if same_key is not None:
                record = _record(same_key)
                if record is not None and record.current:
                    confirmed = record.confirmed(fresh[i].recorded_at, fresh[i].text)
                    writes += [*at.renewal(record.lineage),
                               at.put(same_key.key, confirmed)]  # latest wording
                    outcomes[i] = Outcome("same", same_key.key, confirmed, reason="same text")
                    continue
            # Same-topic facts first: they are the ones a single-valued topic replaces.
            records = {item.key: rec for item in own_items([*by_topic, *found[0]], at.ns)
                       if (rec := _record(item))}
            # The slot a fact sets by the rules of today (a stored one may be older).
            shown = [Candidate(key, rec.text, slot_of(rec.text)) for key, rec in records.items()]
            decision, calls = yield from _counted(self.decider.decide(fresh[i].text, shown))
            waited = waited or calls > 0
            if decision.target is not None and decision.target not in records:
                logger.warning("fact consolidation named %r, not a shown fact; kept as new",
                               decision.target)
                decision = Decision("new", None, "unknown target")
            decided.append((i, decision, records, same_key is not None))
        return decided, waited

    def _candidate_ops(self, ns: tuple[str, ...], fresh: FactRecord) -> list[Any]:
        """The reads a fact is consolidated with: the search for its text among the current
        facts (about its subject), the key it would have, and the facts on its topic."""
        where = {**FACT_FILTER, **({"subject": fresh.subject} if fresh.subject else {})}
        ops: list[Any] = [
            SearchOp(ns, filter=where, limit=self.candidates, query=fresh.text, refresh_ttl=False),
            GetOp(ns, self._key_of(fresh, ""), refresh_ttl=False),
        ]
        if fresh.slot is not None:
            ops.append(SearchOp(ns, filter={**where, "slot": fresh.slot},
                                limit=self.candidates, refresh_ttl=False))
        return ops

    def _write_ops(
        self, at: _Place, fresh: FactRecord, decision: Decision,
        records: Mapping[str, FactRecord], taken: bool,
        earlier: Sequence[tuple[str, FactRecord]] = (),
    ) -> tuple[list[Any], Outcome]:
        """The ops that write ``decision`` about ``fresh`` (one batch), and its outcome
        (``taken``: the key of its text holds an older version).

        Periods never overlap: a version closes when its successor (or its ending) begins.
        When that is before the version began (said today, "I live in Berlin", then "We
        relocated to Hamburg last month"), the later statement is the better witness: the
        version's start moves back to it (it held for no time we know of, ``date_note`` says
        so), and ``earlier`` versions of its lineage that ended after it are shortened alike.
        A correction takes over the start of the version it corrects (that one never held),
        unless it names a date of its own."""
        now, target = fresh.recorded_at, decision.target
        # The key of the text, unless an older version of another period holds it.
        key = self._key_of(fresh, now if taken else "")
        if target is None or decision.action not in ("same", "end", "update"):
            record = replace(fresh, lineage=key)
            return [at.put(key, record)], Outcome("new", key, record, reason=decision.reason)
        old = records[target]
        renewal = at.renewal(old.lineage)
        if decision.action == "same":
            confirmed = old.confirmed(now)
            return ([*renewal, at.put(target, confirmed)],
                    Outcome("same", target, confirmed, reason=decision.reason))
        if decision.action == "end":
            ended = _closed(old, fresh.valid_from, ended_by=fresh.text)
            return ([*renewal, *at.shortened(earlier, fresh.valid_from), at.put(target, ended)],
                    Outcome("end", target, None, ended, reason=decision.reason))
        # What replaces a fact is on its topic, also when its words name none.
        record = replace(fresh, lineage=old.lineage, supersedes=target, slot=fresh.slot or old.slot)
        if fresh.date_expression is None and is_correction(fresh.text):
            record = replace(record, valid_from=old.valid_from,
                             date_note=f"corrects {old.text!r}: starts when it did")
        if old.recorded_at > record.recorded_at:
            # Said before the fact it would replace (a slow writer): it is history, the later
            # statement keeps holding.
            history = _closed(record, old.valid_from, by=target)
            return ([*renewal, at.put(key, history)],
                    Outcome("update", key, history, None, reason="older than the current fact"))
        closed = _closed(old, record.valid_from, by=key)
        # New version first: a reader between the two puts sees two current versions of one
        # lineage (and keeps the newest), never none.
        return ([*renewal, at.put(key, record), *at.shortened(earlier, record.valid_from),
                 at.put(target, closed)],
                Outcome("update", key, record, closed, reason=decision.reason))

    def _key_of(self, fresh: FactRecord, when: str) -> str:
        """The key of a new version: of its text, its subject and, when given, a time."""
        return self._key(fresh.text, f"{fresh.subject} {when}".strip() if fresh.subject else when)


def _recheck(
    at: _Place, fresh: Mapping[int, FactRecord], decided: Sequence[_Decided], waited: bool,
) -> Plan[tuple[dict[int, list[tuple[str, FactRecord]]], set[int]]]:
    """Plan: read in one batch the earlier versions to shorten and, when deciding ``waited``
    (made a call), the facts the decisions close; the former per fact, and the facts whose
    target changed meanwhile."""
    closing = [(i, d.target, records[d.target]) for i, d, records, _ in decided
               if d.target is not None]
    # A change dated before the start of the version it closes shortens that
    # version's predecessors too: read them in the same batch.
    before = [(i, old) for i, _, old in closing if fresh[i].valid_from < old.valid_from]
    targets = closing if waited else []
    checks: list[Any] = [GetOp(at.ns, key) for _, key, _ in targets]
    checks += [lineage_op(at.ns, old.lineage, False) for _, old in before]
    checked = (yield at.batch(checks)) if checks else []
    earlier = {i: [(item.key, rec) for item in own_items(found, at.ns)
                   if (rec := FactRecord.from_value(item.value)) and not rec.current]
               for (i, _), found in zip(before, checked[len(targets):], strict=True)}
    changed: set[int] = set()
    for (i, key, old), still in zip(targets, checked[:len(targets)], strict=True):
        again = _record(still) if still is not None else None
        if again is None or not again.current or again.version != old.version:
            logger.info("fact %r changed while deciding; deciding again", key)
            changed.add(i)
    return earlier, changed


def _counted(plan: Plan[T]) -> Plan[tuple[T, int]]:
    """Plan: run ``plan``; its result and how many calls it made."""
    calls = 0
    try:
        effect = next(plan)
        while True:
            calls += 1
            effect = plan.send((yield effect))
    except StopIteration as stop:
        return stop.value, calls


@dataclass(frozen=True)
class Subject:
    """What a fact is about when it is not the user: an entity's key and name."""

    key: str
    name: str


@dataclass(frozen=True)
class Said:
    """A fact to save about ``subject`` (None: the user), said at ``said_at`` (None: the
    writer's clock) in the run of ``config`` (its context; None: none)."""

    text: str
    subject: Subject | None
    said_at: datetime | None = None
    config: Mapping[str, Any] | None = None


def _doubled(records: Mapping[str, FactRecord]) -> list[str]:
    """Lineages with several current versions among the candidates (a crash between an
    update's two puts, or two processes at once)."""
    seen = Counter(rec.lineage for rec in records.values() if rec.current)
    return [lineage for lineage, n in seen.items() if n > 1]


def _moved(at: str) -> str:
    """The ``date_note`` of a version whose period was moved back to end at ``at``."""
    return f"ends {at[:10]}, when what followed began: earlier than this was said to hold"


def _closed(record: FactRecord, at: str, *, by: str | None = None,
            ended_by: str | None = None) -> FactRecord:
    """``record`` no longer true from ``at``; when ``at`` is before its start, the start
    moves back to ``at`` (with a ``date_note``), so no version ends after its successor began."""
    if at < record.valid_from:
        record = replace(record, valid_from=at, date_note=_moved(at))
    return record.closed(at, by=by, ended_by=ended_by)
