"""``langgraph-episodic verify [--repair]``: check (and fix) what a crash or a race left behind.

See :meth:`langgraph_episodic.ChromaStore.verify` for what is checked. Exit code 0 when the
store is consistent (or was repaired), 1 when problems were found and not repaired.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from ..admin.verify import render
from .target import Target, open_store


def run_verify(args: argparse.Namespace) -> int:
    """Verify the store, optionally repairing it; print the report."""
    target = Target.from_args(args)
    store = open_store(target, semantic=False, read_only=not args.repair, alone=args.repair)
    try:
        report = store.verify(repair=args.repair)
    finally:
        store.close()
    if args.json:
        print(json.dumps({**asdict(report), "ok": report.ok}, default=list))
    else:
        print(render(report, target.describe()))
    return 0 if report.ok or report.repaired else 1
