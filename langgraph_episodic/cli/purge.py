"""``langgraph-episodic purge``: remove deleted data from an embedded store's files now.

See :func:`langgraph_episodic.privacy.purge_store`: Chroma's write-ahead log rows of deleted
records, free database pages, and vector indexes that hold deleted vectors (rebuilt). Run it
after ``forget_user(..., purge="defer")``, e.g. nightly. Exit code 0 when the files are purged,
1 when something could not be (a server's files: see docs/privacy.md).
"""

from __future__ import annotations

import argparse
import json

from .target import Target, open_store


def run_purge(args: argparse.Namespace) -> int:
    """Purge the store's files; print what was done."""
    from ..privacy import purge_store

    target = Target.from_args(args)
    store = open_store(target, semantic=False, alone=True)
    try:
        purge = purge_store(store)
    finally:
        store.close()
    if args.json:
        print(json.dumps(purge.to_dict()))
    else:
        state = "purged" if purge.purged else "NOT fully purged"
        print(f"{purge.target}: {state}: {purge.detail}")
    return 0 if purge.purged else 1
