"""Small message helpers the nodes share: text, last human message, tool-call boundaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)


def as_messages(value: Any) -> list[BaseMessage]:
    """Return the state's ``messages`` value as a list of ``BaseMessage`` (empty when absent)."""
    if not value:
        return []
    return list(convert_to_messages(value))


def message_text(message: BaseMessage) -> str:
    """The plain text of a message (text blocks only), stripped."""
    return str(message.text).strip()


def last_human_index(messages: Sequence[BaseMessage | AnyMessage]) -> int | None:
    """Index of the last ``HumanMessage``, or ``None`` when there is none."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return i
    return None


def last_human_text(messages: Sequence[BaseMessage]) -> str:
    """Text of the last human message ('' when there is none)."""
    i = last_human_index(messages)
    return "" if i is None else message_text(messages[i])


def last_ai_text(messages: Sequence[BaseMessage]) -> str:
    """Text of the last AI message that has text ('' when there is none)."""
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            text = message_text(message)
            if text:
                return text
    return ""


def leading_system_count(messages: Sequence[BaseMessage]) -> int:
    """How many messages at the start are ``SystemMessage``s."""
    n = 0
    while n < len(messages) and isinstance(messages[n], SystemMessage):
        n += 1
    return n


def safe_cut(messages: Sequence[BaseMessage], cut: int) -> int:
    """Move ``cut`` back until ``messages[cut:]`` holds every tool call's AI message.

    Keeps an AI message with tool calls (including parallel ones) together with all its
    ``ToolMessage``s: no ``ToolMessage`` at or after the cut may answer a call issued before it.
    """
    cut = max(0, min(cut, len(messages)))
    issuer: dict[str, int] = {}
    for i, message in enumerate(messages):
        if isinstance(message, AIMessage):
            for tool_call in message.tool_calls:
                if tool_call.get("id"):
                    issuer[str(tool_call["id"])] = i
    while True:
        moved = cut
        while moved > 0 and moved < len(messages) and isinstance(messages[moved], ToolMessage):
            moved -= 1
        for message in messages[moved:]:
            if isinstance(message, ToolMessage):
                moved = min(moved, issuer.get(message.tool_call_id, moved))
        if moved == cut:
            return cut
        cut = moved
