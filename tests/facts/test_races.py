"""Two writers updating the same fact at once never leave two current versions, nor lose the
newer one: forced interleavings in one process (the namespace lock), and two "processes"
(two store objects over the same data, so no shared lock) that both pass their re-read before
either writes (the lineage repair)."""

from __future__ import annotations

import asyncio
import itertools
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta, timezone

import pytest
from langgraph.store.base import BaseStore, GetOp, Op, PutOp, Result

from langgraph_episodic._effects import Plan, call, run
from langgraph_episodic.facts import FactRecord, FactWriter, current_facts, fact_history
from langgraph_episodic.facts.consolidate import RuleDecider
from langgraph_episodic.facts.recall import newest_per_lineage
from langgraph_episodic.facts.rules import Candidate, Decision, decide_by_rules
from langgraph_episodic.memory_context import index_paths
from langgraph_episodic.tools import create_memory_tools

from .conftest import make_store, user

NS = ("memories", "alice")
MOVES = ["Ich bin nach Berlin gezogen.", "Ich bin nach Hamburg gezogen."]


class Ticking:
    """A clock that moves one second per call, safely across threads."""

    def __init__(self) -> None:
        self._n = itertools.count()
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            n = next(self._n)
        return datetime(2026, 3, 10, tzinfo=timezone.utc) + timedelta(seconds=n)


class Proxy(BaseStore):
    """Another handle on the same data (as a second process has): same items, no shared lock
    (the lock is per store object). ``fail_second_put`` applies only the first put of a batch
    with two, then raises (a crash between an update's two puts)."""

    def __init__(self, inner: BaseStore, *, fail_second_put: bool = False) -> None:
        self.inner = inner
        self.fail_second_put = fail_second_put

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        puts = [op for op in ops if isinstance(op, PutOp)]
        if self.fail_second_put and len(puts) == 2:
            self.inner.batch(puts[:1])
            raise ConnectionError("crash between the two puts")
        return self.inner.batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return self.batch(ops)


def current(store: BaseStore) -> list[FactRecord]:
    return [rec for _, rec in fact_history(store, NS) if rec.current]


@pytest.fixture
def fast_switching() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


@pytest.mark.parametrize("backend", ["memory", "chroma"])
def test_threads_in_one_process_take_turns(backend: str, fast_switching: None) -> None:
    store = make_store(backend)
    clock = Ticking()
    writer = FactWriter(clock=clock)


    run(writer.save(store, NS, "Ich wohne in München."))
    inside: list[int] = []
    overlap: list[bool] = []

    def pause() -> None:  # between the re-read and the write: the other writer must wait
        inside.append(1)
        overlap.append(len(inside) > 1)
        threading.Event().wait(0.05)
        inside.pop()

    paused = FactWriter(clock=clock, between_read_and_write=pause)
    barrier = threading.Barrier(2)

    def move(text: str) -> None:
        barrier.wait()
        run(paused.save(store, NS, text))

    threads = [threading.Thread(target=move, args=(t,)) for t in MOVES]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlap == [False, False]
    history = fact_history(store, NS)
    assert len(history) == 3 and len(current(store)) == 1
    last = max(history, key=lambda pair: pair[1].recorded_at)[1]
    assert last.current  # the newer one holds, the older is its predecessor
    (old_city,) = [rec for _, rec in history if "München" in rec.text]
    assert old_city.superseded_by is not None


@pytest.mark.parametrize("backend", ["memory", "chroma"])
async def test_asyncio_tasks_take_turns(backend: str) -> None:
    store = make_store(backend)
    clock = Ticking()
    save, _ = create_memory_tools(store=store, clock=clock, min_score=None)
    await save.ainvoke({"information": "Ich wohne in München."}, user("alice"))
    await asyncio.gather(*(save.ainvoke({"information": t}, user("alice")) for t in MOVES))
    assert len(current(store)) == 1 and len(fact_history(store, NS)) == 3
    assert current(store)[0].text == max(fact_history(store, NS),
                                         key=lambda p: p[1].recorded_at)[1].text


