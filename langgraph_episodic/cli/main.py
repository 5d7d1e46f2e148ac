"""``langgraph-episodic``: inspect and maintain a store, and run the learning demo.

Problems you can fix are reported in one line on stderr with exit code 2, no traceback.
``--help``, ``--version`` and usage errors import nothing but the parser (:mod:`.parser`); each
command imports what it needs when it runs.
"""

from __future__ import annotations

import sys

from .parser import RUNNERS, build_parser, command_in

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["build_parser", "main"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: the reader of our output went away (``... | head``), as a C tool would exit."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_in(argv))  # only the options of the command that runs
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help or a usage error: argparse has printed the message
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    import logging

    from ..admin.errors import CliError

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        from importlib import import_module

        module = import_module(RUNNERS.get(args.command, ".commands"), __package__)
        code: int = getattr(module, f"run_{args.command}")(args)
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

        from ..chroma import FolderInUseError, ProtocolMismatchError
        from .target import Target, explain_chroma_error

        if isinstance(exc, (FolderInUseError, ProtocolMismatchError)):  # the folder's holder
            message = str(exc)
        elif isinstance(exc, ChromaError):
            message = explain_chroma_error(exc, Target.from_args(args))
        else:
            raise
        print(f"error: {message}", file=sys.stderr)
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
