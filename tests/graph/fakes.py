"""Fake chat models for the graph tests, built on LangChain's ``GenericFakeChatModel``.

``GenericFakeChatModel`` does not implement ``bind_tools``, so it cannot give structured output.
:class:`ToolCallingFakeModel` adds a ``bind_tools`` that returns the model itself, and
:func:`structured_reply` scripts the tool call ``with_structured_output`` parses.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

_ids = itertools.count(1)


def structured_reply(schema_name: str, **args: Any) -> AIMessage:
    """The reply a tool-calling model gives for ``with_structured_output(Schema)``."""
    return AIMessage(
        content="",
        tool_calls=[{"name": schema_name, "args": args, "id": f"call_{next(_ids)}",
                     "type": "tool_call"}],
    )


class RecordingFakeModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` that also keeps every message list it was sent."""

    sent: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.sent.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


class ToolCallingFakeModel(RecordingFakeModel):
    """A fake model usable with ``with_structured_output``: ``bind_tools`` returns itself."""

    bound: list[Any] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        self.bound.append(list(tools))
        return self


def replies(*items: AIMessage | str) -> Iterator[AIMessage | str]:
    """An iterator for ``GenericFakeChatModel(messages=...)``."""
    return iter(items)


def endless(reply: Callable[[int], AIMessage | str]) -> Iterator[AIMessage | str]:
    """An endless iterator of replies ``reply(0), reply(1), ...``."""
    return (reply(i) for i in itertools.count())


class ScriptedFakeModel(ToolCallingFakeModel):
    """A fake model whose reply is a function of the messages it was sent."""

    respond: Callable[[list[BaseMessage]], AIMessage | str]
    messages: Iterator[AIMessage | str] = Field(default_factory=lambda: iter(()))

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.sent.append(list(messages))
        reply = self.respond(list(messages))
        message = AIMessage(reply) if isinstance(reply, str) else reply
        return ChatResult(generations=[ChatGeneration(message=message)])


def echo_graph(checkpointer: Any) -> Any:
    """One node answering with how many messages it has seen: a lost checkpoint shows."""
    from langgraph.graph import StateGraph

    from langgraph_episodic.graph.state import EpisodicState

    def agent(state: EpisodicState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"seen {len(state['messages'])}")]}

    builder = StateGraph(EpisodicState)
    builder.add_node("agent", agent)
    builder.set_entry_point("agent")
    return builder.compile(checkpointer=checkpointer)
