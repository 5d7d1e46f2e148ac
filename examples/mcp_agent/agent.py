"""An agent whose memory is the langgraph-episodic MCP server, loaded with langchain-mcp-adapters.

The server is the real command, ``langgraph-episodic mcp``, started over stdio for one user;
``langchain-mcp-adapters`` turns its tools (``memory_speichern``, ``memory_abrufen``) into
LangChain tools for ``create_agent``. One MCP session serves the whole conversation, so the
server starts once (and the embedded folder has its one writer). The store uses its default
embedder, which serves German and English questions::

    pip install -e ".[mcp]" langchain-mcp-adapters
    python examples/mcp_agent/agent.py                 # offline: a scripted stand-in model

With ``--model provider:name`` (or ``EPISODIC_CHAT_MODEL``) a real chat model drives the
agent, e.g. ``pip install "langchain[openai]"``, ``OPENAI_API_KEY`` set, then
``python examples/mcp_agent/agent.py --model openai:gpt-4o-mini``.

Over HTTP, pass ``http_connection(url, token)`` instead of ``stdio_connection(...)``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

SERVER = "memory"

SYSTEM_PROMPT = (
    "Du bist ein hilfreicher Assistent mit Langzeitgedächtnis. Speichere dauerhafte Fakten "
    "über den Nutzer mit memory_speichern und schlage mit memory_abrufen nach, bevor du "
    "Fragen beantwortest, die von ihm abhängen."
)

TURNS = ["Ich heiße Alice und trinke keinen Kaffee, nur grünen Tee.",
         "Was soll ich morgen früh trinken?"]
"""Two conversations: the first tells a fact, the second needs it."""


class OfflineModel(BaseChatModel):
    """A stand-in for a chat model, so the example runs with no API key: it saves what the user
    states with ``memory_speichern``, looks a question up with ``memory_abrufen``, and answers
    with what the tool returned. A real model decides this itself from the system prompt."""

    @property
    def _llm_type(self) -> str:
        return "offline-example"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OfflineModel:
        return self  # it knows the two tools it calls

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            reply = AIMessage(content=last.text)  # a real model would write its own answer
        else:
            said = next(m.text for m in reversed(messages) if isinstance(m, HumanMessage))
            name, args = (("memory_abrufen", {"frage": said}) if said.rstrip().endswith("?")
                          else ("memory_speichern", {"information": said}))
            reply = AIMessage(content="", tool_calls=[
                {"name": name, "args": args, "id": f"call_{len(messages)}", "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def stdio_connection(user: str, path: str, *, embeddings: str = "auto") -> dict[str, Any]:
    """Start ``langgraph-episodic mcp`` for ``user`` over the embedded store at ``path``
    (``embeddings="auto"``: the store's default embedder, German and English)."""
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


def chat_model(name: str) -> BaseChatModel:
    """The model ``provider:name`` names, or the offline stand-in when the name is empty."""
    if not name:
        return OfflineModel()
    from langchain.chat_models import init_chat_model

    return init_chat_model(name)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--user", default="alice")
    parser.add_argument("--path", default=".episodic", help="the store's folder")
    parser.add_argument("--model", default=os.environ.get("EPISODIC_CHAT_MODEL", ""),
                        help="provider:name, e.g. openai:gpt-4o-mini (default: "
                             "$EPISODIC_CHAT_MODEL, else the offline stand-in)")
    args = parser.parse_args(argv)
    model = chat_model(args.model.strip())
    answers = asyncio.run(chat(model, stdio_connection(args.user, args.path), TURNS))
    for turn, answer in zip(TURNS, answers, strict=True):
        print(f"> {turn}\n{answer}\n")


if __name__ == "__main__":
    main()
