"""The summarise node: the running summary of :mod:`langgraph_episodic.kinds.summaries`, folded
when the conversation grows past a trigger."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig

from .._effects import Plan
from .._messages import as_messages
from .._runner import MemoryNode
from ..kinds.compaction import (
    ContextSize,
    TokenCounter,
    check_size,
    normalize_trigger,
    plan_compaction,
)
from ..kinds.summaries import (
    DEFAULT_INPUT_TOKENS,
    DEFAULT_SUMMARY_TOKENS,
    Summarizer,
    compaction_update,
)


def summarize_node(
    *,
    model: BaseChatModel | None = None,
    trigger: ContextSize | Sequence[ContextSize] = ("messages", 10),
    keep: ContextSize = ("messages", 4),
    max_summary_tokens: int = DEFAULT_SUMMARY_TOKENS,
    max_input_tokens: int = DEFAULT_INPUT_TOKENS,
    token_counter: TokenCounter | None = None,
    max_summary_chars: int | None = None,
    name: str = "summarize",
) -> MemoryNode:
    """Create the summarise node (see :mod:`langgraph_episodic.kinds.summaries`).

    Args:
        model: Any LangChain chat model; ``None`` writes an extractive summary.
        trigger: When to summarise: ``("messages", n)`` or ``("tokens", n)`` (more than that
            after the system prompt), or a list of them (any one).
        keep: What stays verbatim: ``("messages", n)`` (at least n) or ``("tokens", n)`` (at
            most n; the latest turn always stays).
        max_summary_tokens, max_input_tokens: The bounds of the summary and of one request.
        token_counter: Counts tokens of a message list; default ``count_tokens_approximately``.
        max_summary_chars: Character cap of the extractive summary (default: 4 per token).
        name: The node's name.

    >>> from langchain_core.messages import HumanMessage, AIMessage
    >>> node = summarize_node(trigger=("messages", 4), keep=("messages", 2))
    >>> msgs = [HumanMessage(f"Question {i}.", id=f"h{i}") for i in range(3)]
    >>> msgs += [AIMessage("Answer.", id="a"), HumanMessage("Last one.", id="h9")]
    >>> update = node.invoke({"messages": msgs})
    >>> update["summary"].splitlines()[1:]  # at least two messages stay: ["Question 2.", ...]
    ['Human: Question 0.', 'Human: Question 1.']
    """
    triggers = normalize_trigger(trigger)
    if not triggers:
        raise ValueError("Set a trigger, e.g. trigger=('messages', 10); otherwise the node "
                         "never summarises.")
    kept_size = check_size(keep, "keep")
    summarizer = Summarizer(model, max_summary_tokens=max_summary_tokens,
                            max_input_tokens=max_input_tokens, token_counter=token_counter,
                            max_summary_chars=max_summary_chars)

    def plan(state: dict[str, Any], config: RunnableConfig) -> Plan[dict[str, Any]]:
        messages = as_messages(state.get("messages"))
        compaction = plan_compaction(messages, trigger=triggers, keep=kept_size,
                                     token_counter=token_counter)
        return (yield from compaction_update(messages, compaction, state, summarizer))

    return MemoryNode(name, plan)
