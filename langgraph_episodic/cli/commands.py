"""The store commands: ``stats``, ``search``, ``export``, ``import``, ``forget``, ``sweep``.

Each ``run_*`` takes the parsed arguments, prints its result to stdout and returns the exit
code. Problems the user can fix raise :class:`~langgraph_episodic.admin.errors.CliError`
(exit code 2). The work itself is in :mod:`langgraph_episodic.admin`, shared with the inspector.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

from ..admin.browse import render_results, render_stats, search_store, store_stats, user_namespaces
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


def _close(store: Any) -> None:
    closer = getattr(store, "close", None)
    if callable(closer):
        closer()


def run_stats(args: argparse.Namespace) -> int:
    """Print namespaces with item counts, and each user's skill profiles."""
    target = Target.from_args(args)
    store = open_store(target, semantic=False, read_only=True)
    try:
        stats = store_stats(store)
    finally:
        _close(store)
    if args.json:
        print(json.dumps(stats.to_dict(), indent=2))
    else:
        print(render_stats(stats, target.describe()))
    return 0


def run_search(args: argparse.Namespace) -> int:
    """Print the items that best match a query (optionally only one user's)."""
    if not args.query.strip():
        raise CliError("QUERY is empty; pass the text to search for.")
    if args.limit < 1:
        raise CliError(f"--limit must be at least 1, got {args.limit}.")
    target = Target.from_args(args)
    store = open_store(target, semantic=True, read_only=True, load=False)
    try:
        if _holds_items(store, args.user):
            load_embedder(store)
            results = search_store(store, args.query, user=args.user, limit=args.limit)
        else:  # nothing to search: no model load
            of_user = "" if args.user is None else f" of user {args.user!r}"
            print(f"note: the {target.describe()} holds no items{of_user}", file=sys.stderr)
            results = []
    finally:
        _close(store)
    if args.json:
        print(json.dumps([_result_dict(r) for r in results], indent=2, ensure_ascii=False))
    else:
        width = max(40, shutil.get_terminal_size().columns - 4)
        print(render_results(results, width=width))
    return 0


def _holds_items(store: Any, user: str | None) -> bool:
    """Whether a search could find anything: the store (or ``user``) has a namespace."""
    if user is None:
        return bool(store.list_namespaces(limit=1))
    return bool(user_namespaces(store, user))


def _result_dict(item: Any) -> dict[str, Any]:
    return {
        "namespace": list(item.namespace),
        "key": item.key,
        "score": item.score,
        "value": item.value,
        "created_at": item.created_at.isoformat(),
        "updated_at": item.updated_at.isoformat(),
    }


def run_export(args: argparse.Namespace) -> int:
    """Write every item to a JSON-lines file (``-`` for stdout)."""
    target = Target.from_args(args)
    out_path = None if args.file == "-" else Path(args.file)
    if out_path is not None and not out_path.parent.is_dir():
        raise CliError(f"Cannot write {out_path}: the folder {out_path.parent} does not exist.")
    if out_path is not None and out_path.is_dir():
        raise CliError(f"{out_path} is a folder; pass a file name such as {out_path / 'store.jsonl'}.")
    store = open_store(target, semantic=False, read_only=True)
    try:
        if out_path is None:
            write_records(collect_records(store), sys.stdout)
            return 0
        try:
            count = export_file(store, out_path)
        except OSError as exc:
            raise CliError(f"Cannot write {out_path}: {exc}") from exc
    finally:
        _close(store)
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
    store = open_store(
        target,
        semantic=semantic,
        create=True,
        load=False,
        max_value_bytes=None,
        max_indexed_bytes=None,
    )
    try:
        try:
            # Conflicts and a folder another process writes are found before the model loads.
            to_write = resolve_conflicts(store, records, args.on_conflict)
        except ImportFileError as exc:
            raise CliError(f"{args.file}: {exc}") from exc
        if any(r.index is not False for r in to_write):
            load_embedder(store)
        count = import_records(store, to_write)
    except (TypeError, ValueError) as exc:
        raise CliError(f"The store rejected the file ({exc}); nothing was imported.") from exc
    finally:
        _close(store)
    skipped = len(records) - len(to_write)
    kept = f"; skipped {counted(skipped, 'item')} that exist already" if skipped else ""
    print(f"imported {counted(count, 'item')} into the {target.describe()}{kept}", file=sys.stderr)
    return 0


def run_sweep(args: argparse.Namespace) -> int:
    """Delete expired items (TTL) now."""
    target = Target.from_args(args)
    store = open_store(target, semantic=False)
    try:
        removed = store.sweep_ttl()
    finally:
        _close(store)
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
    store = open_store(target, semantic=False)
    try:
        report = forget(
            store,
            args.user,
            checkpoints=checkpoints,
            shapes=shapes,
            confirm=None if args.yes else ask_on_terminal,
        )
    finally:
        _close(store)
    text = render(report, target.describe())
    print(json.dumps(report, indent=2, ensure_ascii=False) if args.json else text)
    left = report["left_after"]
    return 1 if left["items"] or left["thread_ids"] else 0
