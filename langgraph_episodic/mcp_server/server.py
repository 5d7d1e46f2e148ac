"""The MCP server over the memory tools: stdio for one user, streamable HTTP for many.

Built on the official MCP Python SDK's low-level ``Server``: it lists the tools of a
:class:`~.toolset.MemoryToolset` with their own schemas, validates every call's arguments
against them (a bad call gets an MCP tool error, ``isError: true``, and the server carries on)
and runs the call for the user the transport names: the ``--user`` of a stdio server, the
bearer token's user over HTTP. Nothing else can choose the user.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from io import TextIOWrapper
from typing import Any

import mcp.types as types
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import (
    AuthenticatedUser,
    BearerAuthBackend,
    RequireAuthMiddleware,
)
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route

from .. import __version__
from ..errors import AccessDeniedError
from .tokens import TokenTable
from .toolset import MemoryToolset, ToolCallError

logger = logging.getLogger(__name__)

SERVER_NAME = "langgraph-episodic"
MCP_PATH = "/mcp"
"""Where the HTTP transport answers: ``http://HOST:PORT/mcp``."""

LOOPBACK = ("127.0.0.1", "localhost", "::1")
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
""":data:`LOOPBACK` as a ``Host`` header names them."""

UserOf = Callable[[Server[Any, Any]], str]
"""Returns the user of the request being handled (from the transport, never the client)."""


def build_server(toolset: MemoryToolset, user_of: UserOf) -> Server[Any, Any]:
    """The low-level MCP server: list the toolset's tools, run calls as ``user_of(server)``."""
    server: Server[Any, Any] = Server(SERVER_NAME, version=__version__)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [
            types.Tool(name=tool.name, description=tool.description, inputSchema=tool.input_schema,
                       annotations=types.ToolAnnotations(
                           readOnlyHint=tool.read_only, destructiveHint=tool.destructive,
                           idempotentHint=not tool.destructive, openWorldHint=False))
            for tool in toolset.listed()
        ]

    @server.call_tool()
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.ContentBlock]:
        try:
            answer = await toolset.call(name, arguments, user=user_of(server))
        except ToolCallError:
            raise  # the client's mistake: the SDK answers it as a tool error
        except Exception:
            logger.exception("tool %s failed", name)  # then the SDK answers a tool error
            raise
        return [types.TextContent(type="text", text=answer)]

    return server


def fixed_user(user: str) -> UserOf:
    """The user of a stdio server: the one it was started for."""
    return lambda _server: user


def token_user(server: Server[Any, Any]) -> str:
    """The user of an HTTP request: the one its bearer token belongs to."""
    request = server.request_context.request
    user = getattr(request, "user", None)
    if not isinstance(user, AuthenticatedUser):  # RequireAuthMiddleware lets none through
        raise AccessDeniedError("This request carries no authenticated user.")
    return user.access_token.client_id


async def serve_stdio(toolset: MemoryToolset, *, user: str) -> None:
    """Serve ``toolset`` for ``user`` on stdin/stdout until the client closes stdin.

    The protocol gets its own copy of the stdout file descriptor, and ``sys.stdout``'s
    descriptor then points at stderr: whatever a library prints goes to stderr instead of
    corrupting the protocol, and the process's own stdout stays open after the server ends.
    """
    import anyio
    from mcp.server.stdio import stdio_server

    sys.stdout.flush()
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    server = build_server(toolset, fixed_user(user))
    with TextIOWrapper(protocol, encoding="utf-8") as out:
        async with stdio_server(stdout=anyio.wrap_file(out)) as (read, write):
            await server.run(read, write, server.create_initialization_options())


def http_app(toolset: MemoryToolset, tokens: TokenTable, *, host: str, port: int) -> Starlette:
    """The streamable HTTP app: ``POST /mcp`` with ``Authorization: Bearer <token>``.

    Stateless JSON responses: each request is served on its own, so a client that goes away
    mid-call leaves no session behind. A request without a known token gets 401. On a loopback
    host the ``Host`` and ``Origin`` headers must name it too (DNS rebinding protection).
    """
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:{port}" for name in LOOPBACK_NAMES],
        allowed_origins=[f"http://{name}:{port}" for name in LOOPBACK_NAMES],
    ) if host in LOOPBACK else None
    manager = StreamableHTTPSessionManager(app=build_server(toolset, token_user), json_response=True,
                                           stateless=True, security_settings=security)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return Starlette(
        routes=[Route(MCP_PATH, endpoint=RequireAuthMiddleware(manager.handle_request, required_scopes=[]))],
        middleware=[
            Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(tokens)),
            Middleware(AuthContextMiddleware),
        ],
        lifespan=lifespan,
    )


async def serve_http(toolset: MemoryToolset, tokens: TokenTable, *, host: str, port: int) -> None:
    """Serve ``toolset`` over streamable HTTP on ``host:port`` until interrupted."""
    import uvicorn

    app = http_app(toolset, tokens, host=host, port=port)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    await uvicorn.Server(config).serve()
