"""forget_user rebuilds vector indexes that hold deleted vectors, under a live store.

Chroma's index files keep a deleted vector's numbers (only a mark changes) and are written
from uncleared memory past their last element (``length.bin`` included). These tests flush the
index *before* the forget (more writes than ``hnsw:sync_threshold``), then scan every byte of
every file; they write while the rebuild runs, and kill a process at each step of it.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma import rebuild, record_format
from langgraph_episodic.chroma.index_files import IndexFiles
from langgraph_episodic.chroma.testing import gateway_of
from langgraph_episodic.cli.main import main
from langgraph_episodic.privacy import forget_user, purge_store

from .conftest import DIMS, popen_python, python_env, run_python
from .test_forget_on_disk import ALICE, ALICE_WORD, BOB_WORD, fill, scan, texts_of, vector_pieces

FLUSH = 1100
"""More writes than Chroma's ``hnsw:sync_threshold`` (1,000): the index is flushed to disk."""


def open_store(folder: Path) -> ChromaStore:
    return ChromaStore.persistent(folder, index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})


def alice_markers(store: ChromaStore) -> tuple[bytes, ...]:
    """Alice's word, id, vector pieces, item record ids and the float32 placeholders of her
    item records (what Chroma's items index holds for them)."""
    keys: list[tuple[tuple[str, ...], str]] = [(("memories", ALICE), f"m{i}") for i in range(25)]
    keys.append((("working_memory", ALICE, "s1"), "t"))
    rids = [record_format.item_id(ns, key) for ns, key in keys]
    placeholders = {struct.pack("<f", record_format.placeholder(rid)) for rid in rids}
    return (
        ALICE_WORD.encode(),
        ALICE.encode(),
        *vector_pieces(store, ALICE_WORD),
        *(rid.encode() for rid in rids),
        *placeholders,
    )


def index_files(folder: Path) -> list[IndexFiles]:
    return [IndexFiles.read(p.parent) for p in folder.glob("*/header.bin")]


def bob_batch(start: int, n: int) -> list[PutOp]:
    return [PutOp(("memories", "bob"), f"b{i}", {"text": f"bob fact {i}"}) for i in range(start, start + n)]


QUERY_IN_FRESH_PROCESS = """
import json, sys
from langgraph_episodic import ChromaStore, HashEmbeddings
s = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
out = {}
for kind, query in (("vectors", HashEmbeddings(64).embed_query("bob fact 7")), ("items", [0.5])):
    col = s.collections[kind]
    q = col.query(query_embeddings=[query], n_results=20, include=["distances"])
    got = col.get(include=["embeddings"])
    out[kind] = {"nearest": dict(zip(q["ids"][0], q["distances"][0])),
                 "embeddings": {i: [float(x) for x in e]
                                for i, e in zip(got["ids"], got["embeddings"])}}
out.update(bob=len(s.search(("memories", "bob"), limit=10_000)),
           alice=len(s.search(("memories", sys.argv[2]), limit=100)),
           top=s.search(("memories", "bob"), query="bob fact 7", limit=1)[0].key,
           ok=s.verify().ok)
print(json.dumps(out))
"""


