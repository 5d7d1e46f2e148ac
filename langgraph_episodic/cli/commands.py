"""The store commands: ``stats``, ``search``, ``history``, ``export``, ``import``, ``forget``,
``sweep``, ``verify`` and ``purge``.

Each ``run_*`` takes the parsed arguments, prints its result to stdout and returns the exit
code. Problems the user can fix raise :class:`~langgraph_episodic.admin.errors.CliError`
(exit code 2). The work itself is in :mod:`langgraph_episodic.admin`, shared with the inspector.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._config import namespace_label
from ..admin.browse import (
    fact_state,
    render_results,
    render_stats,
    search_in,
    store_stats,
    user_namespace_list,
)
from ..admin.errors import CliError
from ..admin.transfer import (
    ImportFileError,
    check_expiry,
    collect_records,
    export_file,
    import_records,
    parse_lines,
    read_file,
    resolve_conflicts,
    split_lines,
    write_records,
)
from ..admin.wording import count as counted
from .target import Target, load_embedder, open_store

if TYPE_CHECKING:
    from ..facts.records import FactRecord


def run_stats(args: argparse.Namespace) -> int:
    """Print namespaces with item counts, and each user's skill profiles."""
    target = Target.from_args(args)
    with open_store(target, semantic=False, read_only=True) as store:
        stats = store_stats(store)
    print(json.dumps(stats.to_dict(), indent=2) if args.json
          else render_stats(stats, target.describe()))
    return 0


def run_search(args: argparse.Namespace) -> int:
    """Print the items that best match a query (optionally only one user's)."""
    if not args.query.strip():
        raise CliError("QUERY is empty; pass the text to search for.")
    if args.limit < 1:
        raise CliError(f"--limit must be at least 1, got {args.limit}.")
    target = Target.from_args(args)
    with open_store(target, semantic=True, read_only=True, load=False) as store:
        namespaces = (None if args.user is None
                      else user_namespace_list(store, namespace_label(args.user)))
        if store.list_namespaces(limit=1) if namespaces is None else namespaces:
            load_embedder(store)
            results = search_in(store, args.query, namespaces, args.limit)
        else:  # nothing to search: no model load
            of_user = "" if args.user is None else f" of user {args.user!r}"
            print(f"note: the {target.describe()} holds no items{of_user}", file=sys.stderr)
            results = []
    if args.json:
        print(json.dumps([_result_dict(r) for r in results], indent=2, ensure_ascii=False))
    else:
        width = max(40, shutil.get_terminal_size().columns - 4)
        print(render_results(results, width=width))
    return 0


def _result_dict(item: Any) -> dict[str, Any]:
    return {"namespace": list(item.namespace), "key": item.key, "score": item.score,
            "value": item.value, "created_at": item.created_at.isoformat(),
            "updated_at": item.updated_at.isoformat()}


def _day(text: str | None) -> str:
    return "now" if text is None else text[:10]


def render_history(history: dict[tuple[str, ...], list[tuple[str, FactRecord]]]) -> str:
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
            lines.append(f"  {period:<24} {fact_state(rec):<9} {rec.text}")
            if rec.ended_by is not None:
                lines.append(f"  {'':<24} {'':<9} ended by: {rec.ended_by}")
    return "\n".join(lines)


