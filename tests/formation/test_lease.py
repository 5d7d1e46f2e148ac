"""The formation lease: at most one owner holds a user's lease, however contenders interleave."""

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
