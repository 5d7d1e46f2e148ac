"""The store check's report as text: what ``langgraph-episodic verify`` prints and the
inspector's verify page shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .wording import count

if TYPE_CHECKING:
    from ..chroma import VerifyReport

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
        lines.append(f"  left by an interrupted rebuild: {', '.join(report.leftover_collections)}")
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
