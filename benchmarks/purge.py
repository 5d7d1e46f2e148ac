"""How long forget_user's purge takes, and how long it holds the store's writes.

    python benchmarks/purge.py [--sizes 1000 10000]

For each size: an embedded store with that many items (100 per user, 384-d vectors from
``HashEmbeddings``, the packaged model's size), then ``forget_user`` of one user with
``purge="defer"`` (deletes, write-ahead log purge, VACUUM; no rebuild), then ``purge_store``
(the rebuild of each collection whose vector index holds deleted vectors) while another
thread keeps putting items: how long its puts took, and the longest step that holds the
store's write lock (listing ids; the last copy of what was written meanwhile and the swap).
Timings depend on the machine and its load: print ``uptime`` with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from langgraph.store.base import PutOp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _locomo_data import format_table

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma import rebuild
from langgraph_episodic.privacy import forget_user, purge_store

DIMS = 384
PER_USER = 100


def measure(size: int, folder: Path) -> list[object]:
    store = ChromaStore.persistent(folder, index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})
    ops = [
        PutOp(("memories", f"u{i // PER_USER}"), f"m{i}", {"text": f"user {i // PER_USER} fact {i}"})
        for i in range(size)
    ]
    start = time.perf_counter()
    for first in range(0, size, 1000):
        store.batch(ops[first : first + 1000])
    filled = time.perf_counter() - start

    start = time.perf_counter()
    report = forget_user("u0", store=store, purge="defer")
    deferred = time.perf_counter() - start
    assert report.items_deleted == PER_USER and not report.purged

    marks: list[tuple[str, float]] = []
    rebuild.step_hook = lambda step: marks.append((step, time.perf_counter()))
    waits: list[float] = []
    done = threading.Event()

    def writer() -> None:  # another user's agent keeps writing
        n = 0
        while not done.is_set():
            began = time.perf_counter()
            store.put(("memories", "writer"), f"w{n}", {"text": f"written during the purge {n}"})
            waits.append(time.perf_counter() - began)
            n += 1

    thread = threading.Thread(target=writer)
    try:
        thread.start()
        time.sleep(3.0)  # the writer alone first: its usual put latency
        alone, waits[:] = list(waits), []
        start = time.perf_counter()
        purge = purge_store(store)
        rebuilt = time.perf_counter() - start
    finally:
        done.set()
        thread.join()
        rebuild.step_hook = None
    assert purge.purged, purge.detail
    locked = _locked(marks)
    assert len(store.search(("memories", "writer"), limit=100_000)) == len(alone) + len(waits)
    store.close()
    return [size, filled, deferred, rebuilt, deferred + rebuilt, max(locked, default=0.0),
            f"{statistics.median(alone) * 1000:.0f} / {max(alone) * 1000:.0f}",
            len(waits), f"{statistics.median(waits) * 1000:.0f} / {max(waits) * 1000:.0f}"]  # fmt: skip


def _locked(marks: list[tuple[str, float]]) -> list[float]:
    """Seconds of each phase of the rebuild that holds the store's write lock."""
    out, since = [], 0.0
    for step, t in marks:
        if step in ("start", "copied"):
            since = t
        elif step in ("listed", "swapped"):
            out.append(t - since)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(measure(size, Path(tmp) / "store"))
    print(format_table(
        ["items", "fill s", "forget, purge='defer' s", "purge_store (rebuilds) s",
         "forget, purge=True s", "longest locked step s", "put p50 / max ms, alone",
         "puts during purge", "put p50 / max ms, during"],
        rows,
    ))  # fmt: skip
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
