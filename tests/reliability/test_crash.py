"""Crash safety: SIGKILL a process writing to a persistent store, reopen it, lose nothing.

A writer process puts (and sometimes overwrites) items in ``ChromaStore.persistent(path)`` and
prints one line after each ``put`` returns. The test kills it with SIGKILL mid-stream, then
reopens the path in a fresh interpreter (Chroma caches clients per process) and checks that
every put that returned is there with its exact value, that no item is half-written (its value
parses, its vector records match it, a search finds it), and that the store takes new writes.
"""

from __future__ import annotations

import inspect
import json
import signal
from pathlib import Path
from typing import Any

import pytest

from .conftest import LineReader, popen_python, reap, run_python, stderr_of

KILL_AFTER = 30
"""Lines (returned puts) to wait for before the SIGKILL."""


def crash_ops(n: int) -> list[tuple[str, int]]:
    """The writer's deterministic sequence: (key, version); every 4th op overwrites an old key."""
    ops: list[tuple[str, int]] = []
    versions: dict[str, int] = {}
    fresh = 0
    for step in range(n):
        if step % 4 == 3:
            key = f"k{(step * 7) % fresh:05d}"
        else:
            key = f"k{fresh:05d}"
            fresh += 1
        versions[key] = versions.get(key, 0) + 1
        ops.append((key, versions[key]))
    return ops


def crash_value(key: str, version: int) -> dict[str, Any]:
    """The value the writer puts for (key, version): text to embed, nested data, a float."""
    n = int(key[1:])
    return {
        "text": f"crash item {key} version {version} word{n}x{version}",
        "n": n,
        "version": version,
        "nested": {"deep": [n, version, {"f": n / 7.0}]},
        "pad": "é" * (n % 37),
    }


WRITER = """
import sys
from typing import Any
from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma import record_format

{ops}
{value}

store = ChromaStore.persistent(
    sys.argv[1], collection="crash", index={{"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]}}
)
for key, version in crash_ops(100_000):
    store.put(("crash", "alice"), key, crash_value(key, version))
    print(key, version, flush=True)
"""

CHECKER = """
import json, sys
from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma import record_format

store = ChromaStore.persistent(
    sys.argv[1], collection="crash", index={"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]}
)
ns = ("crash", "alice")
items = {}
for item in store.search(ns, limit=100_000):
    found = store.search(ns, query=item.value["text"], limit=3)
    items[item.key] = {
        "value": item.value,
        "found_by_search": item.key in [f.key for f in found],
    }
# Raw records, read with the record layout documented in langgraph_episodic/chroma/record_format.py.
raw_items = store.collections["items"].get(include=["metadatas"])
raw_vecs = store.collections["vectors"].get(include=["metadatas", "documents"])
metas = dict(zip(raw_items["ids"], raw_items["metadatas"]))
for vid, meta in zip(raw_vecs["ids"], raw_vecs["metadatas"]):
    if "#" not in vid:  # an item with one text is its own vector record (it wins)
        metas[vid] = meta
vectors, leftovers = {}, {}
for vid, meta, doc in zip(raw_vecs["ids"], raw_vecs["metadatas"], raw_vecs["documents"]):
    doc = record_format.text_of(meta, doc, record_format.path_of(meta))  # (own: from the value)
    if "#" not in vid:
        vectors.setdefault(vid, []).append(doc)
        continue
    # "<item id>.<tag>#<i>": only vectors with the item's current tag (_vtag) answer searches.
    tag = vid.rpartition("#")[0].partition(".")[2]
    item = metas.get(meta["_item"])
    current = item is not None and (item.get("_vtag") or "") == tag
    (vectors if current else leftovers).setdefault(meta["_item"], []).append(doc)
records = []
for rid, meta in metas.items():
    records.append({"key": record_format.unfold(meta)["_key"], "nvec": record_format.n_vectors(meta), "docs": vectors.get(rid, []),
                    "value": record_format.value_of(meta)})
orphans = [{"item": rid, "docs": docs} for rid, docs in leftovers.items()]
report = store.verify(repair=True)
clean = store.verify().ok
store.put(ns, "after-crash", {"text": "written after the crash"})
after = store.get(ns, "after-crash")
hits = [r.key for r in store.search(ns, query="written after the crash", limit=3)]
print(json.dumps({"items": items, "records": records, "orphans": orphans, "clean": clean,
                  "repaired": report.orphan_vectors + report.stale_vectors,
                  "after": after.value if after else None, "after_found": "after-crash" in hits}))
"""


def test_sigkill_mid_stream_loses_no_returned_put(tmp_path: Path) -> None:
    path = tmp_path / "db"
    source = WRITER.format(ops=inspect.getsource(crash_ops), value=inspect.getsource(crash_value))
    writer = popen_python(source, str(path))
    try:
        reader = LineReader(writer)
        seen = reader.wait_for(KILL_AFTER, timeout=120)
        if len(seen) < KILL_AFTER:
            reap(writer)
            pytest.fail(f"writer stalled after {len(seen)} puts:\n{stderr_of(writer)}")
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
        assert writer.returncode == -signal.SIGKILL
        printed = reader.finish()
    finally:
        reap(writer)

    ops = crash_ops(len(printed) + 1)
    assert [f"{k} {v}" for k, v in ops[: len(printed)]] == printed, "writer printed its sequence"
    expected: dict[str, dict[str, Any]] = {}
    for key, version in ops[: len(printed)]:
        expected[key] = crash_value(key, version)
    in_flight_key, in_flight_version = ops[len(printed)]  # may or may not have landed

    result = json.loads(run_python(CHECKER, str(path)).strip().splitlines()[-1])
    items = result["items"]
    for key, value in expected.items():
        assert key in items, f"{key}: a put that returned is missing after the crash"
        got = items[key]["value"]
        allowed = [value]
        if key == in_flight_key:
            allowed.append(crash_value(key, in_flight_version))
        assert got in allowed, f"{key}: value changed by the crash: {got}"
    extra = set(items) - set(expected)
    assert extra <= {in_flight_key}, f"items nobody wrote: {extra}"
    for key, info in items.items():
        assert info["found_by_search"], f"{key}: stored but not found by search (no vector)"
    for record in result["records"]:
        assert record["nvec"] == len(record["docs"]), f"half-written vectors: {record}"
        assert record["docs"] == [record["value"]["text"]], f"vectors of another value: {record}"
    # Only the put the kill interrupted may have left vectors its item does not name: the new
    # value's (item not written yet) or the old value's (not removed yet); verify removes them.
    orphan_texts = [doc for orphan in result["orphans"] for doc in orphan["docs"]]
    in_flight_old = [crash_value(in_flight_key, v)["text"] for v in range(1, in_flight_version)]
    allowed = [[], [crash_value(in_flight_key, in_flight_version)["text"]], in_flight_old[-1:]]
    assert orphan_texts in allowed, f"leftover vector records: {result['orphans']}"
    assert result["repaired"] == len(orphan_texts)
    assert result["clean"], "verify(repair=True) left problems behind"
    assert result["after"] == {"text": "written after the crash"}
    assert result["after_found"]
