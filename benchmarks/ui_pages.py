"""How long the inspector's pages take on a store of many users (median of a few requests).

    python benchmarks/ui_pages.py --items 100000 --users 1000 --folder /dev/shm/ui-bench

Seeds an embedded store (64-dim hashing embedder: no model runs, the vectors are computed from
the text; ``memories/<user>`` namespaces, and for one user episodes, facts, entities and a
checkpointed thread) in ``--folder`` (kept, and reused when it already holds that many items)
or a temporary folder, then times each page through Starlette's ``TestClient`` (in process, no
network) and prints a table.
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


def seed(folder: Path, items: int, users: int) -> float:
    """Fill ``folder`` (when it is not filled yet); return the seconds it took (0: reused)."""
    marker = folder / f"seeded-{items}-{users}"
    if marker.exists():
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
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--folder", help="keep the seeded store here (reused on the next run)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.folder or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        seeded = seed(folder, args.items, args.users)
        if args.folder and os.environ.get("UI_BENCH_SEED_ONLY"):
            print(f"seeded in {seeded:.1f} s")
            return
        store = ChromaStore.persistent(folder, index={"dims": 64, "embed": HashEmbeddings(64)})
        secrets = Secrets()
        settings = Settings(store=store, where="bench", checkpoints=folder / "checkpoints.sqlite")
        client = TestClient(create_app(settings, secrets=secrets), base_url="http://127.0.0.1")
        client.get(f"/?token={secrets.token}")
        pages = PAGES
        print(f"{args.items} items, {args.users} users (seeded in {seeded:.1f} s; 0: reused)")
        print(f"| page | median ms (of {args.repeat}) |")
        print("|---|---|")
        for name, url in pages.items():
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                response = client.get(url)
                times.append((time.perf_counter() - t0) * 1000)
                assert response.status_code == 200, (url, response.status_code, response.text)
            print(f"| {name} | {statistics.median(times):.1f} |", flush=True)
        store.close()


PAGES = {
    "users": "/",
    "a user": "/user?id=u0001",
    "a namespace (page 1)": "/namespace?ns=memories&ns=u0001",
    "an item": "/item?ns=memories&ns=u0001&key=k1",
    "search (all users)": "/search?q=memory+of+a+user&limit=10",
    "search (one user)": "/search?q=memory&user=u0001&limit=10",
    "forget preview": "/forget?user=u0001",
    "episodes": "/episodes?user=u0001",
    "episodes + replay prompt": "/episodes?user=u0001&task=parsing+task&category=debugging",
    "learning": "/learning?user=u0001",
    "learning curve (PNG)": "/learning/curve.png?user=u0001",
    "facts and entities": "/facts?user=u0001&as_of=2026-01-01",
    "conversations": "/threads?user=u0001",
    "verify page": "/verify",
}


if __name__ == "__main__":
    main()
