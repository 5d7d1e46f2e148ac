"""The sliding-window node: keep the newest messages that fit a token budget.

What stays is chosen by :func:`~langgraph_episodic.kinds.compaction.plan_compaction`: whole
turns leave oldest first, then the oldest steps of the latest turn, so the kept messages start
with a human message and keep every tool call next to its results. Leading system messages are
always kept and count against the budget. The latest human message and the last step after it
never leave: when they alone are over budget the window keeps them and logs a warning that says
so.

With ``summarize=True`` (as :func:`~langgraph_episodic.graph.wiring.add_memory_nodes` wires it)
every message that leaves is first folded into ``state["summary"]``
(:class:`~langgraph_episodic.kinds.summaries.Summarizer`): nothing leaves unsummarised. With
``summarize=False`` it is a plain window: what leaves is gone.

As a node it returns ``RemoveMessage`` operations, so the state (and its checkpoints) shrink.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from .._runner import MemoryNode
from ..errors import InvalidValueError
from ..formation.former import Former
from ..formation.turn import TurnMemory
from ..kinds.compaction import TokenCounter, plan_compaction
from ..kinds.summaries import DEFAULT_INPUT_TOKENS, DEFAULT_SUMMARY_TOKENS, Summarizer


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
    if max_tokens <= 0:
        raise InvalidValueError(f"max_tokens must be positive, got {max_tokens}.")
    compaction = plan_compaction(messages, window_tokens=max_tokens, token_counter=token_counter)
    return [*compaction.system, *compaction.kept]


def sliding_window_node(
    *,
    max_tokens: int = 2000,
    token_counter: TokenCounter | None = None,
    summarize: bool = False,
    model: BaseChatModel | None = None,
    max_summary_tokens: int = DEFAULT_SUMMARY_TOKENS,
    max_input_tokens: int = DEFAULT_INPUT_TOKENS,
    name: str = "sliding_window",
) -> MemoryNode:
    """Create the sliding-window node (see the module docstring).

    Args:
        max_tokens: Token budget for the kept messages, system messages included.
        token_counter: Counts tokens of a message list, e.g. a model's
            ``get_num_tokens_from_messages``; default ``count_tokens_approximately``
            (about four characters per token, no model needed).
        summarize: Fold what leaves into ``state["summary"]`` first.
        model: Chat model for that summary (``None``: extractive).
        max_summary_tokens, max_input_tokens: Bounds of the summary and of one summary request.
        name: The node's name.

    >>> from langchain_core.messages import HumanMessage, AIMessage
    >>> msgs = [HumanMessage("one", id="1"), AIMessage("two", id="2"), HumanMessage("three", id="3")]
    >>> update = sliding_window_node(max_tokens=2, token_counter=len).invoke({"messages": msgs})
    >>> [m.id for m in update["messages"]]  # RemoveMessage ops for the dropped ones
    ['1', '2']
    """
    summarizer = (
        Summarizer(
            model,
            max_summary_tokens=max_summary_tokens,
            max_input_tokens=max_input_tokens,
            token_counter=token_counter,
        )
        if summarize
        else None
    )
    return TurnMemory(Former(None, episodes=False, summarizer=summarizer)).compaction_node(
        name, window_tokens=max_tokens, token_counter=token_counter, summarize=summarize
    )
