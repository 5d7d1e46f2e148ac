"""``mcp``: serve the memory tools of one store to MCP clients, over stdio or streamable HTTP.

The store is opened once, before the server starts (an embedded folder is locked by the one
process that writes it, so one server serves it; share a Chroma server with ``--url`` to run
several). Over stdio nothing but the protocol goes to stdout; messages go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from ..admin.errors import CliError
from .target import Target, open_store


def run_mcp(args: argparse.Namespace) -> int:
    """Check the options, open the store, then serve until the client or a signal ends it."""
    try:
        from ..mcp_server import (
            MCP_PATH,
            MemoryToolset,
            TokenConfigError,
            TokenTable,
            load_tokens,
            serve_http,
            serve_stdio,
        )
    except ImportError as exc:  # the [mcp] extra is missing: the message says how to add it
        raise CliError(str(exc)) from exc
    tokens = None
    if args.http:
        if args.user is not None:
            raise CliError(
                "--user is for stdio; over --http each request's bearer token names the user."
            )
        if not 0 < args.port < 65536:
            raise CliError(f"--port must be between 1 and 65535, got {args.port}.")
        try:
            file = None if args.tokens_file is None else Path(args.tokens_file)
            tokens = TokenTable(load_tokens(file=file, environ=os.environ))
        except TokenConfigError as exc:
            raise CliError(str(exc)) from exc
    else:
        if args.tokens_file is not None:
            raise CliError("--tokens-file is for --http; a stdio server serves --user.")
        if not (args.user or "").strip():
            raise CliError(
                "A stdio server serves one user: pass --user ID (or --http for many users, "
                "each named by a bearer token)."
            )
    target = Target.from_args(args)
    with open_store(target, semantic=True, create=True) as store:
        toolset = MemoryToolset.create(store, locale=args.locale, allow_forget=args.allow_forget)
        names = ", ".join(tool.name for tool in toolset.listed())
        if tokens is None:
            print(f"serving {names} for user {args.user!r} on stdio from the {target.describe()}",
                  file=sys.stderr, flush=True)
            asyncio.run(serve_stdio(toolset, user=args.user))
        else:
            print(f"serving {names} at http://{args.host}:{args.port}{MCP_PATH} for "
                  f"{len(set(tokens.tokens.values()))} users from the {target.describe()}",
                  file=sys.stderr, flush=True)
            asyncio.run(serve_http(toolset, tokens, host=args.host, port=args.port))
    return 0
