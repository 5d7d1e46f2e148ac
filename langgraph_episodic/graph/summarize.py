"""The summarise node: fold old messages into a running summary once the conversation is long.

When the conversation (not counting leading system messages) passes ``max_messages`` or
``max_tokens``, every message but the last ``keep_last`` is summarised together with the existing
summary and removed with ``RemoveMessage``. The summary is kept in ``state["summary"]`` and as a
``SystemMessage`` (id :data:`SUMMARY_MESSAGE_ID`) right after the leading system prompt.

The cut never separates an AI message with tool calls (parallel calls included) from its
``ToolMessage``s and never removes the latest human message. With no chat model the node writes
an *extractive* summary: the first sentence of each removed message, quoted, under a header that
says so (:data:`EXTRACTIVE_HEADER`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    get_buffer_string,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from ._messages import as_messages, last_human_index, leading_system_count, message_text, safe_cut
from ._runner import MemoryNode, Plan, call

logger = logging.getLogger(__name__)

SUMMARY_MESSAGE_ID = "episodic-summary"
"""Id of the ``SystemMessage`` holding the summary (replaced in place on every update)."""

SUMMARY_PREFIX = "Summary of the earlier conversation:\n"
EXTRACTIVE_HEADER = "Extractive summary (no model configured; first sentences quoted, not paraphrased):"

SUMMARY_INSTRUCTIONS = (
    "You maintain a running summary of a conversation. Combine the existing summary with the "
    "new messages into one concise summary in the conversation's language. Keep facts about the "
    "user, decisions, open questions and results of tool calls; drop greetings and chit-chat. "
    "Answer with the summary text only."
)

TokenCounter = Callable[[Sequence[BaseMessage]], int]

_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)


def split_for_summary(
    messages: Sequence[BaseMessage], *, keep_last: int = 4
) -> tuple[list[BaseMessage], list[BaseMessage], list[BaseMessage]]:
    """Split messages into (system prompt, to summarise, to keep) at a safe boundary.

    The previous summary message is left out of all three. The cut keeps the last ``keep_last``
    messages, moved earlier when needed so that tool-call groups stay whole and the latest human
    message is kept.
    """
    if keep_last < 0:
        raise ValueError(f"keep_last must be >= 0, got {keep_last}.")
    messages = [m for m in messages if m.id != SUMMARY_MESSAGE_ID]
    n_system = leading_system_count(messages)
    system, body = messages[:n_system], messages[n_system:]
    cut = len(body) - keep_last
    last_human = last_human_index(body)
    if last_human is not None:
        cut = min(cut, last_human)
    cut = safe_cut(body, max(cut, 0))
    return system, body[:cut], body[cut:]


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_sentence(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    match = _FIRST_SENTENCE.match(text)
    return _clip(match.group(1) if match else text, limit)


def _extract_line(message: BaseMessage) -> str | None:
    text = message_text(message)
    if isinstance(message, AIMessage) and message.tool_calls:
        tools = ", ".join(str(tc.get("name", "?")) for tc in message.tool_calls)
        return f"AI: {_first_sentence(text)} [called {tools}]" if text else f"AI called {tools}."
    if not text:
        return None
    if isinstance(message, ToolMessage):
        return f"Tool {message.name or message.tool_call_id}: {_first_sentence(text, 120)}"
    role = {"human": "Human", "ai": "AI", "system": "System"}.get(message.type, message.type)
    return f"{role}: {_first_sentence(text)}"


def extractive_summary(
    previous: str, messages: Sequence[BaseMessage], *, max_chars: int = 2000
) -> str:
    """Summarise without a model: the first sentence of each message, quoted, newest kept.

    The result starts with :data:`EXTRACTIVE_HEADER`; when it exceeds ``max_chars`` the oldest
    lines are dropped.
    """
    old_lines = [ln for ln in previous.splitlines() if ln.strip() and ln != EXTRACTIVE_HEADER]
    lines = old_lines + [line for m in messages if (line := _extract_line(m))]
    while lines and len(EXTRACTIVE_HEADER) + sum(len(ln) + 1 for ln in lines) > max_chars:
        lines.pop(0)
    return "\n".join([EXTRACTIVE_HEADER, *lines])


def _llm_request(previous: str, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    transcript = get_buffer_string(list(messages))
    return [
        SystemMessage(SUMMARY_INSTRUCTIONS),
        HumanMessage(
            f"Existing summary:\n{previous or '(none)'}\n\nNew messages:\n{transcript}\n\n"
            "Write the updated summary."
        ),
    ]


def summary_message(summary: str, *, method: str, summarized: int) -> SystemMessage:
    """The ``SystemMessage`` that carries the summary in ``messages``."""
    return SystemMessage(
        SUMMARY_PREFIX + summary,
        id=SUMMARY_MESSAGE_ID,
        response_metadata={"episodic": {"kind": "summary", "method": method,
                                        "summarized_messages": summarized}},
    )


def _needs_summary(
    body: Sequence[BaseMessage], max_messages: int | None, max_tokens: int | None,
    counter: TokenCounter,
) -> bool:
    if max_messages is not None and len(body) > max_messages:
        return True
    return max_tokens is not None and counter(body) > max_tokens


def _update(
    messages: list[BaseMessage],
    system: list[BaseMessage],
    dropped: list[BaseMessage],
    keep: list[BaseMessage],
    summary_msg: SystemMessage,
) -> list[BaseMessage]:
    """The ``messages`` update: per-id removals when the summary is already in place."""
    n_system = leading_system_count([m for m in messages if m.id != SUMMARY_MESSAGE_ID])
    in_place = (
        len(messages) > n_system
        and messages[n_system].id == SUMMARY_MESSAGE_ID
        and all(m.id for m in dropped)
    )
    if in_place:
        return [*(RemoveMessage(id=str(m.id)) for m in dropped), summary_msg]
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *system, summary_msg, *keep]


def summarize_node(
    *,
    model: BaseChatModel | None = None,
    max_messages: int | None = 10,
    max_tokens: int | None = None,
    keep_last: int = 4,
    token_counter: TokenCounter | None = None,
    max_summary_chars: int = 2000,
    name: str = "summarize",
) -> MemoryNode:
    """Create the summarise node (see the module docstring for what it guarantees).

    Args:
        model: Any LangChain chat model; ``None`` writes an extractive summary.
        max_messages: Summarise when more messages than this follow the system prompt
            (``None`` to use only ``max_tokens``).
        max_tokens: Also summarise when those messages count more tokens than this.
        keep_last: How many recent messages stay verbatim (more when a tool-call group or the
            latest human message needs it).
        token_counter: Counts tokens of a message list; default
            ``count_tokens_approximately`` (no model needed).
        max_summary_chars: Length cap of the extractive summary.
        name: The node's name.

    >>> from langchain_core.messages import HumanMessage, AIMessage
    >>> node = summarize_node(max_messages=4, keep_last=2)
    >>> msgs = [HumanMessage(f"Question {i}.", id=f"h{i}") for i in range(3)]
    >>> msgs += [AIMessage("Answer.", id="a"), HumanMessage("Last one.", id="h9")]
    >>> update = node.invoke({"messages": msgs})
    >>> update["summary"].splitlines()[1]
    'Human: Question 0.'
    """
    if max_messages is None and max_tokens is None:
        raise ValueError("Set max_messages or max_tokens, otherwise the node never summarises.")
    counter: TokenCounter = token_counter or count_tokens_approximately

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        messages = as_messages(state.get("messages"))
        system, dropped, keep = split_for_summary(messages, keep_last=keep_last)
        body = [*dropped, *keep]
        if not dropped or not _needs_summary(body, max_messages, max_tokens, counter):
            return {}
        previous = str(state.get("summary") or "")
        if model is None:
            summary, method = extractive_summary(previous, dropped, max_chars=max_summary_chars), "extractive"
        else:
            response = yield call(model.invoke, model.ainvoke, _llm_request(previous, dropped))
            summary, method = message_text(response), "llm"
        logger.debug("summarised %d messages (%s)", len(dropped), method)
        summary_msg = summary_message(summary, method=method, summarized=len(dropped))
        return {"messages": _update(messages, system, dropped, keep, summary_msg), "summary": summary}

    return MemoryNode(name, plan)
