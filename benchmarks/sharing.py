"""Search and put latency of a process sharing an embedded folder, against one holding it alone.

For each size, a folder is filled with that many items (10 users' namespaces, one sentence
each) and copied; then the same searches (hybrid, one user's namespace, limit 10) and puts (a
new key) run, interleaved op by op, on a store holding the first folder alone and on a store
of the copy that another process (an idle owner) holds, so that each of its batches crosses
the owner's socket. The
embedder is the deterministic ``HashEmbeddings`` (no model time), which makes the ratio the
least flattering one: with a real model each operation also embeds, in the process that asks
for it, at the same cost either way.

    python benchmarks/sharing.py                 # 1k and 10k items
    python benchmarks/sharing.py --sizes 1000 --ops 200
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore, HashEmbeddings

DIMS = 384
WORDS = ("tea", "coffee", "garden", "river", "mountain", "book", "music", "train", "city",
         "winter", "summer", "project", "meeting", "doctor", "school", "friend", "dinner",
         "bicycle", "museum", "holiday", "camera", "kitchen")
OWNER = """
import sys
from langgraph_episodic import ChromaStore, HashEmbeddings
store = ChromaStore.persistent(sys.argv[1], index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})
print("ready", flush=True)
sys.stdin.readline()
store.close()
""".replace("DIMS", str(DIMS))


def _open(path: Path) -> ChromaStore:
    return ChromaStore.persistent(path, index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(12))


def _fill(path: Path, size: int) -> None:
    rng = random.Random(0)
    with _open(path) as store:
        ops = [PutOp(("bench", f"u{i % 10}"), f"k{i}", {"text": _sentence(rng)})
               for i in range(size)]
        for start in range(0, size, 500):
            store.batch(ops[start : start + 500])


def _measure(alone: ChromaStore, shared: ChromaStore, ops: int, tag: str
             ) -> dict[tuple[str, str], list[float]]:
    """The same searches and puts on both stores, interleaved op by op, so that both meet the
    same machine (other processes' load moves both alike)."""
    rng = random.Random(1)
    times: dict[tuple[str, str], list[float]] = {}
    for i in range(ops):
        ns = ("bench", f"u{i % 10}")
        query = " ".join(rng.choice(WORDS) for _ in range(3))
        text = _sentence(rng)
        for name, store in (("alone", alone), ("shared", shared)):
            t = time.perf_counter()
            store.search(ns, query=query, limit=10)
            times.setdefault((name, "search"), []).append(time.perf_counter() - t)
            t = time.perf_counter()
            store.put(ns, f"{tag}{i}", {"text": text})
            times.setdefault((name, "put"), []).append(time.perf_counter() - t)
    return times


def _pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000


def run(size: int, ops: int) -> list[tuple[Any, ...]]:
    with tempfile.TemporaryDirectory() as tmp:
        alone_path, shared_path = Path(tmp) / "alone", Path(tmp) / "shared"
        _fill(alone_path, size)
        shutil.copytree(alone_path, shared_path)
        owner = subprocess.Popen([sys.executable, "-c", OWNER, str(shared_path)], text=True,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            assert owner.stdout is not None and owner.stdout.readline().strip() == "ready"
            with _open(alone_path) as alone, _open(shared_path) as shared:
                assert alone._remote is None and shared._remote is not None
                _measure(alone, shared, 20, "warm")
                times = _measure(alone, shared, ops, "k")
        finally:
            assert owner.stdin is not None
            owner.stdin.write("done\n")
            owner.stdin.close()
            owner.wait()
    rows = []
    for op in ("search", "put"):
        a50, a95 = _pct(times["alone", op], 50), _pct(times["alone", op], 95)
        s50, s95 = _pct(times["shared", op], 50), _pct(times["shared", op], 95)
        rows.append((size, op, a50, a95, s50, s95, s50 / a50, s95 / a95))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--ops", type=int, default=300)
    args = parser.parse_args()
    print("| items | op | alone p50 ms | alone p95 ms | shared p50 ms | shared p95 ms "
          "| ratio p50 | ratio p95 |")
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        for row in run(size, args.ops):
            n, op, *nums = row
            print(f"| {n:,} | {op} | " + " | ".join(
                f"{x:.2f}x" if i >= 4 else f"{x:.2f}" for i, x in enumerate(nums)) + " |",
                flush=True)


if __name__ == "__main__":
    main()
