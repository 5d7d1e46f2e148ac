"""A user's first search after opening reads that user's records and no one else's.

Chroma evaluates a ``where`` over every record of the collection (its SQLite reader groups
all metadata rows), so a namespace read by ``where`` costs what the whole store holds. An
embedded store on a folder reads a namespace's record ids from Chroma's metadata index and
the records by id (:mod:`langgraph_episodic.chroma.metadata_index`). The reads are counted
through a seam on the collections, not timed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.testing import wrap_collections

from ._support import hash_index

USERS = [("users", f"u{n}") for n in range(4)]


class Recorder:
    """A collection whose ``get`` calls are recorded (their ``ids`` and ``where``)."""

    def __init__(self, collection: Any, calls: list[dict[str, Any]]) -> None:
        self._collection = collection
        self._calls = calls

    def get(self, **kwargs: Any) -> Any:
        self._calls.append(kwargs)
        return self._collection.get(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._collection, name)


def _build(path: Path, multi: bool = False) -> None:
    fields = ["text", "note"] if multi else ["text"]
    with ChromaStore.persistent(path, index=hash_index(fields=fields)) as store:
        for ns in USERS:
            for k in range(5):
                value = {"text": f"{ns[1]} likes tea number {k}", "note": f"note {k} of {ns[1]}"}
                store.put(ns, f"k{k}", value)


def _reads_of_first_search(
    path: Path, mode: str, ns: tuple[str, ...], query: str | None = "tea"
) -> tuple[list[Any], Any]:
    store = ChromaStore.persistent(path, index=hash_index(fields=["text"]), search_mode=mode)
    try:
        store.search(USERS[-1], query="tea", limit=3)  # opens the registry and Chroma's files
        calls: list[dict[str, Any]] = []
        wrap_collections(store, lambda collection: Recorder(collection, calls))
        found = store.search(ns, query=query, limit=3)
        return calls, found
    finally:
        store.close()


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical", "no query"])
@pytest.mark.parametrize("multi", [False, True], ids=["one text", "two texts"])
def test_a_first_search_reads_only_its_namespace(tmp_path: Path, mode: str, multi: bool) -> None:
    _build(tmp_path / "db", multi)
    ns = USERS[1]
    if mode == "no query":  # the namespace's listing, newest first
        calls, found = _reads_of_first_search(tmp_path / "db", "hybrid", ns, None)
    else:
        calls, found = _reads_of_first_search(tmp_path / "db", mode, ns)
    assert [item.namespace for item in found] == [ns] * 3
    assert calls, "the first search reads the namespace"
    mine = {record_format.item_id(ns, f"k{k}") for k in range(5)}
    for call in calls:
        assert "where" not in call, call  # Chroma would test every record of the collection
        assert {record_format.item_of_vector(rid) for rid in call["ids"]} <= mine


def test_the_same_answers_as_a_read_by_where(tmp_path: Path, monkeypatch: Any) -> None:
    _build(tmp_path / "db", multi=True)
    by_ids = [
        _reads_of_first_search(tmp_path / "db", "hybrid", ns, query)[1]
        for ns in USERS
        for query in ("tea", None)
    ]
    from langgraph_episodic.chroma.metadata_index import MetadataIndex

    monkeypatch.setattr(MetadataIndex, "ids", lambda self, collection, key, value: None)
    by_where = [
        _reads_of_first_search(tmp_path / "db", "hybrid", ns, query)[1]
        for ns in USERS
        for query in ("tea", None)
    ]
    assert by_ids == by_where


def test_a_first_put_into_a_new_namespace_reads_no_other(tmp_path: Path) -> None:
    """The store asks whether a namespace it has no record of holds items (a crash can leave
    some), by the ids Chroma's metadata index lists for it."""
    _build(tmp_path / "db")
    with ChromaStore.persistent(tmp_path / "db", index=hash_index(fields=["text"])) as store:
        store.search(USERS[0], query="tea", limit=1)
        calls: list[dict[str, Any]] = []
        wrap_collections(store, lambda collection: Recorder(collection, calls))
        store.put(("users", "new"), "k0", {"text": "a new user's first memory"})
        assert all("where" not in call for call in calls), calls
        assert store.search(("users", "new"), query="memory", limit=1)[0].key == "k0"
