"""An agent whose memory is the langgraph-episodic MCP server, loaded with langchain-mcp-adapters.

The server is the real command, ``langgraph-episodic mcp``, started over stdio for one user;
``langchain-mcp-adapters`` turns its tools (``memory_speichern``, ``memory_abrufen``) into
LangChain tools for ``create_agent``. One MCP session serves the whole conversation, so the
server starts once (and the embedded folder has its one writer)::

    pip install -e ".[mcp]" langchain-mcp-adapters "langchain[openai]"
    python examples/mcp_agent/agent.py --user alice --path ./.episodic --model openai:gpt-4o-mini

Over HTTP, pass ``http_connection(url, token)`` instead of ``stdio_connection(...)``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

SERVER = "memory"

SYSTEM_PROMPT = (
    "Du bist ein hilfreicher Assistent mit Langzeitgedächtnis. Speichere dauerhafte Fakten "
    "über den Nutzer mit memory_speichern und schlage mit memory_abrufen nach, bevor du "
    "Fragen beantwortest, die von ihm abhängen."
)


def stdio_connection(user: str, path: str, *, embeddings: str = "model") -> dict[str, Any]:
    """Start ``langgraph-episodic mcp`` for ``user`` over the embedded store at ``path``."""
    return {
        "transport": "stdio",
        "command": sys.executable,
        "args": ["-m", "langgraph_episodic", "mcp", "--user", user, "--path", path,
                 "--embeddings", embeddings],
    }


def http_connection(url: str, token: str) -> dict[str, Any]:
    """Reach a running ``langgraph-episodic mcp --http`` as the user of ``token``."""
    return {"transport": "streamable_http", "url": url,
            "headers": {"Authorization": f"Bearer {token}"}}


async def chat(model: BaseChatModel, connection: dict[str, Any], turns: list[str]) -> list[str]:
    """Run ``turns`` through an agent with the MCP memory tools; return its answers."""
    client = MultiServerMCPClient({SERVER: connection})
    async with client.session(SERVER) as session:
        tools = await load_mcp_tools(session)
        agent = create_agent(model, tools, system_prompt=SYSTEM_PROMPT)
        answers = []
        for turn in turns:  # each turn a new conversation: only the memory carries over
            state = await agent.ainvoke({"messages": [{"role": "user", "content": turn}]})
            answers.append(str(state["messages"][-1].content))
        return answers


def main() -> None:
    from langchain.chat_models import init_chat_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--user", required=True)
    parser.add_argument("--path", default=".episodic")
    parser.add_argument("--model", required=True, help="provider:name, e.g. openai:gpt-4o-mini")
    args = parser.parse_args()
    turns = ["Ich heiße Alice und trinke keinen Kaffee, nur grünen Tee.",
             "Was soll ich mir morgen früh zu trinken machen?"]
    model = init_chat_model(args.model)
    answers = asyncio.run(chat(model, stdio_connection(args.user, args.path), turns))
    for turn, answer in zip(turns, answers, strict=True):
        print(f"> {turn}\n{answer}\n")


if __name__ == "__main__":
    main()