@pytest.mark.parametrize("backend", ["memory", "chroma"])
def test_two_processes_that_both_pass_their_check_converge_on_the_newer(
    backend: str, fast_switching: None
) -> None:
    shared = make_store(backend)
    clock = Ticking()


    run(FactWriter(clock=clock).save(shared, NS, "Ich wohne in München."))
    both_checked = threading.Barrier(2)
    writer = FactWriter(clock=clock, between_read_and_write=lambda: both_checked.wait(5))
    handles = [Proxy(shared), Proxy(shared)]
    saved_at: dict[str, datetime] = {}

    def move(handle: BaseStore, text: str) -> None:
        saved_at[text] = clock()
        run(writer.save(handle, NS, text, said_at=saved_at[text]))

    threads = [threading.Thread(target=move, args=(h, t)) for h, t in zip(handles, MOVES, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    history = fact_history(shared, NS)
    assert len(history) == 3  # both updates are kept: one current, the other history
    (now,) = current(shared)
    newer = max(saved_at, key=lambda text: saved_at[text])
    assert now.text == newer
    assert all(rec.valid_to is not None for _, rec in history if not rec.current)


@pytest.mark.parametrize("backend", ["memory", "chroma"])
def test_a_crash_between_the_two_puts_shows_one_current_and_is_repaired(backend: str) -> None:
    store = make_store(backend)
    clock = Ticking()


    run(FactWriter(clock=clock).save(store, NS, "Ich wohne in München."))
    with pytest.raises(ConnectionError):
        run(FactWriter(clock=clock).save(Proxy(store, fail_second_put=True), NS, MOVES[0]))
    assert len(current(store)) == 2  # the new version is there, the old not yet closed
    found = current_facts(store, NS, "Wo wohne ich?")
    assert [rec.text for _, rec in found] == [MOVES[0]]  # a reader keeps the newest
    items = store.search(NS, limit=10)
    assert [i.value["text"] for i in newest_per_lineage(items) if i.value["current"]] == [MOVES[0]]
    run(FactWriter(clock=clock).save(store, NS, "Ich spiele Schach."))  # any later save repairs
    assert sorted(rec.text for rec in current(store)) == [MOVES[0], "Ich spiele Schach."]




@pytest.mark.parametrize("backend", ["memory", "chroma"])
def test_a_statement_written_after_a_later_one_becomes_history(backend: str) -> None:
    store = make_store(backend)
    writer = FactWriter()
    march, june, july = (datetime(2026, m, 1, tzinfo=timezone.utc) for m in (3, 6, 7))
    run(writer.save(store, NS, "Ich wohne in München.", said_at=march))
    run(writer.save(store, NS, MOVES[1], said_at=july))  # Hamburg, said in July
    run(writer.save(store, NS, MOVES[0], said_at=june))  # Berlin, said in June, written last
    assert [rec.text for rec in current(store)] == [MOVES[1]]
    (berlin,) = [rec for _, rec in fact_history(store, NS) if rec.text == MOVES[0]]
    assert not berlin.current and berlin.valid_to is not None


class Meddling(Proxy):
    """A handle on which another writer confirms every fact a save re-reads before writing
    (each re-read finds a newer version of the fact the save would close)."""

    rereads = 0

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if ops and all(isinstance(op, GetOp) for op in ops):
            self.rereads += 1
            for op in ops:
                item = self.inner.get(op.namespace, op.key)
                rec = FactRecord.from_value(item.value) if item is not None else None
                if item is not None and rec is not None and rec.current:
                    value = rec.confirmed(rec.recorded_at).to_value()
                    self.inner.put(op.namespace, op.key, value, index=index_paths("text", value))
        return self.inner.batch(ops)


class Pondering(RuleDecider):
    """The rules' decision, after a call (as a model's): time passes while it decides."""

    def decide(self, text: str, candidates: Sequence[Candidate]) -> Plan[Decision]:
        yield call(time.sleep, asyncio.sleep, 0)
        return decide_by_rules(text, candidates)


@pytest.mark.parametrize("backend", ["memory", "chroma"])
def test_a_fact_changed_at_every_attempt_is_kept_as_new_and_ends_nothing(backend: str) -> None:
    store = make_store(backend)
    clock = Ticking()
    run(FactWriter(clock=clock).save(store, NS, "Ich wohne in München."))
    meddling = Meddling(store)
    writer = FactWriter(Pondering(), clock=clock)
    outcome = run(writer.save(meddling, NS, "Ich bin nach Berlin gezogen."))
    assert (outcome.action, outcome.reason) == ("new", "contended")
    assert meddling.rereads == 3  # one re-read per attempt
    assert sorted(rec.text for rec in current(store)) == [
        "Ich bin nach Berlin gezogen.", "Ich wohne in München."]


@pytest.mark.parametrize("backend", ["memory", "chroma"])
def test_the_rules_decide_on_their_first_read(backend: str) -> None:
    """Deciding by the rules takes no time after the read: no re-read (a call does one, above)."""
    store = make_store(backend)
    clock = Ticking()
    run(FactWriter(clock=clock).save(store, NS, "Ich wohne in München."))
    meddling = Meddling(store)
    outcome = run(FactWriter(clock=clock).save(meddling, NS, MOVES[0]))
    assert (outcome.action, meddling.rereads) == ("update", 0)
