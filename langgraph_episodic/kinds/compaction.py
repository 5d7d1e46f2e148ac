"""Which messages leave the conversation: one pure plan for the window, the summary and the
middleware.

A conversation is split into *units* that can leave it whole without breaking a request:

- every turn before the latest human message (a human message and all that answers it, tool
  calls and their results included; anything before the first human message is one unit too);
- inside the latest turn, each step after the human message (an AI message with its tool
  calls and the ``ToolMessage``\\ s answering them, or a lone message), except the last step.

Units leave oldest first, so what stays always starts with a human message (OpenAI and
Anthropic accept it), every tool call stays next to its answers, and the latest human message
never leaves. :func:`plan_compaction` returns what leaves (to be folded into the summary) and
what stays; it never drops anything by itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from .._messages import leading_system_count
from ..errors import InvalidValueError

logger = logging.getLogger(__name__)

TokenCounter = Callable[[Sequence[BaseMessage]], int]
ContextSize = tuple[Literal["messages", "tokens"], int]
"""A size in LangChain's style: ``("messages", 20)`` or ``("tokens", 3000)``."""

LEGACY_SUMMARY_ID = "episodic-summary"
"""Id of the summary ``SystemMessage`` older versions kept in ``messages`` (removed on sight)."""


def check_size(size: ContextSize, what: str) -> ContextSize:
    """Validate a :data:`ContextSize`; the error names the accepted forms."""
    if (not isinstance(size, tuple) or len(size) != 2 or size[0] not in ("messages", "tokens")
            or not isinstance(size[1], int) or size[1] < 0):
        raise InvalidValueError(
            f"{what} must be ('messages', n) or ('tokens', n) with n >= 0, got {size!r}."
        )
    return size


def normalize_trigger(trigger: ContextSize | Sequence[ContextSize]) -> list[ContextSize]:
    """``trigger`` as a list of checked sizes (any one triggers)."""
    if isinstance(trigger, tuple) and trigger and isinstance(trigger[0], str):
        return [check_size(cast(ContextSize, trigger), "trigger")]
    return [check_size(t, "trigger") for t in cast(Sequence[ContextSize], trigger)]


def units(body: Sequence[BaseMessage]) -> list[tuple[int, int]]:
    """The ``(start, end)`` spans of ``body`` that may leave, oldest first (module docstring).

    >>> from langchain_core.messages import HumanMessage as H, AIMessage as A
    >>> units([H("a"), A("b"), H("c"), A("d"), A("e")])
    [(0, 2), (3, 4)]
    """
    humans = [i for i, m in enumerate(body) if isinstance(m, HumanMessage)]
    if not humans:
        return []
    steps: list[tuple[int, int]] = []  # after the last human message: an AI message + its tools
    i = humans[-1] + 1
    while i < len(body):
        j = i + 1
        if isinstance(body[i], AIMessage):
            while j < len(body) and isinstance(body[j], ToolMessage):
                j += 1
        steps.append((i, j))
        i = j
    return list(pairwise([0, *humans] if humans[0] > 0 else humans)) + steps[:-1]


@dataclass(frozen=True)
class Compaction:
    """What :func:`plan_compaction` decided."""

    system: list[BaseMessage]
    """The leading system messages (always kept)."""
    leaving: list[BaseMessage]
    """Messages that leave the list, in order; fold them into the summary."""
    kept: list[BaseMessage]
    """Messages that stay after the system messages, in order."""
    over_budget: bool = False
    """True when even the latest turn's last step does not fit ``window_tokens``."""


def plan_compaction(
    messages: Sequence[BaseMessage], *, trigger: Sequence[ContextSize] = (),
    keep: ContextSize = ("messages", 4), window_tokens: int | None = None,
    token_counter: TokenCounter | None = None,
) -> Compaction:
    """Decide which messages leave: to reach ``keep`` once a ``trigger`` is passed, and to fit
    ``window_tokens`` (system messages included) always.

    ``keep=("messages", n)`` keeps at least ``n`` messages; ``("tokens", n)`` keeps at most ``n``
    tokens. Pure: nothing is summarised or removed here.

    >>> from langchain_core.messages import HumanMessage as H, AIMessage as A
    >>> msgs = [H("q1"), A("a1"), H("q2"), A("a2")]
    >>> c = plan_compaction(msgs, trigger=[("messages", 3)], keep=("messages", 2))
    >>> [m.content for m in c.leaving], [m.content for m in c.kept]
    (['q1', 'a1'], ['q2', 'a2'])
    """
    counter: TokenCounter = token_counter or count_tokens_approximately
    messages = [m for m in messages if m.id != LEGACY_SUMMARY_ID]
    n_system = leading_system_count(messages)
    system, body = messages[:n_system], messages[n_system:]
    spans = units(body)
    system_tokens = counter(system) if system and window_tokens is not None else 0

    humans = [i for i, m in enumerate(body) if isinstance(m, HumanMessage)]
    last_turn = humans[-1] if humans else len(body)

    def without(n: int) -> list[BaseMessage]:
        """The body after the first ``n`` units left."""
        if n == 0:
            return list(body)
        start, end = spans[n - 1]
        return list(body[end:]) if start <= last_turn else [body[last_turn], *body[end:]]

    n = 0
    if any((len(body) if kind == "messages" else counter(body)) > limit
           for kind, limit in trigger):
        kind, size = check_size(keep, "keep")
        while n < len(spans) and (len(without(n + 1)) >= size if kind == "messages"
                                  else counter(without(n)) > size):
            n += 1
    over = False
    if window_tokens is not None:
        while (over := system_tokens + counter(without(n)) > window_tokens) and n < len(spans):
            n += 1
        if over:
            logger.warning(
                "conversation window: the latest human message and the last step after it "
                "need more than window_tokens=%d; keeping them anyway", window_tokens,
            )
    kept = without(n)
    kept_ids = {id(m) for m in kept}
    leaving = [m for m in body if id(m) not in kept_ids]
    return Compaction(system, leaving, kept, over)
