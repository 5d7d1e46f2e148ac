"""What a model reads when an MCP client lists the tools: each description once, and a size that
does not creep back up.

The tools are listed by the MCP SDK's own client, connected in memory to the server the CLI
runs (``build_server``), so the figures are what a client receives.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from mcp.shared.memory import create_connected_server_and_client_session

from langgraph_episodic.mcp_server import MemoryToolset
from langgraph_episodic.mcp_server.server import build_server, fixed_user

TOKENS_BEFORE = {"de": 1085, "en": 982}
"""Tokens of the listing (all four tools, ``allow_forget=True``) when each save and recall
description was repeated as its schema's ``description`` (with the schema's and the arguments'
``title``), as :func:`tokens` counts them; measured with this file's ``listed`` on that code."""


async def listed(locale: str) -> list[dict[str, Any]]:
    """The tools as an MCP client receives them, as JSON-ready dicts."""
    toolset = MemoryToolset.create(InMemoryStore(), locale=locale, allow_forget=True)
    server = build_server(toolset, fixed_user("alice"))
    async with create_connected_server_and_client_session(server) as client:
        tools = (await client.list_tools()).tools
    return [tool.model_dump(mode="json", exclude_none=True) for tool in tools]


def tokens(tools: list[dict[str, Any]]) -> int:
    """A tokenizer-free proxy: about four characters of JSON per token."""
    return len(json.dumps(tools, ensure_ascii=False)) // 4


@pytest.mark.parametrize("locale", ["de", "en"])
async def test_each_description_is_read_once(locale: str) -> None:
    tools = await listed(locale)
    assert len(tools) == 4
    text = json.dumps(tools, ensure_ascii=False)
    for tool in tools:
        description = json.dumps(tool["description"], ensure_ascii=False)
        assert text.count(description) == 1, tool["name"]
        schema = tool["inputSchema"]
        assert "description" not in schema and "title" not in schema
        for prop in schema["properties"].values():
            assert "title" not in prop and prop["description"] not in tool["description"]


@pytest.mark.parametrize("locale", ["de", "en"])
async def test_the_listing_is_smaller_than_with_repeated_descriptions(locale: str) -> None:
    tools = await listed(locale)
    repeated = [
        {**tool, "inputSchema": {**tool["inputSchema"], "description": tool["description"]}}
        for tool in tools
    ]
    assert tokens(tools) < tokens(repeated)
    assert tokens(tools) < TOKENS_BEFORE[locale] * 0.8
