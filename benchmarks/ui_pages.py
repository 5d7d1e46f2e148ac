"""How long the inspector's pages take on a store of many users (median of a few requests).

    python benchmarks/ui_pages.py --items 5000 --users 100

Seeds an embedded store (64-dim hashing embedder, ``memories/<user>`` namespaces) in a
temporary folder, then times each page through Starlette's ``TestClient`` (in process, no
network) and prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from langgraph.store.base import PutOp
from starlette.testclient import TestClient

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.ui import Secrets, Settings, create_app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = ChromaStore.persistent(Path(folder), index={"dims": 64, "embed": HashEmbeddings(64)})
        ops = [
            PutOp(("memories", f"u{i % args.users:04d}"), f"k{i}", {"text": f"memory {i} of a user"})
            for i in range(args.items)
        ]
        start = time.perf_counter()
        for at in range(0, len(ops), 1000):
            store.batch(ops[at : at + 1000])
        seeded = time.perf_counter() - start
        secrets = Secrets()
        app = create_app(Settings(store=store, where="bench"), secrets=secrets)
        client = TestClient(app, base_url="http://127.0.0.1")
        client.get(f"/?token={secrets.token}")
        pages = {
            "users": "/",
            "a user": "/user?id=u0001",
            "a namespace (page 1)": "/namespace?ns=memories&ns=u0001",
            "an item": "/item?ns=memories&ns=u0001&key=k1",
            "search (all users)": "/search?q=memory+of+a+user&limit=10",
            "search (one user)": "/search?q=memory&user=u0001&limit=10",
            "forget preview": "/forget?user=u0001",
        }
        print(f"{args.items} items, {args.users} users (seeded in {seeded:.1f} s)")
        print(f"| page | median ms (of {args.repeat}) |")
        print("|---|---|")
        for name, url in pages.items():
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                response = client.get(url)
                times.append((time.perf_counter() - t0) * 1000)
                assert response.status_code == 200, (url, response.status_code)
            print(f"| {name} | {statistics.median(times):.1f} |")
        store.close()


if __name__ == "__main__":
    main()
