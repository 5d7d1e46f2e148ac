"""The memory as an MCP server: ``langgraph-episodic mcp`` (needs the ``[mcp]`` extra).

The tools are the LangChain tools of :func:`~langgraph_episodic.create_memory_tools`, bound
to one store and run through the official MCP Python SDK: ``memory_speichern`` /
``memory_abrufen`` (``save_memory`` / ``recall_memory`` in English) and, when allowed,
``memory_vergessen`` / ``forget_memory``, which forgets the caller's own data. There is no
history tool yet. Over stdio the user is the one the server was started for; over streamable
HTTP it is the bearer token's.
"""

from __future__ import annotations

INSTALL_HINT = 'in the checkout, pip install -e ".[mcp]"'


try:
    import mcp  # noqa: F401
except ImportError as exc:
    raise ImportError(
        f"The MCP server needs the official MCP SDK (package 'mcp'): {INSTALL_HINT}"
    ) from exc

from .server import MCP_PATH, build_server, http_app, serve_http, serve_stdio  # noqa: E402
from .tokens import TOKENS_ENV, TokenConfigError, TokenTable, load_tokens  # noqa: E402
from .toolset import MAX_ARGUMENT_CHARS, MemoryToolset, ToolCallError  # noqa: E402

__all__ = [
    "INSTALL_HINT",
    "MAX_ARGUMENT_CHARS",
    "MCP_PATH",
    "TOKENS_ENV",
    "MemoryToolset",
    "TokenConfigError",
    "TokenTable",
    "ToolCallError",
    "build_server",
    "http_app",
    "load_tokens",
    "serve_http",
    "serve_stdio",
]
