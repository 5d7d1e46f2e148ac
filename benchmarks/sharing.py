"""Search and put latency of a process sharing an embedded folder, against one holding it alone.

For each size, a folder is filled with that many items (10 users' namespaces, one sentence
each) and copied; then the same searches (hybrid, one user's namespace, limit 10) and puts (a
new key) run, interleaved op by op, on a store holding the first folder alone and on a store
of the copy that another process (an idle owner) holds, so that each of its batches crosses
the owner's socket. The embedder is the deterministic ``HashEmbeddings`` (no model time),
which makes the ratio the least flattering one: with a real model each operation also embeds,
in the process that asks for it, at the same cost either way.

``--alone`` measures what serving costs a process that holds its folder alone: a store of
``ChromaStore.persistent`` (it holds the folder's lock and serves it, nobody connects) against
one on a Chroma client of its own (``ChromaStore(chromadb.PersistentClient(...))``, which
shares nothing), on a copy of the folder, interleaved op by op in one process.
``--before CHECKOUT`` measures a lone process against the code before sharing: the same
searches and puts on a lone store, in child processes that alternate between the code of
``CHECKOUT`` (a checkout of the commit before folder sharing, e.g. ``git worktree
add /tmp/presharing 39d85ab``) and the code of this repository (or of ``--after CHECKOUT``),
``--rounds`` times each; the times of all rounds of one code are pooled.

    python benchmarks/sharing.py                 # 1k and 10k items
    python benchmarks/sharing.py --sizes 1000 --ops 200
    python benchmarks/sharing.py --alone
    python benchmarks/sharing.py --before /tmp/presharing --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
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

REPO = Path(__file__).resolve().parents[1]
DIMS = 384
WORDS = (
    "tea",
    "coffee",
    "garden",
    "river",
    "mountain",
    "book",
    "music",
    "train",
    "city",
    "winter",
    "summer",
    "project",
    "meeting",
    "doctor",
    "school",
    "friend",
    "dinner",
    "bicycle",
    "museum",
    "holiday",
    "camera",
    "kitchen",
)
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
        ops = [
            PutOp(("bench", f"u{i % 10}"), f"k{i}", {"text": _sentence(rng)}) for i in range(size)
        ]
        for start in range(0, size, 500):
            store.batch(ops[start : start + 500])


def _measure(
    stores: dict[str, ChromaStore], ops: int, tag: str
) -> dict[tuple[str, str], list[float]]:
    """The same searches and puts on every store, interleaved op by op, so that all meet the
    same machine (other processes' load moves them alike)."""
    rng = random.Random(1)
    times: dict[tuple[str, str], list[float]] = {}
    for i in range(ops):
        ns = ("bench", f"u{i % 10}")
        query = " ".join(rng.choice(WORDS) for _ in range(3))
        text = _sentence(rng)
        order = list(stores.items())
        for name, store in order if i % 2 == 0 else order[::-1]:  # neither always goes first
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
        owner = subprocess.Popen(
            [sys.executable, "-c", OWNER, str(shared_path)],
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            assert owner.stdout is not None and owner.stdout.readline().strip() == "ready"
            with _open(alone_path) as alone, _open(shared_path) as shared:
                assert alone._remote is None and shared._remote is not None
                stores = {"alone": alone, "shared": shared}
                _measure(stores, 20, "warm")
                times = _measure(stores, ops, "k")
        finally:
            assert owner.stdin is not None
            owner.stdin.write("done\n")
            owner.stdin.close()
            owner.wait()
    return _ratio_rows(times, size, "alone", "shared")


def _ratio_rows(
    times: dict[tuple[str, str], list[float]], size: int, base: str, other: str
) -> list[tuple[Any, ...]]:
    """Per op: size, op, ``base``'s p50 and p95, ``other``'s, and other / base at each."""
    rows = []
    for op in ("search", "put"):
        b50, b95 = _pct(times[base, op], 50), _pct(times[base, op], 95)
        o50, o95 = _pct(times[other, op], 50), _pct(times[other, op], 95)
        rows.append((size, op, b50, b95, o50, o95, o50 / b50, o95 / b95))
    return rows


# --- a lone process: serving its folder or not ----------------------------------------------


def run_served(size: int, ops: int) -> list[tuple[Any, ...]]:
    """A lone store that holds its folder and serves it (``ChromaStore.persistent``) against
    one on a Chroma client of its own, which shares nothing, on a copy: interleaved op by op."""
    import chromadb
    from chromadb.config import Settings

    with tempfile.TemporaryDirectory() as tmp:
        served_path, own_path = Path(tmp) / "served", Path(tmp) / "own"
        _fill(served_path, size)
        shutil.copytree(served_path, own_path)
        own_client = chromadb.PersistentClient(
            path=str(own_path), settings=Settings(anonymized_telemetry=False)
        )
        index = {"dims": DIMS, "embed": HashEmbeddings(DIMS)}
        with ChromaStore(own_client, index=index) as own, _open(served_path) as served:
            assert served._remote is None
            stores = {"own": own, "served": served}
            _measure(stores, 20, "warm")
            times = _measure(stores, ops, "k")
    return _ratio_rows(times, size, "own", "served")


# --- a lone process: this code against the code before sharing -----------------------------


def lone(size: int, ops: int) -> None:
    """(A child process.) Print the search and put times on a lone store of ``size`` items,
    with whichever ``langgraph_episodic`` this process imports, as JSON."""
    import langgraph_episodic

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "alone"
        _fill(path, size)
        with _open(path) as store:
            _measure({"lone": store}, 20, "warm")
            times = _measure({"lone": store}, ops, "k")
    print(
        json.dumps(
            {
                "module": langgraph_episodic.__file__,
                **{op: times["lone", op] for op in ("search", "put")},
            }
        )
    )


def _lone_child(code: Path, size: int, ops: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(code))
    done = subprocess.run(
        [sys.executable, __file__, "--lone", str(size), "--ops", str(ops)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    got: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not got["module"].startswith(str(code.resolve())):
        raise SystemExit(f"{code} did not provide langgraph_episodic: {got['module']}")
    return got


def run_alone(before: Path, after: Path, sizes: list[int], ops: int, rounds: int) -> None:
    """Print lone-process latency: the code of ``before`` against the code of ``after``."""
    codes = {"before": before, "today": after}
    print(
        "| items | op | before p50 ms | before p95 ms | today p50 ms | today p95 ms "
        "| ratio p50 | ratio p95 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size in sizes:
        times: dict[tuple[str, str], list[float]] = {}
        for r in range(rounds):  # alternating, and which goes first too
            for name in ("before", "today") if r % 2 == 0 else ("today", "before"):
                got = _lone_child(codes[name], size, ops)
                for op in ("search", "put"):
                    times.setdefault((name, op), []).extend(got[op])
        for op in ("search", "put"):
            b50, b95 = _pct(times["before", op], 50), _pct(times["before", op], 95)
            t50, t95 = _pct(times["today", op], 50), _pct(times["today", op], 95)
            print(
                f"| {size:,} | {op} | {b50:.2f} | {b95:.2f} | {t50:.2f} | {t95:.2f} "
                f"| {t50 / b50:.2f}x | {t95 / b95:.2f}x |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--ops", type=int, default=300)
    parser.add_argument(
        "--before",
        type=Path,
        metavar="CHECKOUT",
        help="measure a lone process: this code against the code of CHECKOUT",
    )
    parser.add_argument(
        "--after",
        type=Path,
        metavar="CHECKOUT",
        default=REPO,
        help="with --before: the code to compare (default: this repository)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="with --before: child processes per code and size (default: 3)",
    )
    parser.add_argument(
        "--alone",
        action="store_true",
        help="measure a lone process: serving its folder against a Chroma client of its own",
    )
    parser.add_argument("--lone", type=int, metavar="SIZE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.lone is not None:
        lone(args.lone, args.ops)
        return
    if args.before is not None:
        run_alone(args.before, args.after, args.sizes, args.ops, args.rounds)
        return
    names = ("own client", "served") if args.alone else ("alone", "shared")
    print(
        f"| items | op | {names[0]} p50 ms | {names[0]} p95 ms | {names[1]} p50 ms "
        f"| {names[1]} p95 ms | ratio p50 | ratio p95 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for size in args.sizes:
        for row in (run_served if args.alone else run)(size, args.ops):
            n, op, *nums = row
            print(
                f"| {n:,} | {op} | "
                + " | ".join(f"{x:.2f}x" if i >= 4 else f"{x:.2f}" for i, x in enumerate(nums))
                + " |",
                flush=True,
            )


if __name__ == "__main__":
    main()
