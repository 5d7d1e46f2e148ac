"""The formation lease: at most one owner holds a user's lease, however contenders interleave;
a holder renews an aged lease before it writes and writes nothing when it was taken."""

from __future__ import annotations

import sys
import threading

import pytest

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.formation import lease


@pytest.fixture
def store(tmp_path):
    s = ChromaStore.persistent(tmp_path / "store", index={"dims": 16, "embed": HashEmbeddings(16)})
    yield s
    s.close()


def test_contenders_behind_a_barrier_never_both_hold_the_lease(store):
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _round in range(10):
            owners = [lease.new_owner() for _ in range(6)]
            barrier = threading.Barrier(len(owners))
            held: list[str] = []

            def contend(owner: str, barrier: threading.Barrier = barrier,
                        held: list[str] = held) -> None:
                barrier.wait()
                if lease.acquire(store, "alice", owner):
                    held.append(owner)

            threads = [threading.Thread(target=contend, args=(o,)) for o in owners]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(held) <= 1, held
            for owner in held:
                lease.release(store, "alice", owner)
    finally:
        sys.setswitchinterval(old)


def test_a_holder_keeps_the_lease_and_others_are_refused_until_it_releases(store):
    first, second = lease.new_owner(), lease.new_owner()
    assert lease.acquire(store, "bob", first)
    assert not lease.acquire(store, "bob", second)
    assert lease.renew(store, "bob", first)
    lease.release(store, "bob", first)
    assert lease.acquire(store, "bob", second)


def test_an_expired_lease_of_a_crashed_holder_is_taken_over(store, monkeypatch):
    crashed, alive = lease.new_owner(), lease.new_owner()
    assert lease.acquire(store, "carol", crashed)
    real = lease.time.time
    monkeypatch.setattr(lease.time, "time", lambda: real() + lease.LEASE_S + 1)
    assert lease.acquire(store, "carol", alive)
    assert not lease.renew(store, "carol", crashed)


def _form_alice(store, monkeypatch, renew_after: float, take_over: bool) -> list[str]:
    """Form one turn of alice with ``RENEW_AFTER_S = renew_after``; with ``take_over``, once
    her batch is read and its model calls made, her lease is aged past its expiry and taken by
    another owner. Returns the entities formed."""
    from langgraph_episodic import build_memory_graph
    from langgraph_episodic.formation import DeferredFormation
    from langgraph_episodic.graph.threads import thread_config

    monkeypatch.setattr(lease, "RENEW_AFTER_S", renew_after)
    real = lease.time.time

    def prepared(user: str, turns: int) -> None:
        if not take_over:
            return
        monkeypatch.setattr(lease.time, "time", lambda: real() + lease.LEASE_S + 1)
        assert lease.acquire(store, user, lease.new_owner())

    formation = DeferredFormation(debounce=0.0, on_prepared=prepared)
    graph = build_memory_graph(lambda s: {"messages": [("ai", "Noted.")]}, store=store,
                               summarize=False, episodes=False, defer=formation)
    try:
        graph.invoke({"messages": [("user", "I work at ACME and I use LangGraph daily.")]},
                     thread_config("alice", "s1"))
        assert formation.flush(timeout=10)
    finally:
        formation.close(timeout=5)
    return sorted(i.value["name"] for i in store.search(("entities", "alice"), limit=10,
                                                        filter={"kind": "entity"}))


def test_a_holder_whose_aged_lease_was_taken_writes_nothing(store, monkeypatch):
    assert _form_alice(store, monkeypatch, renew_after=0.0, take_over=True) == []
    assert len(store.search(("_pending", "alice"), limit=10)) == 1, "left to the new holder"


def test_a_holder_writes_under_a_young_lease_without_renewing_it(store, monkeypatch):
    calls: list[str] = []
    real_renew = lease.renew
    monkeypatch.setattr(lease, "renew", lambda *a: calls.append("renew") or real_renew(*a))
    assert _form_alice(store, monkeypatch, renew_after=3600.0, take_over=False) == [
        "ACME", "LangGraph"]
    assert calls == []
