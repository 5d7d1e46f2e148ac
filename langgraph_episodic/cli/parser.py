"""The command line's argument parser: every command, option, default and help text, and the
demo's banner (:func:`run_demo`).

This module imports nothing but :mod:`argparse`, so that ``--help``, ``--version`` and a usage
error answer as fast as Python can start. Each command's ``run_<command>`` is imported only
when the command runs (:data:`RUNNERS`); the defaults shown in the help live here, and the
modules that use them import them from here.
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

DEFAULT_FOLDER = ".episodic"
"""Where the embedded store lives unless ``--path`` says otherwise."""

DEFAULT_COLLECTION = "langgraph_store"
"""The store's collection name unless ``--collection`` says otherwise."""

HASH_DIMS = 64
"""Dimensions of ``--embeddings hash``."""

EMBEDDINGS = ("auto", "model", "multilingual", "bilingual", "hash")
"""The choices of the store commands' ``--embeddings``."""

DEFAULT_TASKS = 120
"""Demo tasks per run; about a minute on 2 cores with the model load (see the report)."""

DEFAULT_SEED = 18
"""The demo's seed of the hidden success rates and the task stream."""

DEFAULT_MCP_HOST = "127.0.0.1"
DEFAULT_MCP_PORT = 8765
"""Where ``mcp --http`` listens unless ``--host`` / ``--port`` say otherwise."""

DEFAULT_UI_PORT = 8766
"""Where ``ui`` listens unless ``--port`` says otherwise (not ``mcp --http``'s port: both run
at once beside an agent)."""

MCP_TOKENS_ENV = "EPISODIC_MCP_TOKENS"
"""The environment variable with ``mcp --http``'s bearer tokens (``token:user,...``)."""

PLOT_FILE_NAME = "learning_curve.svg"
"""Where the demo's plot goes unless ``--plot`` says otherwise (the working folder)."""


def build_parser(command: str | None = "*") -> argparse.ArgumentParser:
    """The argument parser of all commands.

    ``command`` names the one command whose options are added (the others are listed with their
    help line only), which is all one run needs: ``None`` for none (``--help``, ``--version``),
    ``"*"`` (default) for all. :func:`command_in` finds it in a command line.
    """
    parser = argparse.ArgumentParser(
        prog="langgraph-episodic",
        description="Episodic memory that learns, for LangGraph agents: inspect and maintain a "
        "store, or watch an agent learn (`langgraph-episodic demo`).",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_line, add_options) in COMMANDS.items():
        p = sub.add_parser(name, help=help_line)
        if command in ("*", name):
            add_options(p)
    return parser


def command_in(argv: Sequence[str]) -> str | None:
    """The command a command line runs: its first word that is not an option (the main parser
    has no option that takes a value), or None."""
    return next((word for word in argv if not word.startswith("-")), None)


def _stats(p: argparse.ArgumentParser) -> None:
    add_target_options(p, embeds=False)
    p.add_argument("--json", action="store_true", help="print JSON")


