"""``langgraph-episodic``: inspect and maintain a store, and run the learning demo.

Every command works on the embedded store in ``./.episodic`` unless given ``--path`` (another
folder) or ``--url`` (a Chroma server). Problems you can fix are reported in one line on stderr
with exit code 2; no traceback.

Startup is kept short: building the parser imports nothing but this package's small CLI
modules, and each command imports what it needs when it runs. Only ``search``, ``demo`` and an
``import`` that embeds load torch and the embedding model.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from importlib import import_module

from .. import __version__
from . import demo_options, purge, verify
from .target import CliError, add_target_options

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: the reader of our output went away (``... | head``), as a C tool would exit."""


def _lazy(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command that imports ``module`` (relative to this package) only when it runs."""

    def run(args: argparse.Namespace) -> int:
        command: Callable[[argparse.Namespace], int] = getattr(
            import_module(module, __package__), name
        )
        return command(args)

    run.__name__ = name
    return run


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of all commands."""
    parser = argparse.ArgumentParser(
        prog="langgraph-episodic",
        description="Episodic memory that learns, for LangGraph agents: inspect and maintain a "
        "store, or watch an agent learn (`langgraph-episodic demo`).",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("stats", help="namespaces, item counts and skill profiles")
    add_target_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=_lazy(".commands", "run_stats"))

    p = sub.add_parser("search", help="semantic search over the store")
    p.add_argument("query", metavar="QUERY", help="what to look for")
    p.add_argument("--user", help="only this user's namespaces")
    p.add_argument("--limit", type=int, default=10, help="how many results (default: 10)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_target_options(p)
    p.set_defaults(run=_lazy(".commands", "run_search"))

    p = sub.add_parser("export", help="write every item to a JSON-lines file")
    p.add_argument("file", metavar="FILE", help="file to write ('-' for stdout)")
    add_target_options(p)
    p.set_defaults(run=_lazy(".commands", "run_export"))

    p = sub.add_parser(
        "import", help="read a JSON-lines export (validated completely before anything is written)"
    )
    p.add_argument("file", metavar="FILE", help="file to read ('-' for stdin)")
    p.add_argument(
        "--on-conflict",
        choices=["error", "skip", "overwrite"],
        default="error",
        help="an item whose namespace and key exist already: refuse the file and list them "
        "(error, default), keep the existing item (skip) or replace it (overwrite)",
    )
    p.add_argument(
        "--keep-expired",
        action="store_true",
        help="import items whose expires_at has passed (refused by default)",
    )
    add_target_options(p)
    p.set_defaults(run=_lazy(".commands", "run_import"))

    p = sub.add_parser(
        "forget", help="delete a user's memories and conversation threads, and purge the files"
    )
    p.add_argument("--user", required=True, help="the user id to forget")
    p.add_argument(
        "--yes", action="store_true", help="do not ask for confirmation (needed without a terminal)"
    )
    p.add_argument(
        "--shape",
        action="append",
        metavar="SHAPE",
        help="where the user sits in your namespaces, labels separated by '/', '*' for any "
        "label, e.g. '{user_id}/notes' (repeatable; default: '*/{user_id}', every namespace "
        "the library writes)",
    )
    p.add_argument(
        "--checkpoints",
        help="checkpoint database of the user's threads (SQLite file or postgresql:// URL; "
        "default: <path>/checkpoints.sqlite for an embedded store, none for a server)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_target_options(p)
    p.set_defaults(run=_lazy(".commands", "run_forget"))

    p = sub.add_parser("sweep", help="delete expired (TTL) items now")
    add_target_options(p)
    p.set_defaults(run=_lazy(".commands", "run_sweep"))

    verify.add_parser(sub)
    purge.add_parser(sub)

    p = sub.add_parser("demo", help="watch an agent learn from its episodes (simulated by default)")
    demo_options.add_arguments(p)
    p.set_defaults(run=demo_options.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help or a usage error: argparse has printed the message
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        code: int = args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:
        from chromadb.errors import ChromaError

        from ..chroma.folder_lock import FolderInUseError

        if isinstance(exc, FolderInUseError):  # another process writes the embedded folder
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not isinstance(exc, ChromaError):
            raise
        from .target import Target, explain_chroma_error

        print(f"error: {explain_chroma_error(exc, Target.from_args(args))}", file=sys.stderr)
        return EXIT_USAGE
    return code


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush raises nothing."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (captured in tests)
        return


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
