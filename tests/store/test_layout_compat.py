"""A store folder written by an earlier version of the library opens and reads as it was written.

``tests/store/layout/<version>/`` holds a folder written by ``scripts/write_layout_fixture.py``
with that version, and ``expected.json``, what it read back then. Each test works on a copy, so
the committed folder is never changed. When the write layout changes, the new code must still
read every folder here (or migrate it on open), and writes into it must then read back too.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from langgraph_episodic import ChromaStore, HashEmbeddings

LAYOUTS = sorted(p for p in (Path(__file__).parent / "layout").iterdir() if p.is_dir())

UNINDEXED = [["users", "alice"], "raw"]
"""The fixture's item put with ``index=False``."""


def _open(tmp_path: Path, layout: Path) -> tuple[ChromaStore, dict[str, Any]]:
    """A copy of the layout's folder, opened as the fixture's writer opened it."""
    expected = json.loads((layout / "expected.json").read_text())
    shutil.copytree(layout / "store", tmp_path / "store")
    return _reopen(tmp_path, expected), expected


def _reopen(tmp_path: Path, expected: dict[str, Any]) -> ChromaStore:
    index = {"dims": expected["dims"], "embed": HashEmbeddings(expected["dims"]),
             "fields": ["text", "context.day"]}  # fmt: skip
    return ChromaStore.persistent(
        tmp_path / "store", collection=expected["collection"], index=index
    )


def test_there_is_a_layout_to_read() -> None:
    assert LAYOUTS, "tests/store/layout/ holds no fixture folder"


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda p: p.name)
def test_every_item_namespace_and_search_reads_back_as_written(
    tmp_path: Path, layout: Path
) -> None:
    store, expected = _open(tmp_path, layout)
    try:
        assert [list(ns) for ns in store.list_namespaces()] == expected["namespaces"]
        for want in expected["items"]:
            item = store.get(tuple(want["namespace"]), want["key"])
            assert item is not None, want
            assert item.value == want["value"]
            assert item.created_at == datetime.fromisoformat(want["created_at"])
            assert item.updated_at == datetime.fromisoformat(want["updated_at"])
        for search in expected["searches"]:
            hits = store.search(tuple(search["prefix"]), query=search["query"], limit=3)
            # The ranked hits as recorded; since then a short page is filled with the items
            # without vectors (score None), as InMemoryStore fills it (docs/store.md).
            # Folders written since record that item too; it is the one without vectors.
            ranked = [[list(h.namespace), h.key] for h in hits if h.score is not None]
            assert ranked == [hit for hit in search["hits"] if hit != UNINDEXED]
            unscored = [[list(h.namespace), h.key] for h in hits if h.score is None]
            assert unscored in ([], [UNINDEXED]), unscored
        report = store.verify()
        assert report.ok, report
    finally:
        store.close()


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda p: p.name)
def test_writes_into_an_old_folder_read_back_after_reopening(tmp_path: Path, layout: Path) -> None:
    store, expected = _open(tmp_path, layout)
    first = expected["items"][0]
    ns, key = tuple(first["namespace"]), first["key"]
    store.put(ns, key, {"text": "rewritten in the old folder"})
    store.put(("users", "carol"), "new", {"text": "a new memory beside old ones"})
    gone = expected["items"][-1]
    store.delete(tuple(gone["namespace"]), gone["key"])
    store.close()
    store = _reopen(tmp_path, expected)
    try:
        rewritten = store.get(ns, key)
        assert rewritten is not None and rewritten.value == {"text": "rewritten in the old folder"}
        assert store.get(tuple(gone["namespace"]), gone["key"]) is None
        hits = store.search(("users",), query="a new memory beside old ones", limit=1)
        assert [(h.namespace, h.key) for h in hits] == [(("users", "carol"), "new")]
        assert store.verify().ok
    finally:
        store.close()
