"""Test doubles shared by the suite: a scripted, tool-calling chat model, and an embedder that
records what it was asked to embed.

LangChain's fake chat models do not implement ``bind_tools``, so they cannot drive
``create_agent``. :class:`ScriptedChatModel` replies from a script: each entry is an
``AIMessage`` (tool calls included), a string, or a function of the messages it was sent.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from langgraph_episodic.embeddings import HashEmbeddings

Reply = AIMessage | str | Callable[[list[BaseMessage]], AIMessage | str]
"""One scripted reply: a message, a text, or a function of the messages the model was sent."""

_call_ids = itertools.count(1)


def call_tool(name: str, **args: Any) -> AIMessage:
    """An ``AIMessage`` asking for one tool call ``name(**args)`` with a fresh id."""
    return AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": args, "id": f"call_{next(_call_ids)}", "type": "tool_call"}
        ],
    )


def last_tool_result(messages: list[BaseMessage]) -> AIMessage:
    """A reply that repeats the content of the latest ``ToolMessage`` (the agent's final answer)."""
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            return AIMessage(content=f"Laut Gedächtnis: {message.content}")
    raise AssertionError("last_tool_result was scripted, but no ToolMessage was sent to the model")


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from ``script``, in order, sync or async.

    ``bind_tools`` records the tools' OpenAI-style schemas in ``bound_tools`` (what a real model
    would see) and returns the model itself. ``received`` holds the messages of each call.
    Running past the end of the script fails the test with the messages of that call.
    """

    script: list[Any]
    position: int = 0
    bound_tools: list[dict[str, Any]] = Field(default_factory=list)
    received: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        self.bound_tools = [convert_to_openai_tool(tool) for tool in tools]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        if self.position >= len(self.script):
            raise AssertionError(
                f"ScriptedChatModel ran out of replies after {len(self.script)}; "
                f"last messages: {[m.content for m in messages]}"
            )
        reply = self.script[self.position]
        self.position += 1
        if callable(reply):
            reply = reply(list(messages))
        message = AIMessage(content=reply) if isinstance(reply, str) else reply
        return ChatResult(generations=[ChatGeneration(message=message)])

    @property
    def exhausted(self) -> bool:
        """True once every scripted reply was used."""
        return self.position == len(self.script)


class RecordingEmbeddings(HashEmbeddings):
    """``HashEmbeddings`` that keeps every text it was asked to embed."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim)
        self.seen: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.seen.extend(texts)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.seen.append(text)
        return super().embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)
