"""The sliding-window node: keep only the newest messages that fit a token budget.

Built on LangChain's ``trim_messages`` (strategy ``"last"``, starting on a human message, so an
AI message with tool calls is never kept without the ``ToolMessage``s that answer it). All
leading system messages (the system prompt and the running summary) are always kept and their
tokens count against the budget. The latest human message is never dropped: when it alone is
over budget, the window keeps it and what follows it, and logs a warning.

As a node it returns ``RemoveMessage`` operations for the dropped messages, so the graph's state
(and its checkpoints) really shrink.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import (
    BaseMessage,
    RemoveMessage,
    trim_messages,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from ._messages import as_messages, last_human_index, leading_system_count, safe_cut
from ._runner import MemoryNode, Plan

logger = logging.getLogger(__name__)

TokenCounter = Callable[[Sequence[BaseMessage]], int]


def _window_start(
    messages: Sequence[BaseMessage], max_tokens: int, token_counter: TokenCounter | None
) -> tuple[int, int]:
    """Return (number of leading system messages, index in the rest where the window starts)."""
    if max_tokens <= 0:
        raise ValueError(f"max_tokens must be positive, got {max_tokens}.")
    counter: TokenCounter = token_counter or count_tokens_approximately
    n_system = leading_system_count(messages)
    system, body = list(messages[:n_system]), list(messages[n_system:])
    if not body:
        return n_system, 0
    budget = max_tokens - (counter(system) if system else 0)
    n_kept = (
        len(
            trim_messages(
                body,
                max_tokens=budget,
                token_counter=counter,
                strategy="last",
                start_on="human",
                include_system=False,
                allow_partial=False,
            )
        )
        if budget > 0
        else 0
    )
    last_human = last_human_index(body)
    if last_human is not None and n_kept < len(body) - last_human:
        logger.warning(
            "sliding window: the latest human message and its replies exceed max_tokens=%d; "
            "keeping them anyway",
            max_tokens,
        )
        n_kept = len(body) - last_human
    return n_system, safe_cut(body, len(body) - n_kept)


def window_messages(
    messages: Sequence[BaseMessage],
    *,
    max_tokens: int,
    token_counter: TokenCounter | None = None,
) -> list[BaseMessage]:
    """Return the messages a window of ``max_tokens`` keeps (pure; see the module docstring).

    >>> from langchain_core.messages import HumanMessage, AIMessage, SystemMessage
    >>> msgs = [SystemMessage("Be brief."), HumanMessage("a " * 200), AIMessage("ok"),
    ...         HumanMessage("Short question?"), AIMessage("Short answer.")]
    >>> [m.type for m in window_messages(msgs, max_tokens=40)]
    ['system', 'human', 'ai']
    """
    n_system, start = _window_start(messages, max_tokens, token_counter)
    return [*messages[:n_system], *messages[n_system + start :]]


def sliding_window_node(
    *,
    max_tokens: int = 2000,
    token_counter: TokenCounter | None = None,
    name: str = "sliding_window",
) -> MemoryNode:
    """Create the sliding-window node (see the module docstring).

    Args:
        max_tokens: Token budget for the kept messages, system messages included.
        token_counter: Counts tokens of a message list, e.g. a model's
            ``get_num_tokens_from_messages``; default ``count_tokens_approximately``
            (about four characters per token, no model needed).
        name: The node's name.

    >>> from langchain_core.messages import HumanMessage, AIMessage
    >>> msgs = [HumanMessage("one", id="1"), AIMessage("two", id="2"), HumanMessage("three", id="3")]
    >>> update = sliding_window_node(max_tokens=2, token_counter=len).invoke({"messages": msgs})
    >>> [m.id for m in update["messages"]]  # RemoveMessage ops for the dropped ones
    ['1', '2']
    """
    if max_tokens <= 0:
        raise ValueError(f"max_tokens must be positive, got {max_tokens}.")

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        messages = as_messages(state.get("messages"))
        n_system, start = _window_start(messages, max_tokens, token_counter)
        dropped = messages[n_system : n_system + start]
        if not dropped:
            return {}
        logger.debug("sliding window dropped %d messages", len(dropped))
        if all(m.id for m in dropped):
            return {"messages": [RemoveMessage(id=str(m.id)) for m in dropped]}
        kept = [*messages[:n_system], *messages[n_system + start :]]
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}
        yield  # pragma: no cover - makes this function a plan (a generator)

    return MemoryNode(name, plan)
