"""``langgraph-episodic verify [--repair]``: check (and fix) what a crash or a race left behind.

See :meth:`langgraph_episodic.ChromaStore.verify` for what is checked. Exit code 0 when the
store is consistent (or was repaired), 1 when problems were found and not repaired.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import TYPE_CHECKING

from .target import Target, open_store
from .wording import count

if TYPE_CHECKING:
    from ..chroma.verify import VerifyReport

MAX_LISTED = 20
"""At most this many unsearchable items are listed by name (``--json`` lists all)."""


def render(report: VerifyReport, where: str) -> str:
    """The report as the command prints it (the inspector's verify page shows the same)."""
    lines = [
        f"{where}: {count(report.items, 'item')}, {count(report.vectors, 'vector record')}",
        f"  orphan vectors: {report.orphan_vectors}, stale vectors: {report.stale_vectors}",
        f"  items missing vectors: {report.items_missing_vectors}",
        f"  unregistered namespaces: {len(report.unregistered_namespaces)}, "
        f"empty namespaces listed: {len(report.empty_namespaces)}, "
        f"expiries behind: {len(report.expiry_drift)}",
    ]
    if report.shadowed_items:
        lines.append(
            f"  item records left by an interrupted move (never read): {report.shadowed_items}"
        )
    if report.leftover_collections:
        lines.append(
            f"  left by an interrupted rebuild: {', '.join(report.leftover_collections)}"
        )
    if report.unsearchable_items:
        lines.append(
            f"  items no query finds (their index fields hold no text): "
            f"{len(report.unsearchable_items)}; put them again with fields they have, "
            "or index=False"
        )
        for ns, key, asked in report.unsearchable_items[:MAX_LISTED]:
            lines.append(f"    {'/'.join(ns)} {key!r}: index {list(asked)}")
    if report.kept_recent:
        lines.append(f"  left alone (younger than the grace period): {report.kept_recent}")
    state = "ok" if report.ok else ("repaired" if report.repaired else "needs --repair")
    lines.append(f"  {state}")
    return "\n".join(lines)


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
