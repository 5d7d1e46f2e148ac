"""Small message helpers the nodes and the turn pipeline share: text, last human message, tool-call boundaries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
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
