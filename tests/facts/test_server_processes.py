"""Real processes on a real Chroma server: two writer processes update the same fact at the
same moment, many rounds. After every round there is exactly one current version, it is the
newer of the two (either, when both were said at the same microsecond), and nothing is lost (every version written is kept, the older as history).

Each round starts both writers behind a ``multiprocessing.Barrier``; in the forced rounds a
second barrier holds each writer between its re-read and its write until the other got there
too (both decided on the same old state, the worst case); in the free rounds they just race.
The parent checks the store between rounds (a third party on the barriers)."""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

import pytest

from langgraph_episodic import ChromaStore
from langgraph_episodic._effects import run
from langgraph_episodic.facts import FactRecord, FactWriter, fact_history
from tests.reliability.conftest import ServerProcess, server
from tests.tools.conftest import hash_index

__all__ = ["server"]

NS = ("memories", "alice")
ROUNDS = 12  # each forced and free: 24 rounds, 48 concurrent updates (one town each)
TIMEOUT = 120.0


def client(port: int) -> ChromaStore:
    return ChromaStore.http("127.0.0.1", port, collection="facts", index=hash_index())


ENDINGS = ["berg", "feld", "hausen", "dorf", "heim", "au", "tal", "brück", "furt", "hafen",
           "burg", "stein"]


def town(name: str, forced: bool, r: int) -> str:
    """A move to a town no other move names (the rules would take two moves to towns they
    cannot tell apart, such as "Nordstadt 1" and "Nordstadt 2", for the same fact)."""
    return f"Ich bin nach {'Ober' if forced else 'Unter'}{name.lower()}{ENDINGS[r]} gezogen."


def writer(name: str, port: int, start: Any, held: Any, done: Any) -> None:
    """One writer process: per round, wait for the start, save its move, wait for the check."""
    store = client(port)
    try:
        for forced in (True, False):
            hook = (lambda: held.wait(TIMEOUT)) if forced else None
            facts = FactWriter(between_read_and_write=hook)
            for r in range(ROUNDS):
                start.wait(TIMEOUT)
                run(facts.save(store, NS, town(name, forced, r)))
                done.wait(TIMEOUT)
    finally:
        store.close()


def residence(store: ChromaStore) -> list[FactRecord]:
    return [rec for _, rec in fact_history(store, NS)]


@pytest.mark.server
def test_two_writer_processes_never_leave_two_current_versions_nor_lose_the_newer(
    server: ServerProcess,
) -> None:
    reader = client(server.port)
    run(FactWriter().save(reader, NS, "Ich wohne in München."))
    ctx = mp.get_context("spawn")
    start, held, done = ctx.Barrier(3), ctx.Barrier(2), ctx.Barrier(3)
    procs = [ctx.Process(target=writer, args=(n, server.port, start, held, done), daemon=True)
             for n in ("Nord", "Süd")]
    for p in procs:
        p.start()
    try:
        written = 1
        for forced in (True, False):
            for r in range(ROUNDS):
                start.wait(TIMEOUT)
                done.wait(TIMEOUT)
                written += 2
                versions = residence(reader)
                assert len(versions) == written, (forced, r, [v.text for v in versions])
                now = [v for v in versions if v.current]
                assert len(now) == 1, (forced, r, [v.text for v in now])
                round_texts = {town(n, forced, r) for n in ("Nord", "Süd")}
                this_round = [v for v in versions if v.text in round_texts]
                latest = max(v.recorded_at for v in this_round)
                # Said at the same microsecond, neither is newer: the writers keep either (the
                # later write when one saw the other, else the larger key; test_server_races).
                newest = {v.text for v in this_round if v.recorded_at == latest}
                assert now[0].text in newest, (
                    forced, r, [(v.text, v.recorded_at, v.current) for v in this_round])
                assert all(v.valid_to is not None for v in versions if not v.current)
                assert len({v.lineage for v in versions}) == 1
    finally:
        for p in procs:
            p.join(TIMEOUT)
            if p.is_alive():
                p.kill()
        reader.close()
    assert [p.exitcode for p in procs] == [0, 0]