def _search(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", metavar="QUERY", help="what to look for")
    p.add_argument("--user", help="only this user's namespaces")
    p.add_argument("--limit", type=int, default=10, help="how many results (default: 10)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_target_options(p, embeds=True)


def _history(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", required=True, help="the user whose facts to list")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_target_options(p, embeds=False)


def _export(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="file to write ('-' for stdout)")
    add_target_options(p, embeds=False)


def _import(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="file to read ('-' for stdin)")
    p.add_argument("--on-conflict", choices=["error", "skip", "overwrite"], default="error",
                   help="an item whose namespace and key exist already: refuse the file and "
                   "list them (error, default), keep the existing item (skip) or replace it "
                   "(overwrite)")
    p.add_argument("--keep-expired", action="store_true",
                   help="import items whose expires_at has passed (refused by default)")
    add_target_options(p, embeds=True)


def _forget(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", required=True, help="the user id to forget")
    p.add_argument("--yes", action="store_true",
                   help="do not ask for confirmation (needed without a terminal)")
    p.add_argument("--shape", action="append", metavar="SHAPE",
                   help="where the user sits in your namespaces, labels separated by '/', '*' "
                   "for any label, e.g. '{user_id}/notes' (repeatable; default: '*/{user_id}', "
                   "every namespace the library writes)")
    p.add_argument("--checkpoints",
                   help="checkpoint database of the user's threads (SQLite file or "
                   "postgresql:// URL; default: <path>/checkpoints.sqlite for an embedded "
                   "store, none for a server)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_target_options(p, embeds=False)


def _verify(p: argparse.ArgumentParser) -> None:
    p.add_argument("--repair", action="store_true", help="remove leftovers and fix the registry")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_target_options(p, embeds=False)


def _purge(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_target_options(p, embeds=False)


def _mcp(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user",
                   help="the user whose memory a stdio server serves (required without --http)")
    p.add_argument("--http", action="store_true",
                   help="serve streamable HTTP at http://HOST:PORT/mcp, the user from each "
                   f"request's bearer token (tokens from ${MCP_TOKENS_ENV} or --tokens-file); "
                   "default: stdio")
    p.add_argument("--host", default=DEFAULT_MCP_HOST,
                   help=f"HTTP host (default: {DEFAULT_MCP_HOST})")
    p.add_argument("--port", type=int, default=DEFAULT_MCP_PORT,
                   help=f"HTTP port (default: {DEFAULT_MCP_PORT})")
    p.add_argument("--tokens-file", metavar="FILE",
                   help="bearer tokens for --http, one TOKEN:USER per line")
    p.add_argument("--locale", choices=["de", "en"], default="de",
                   help="tool names and texts: memory_speichern/memory_abrufen (de, default) "
                   "or save_memory/recall_memory (en)")
    p.add_argument("--allow-forget", action="store_true",
                   help="add the tool memory_vergessen/forget_memory: deletes the caller's own "
                   "data")
    add_target_options(p, embeds=True)


def _ui(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=DEFAULT_UI_PORT,
                   help=f"port on 127.0.0.1 (default: {DEFAULT_UI_PORT}; 0: any free)")
    p.add_argument("--read-only", action="store_true",
                   help="browse and search only: no edit, delete, forget")
    p.add_argument("--checkpoints",
                   help="checkpoint database whose threads forgetting a user deletes (default: "
                   "<path>/checkpoints.sqlite for an embedded store, none for a server)")
    add_target_options(p, embeds=True)


def run_demo(args: argparse.Namespace) -> int:
    """Say what solves the tasks, then import and run the demo (:mod:`.demo`): the banner comes
    before importing LangGraph, the memory nodes and the model takes its time."""
    print(solver_banner(args.model), flush=True)
    print("starting (LangGraph, the store and the memory nodes)…", file=sys.stderr, flush=True)
    from importlib import import_module

    demo = import_module(".demo", __package__)
    code: int = demo.run(args)
    return code


def solver_banner(model: str | None) -> str:
    """Say plainly what answers the tasks and what decides success."""
    if model is None:
        return (
            "SIMULATED SOLVER (no --model given): no LLM is called. Whether a task succeeds "
            "depends on the strategy chosen and on hidden per-category success rates, so "
            "memory has something to learn. Pass --model provider:name for a real chat model."
        )
    return (
        f"Chat model {model} writes the answers; success is still judged by the SIMULATED "
        "grader (hidden per-category success rates of the strategy used), as the demo has no "
        "real test suite."
    )


def add_target_options(parser: argparse.ArgumentParser, *, embeds: bool) -> None:
    """Add ``--path`` / ``--url`` (exclusive), ``--collection``, and ``--embeddings`` when the
    command embeds text (``embeds``; the others never load an embedder)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--path", help=f"folder of the embedded store (default: ./{DEFAULT_FOLDER})")
    where.add_argument("--url", help="URL of a Chroma server, e.g. http://127.0.0.1:8000")
    parser.add_argument("--collection", default=DEFAULT_COLLECTION,
                        help=f"collection name inside Chroma (default: {DEFAULT_COLLECTION})")
    if not embeds:
        return
    parser.add_argument(
        "--embeddings", choices=EMBEDDINGS, default="auto", help="how text is embedded: as ChromaStore does with no index= (auto, default: the "
        "model the store's vectors were written with, bilingual for a new store), the packaged "
        "all-MiniLM-L6-v2 (model), the multilingual Universal Sentence Encoder for German and "
        "other languages (multilingual), both, as ChromaStore's default embedder (bilingual: a "
        f"German question by the multilingual model, an English one by MiniLM) or the instant "
        f"{HASH_DIMS}-dim hashing embedder (hash); use the one the store was written with",
    )


def add_demo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tasks", type=int, default=DEFAULT_TASKS,
                        help=f"tasks in this run (default: {DEFAULT_TASKS})")
    parser.add_argument("--path",
                        help=f"folder of the store and checkpoints (default: ./{DEFAULT_FOLDER})")
    parser.add_argument("--model",
                        help="a chat model as provider:name (e.g. openai:gpt-4o-mini) for the "
                        "answers; default: the simulated solver")
    parser.add_argument("--seed", type=int,
                        help="seed of the hidden success rates and the task stream (default: "
                        f"{DEFAULT_SEED}; a store keeps the seed of its first run)")
    parser.add_argument("--plot",
                        help=f"SVG file for the learning curve (default: ./{PLOT_FILE_NAME})")
    parser.add_argument("--policy", choices=["thompson", "greedy"], default="thompson",
                        help="strategy policy: thompson (explores and exploits, default) or "
                        "greedy")
    parser.add_argument("--embeddings", choices=["model", "hash"], default="model",
                        help="the packaged all-MiniLM-L6-v2 (model, default) or the instant "
                        "hashing embedder")


COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "stats": ("namespaces, item counts and skill profiles", _stats),
    "search": ("semantic search over the store", _search),
    "history": ("a user's facts with their periods (what was true when)", _history),
    "export": ("write every item to a JSON-lines file", _export),
    "import": ("read a JSON-lines export (validated completely before anything is written)",
               _import),
    "forget": ("delete a user's memories and conversation threads, and purge the files",
               _forget),
    "sweep": ("delete expired (TTL) items now", lambda p: add_target_options(p, embeds=False)),
    "verify": ("check the store for leftovers of crashes; --repair fixes", _verify),
    "purge": ("remove deleted data from the files now (rebuilds vector indexes)", _purge),
    "mcp": ("serve the memory tools to MCP clients (stdio or HTTP; the [mcp] extra)", _mcp),
    "ui": ("browse, search, edit and forget memories in the browser (local)", _ui),
    "demo": ("watch an agent learn from its episodes (simulated by default)", add_demo_arguments),
}
"""Each command's help line and the function that adds its options, in the order of ``--help``."""

RUNNERS = {"mcp": ".mcp", "ui": ".ui", "demo": ".parser"}
"""The module of each command's ``run_<command>`` that is not in :mod:`.commands` (imported
only when the command runs)."""
