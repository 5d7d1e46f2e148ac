"""On a Chroma server: two clients (as two processes have: no shared lock, each its own
caches) update the same fact at the same moment; both pass their re-read before either
writes. They converge on one current version, the newer, and keep the other as history."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timezone

import pytest

from langgraph_episodic import ChromaStore
from langgraph_episodic._effects import run
from langgraph_episodic.facts import FactRecord, FactWriter, fact_history
from tests.reliability.conftest import ServerProcess, server
from tests.tools.conftest import hash_index

__all__ = ["server"]

NS = ("memories", "alice")
MOVES = {"Ich bin nach Berlin gezogen.": 6, "Ich bin nach Hamburg gezogen.": 7}


def _race(
    server: ServerProcess, said_at: Callable[[str], datetime]
) -> list[tuple[str, FactRecord]]:
    """München, then both moves of :data:`MOVES` saved by two clients at once (each said at
    ``said_at(text)``), both past their re-read before either writes; the history after."""

    def client() -> ChromaStore:
        return ChromaStore.http(server.host, server.port, collection="facts", index=hash_index())

    first = client()
    run(FactWriter().save(first, NS, "Ich wohne in München.",
                          said_at=datetime(2026, 3, 1, tzinfo=timezone.utc)))
    both_checked = threading.Barrier(2)
    writer = FactWriter(between_read_and_write=lambda: both_checked.wait(30))
    clients = [client(), client()]

    def move(store: ChromaStore, text: str) -> None:
        run(writer.save(store, NS, text, said_at=said_at(text)))

    threads = [threading.Thread(target=move, args=(c, t))
               for c, t in zip(clients, MOVES, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    reader = client()
    history = fact_history(reader, NS)
    for store in (first, *clients, reader):
        store.close()
    return history


@pytest.mark.server
def test_two_server_clients_converge_on_the_newer_version(server: ServerProcess) -> None:
    history = _race(server, lambda text: datetime(2026, MOVES[text], 1, tzinfo=timezone.utc))
    assert len(history) == 3
    assert [rec.text for _, rec in history if rec.current] == ["Ich bin nach Hamburg gezogen."]
    assert all(rec.valid_to is not None for _, rec in history if not rec.current)


@pytest.mark.server
def test_two_server_clients_saying_at_the_same_moment_converge_on_the_larger_key(
    server: ServerProcess,
) -> None:
    """Both moves said at the same microsecond, both re-read before either writes: neither is
    newer, so every writer's repair keeps the version with the larger key, and both are kept."""
    when = datetime(2026, 6, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)
    history = _race(server, lambda text: when)
    moves = {key: rec for key, rec in history if rec.text in MOVES}
    assert len(history) == 3 and len(moves) == 2
    assert {rec.recorded_at for rec in moves.values()} == {"2026-06-01T12:00:00.123456Z"}
    assert [key for key, rec in history if rec.current] == [max(moves)]
    assert all(rec.valid_to is not None for _, rec in history if not rec.current)
