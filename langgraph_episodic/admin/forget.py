"""Forgetting a user (``langgraph-episodic forget --user U``, the inspector's forget page).

Around :func:`langgraph_episodic.privacy.forget_user`: check the checkpoint database before
touching it, look first (a dry run; a user with nothing stored leaves the files untouched), ask
for confirmation (unless ``--yes``), and render the report with a second pass confirming that
nothing is left.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore

from .errors import CliError
from .wording import count

SQLITE_MAGIC = b"SQLite format 3\x00"
CHECKPOINT_TABLES = frozenset({"checkpoints", "writes"})
"""The tables of LangGraph's SQLite checkpointer; a database without them is not ours."""

Confirm = Callable[[str], bool]


def parse_shape(text: str) -> tuple[str, ...]:
    """``"*/{user_id}"`` -> ``("*", "{user_id}")`` (labels separated by ``/``)."""
    return tuple(text.split("/"))


def checkpoint_database(target: str | Path | None) -> str | Path | None:
    """The checkpoint database to search, None when there is none to search.

    A URL is passed on. A SQLite file that does not exist, is empty or has no tables is skipped
    (there are no threads to delete, and forgetting never creates tables). A file that is not
    SQLite, or a SQLite database without LangGraph's checkpoint tables, is refused, so a wrong
    ``--checkpoints`` never gets tables written into it.
    """
    if target is None or (isinstance(target, str) and "://" in target):  # a URL
        return target
    path = Path(target)
    if not path.exists():
        return None
    if not path.is_file():
        raise CliError(f"--checkpoints {path} is not a file. Pass the SQLite checkpoint file.")
    with path.open("rb") as f:
        head = f.read(len(SQLITE_MAGIC))
    if not head:
        return None
    if head != SQLITE_MAGIC:
        raise CliError(
            f"--checkpoints {path} is not a SQLite database. Pass the checkpoint file your "
            "graph uses (e.g. <store>/checkpoints.sqlite), or leave --checkpoints out."
        )
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT name FROM sqlite_master WHERE type='table'")
            tables = {r[0] for r in rows}
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        raise CliError(f"--checkpoints {path} cannot be read as SQLite ({exc}).") from exc
    if not tables:
        return None
    if not tables.issuperset(CHECKPOINT_TABLES):
        shown = ", ".join(sorted(tables)[:6])
        raise CliError(
            f"--checkpoints {path} is a SQLite database, but not LangGraph checkpoints (its "
            f"tables: {shown}). Nothing was deleted. Pass the checkpoint file, or leave "
            "--checkpoints out."
        )
    return path


@contextmanager
def checkpointer(target: str | Path | None) -> Iterator[Any]:
    """The checkpointer of ``target`` (:func:`checkpoint_database`), open; None when none."""
    if target is None:
        yield None
        return
    from ..graph.threads import open_checkpointer

    with open_checkpointer(target) as saver:
        yield saver


def ask_on_terminal(question: str) -> bool:
    """Ask ``question`` on stderr, read the answer from stdin; True for yes."""
    if not sys.stdin.isatty():
        raise CliError(
            "forget deletes data for good and there is no terminal to ask for confirmation: "
            "pass --yes to confirm."
        )
    print(question, end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline().strip().casefold()
    return answer in ("y", "yes", "j", "ja")


def forget(store: BaseStore, user: str, *, checkpoints: str | Path | None,
           shapes: Sequence[tuple[str, ...]] | None = None,
           confirm: Confirm | None = None) -> dict[str, Any]:
    """Forget ``user`` in ``store`` and in the checkpoint database ``checkpoints`` (if any).

    A dry run comes first: when it finds nothing, nothing is deleted or purged (``"untouched":
    True``). Otherwise ``confirm(summary)``, when given, must return True, and a second dry
    pass after the deletion fills ``"left_after"``. Returns the report as a JSON-safe dict with
    ``"checkpoints"`` (the database searched, or None), ``"untouched"`` and ``"left_after"``.
    """
    from ..privacy import DEFAULT_SHAPES, forget_user

    database = checkpoint_database(checkpoints)
    options: dict[str, Any] = {"shapes": tuple(shapes or DEFAULT_SHAPES)}
    try:
        with checkpointer(database) as saver:
            preview = forget_user(user, store=store, checkpointer=saver, dry_run=True, **options)
            if not (preview.deleted or preview.thread_ids or preview.orphan_vectors):
                return {
                    **replace(preview, dry_run=False).to_dict(),
                    "checkpoints": None if database is None else str(database),
                    "untouched": True,
                    "left_after": {"items": 0, "thread_ids": []},
                }
            if confirm is not None and not confirm(_question(preview.to_dict(), database)):
                raise CliError("Not confirmed: nothing was deleted.")
            report = forget_user(user, store=store, checkpointer=saver, **options)
            check = forget_user(user, store=store, checkpointer=saver, dry_run=True, **options)
    except (ValueError, ImportError) as exc:  # ImportError: postgresql:// without its extra
        raise CliError(str(exc)) from exc
    return {
        **report.to_dict(),
        "checkpoints": None if database is None else str(database),
        "untouched": False,
        "left_after": {"items": check.items_deleted, "thread_ids": list(check.thread_ids)},
    }


def _question(preview: dict[str, Any], database: str | Path | None) -> str:
    threads = count(len(preview["thread_ids"]), "thread")
    where = "" if database is None else f" and {threads} in {database}"
    return (
        "\n".join(_deleted_lines(preview))
        + f"\nDelete {count(preview['items_deleted'], 'item')} of user {preview['user_id']!r}"
        f"{where} for good? [y/N] "
    )


def _deleted_lines(report: dict[str, Any]) -> list[str]:
    lines = [
        f"  {'/'.join(d['namespace'])}: {count(d['items'], 'item')}" for d in report["deleted"]
    ]
    if report.get("orphan_vectors"):
        lines.append(
            f"  {count(report['orphan_vectors'], 'vector record')} whose item was gone already "
            "(a crash's leftovers)"
        )
    return lines + [f"  thread {t}" for t in report["thread_ids"]]


def render(report: dict[str, Any], where: str) -> str:
    """The report as text; ``where`` names the store (``"embedded store ./.episodic"``)."""
    if report.get("untouched"):
        database = report["checkpoints"]
        threads = "" if database is None else f" and no threads in {database}"
        return (
            f"no data of user {report['user_id']!r}: no items in the {where}{threads}. Nothing "
            "was deleted and the files were left untouched (to remove data deleted earlier from "
            "the files, run `langgraph-episodic purge`)."
        )
    lines = [
        f"forgot user {report['user_id']!r}: {count(report['items_deleted'], 'item')} in "
        f"{count(len(report['deleted']), 'namespace')}, "
        f"{count(len(report['thread_ids']), 'thread')}"
    ]
    lines += _deleted_lines(report)
    if report["checkpoints"] is None:
        lines.append("  (no checkpoint database searched; pass --checkpoints to include one)")
    for purge in report["purges"]:
        state = "purged" if purge["purged"] else "NOT fully purged"
        lines.append(f"files: {purge['target']}: {state}: {purge['detail']}")
    left = report["left_after"]
    if left["items"] or left["thread_ids"]:
        lines.append(
            f"check: a second pass still found {count(left['items'], 'item')} and "
            f"{count(len(left['thread_ids']), 'thread')} (a concurrent writer?); run forget again"
        )
    else:
        lines.append("check: a second pass found nothing left of this user")
    return "\n".join(lines)