def test_a_flushed_index_is_rebuilt_and_no_byte_of_the_user_is_left(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    store = open_store(folder)
    fill(store, ALICE)
    # An item written and deleted: its vector is marked deleted in the index, not gone.
    store.put(("memories", ALICE), "gone", {"text": texts_of(ALICE)[0] + " again"})
    store.delete(("memories", ALICE), "gone")
    store.batch(bob_batch(0, FLUSH))
    # Items with no indexed text live in the item collection: enough to flush its index too.
    store.batch([PutOp(("notes", "bob"), f"n{i}", {"text": f"bob note {i}"}, index=False)
                 for i in range(FLUSH)])  # fmt: skip
    markers = alice_markers(store)
    before = scan(folder, *markers)
    flushed = [f for f in index_files(folder) if f.count]
    assert flushed and any(name.endswith("data_level0.bin") for name in before), before
    assert any(f.marked_deleted() for f in flushed), "the test needs deleted vectors on disk"

    report = forget_user(ALICE, store=store)

    assert report.items_deleted == 26 and report.purged, report.purges
    assert "rebuilt" in report.purges[0].detail
    assert gateway_of(store).metadata_index is not None  # (a namespace is still read by id)
    assert scan(folder, *markers) == {}, "every byte of every file, length.bin included"
    assert not any(f.marked_deleted() for f in index_files(folder))
    unnormalised = {d.name for kind in ("items", "namespaces")
                    for d in rebuild.segment_dirs(folder, str(store.collections[kind].id))}  # fmt: skip
    for f in index_files(folder):  # the never-read bytes (uncleared memory) are zero
        level0, lengths = (f.folder / "data_level0.bin").read_bytes(), (f.folder / "length.bin").read_bytes()
        assert not level0[f.count * f.per_element :].strip(b"\0"), f
        assert not lengths[0 if f.folder.name in unnormalised else f.count * 4 :].strip(b"\0"), f
    again = forget_user(ALICE, store=store)
    assert again.deleted == () and again.purged and "rebuilt" not in again.purges[0].detail

    # A fresh process reads exactly what this one reads (the zeroed bytes are never read): every
    # record's embedding, and the same distance for each record both nearest-20 answers hold.
    # The two answers need not hold the same records: a top-20 query is approximate, and a fresh
    # process rebuilds the unflushed tail of the index with other random levels (a test that
    # compared the lists failed once in about 30 runs under load).
    here: dict[str, Any] = {}
    for kind, query in (("vectors", HashEmbeddings(DIMS).embed_query("bob fact 7")), ("items", [0.5])):
        col = store.collections[kind]
        q = col.query(query_embeddings=[query], n_results=20, include=["distances"])
        got = col.get(include=["embeddings"])
        here[kind] = {"nearest": dict(zip(q["ids"][0], q["distances"][0], strict=True)),
                      "embeddings": {i: [float(x) for x in e]
                                     for i, e in zip(got["ids"], got["embeddings"], strict=True)}}  # fmt: skip
    store.close()
    fresh = json.loads(run_python(QUERY_IN_FRESH_PROCESS, str(folder), ALICE))
    for kind, ours in here.items():
        assert fresh[kind]["embeddings"] == ours["embeddings"], kind
        assert len(ours["embeddings"]) >= FLUSH, kind
        common = ours["nearest"].keys() & fresh[kind]["nearest"].keys()
        assert len(common) >= 10, (kind, ours["nearest"], fresh[kind]["nearest"])
        assert {i: fresh[kind]["nearest"][i] for i in common} == {i: ours["nearest"][i] for i in common}
    assert (fresh["bob"], fresh["alice"], fresh["top"], fresh["ok"]) == (FLUSH, 0, "b7", True)

    # The next flushes (another 1,100 writes, by a restarted process) bring nothing back.
    run_python(MORE_WRITES, str(folder))
    assert scan(folder, *markers) == {}
    left = {m for hits in scan(folder, BOB_WORD.encode(), b"bob fact 1717").values() for m in hits}
    assert b"bob fact 1717" in left


MORE_WRITES = f"""
import sys
from langgraph.store.base import PutOp
from langgraph_episodic import ChromaStore, HashEmbeddings
s = ChromaStore.persistent(sys.argv[1], index={{"dims": 64, "embed": HashEmbeddings(64)}})
s.batch([PutOp(("memories", "bob"), f"b{{i}}", {{"text": f"bob fact {{i}}"}})
         for i in range({FLUSH}, {2 * FLUSH})])
"""


def test_deferred_purge_reports_the_rebuild_left_and_purge_store_does_it(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    store = open_store(folder)
    fill(store, ALICE)
    store.batch(bob_batch(0, FLUSH))
    pieces = vector_pieces(store, ALICE_WORD)

    report = forget_user(ALICE, store=store, purge="defer")

    assert not report.purged and "langgraph-episodic purge" in report.purges[0].detail
    assert scan(folder, ALICE_WORD.encode(), ALICE.encode()) == {}  # text: gone already
    assert scan(folder, *pieces), "the vectors wait for the rebuild"
    store.close()
    assert main(["purge", "--path", str(folder)]) == 0  # e.g. nightly
    assert scan(folder, *pieces) == {}
    again = open_store(folder)
    assert purge_store(again).purged and len(again.search(("memories", "bob"), limit=2000)) == FLUSH
    again.close()


def test_writes_and_searches_during_the_rebuild_all_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes made while a collection is copied (puts, updates, deletes) are journaled and
    copied again before the swap; writes made at the swap wait for it; searches go on."""
    folder = tmp_path / "store"
    store = open_store(folder)
    fill(store, ALICE)
    store.batch(bob_batch(0, 300))
    go, burst_done, finished = threading.Semaphore(0), threading.Semaphore(0), threading.Event()
    started = threading.Event()
    steps: list[str] = []
    phase = ["bulk"]

    def hook(step: str) -> None:
        steps.append(step)
        if step in ("start", "copied"):
            phase[0] = "bulk" if step == "start" else "delta (under the write lock)"
        if step == "start" and not started.is_set():
            started.set()
            barrier.wait(timeout=30)  # the writer and the reader are running now
        if step == "page" and phase[0] == "bulk" and not finished.is_set():
            go.release()  # a burst of writes in the middle of each copy
            assert burst_done.acquire(timeout=60)

    barrier = threading.Barrier(3)
    searched = [0]
    ops = [lambda i=i: store.put(("memories", "carol"), f"c{i}", {"text": f"carol note {i}"})
           for i in range(40)]  # fmt: skip
    for i in range(10):
        ops.insert(3 * i + 1, lambda i=i: store.put(("memories", "bob"), f"b{i}", {"text": f"bob moved {i}"}))
        ops.insert(3 * i + 2, lambda i=i: store.delete(("memories", "bob"), f"b{10 + i}"))

    def writer() -> int:
        started.wait(timeout=30)
        barrier.wait(timeout=30)
        pending, during = list(ops), 0
        while pending:
            copying = not finished.is_set()
            if copying and not go.acquire(timeout=0.05):
                continue
            burst, pending = pending[:5], pending[5:]
            for op in burst:
                op()
            if copying:
                during += len(burst)
                burst_done.release()
        return during

    def reader() -> None:
        started.wait(timeout=30)
        barrier.wait(timeout=30)
        while not finished.is_set():
            assert store.search(("memories", "bob"), query="bob fact 30", limit=3)
            searched[0] += 1

    monkeypatch.setattr(rebuild, "step_hook", hook)
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    with ThreadPoolExecutor(2) as pool:
        try:
            writing, reading = pool.submit(writer), pool.submit(reader)
            report = forget_user(ALICE, store=store)
        finally:
            finished.set()
            sys.setswitchinterval(old_interval)
        during = writing.result(timeout=120)
        reading.result(timeout=120)
    # (Alice's items have one text each, so they are records of the vector collection: that
    # and the registry held her deleted records, the item collection none)
    assert report.purged and steps.count("dropped") == 2 and searched[0] > 0
    assert during >= 5 * steps.count("dropped"), "writes landed in the middle of every copy"
    assert len(store.search(("memories", "carol"), limit=100)) == 40
    assert store.search(("memories", "carol"), query="carol note 17", limit=1)[0].key == "c17"
    bob = {item.key: item.value["text"] for item in store.search(("memories", "bob"), limit=1000)}
    assert len(bob) == 290 and bob["b3"] == "bob moved 3" and "b13" not in bob
    names = sorted(c.name for c in store.client.list_collections())
    assert names == ["langgraph_store", "langgraph_store__ns", "langgraph_store__vec"]
    assert store.verify().ok
    store.close()
    fresh = run_python(
        """
        import sys
        from langgraph_episodic import ChromaStore, HashEmbeddings
        s = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
        bob = {i.key: i.value["text"] for i in s.search(("memories", "bob"), limit=1000)}
        print(len(s.search(("memories", "carol"), limit=100)), len(bob), bob["b3"].split()[1],
              "b13" in bob, s.search(("memories", "bob"), query="bob moved 7", limit=1)[0].key,
              s.verify().ok)
        """,
        str(folder),
    )
    assert fresh.split() == ["40", "290", "moved", "False", "b7", "True"]


KILLED_DURING_REBUILD = """
import os, signal, sys
from langgraph.store.base import PutOp
from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma import rebuild
from langgraph_episodic.privacy import forget_user
s = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
for i in range(25):
    s.put(("memories", sys.argv[3]), f"m{i}", {"text": f"zqxalicemarker{i} likes green tea"})
s.batch([PutOp(("memories", "bob"), f"b{i}", {"text": f"bob fact {i}"}) for i in range(1500)])
seen = []
def hook(step):
    seen.append(step)
    if sys.argv[2] == "external" and step == "start":
        print("rebuilding", flush=True)
    elif step == sys.argv[2] and (step != "page" or seen.count("page") == 2):
        os.kill(os.getpid(), signal.SIGKILL)
rebuild.step_hook = hook
forget_user(sys.argv[3], store=s)
print("finished", flush=True)
"""

CHECK_AFTER_KILL = """
import sys
from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.privacy import forget_user
s = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
names = sorted(c.name for c in s.client.list_collections())
bob = len(s.search(("memories", "bob"), limit=10_000))
top = s.search(("memories", "bob"), query="bob fact 1234", limit=1)[0].key
ok = s.verify().ok
report = forget_user(sys.argv[2], store=s)
print(",".join(names), bob, top, ok, report.items_deleted, report.purged)
"""


@pytest.mark.parametrize(
    "step", ["start", "page", "copied", "complete", "retired", "swapped", "dropped"]
)
def test_a_kill_at_any_step_of_the_rebuild_loses_nothing(tmp_path: Path, step: str) -> None:
    folder = tmp_path / "store"
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_DURING_REBUILD, str(folder), step, ALICE],
        capture_output=True, text=True, timeout=300, check=False,
        env=python_env(),
    )  # fmt: skip
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-3000:]
    _check_recovered(folder)


def test_a_kill_from_outside_during_the_rebuild_loses_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    proc = popen_python(KILLED_DURING_REBUILD, str(folder), "external", ALICE)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "rebuilding", proc.stderr
        threading.Event().wait(0.3)  # somewhere in the copy of the first collections
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    _check_recovered(folder)


def _check_recovered(folder: Path) -> None:
    out = run_python(CHECK_AFTER_KILL, str(folder), ALICE).split()
    assert out[0] == "langgraph_store,langgraph_store__ns,langgraph_store__vec", out
    assert out[1:4] == ["1500", "b1234", "True"], out
    assert out[4:] == ["0", "True"], out  # deleted before the kill; forget again purges
    assert scan(folder, ALICE_WORD.encode(), ALICE.encode()) == {}
    con = sqlite3.connect(folder / "chroma.sqlite3")
    try:
        dirs = {row[0] for row in con.execute("SELECT id FROM segments")}
    finally:
        con.close()
    on_disk = {p.name for p in folder.iterdir() if p.is_dir()}
    assert on_disk <= dirs, f"segment folders of dropped collections: {on_disk - dirs}"


def test_verify_reports_and_repairs_what_a_rebuild_left(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    store = open_store(folder)
    fill(store, ALICE)
    old = store.collections["vectors"]
    got = old.get(include=["embeddings", "metadatas", "documents"])
    retired = store.client.create_collection("langgraph_store__vec__retired")
    retired.add(ids=got["ids"], embeddings=got["embeddings"], metadatas=got["metadatas"],
                documents=got["documents"])  # fmt: skip
    retired_dirs = rebuild.segment_dirs(folder, str(retired.id))

    report = store.verify()

    assert report.leftover_collections == ("langgraph_store__vec__retired",) and not report.ok
    assert store.verify(repair=True).leftover_collections == ("langgraph_store__vec__retired",)
    assert store.verify().ok
    assert [c.name for c in store.client.list_collections()].count("langgraph_store__vec__retired") == 0
    assert retired_dirs and not any(d.exists() for d in retired_dirs)
    assert len(store.search(("memories", ALICE), query="green tea", limit=30)) == 25
    store.close()


def test_two_purges_at_once_and_a_verify_meanwhile_lose_nothing(tmp_path: Path) -> None:
    """Rebuilds run one at a time; a verify(repair=True) during one does not take its copy
    for a leftover."""
    folder = tmp_path / "store"
    store = open_store(folder)
    fill(store, ALICE)
    store.batch(bob_batch(0, 300))
    forget_user(ALICE, store=store, purge="defer")
    barrier = threading.Barrier(3)

    def purge() -> bool:
        barrier.wait(timeout=30)
        return purge_store(store).purged

    def repair() -> bool:
        barrier.wait(timeout=30)
        return store.verify(repair=True).ok or store.verify().ok

    with ThreadPoolExecutor(3) as pool:
        results = [f.result(timeout=300) for f in
                   [pool.submit(purge), pool.submit(purge), pool.submit(repair)]]  # fmt: skip
    assert results == [True, True, True]
    names = sorted(c.name for c in store.client.list_collections())
    assert names == ["langgraph_store", "langgraph_store__ns", "langgraph_store__vec"]
    assert len(store.search(("memories", "bob"), limit=1000)) == 300 and store.verify().ok
    assert scan(folder, ALICE_WORD.encode(), ALICE.encode()) == {}
    store.close()
