"""A fact's earlier versions live as long as the fact: each save that touches a fact (an
update, the same fact said again, an ending) renews the expiry of every version of it, so the
history never expires before the current version, and goes with it."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import Any

from langgraph_episodic import ChromaStore
from langgraph_episodic.facts import fact_history
from langgraph_episodic.tools import create_memory_tools
from tests.tools.conftest import hash_index

from .conftest import Clock

NS = ("memories", "alice")
CFG = {"configurable": {"user_id": "alice"}}
MINUTE = 60.0


def at(store: Any, when: float) -> None:
    store.clock = lambda: when


def test_history_lives_as_long_as_its_fact() -> None:
    store = ChromaStore.ephemeral(index=hash_index())
    clock = Clock(datetime(2026, 3, 10, 12, tzinfo=timezone.utc))
    save, _ = create_memory_tools(store=store, clock=clock, ttl=60.0)  # minutes
    t0 = time.time()
    at(store, t0)
    save.invoke({"information": "Ich wohne in München."}, CFG)
    at(store, t0 + 50 * MINUTE)
    clock.now += timedelta(days=90)
    save.invoke({"information": "Ich bin nach Berlin gezogen."}, CFG)  # München closed
    at(store, t0 + 100 * MINUTE)
    clock.now += timedelta(days=30)
    save.invoke({"information": "Ich bin nach Berlin gezogen."}, CFG)  # said again

    at(store, t0 + 130 * MINUTE)  # past München's first expiry, inside Berlin's renewed one
    texts = [(rec.text, rec.current) for _, rec in fact_history(store, NS)]
    assert texts == [("Ich wohne in München.", False), ("Ich bin nach Berlin gezogen.", True)]

    at(store, t0 + 170 * MINUTE)  # the fact expired: its history went with it
    assert fact_history(store, NS) == []
    store.close()


def test_with_the_stores_default_ttl_too() -> None:
    store = ChromaStore.ephemeral(index=hash_index(), ttl={"default_ttl": 60.0})
    clock = Clock(datetime(2026, 3, 10, 12, tzinfo=timezone.utc))
    save, _ = create_memory_tools(store=store, clock=clock)  # the store's default: 60 min
    t0 = time.time()
    at(store, t0)
    save.invoke({"information": "Ich wohne in München."}, CFG)
    clock.now += timedelta(days=90)
    at(store, t0 + 50 * MINUTE)
    save.invoke({"information": "Ich bin nach Berlin gezogen."}, CFG)
    at(store, t0 + 100 * MINUTE)
    clock.now += timedelta(days=30)
    save.invoke({"information": "Ich bin nach Berlin gezogen."}, CFG)
    at(store, t0 + 130 * MINUTE)
    assert [rec.current for _, rec in fact_history(store, NS)] == [False, True]
    store.close()
