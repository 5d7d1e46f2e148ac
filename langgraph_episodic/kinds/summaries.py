"""The running summary: fold the messages that leave the conversation into ``state["summary"]``.

Whatever leaves ``messages`` (summarise node, sliding window, middleware) is folded into the
summary first; :func:`~langgraph_episodic.kinds.compaction.plan_compaction` chooses what leaves.
The summary lives in its own state key (with ``summary_info``), never in ``messages``, so it
never reaches ``stream_mode="messages"``; the system prompt carries it.

Bounds, in tokens: the summary stays under ``max_summary_tokens`` (the model is asked to
shorten an overlong one, then it is clipped with a warning); a request sends at most
``max_input_tokens`` (more messages take several requests; one huge message is cut in the
middle). Without a chat model the summary is *extractive*: the first sentence of each message,
under :data:`EXTRACTIVE_HEADER`, the oldest lines dropped past the bound.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import Runnable
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from .._effects import Plan, call
from .._messages import message_text
from .._model_calls import internal_config, retrying
from ..errors import InvalidValueError
from .compaction import LEGACY_SUMMARY_ID, Compaction, TokenCounter

logger = logging.getLogger(__name__)

SUMMARY_MESSAGE_ID = LEGACY_SUMMARY_ID
"""Id of the summary ``SystemMessage`` earlier versions kept in ``messages``; a node that finds
one removes it (its text is in ``state["summary"]``)."""

EXTRACTIVE_HEADER = "Extractive summary (no model configured; first sentences quoted, not paraphrased):"

SUMMARY_INSTRUCTIONS = (
    "You maintain a running summary of a conversation. Combine the existing summary with the "
    "new messages into one concise summary in the conversation's language. Keep facts about the "
    "user, decisions, open questions and results of tool calls; drop greetings and chit-chat. "
    "Answer with the summary text only."
)
SHORTEN_INSTRUCTIONS = (
    "Shorten this running summary of a conversation to at most {tokens} tokens (about {chars} "
    "characters). Keep facts about the user, decisions, open questions and tool results; drop "
    "the least important details first. Answer with the summary text only."
)

DEFAULT_SUMMARY_TOKENS = 500
"""Default bound of the summary, in tokens."""
DEFAULT_INPUT_TOKENS = 4000
"""Default bound of one summary request, in tokens."""

_ROLES = {"human": "Human", "ai": "AI", "system": "System", "tool": "Tool"}
"""How a message of each ``type`` is introduced in a transcript line."""
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)


def _first_sentence(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    match = _FIRST_SENTENCE.match(text)
    text = match.group(1) if match else text
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _role(message: BaseMessage) -> str:
    if isinstance(message, ToolMessage):
        return f"Tool {message.name or message.tool_call_id}"
    return _ROLES.get(message.type, message.type)


def _extract_line(message: BaseMessage) -> str | None:
    text = message_text(message)
    if isinstance(message, AIMessage) and message.tool_calls:
        tools = ", ".join(str(tc.get("name", "?")) for tc in message.tool_calls)
        return f"AI: {_first_sentence(text)} [called {tools}]" if text else f"AI called {tools}."
    if not text:
        return None
    limit = 120 if isinstance(message, ToolMessage) else 200
    return f"{_role(message)}: {_first_sentence(text, limit)}"


def _tokens(text: str, counter: TokenCounter) -> int:
    return counter([HumanMessage(text)]) if text else 0


def extractive_summary(
    previous: str, messages: Sequence[BaseMessage], *, max_chars: int = 2000,
    max_tokens: int | None = None, token_counter: TokenCounter | None = None,
) -> str:
    """Summarise without a model: the first sentence of each message, quoted, newest kept.

    The result starts with :data:`EXTRACTIVE_HEADER`; past ``max_chars`` characters (or
    ``max_tokens`` tokens) the oldest lines are dropped.
    """
    counter: TokenCounter = token_counter or count_tokens_approximately
    old_lines = [ln for ln in previous.splitlines() if ln.strip() and ln != EXTRACTIVE_HEADER]
    lines = old_lines + [line for m in messages if (line := _extract_line(m))]

    def too_long() -> bool:
        text = "\n".join([EXTRACTIVE_HEADER, *lines])
        return len(text) > max_chars or (
            max_tokens is not None and _tokens(text, counter) > max_tokens
        )

    while lines and too_long():
        lines.pop(0)
    return "\n".join([EXTRACTIVE_HEADER, *lines])


def render(message: BaseMessage) -> str:
    """One message as a transcript line: role, text and the tool calls it makes."""
    line = f"{_role(message)}: {message_text(message)}"
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = [f"{tc.get('name')}({json.dumps(tc.get('args', {}), ensure_ascii=False)})"
                 for tc in message.tool_calls]
        line += f" [calls {', '.join(calls)}]"
    return line


def shorten_middle(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """``text`` cut in the middle (start and end kept, the cut marked) to fit ``max_tokens``."""
    tokens = _tokens(text, counter)
    if tokens <= max_tokens:
        return text
    keep = max(16, len(text) * max_tokens // max(tokens, 1) - 60)
    while True:
        head, tail = keep * 2 // 3, keep - keep * 2 // 3
        cut = f"{text[:head]} […{len(text) - keep} characters omitted…] {text[-tail:]}"
        if _tokens(cut, counter) <= max_tokens or keep <= 16:
            return cut
        keep //= 2


class Summarizer:
    """Folds messages into a running summary, bounded in tokens (see the module docstring).

    Args:
        model: Any LangChain chat model; ``None`` writes an extractive summary.
        max_summary_tokens: Bound of the summary.
        max_input_tokens: Bound of one summary request (at least twice ``max_summary_tokens``).
        token_counter: Counts tokens of a message list (default ``count_tokens_approximately``).
    """

    def __init__(
        self, model: BaseChatModel | Runnable[Any, Any] | None = None, *,
        max_summary_tokens: int = DEFAULT_SUMMARY_TOKENS,
        max_input_tokens: int = DEFAULT_INPUT_TOKENS, token_counter: TokenCounter | None = None,
        max_summary_chars: int | None = None,
    ) -> None:
        if max_summary_tokens <= 0:
            raise InvalidValueError(
                f"max_summary_tokens must be positive, got {max_summary_tokens}."
            )
        if max_input_tokens < 2 * max_summary_tokens:
            raise InvalidValueError(
                f"max_input_tokens ({max_input_tokens}) must be at least twice "
                f"max_summary_tokens ({max_summary_tokens}): a request holds the summary so far."
            )
        self.model = model
        self.max_summary_tokens = max_summary_tokens
        self.max_input_tokens = max_input_tokens
        self.counter: TokenCounter = token_counter or count_tokens_approximately
        self.max_summary_chars = max_summary_chars or max_summary_tokens * 4
        self._runnable = retrying(model) if model is not None else None

    @property
    def method(self) -> str:
        """``"llm"`` with a model, else ``"extractive"``."""
        return "extractive" if self._runnable is None else "llm"

    def _ask(self, instructions: str, text: str) -> Plan[str]:
        assert self._runnable is not None
        response = yield call(self._runnable.invoke, self._runnable.ainvoke,
                              [SystemMessage(instructions), HumanMessage(text)],
                              internal_config("summary"))
        return message_text(response) if isinstance(response, BaseMessage) else str(response)

    def fold(self, previous: str, messages: Sequence[BaseMessage]) -> Plan[str]:
        """Plan: the summary ``previous`` with ``messages`` folded in, within the bound."""
        if not messages:
            return previous
        if self._runnable is None:
            return extractive_summary(previous, messages, max_chars=self.max_summary_chars,
                                      max_tokens=self.max_summary_tokens,
                                      token_counter=self.counter)
        summary = previous
        for lines in self._chunks(messages):
            transcript = "\n".join(lines)
            summary = yield from self._ask(SUMMARY_INSTRUCTIONS, (
                f"Existing summary:\n{summary or '(none)'}\n\nNew messages:\n{transcript}\n\n"
                "Write the updated summary."))
            summary = yield from self._bound(summary)
        return summary

    def _chunks(self, messages: Sequence[BaseMessage]) -> list[list[str]]:
        """Transcript lines grouped so that each request stays within ``max_input_tokens``."""
        counter = self.counter
        overhead = _tokens(SUMMARY_INSTRUCTIONS, counter) + self.max_summary_tokens + 32
        room = max(64, self.max_input_tokens - overhead)
        chunks: list[list[str]] = [[]]
        for message in messages:
            line = shorten_middle(render(message), room, counter)
            if chunks[-1] and _tokens("\n".join([*chunks[-1], line]), counter) > room:
                chunks.append([])
            chunks[-1].append(line)
        return [c for c in chunks if c]

    def _bound(self, summary: str) -> Plan[str]:
        """A summary of the summary while it is over the bound; clipped as a last resort."""
        for _ in range(2):
            if _tokens(summary, self.counter) <= self.max_summary_tokens:
                return summary
            summary = yield from self._ask(
                SHORTEN_INSTRUCTIONS.format(tokens=self.max_summary_tokens,
                                            chars=self.max_summary_tokens * 4),
                shorten_middle(summary, self.max_input_tokens // 2, self.counter))
        if _tokens(summary, self.counter) > self.max_summary_tokens:
            logger.warning("the summary model kept the summary over max_summary_tokens=%d; "
                           "clipping it", self.max_summary_tokens)
            summary = shorten_middle(summary, self.max_summary_tokens, self.counter)
        return summary


def compaction_update(
    messages: Sequence[BaseMessage], compaction: Compaction, state: dict[str, Any],
    summarizer: Summarizer | None,
) -> Plan[dict[str, Any]]:
    """Plan: the state update that folds ``compaction.leaving`` into the summary and removes it.

    With ``summarizer=None`` the messages leave unsummarised (a plain window).
    """
    removed = removal(messages, compaction)
    if not removed:
        return {}
    update: dict[str, Any] = {}
    if summarizer is not None and compaction.leaving:
        previous = str(state.get("summary") or "")
        update["summary"] = yield from summarizer.fold(previous, compaction.leaving)
        info = dict(state.get("summary_info") or {})
        update["summary_info"] = {
            "summarized_messages": int(info.get("summarized_messages", 0))
            + len(compaction.leaving),
            "last_summarized_id": compaction.leaving[-1].id,
            "method": summarizer.method,
        }
        logger.debug("folded %d messages into the summary (%s)", len(compaction.leaving),
                     summarizer.method)
    update["messages"] = removed
    return update


def removal(messages: Sequence[BaseMessage], compaction: Compaction) -> list[BaseMessage]:
    """The ``messages`` update that removes what leaves the thread and a summary message of
    an earlier version: by id, or all and then what stays when one has no id ([]: nothing)."""
    leaving = [*(m for m in messages if m.id == LEGACY_SUMMARY_ID), *compaction.leaving]
    if not leaving:
        return []
    if all(m.id for m in leaving):
        return [RemoveMessage(id=str(m.id)) for m in leaving]
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *compaction.system, *compaction.kept]
