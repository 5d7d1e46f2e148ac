"""``forget --user U``: delete a user's store namespaces and checkpointed threads.

The work is :func:`langgraph_episodic.privacy.forget_user`; this module only finds the
checkpoint database and renders the report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.store.base import BaseStore

from .target import CliError


def _is_url(target: str | Path) -> bool:
    return isinstance(target, str) and "://" in target


def forget(store: BaseStore, user: str, *, checkpoints: str | Path | None) -> dict[str, Any]:
    """Forget ``user`` in ``store`` and in the checkpoint database ``checkpoints`` (if any).

    A SQLite file that does not exist is skipped (there are no threads to delete), so forgetting
    never creates an empty checkpoint database. Returns the report as a JSON-safe dict, with
    ``"checkpoints"`` saying which database was searched (``None``: none).
    """
    from ..privacy import forget_user

    searched: str | None = None
    try:
        if checkpoints is not None and (_is_url(checkpoints) or Path(checkpoints).is_file()):
            from ..graph.threads import open_checkpointer  # LangGraph only when there are threads

            searched = str(checkpoints)
            with open_checkpointer(checkpoints) as saver:
                report = forget_user(user, store=store, checkpointer=saver)
        else:
            report = forget_user(user, store=store)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    except ImportError as exc:  # a postgresql:// URL without the postgres extra
        raise CliError(str(exc)) from exc
    return {**report.to_dict(), "checkpoints": searched}


def render(report: dict[str, Any]) -> str:
    """The report as text."""
    lines = [
        f"forgot user {report['user_id']!r}: {report['items_deleted']} items in "
        f"{len(report['deleted'])} namespaces, {len(report['thread_ids'])} threads"
    ]
    lines += [f"  {'/'.join(d['namespace'])}: {d['items']} items" for d in report["deleted"]]
    lines += [f"  thread {t}" for t in report["thread_ids"]]
    if report["checkpoints"] is None:
        lines.append("  (no checkpoint database searched; pass --checkpoints to include one)")
    return "\n".join(lines)
