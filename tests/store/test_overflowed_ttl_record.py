"""A store that already holds a record written with an overflowing TTL keeps working.

Before the TTL bound, ``put(..., ttl=1e308)`` was accepted: its expiry overflowed to infinity,
which Chroma drops from the record's metadata, and after a restart every search, list, put and
forget raised ``KeyError: '_expires'`` / ``'_exp'`` (issue 13). New puts are refused now
(``tests/store/test_input_shapes.py``); a folder written by an older version may still hold
such records, so reading one must treat it as never expiring instead of failing.

The guard lives in the read paths of the store's state (the issue13-state branch); this test
writes such a record the way the old code did and fails until that guard is merged.
"""

from __future__ import annotations

from typing import Any

import pytest

from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.testing import namespace_record_ids

from ._support import PERSISTENT, backend_param, key_set

NS = ("users", "alice")


def _write_overflowed_record(store: Any) -> None:
    """Make ``NS/old`` look as ``put(..., ttl=1e308)`` left it before the bound."""
    store.put(NS, "old", {"text": "an item from an older version"}, ttl=60)
    rid = record_format.item_id(NS, "old")
    store.collections["items"].update(
        ids=[rid], metadatas=[{"_expires": float("inf"), "_ttl": 1e308}]
    )
    for record_id in namespace_record_ids(store, NS):
        store.collections["namespaces"].update(ids=[record_id], metadatas=[{"_exp": float("inf")}])


@pytest.mark.parametrize("backend", [backend_param(PERSISTENT)])
def test_a_store_holding_an_overflowed_ttl_record_still_works(make_store: Any) -> None:
    store = make_store()
    store.put(NS, "fresh", {"text": "a fresh item"})
    _write_overflowed_record(store)
    store = make_store.reopen(store)

    assert key_set(store.search(NS)) == {"old", "fresh"}
    assert "old" in key_set(store.search(NS, query="older version"))
    assert store.list_namespaces() == [NS]
    item = store.get(NS, "old")
    assert item is not None and item.value == {"text": "an item from an older version"}
    store.put(NS, "new", {"text": "written after the restart"})
    assert key_set(store.search(NS)) == {"old", "fresh", "new"}
    store.sweep_ttl()
    assert store.get(NS, "old") is not None, "an overflowed expiry means never, not now"
    store.delete(NS, "old")  # forget
    assert key_set(store.search(NS)) == {"fresh", "new"}
    assert store.list_namespaces() == [NS]
