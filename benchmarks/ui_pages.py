"""How long the inspector's pages take on a store of many users (median of a few requests).

    python benchmarks/ui_pages.py --items 100000 --users 1000 --folder /dev/shm/ui-bench
    python benchmarks/ui_pages.py --items 100000 --users 1000 --compare 10000 --folder ...

Seeds an embedded store (64-dim hashing embedder: no model runs, the vectors are computed from
the text; ``memories/<user>`` namespaces, and for one user episodes, an entity and two turns
queued for deferred formation) in ``--folder`` (kept, and reused when it already holds that
many items) or a temporary folder, then times each page through Starlette's ``TestClient`` (in
process, no network) and prints a table: the median of ``--repeat`` requests, and the first
request of each page (the first of all also opens Chroma's files and indexes in the process).

``--compare N`` seeds a second store of ``N`` items (users in the same proportion) in
``<folder>-N`` and requests each page of both in turn, so both columns see the same load:
a page that grows with the store shows it in the ratio, one slowed by a busy machine does not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from langgraph.store.base import PutOp
from starlette.testclient import TestClient

from langgraph_episodic.chroma.store import ChromaStore
from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.ui import Secrets, Settings, create_app

BATCH = 2000


def _user(i: int, users: int) -> str:
    return f"u{i % users:04d}"


def seed_pending(folder: Path) -> None:
    """Two answered turns of ``u0001`` queued for deferred formation (as ``enqueue`` writes
    them), once per folder."""
    from langgraph_episodic.formation.pending import PendingTurn, pending_key

    marker = folder / "seeded-pending"
    if marker.exists():
        return
    with ChromaStore.persistent(folder, index={"dims": 64, "embed": HashEmbeddings(64)}) as store:
        for n in range(2):
            turn = PendingTurn("u0001", "t1", pending_key(), text=f"queued turn {n}")
            store.put(turn.namespace, turn.key, turn.to_value(), index=False)
    marker.touch()


def seed(folder: Path, items: int, users: int) -> float:
    """Fill ``folder`` (when it is not filled yet); return the seconds it took (0: reused)."""
    marker = folder / f"seeded-{items}-{users}"
    if marker.exists():
        seed_pending(folder)
        return 0.0
    from langgraph_episodic.episodic.memory import EpisodicMemory
    from langgraph_episodic.episodic.records import (
        Episode,
        Feedback,
        OutcomeStatus,
        TaskCategory,
        TaskDescription,
    )

    start = time.perf_counter()
    with ChromaStore.persistent(folder, index={"dims": 64, "embed": HashEmbeddings(64)}) as store:
        ops = [
            PutOp(("memories", _user(i, users)), f"k{i}", {"text": f"memory {i} of a user"})
            for i in range(items)
        ]
        for at in range(0, len(ops), BATCH):
            store.batch(ops[at : at + BATCH])
        memory = EpisodicMemory(store, ("episodes", "u0001"))
        outcomes = [OutcomeStatus.SUCCESS, OutcomeStatus.FAILURE, OutcomeStatus.PARTIAL]
        for i in range(60):
            memory.record(Episode.new(
                TaskDescription(f"task {i} about parsing", TaskCategory.DEBUGGING),
                f"solution {i}", Feedback(reward=(i % 3) / 2),
                outcomes[i % 3], strategy_used=["iterative", "defensive"][i % 2],
                timestamp=1.7e9 + i * 60,
            ))
        store.put(("entities", "u0001"), "acme", {"name": "ACME", "description": "An employer.",
                                                  "text": "ACME: An employer."})
    marker.touch()
    seed_pending(folder)
    return time.perf_counter() - start


class Bench:
    """One seeded store behind the app, logged in."""

    def __init__(self, folder: Path) -> None:
        self.store = ChromaStore.persistent(folder, index={"dims": 64, "embed": HashEmbeddings(64)})
        secrets = Secrets()
        settings = Settings(store=self.store, where="bench", checkpoints=folder / "checkpoints.sqlite")
        self.client = TestClient(create_app(settings, secrets=secrets), base_url="http://127.0.0.1")
        self.prefix = secrets.path  # (the inspector's pages live under its secret path)
        self.client.get(f"{self.prefix}/?token={secrets.token}")
        self.times: dict[str, list[float]] = {}

    def request(self, name: str, url: str) -> None:
        t0 = time.perf_counter()
        response = self.client.get(self.prefix + url)
        self.times.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
        assert response.status_code == 200, (url, response.status_code, response.text)

    def cells(self, name: str) -> str:
        times = self.times[name]
        return f"{statistics.median(times):.1f} | {times[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--folder", help="keep the seeded store here (reused on the next run)")
    parser.add_argument("--compare", type=int, metavar="N",
                        help="also time a store of N items (users in proportion), in turn")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.folder or Path(scratch) / "store")
        sizes = [(folder, args.items, args.users)]
        if args.compare:
            small_users = max(2, args.users * args.compare // args.items)
            sizes.append((folder.with_name(f"{folder.name}-{args.compare}"), args.compare,
                          small_users))
        seeded = []
        for path, items, users in sizes:
            path.mkdir(parents=True, exist_ok=True)
            seeded.append(seed(path, items, users))
        if args.folder and os.environ.get("UI_BENCH_SEED_ONLY"):
            print("seeded in " + ", ".join(f"{s:.1f} s" for s in seeded))
            return
        benches = [Bench(path) for path, _, _ in sizes]
        print(", ".join(f"{items} items, {users} users" for _, items, users in sizes)
              + " (seeded in " + ", ".join(f"{s:.1f} s" for s in seeded) + "; 0: reused)")
        head = " | ".join(f"{items:,} items: median ms (of {args.repeat}) | first request ms"
                          for _, items, _ in sizes)
        print(f"| page | {head} |")
        print("|---" * (1 + 2 * len(sizes)) + "|")
        for name, url in PAGES.items():
            for _ in range(args.repeat):
                for bench in benches:
                    bench.request(name, url)
            print(f"| {name} | " + " | ".join(b.cells(name) for b in benches) + " |", flush=True)
        for bench in benches:
            bench.store.close()


PAGES = {
    "users": "/",
    "a user": "/user?id=u0001",
    "pending formation queue": "/namespace?ns=_pending&ns=u0001&ns=t1",
    "a namespace (page 1)": "/namespace?ns=memories&ns=u0001",
    "an item": "/item?ns=memories&ns=u0001&key=k1",
    "search (all users)": "/search?q=memory+of+a+user&limit=10",
    "search (one user)": "/search?q=memory&user=u0001&limit=10",
    "forget preview": "/forget?user=u0001",
    "episodes": "/episodes?user=u0001",
    "episodes + replay prompt": "/episodes?user=u0001&task=parsing+task&category=debugging",
    "learning": "/learning?user=u0001",
    "learning curve (SVG)": "/learning/curve.svg?user=u0001",
    "facts and entities": "/facts?user=u0001&as_of=2026-01-01",
    "conversations": "/threads?user=u0001",
    "verify page": "/verify",
}


if __name__ == "__main__":
    main()
