"""``ui``: serve the memory inspector (:mod:`langgraph_episodic.ui`) on 127.0.0.1.

The store is opened as every command opens it (:func:`.target.open_store`), with its embedder
(search and edits embed; the model loads on the first of them). The command prints the URL
with a fresh access token and serves until interrupted.
"""

from __future__ import annotations

import argparse
import socket

from ..admin.errors import CliError
from .target import Target, open_store

HOST = "127.0.0.1"
"""The inspector listens on the loopback interface only."""


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise CliError(
            f"Cannot listen on {HOST}:{port} ({exc.strerror}). Pass another --port "
            "(--port 0 picks a free one)."
        ) from exc
    sock.listen(128)
    return sock


def run_ui(args: argparse.Namespace) -> int:
    """Open the store, print the inspector's URL with its token, serve until Ctrl-C."""
    try:
        import uvicorn

        from ..ui import Secrets, Settings, create_app
    except ImportError as exc:
        raise CliError(
            f"The inspector needs the [ui] extra ({exc.name} is missing): in the checkout, "
            'pip install -e ".[ui]"'
        ) from exc
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port must be between 0 and 65535, got {args.port}.")
    target = Target.from_args(args)
    checkpoints = args.checkpoints or target.checkpoints()
    with open_store(target, semantic=True, read_only=args.read_only, load=False) as store:
        sock = bind(args.port)
        secrets = Secrets()
        settings = Settings(store=store, where=target.describe(), read_only=args.read_only,
                            checkpoints=checkpoints)
        app = create_app(settings, secrets=secrets)
        port = sock.getsockname()[1]
        print(
            f"memory inspector for the {target.describe()}"
            f"{' (read-only)' if args.read_only else ''}:\n"
            f"    http://{HOST}:{port}{secrets.path}/?token={secrets.token}\n"
            "open that URL (it holds the access token); Ctrl-C stops.",
            flush=True,
        )
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        uvicorn.Server(config).run(sockets=[sock])
    return 0