def run_history(args: argparse.Namespace) -> int:
    """Print a user's facts with their periods (``--json``: one object per version)."""
    if not args.user or not args.user.strip():
        raise CliError("--user is empty; pass the user id whose facts to list.")
    # The facts package loads LangChain's model stack: only this command pays for it.
    from ..facts.recall import fact_history

    target = Target.from_args(args)
    with open_store(target, semantic=False, read_only=True) as store:
        mine = user_namespace_list(store, namespace_label(args.user))
        history = {ns: fact_history(store, ns) for ns in mine}
    if args.json:
        rows = [{"namespace": list(ns), "key": key, **rec.to_value()}
                for ns, versions in history.items() for key, rec in versions]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        print(render_history(history))
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Write every item to a JSON-lines file (``-`` for stdout)."""
    target = Target.from_args(args)
    out_path = None if args.file == "-" else Path(args.file)
    if out_path is not None and not out_path.parent.is_dir():
        raise CliError(f"Cannot write {out_path}: the folder {out_path.parent} does not exist.")
    if out_path is not None and out_path.is_dir():
        example = out_path / "store.jsonl"
        raise CliError(f"{out_path} is a folder; pass a file name such as {example}.")
    with open_store(target, semantic=False, read_only=True) as store:
        if out_path is None:
            write_records(collect_records(store), sys.stdout)
            return 0
        try:
            count = export_file(store, out_path)
        except OSError as exc:
            raise CliError(f"Cannot write {out_path}: {exc}") from exc
    print(f"exported {counted(count, 'item')} from the {target.describe()} to {out_path}",
          file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    """Validate a JSON-lines file completely, then put all its items in one batch."""
    target = Target.from_args(args)
    if args.file == "-":
        try:
            records = parse_lines(split_lines(sys.stdin.read()))
        except ImportFileError as exc:
            raise CliError(f"stdin: {exc}") from exc
    else:
        path = Path(args.file)
        if not path.is_file():
            raise CliError(f"No file {path} to import (it does not exist or is a folder).")
        try:
            records = read_file(path)
        except ImportFileError as exc:
            raise CliError(f"{path}: {exc}") from exc
    try:
        check_expiry(records, keep_expired=args.keep_expired)
    except ImportFileError as exc:
        raise CliError(f"{args.file}: {exc}") from exc
    # Records that are all `"index": false` need no embedder: no model is loaded for them.
    semantic = any(r.index is not False for r in records)
    # No size limits: an import restores what a store held, and its own export must import.
    with open_store(target, semantic=semantic, create=True, load=False, max_value_bytes=None,
                    max_indexed_bytes=None) as store:
        try:
            try:  # conflicts, and a folder another process writes, are found before the model loads
                to_write = resolve_conflicts(store, records, args.on_conflict)
            except ImportFileError as exc:
                raise CliError(f"{args.file}: {exc}") from exc
            if any(r.index is not False for r in to_write):
                load_embedder(store)
            count = import_records(store, to_write)
        except (TypeError, ValueError) as exc:
            raise CliError(f"The store rejected the file ({exc}); nothing was imported.") from exc
    skipped = len(records) - len(to_write)
    kept = f"; skipped {counted(skipped, 'item')} that exist already" if skipped else ""
    print(f"imported {counted(count, 'item')} into the {target.describe()}{kept}", file=sys.stderr)
    return 0


def run_sweep(args: argparse.Namespace) -> int:
    """Delete expired items (TTL) now."""
    target = Target.from_args(args)
    with open_store(target, semantic=False) as store:
        removed = store.sweep_ttl()
    print(f"removed {counted(removed, 'expired item')} from the {target.describe()}")
    return 0


def run_forget(args: argparse.Namespace) -> int:
    """Delete everything stored about one user: store items and checkpointed threads."""
    from ..admin.forget import ask_on_terminal, forget, parse_shape, render

    target = Target.from_args(args)
    if not args.user:
        raise CliError("--user is empty; pass the id of the user to forget.")
    checkpoints = args.checkpoints or target.checkpoints()
    shapes = [parse_shape(s) for s in args.shape] if args.shape else None
    with open_store(target, semantic=False) as store:
        confirm = None if args.yes else ask_on_terminal
        report = forget(store, args.user, checkpoints=checkpoints, shapes=shapes, confirm=confirm)
    text = render(report, target.describe())
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else text)
    left = report["left_after"]
    return 1 if left["items"] or left["thread_ids"] else 0


def run_verify(args: argparse.Namespace) -> int:
    """Verify the store (see ``ChromaStore.verify``), repairing it with ``--repair``; exit code
    1 when problems were found and not repaired."""
    from ..admin.verify import render as render_verify

    target = Target.from_args(args)
    with open_store(target, semantic=False, read_only=not args.repair, alone=args.repair) as store:
        report = store.verify(repair=args.repair)
    print(json.dumps({**asdict(report), "ok": report.ok}, default=list) if args.json
          else render_verify(report, target.describe()))
    return 0 if report.ok or report.repaired else 1


def run_purge(args: argparse.Namespace) -> int:
    """Purge deleted data from the store's files now (``langgraph_episodic.privacy.purge_store``),
    e.g. nightly after ``forget_user(..., purge="defer")``; exit code 1 when something could not
    be purged (a server's files: see docs/privacy.md)."""
    from ..privacy import purge_store

    target = Target.from_args(args)
    with open_store(target, semantic=False, alone=True) as store:
        purge = purge_store(store)
    if args.json:
        print(json.dumps(purge.to_dict()))
    else:
        state = "purged" if purge.purged else "NOT fully purged"
        print(f"{purge.target}: {state}: {purge.detail}")
    return 0 if purge.purged else 1
