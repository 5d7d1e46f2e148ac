"""The summarise node: the running summary of :mod:`langgraph_episodic.kinds.summaries`, folded
when the conversation grows past a trigger."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel

from .._runner import MemoryNode
from ..formation.former import Former
from ..formation.turn import TurnMemory
from ..kinds.compaction import ContextSize, TokenCounter
from ..kinds.summaries import DEFAULT_INPUT_TOKENS, DEFAULT_SUMMARY_TOKENS, Summarizer


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
    summarizer = Summarizer(
        model,
        max_summary_tokens=max_summary_tokens,
        max_input_tokens=max_input_tokens,
        token_counter=token_counter,
        max_summary_chars=max_summary_chars,
    )
    return TurnMemory(Former(None, episodes=False, summarizer=summarizer)).compaction_node(
        name, trigger=trigger, keep=keep, token_counter=token_counter
    )
