"""``langgraph-episodic history --user U``: a user's facts with their periods.

Every fact the memory tools saved for the user (in each of the user's namespaces) is listed
with its versions, oldest first: when each became true, until when, and what ended it.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..admin.browse import user_namespaces
from ..admin.errors import CliError
from ..facts.recall import fact_history
from ..facts.records import FactRecord
from .target import Target, open_store


def _day(text: str | None) -> str:
    return "now" if text is None else text[:10]


def _state(rec: FactRecord) -> str:
    if rec.current:
        return "current"
    return "ended" if rec.ended_by is not None else "replaced"


def render(history: dict[tuple[str, ...], list[tuple[str, FactRecord]]]) -> str:
    """The history as text: one block per namespace, one line per version."""
    if not any(history.values()):
        return "No facts stored for this user."
    lines: list[str] = []
    for ns, versions in history.items():
        if not versions:
            continue
        lines.append("/".join(ns))
        lineage = None
        for _, rec in versions:
            if lineage is not None and rec.lineage != lineage:
                lines.append("")
            lineage = rec.lineage
            period = f"{_day(rec.valid_from)} .. {_day(rec.valid_to)}"
            lines.append(f"  {period:<24} {_state(rec):<9} {rec.text}")
            if rec.ended_by is not None:
                lines.append(f"  {'':<24} {'':<9} ended by: {rec.ended_by}")
    return "\n".join(lines)


def _as_dict(ns: tuple[str, ...], key: str, rec: FactRecord) -> dict[str, Any]:
    return {"namespace": list(ns), "key": key, **rec.to_value()}


def run_history(args: argparse.Namespace) -> int:
    """Print a user's facts with their periods (``--json``: one object per version)."""
    if not args.user or not args.user.strip():
        raise CliError("--user is empty; pass the user id whose facts to list.")
    target = Target.from_args(args)
    store = open_store(target, semantic=False, read_only=True)
    try:
        history = {ns: fact_history(store, ns) for ns in user_namespaces(store, args.user)}
    finally:
        closer = getattr(store, "close", None)
        if callable(closer):
            closer()
    if args.json:
        rows = [_as_dict(ns, key, rec) for ns, versions in history.items() for key, rec in versions]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        print(render(history))
    return 0
