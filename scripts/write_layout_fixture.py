"""Write the store folder that ``tests/store/test_layout_compat.py`` opens: a store written by
this version of the library, with what a reader of a later layout must still understand.

    python scripts/write_layout_fixture.py tests/store/layout/v1

It holds indexed items (one and two fields), items put with ``index=False``, an item with a
TTL that never runs out during the test (100 years), an item overwritten (so its vectors were
replaced under a new tag), a deleted item, and namespaces of depth 1 to 3. ``expected.json``
beside the folder lists every item as ``get`` returns it and the hits of a few searches, which
the test compares with what the current code reads. Run it only to make a fixture for a new
layout version; a fixture once committed is never rewritten.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from langgraph_episodic import ChromaStore, HashEmbeddings

DIMS = 64
COLLECTION = "layout"
QUERIES = [(("users",), "dark roast coffee"), (("users", "alice"), "project deadline"),
           (("team",), "Berlin office")]  # fmt: skip


def index() -> dict[str, object]:
    return {"dims": DIMS, "embed": HashEmbeddings(DIMS), "fields": ["text", "context.day"]}


def write(folder: Path) -> None:
    store = ChromaStore.persistent(folder / "store", collection=COLLECTION, index=index())
    alice, bob = ("users", "alice"), ("users", "bob", "notes")
    store.put(
        alice,
        "coffee",
        {"text": "likes dark roast coffee", "context": {"day": "Monday, 8 May 2023"}},
    )
    store.put(alice, "deadline", {"text": "the project deadline moved to June"})
    store.put(alice, "deadline", {"text": "the project deadline is 30 June", "n": 2})
    store.put(alice, "raw", {"blob": [1, 2, 3], "flag": True}, index=False)
    store.put(bob, "tea", {"text": "prefers green tea to coffee", "tags": ["a", "b"]})
    store.put(bob, "gone", {"text": "this one is deleted"})
    store.delete(bob, "gone")
    store.put(
        ("team",), "office", {"text": "the Berlin office opens at nine"}, ttl=52_560_000.0
    )  # 100 years
    store.put(("team",), "umlaut", {"text": "Grüße aus München, Straße 5"})
    items = []
    for ns in store.list_namespaces():
        for item in store.search(ns, limit=100):
            if item.namespace == ns:
                items.append({"namespace": list(ns), "key": item.key, "value": item.value,
                              "created_at": item.created_at.isoformat(),
                              "updated_at": item.updated_at.isoformat()})  # fmt: skip
    searches = [{"prefix": list(p), "query": q,
                 "hits": [[list(h.namespace), h.key] for h in store.search(p, query=q, limit=3)]}
                for p, q in QUERIES]  # fmt: skip
    namespaces = [list(ns) for ns in store.list_namespaces()]
    store.close()
    expected = {"collection": COLLECTION, "dims": DIMS, "items": items, "searches": searches,
                "namespaces": namespaces}  # fmt: skip
    (folder / "expected.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str]) -> int:
    folder = Path(argv[1])
    if folder.exists():
        print(f"{folder} exists: a committed fixture is never rewritten", file=sys.stderr)
        return 1
    folder.mkdir(parents=True)
    try:
        write(folder)
    except BaseException:
        shutil.rmtree(folder)
        raise
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
