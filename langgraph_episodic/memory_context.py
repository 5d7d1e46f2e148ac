"""The context the library's writers store beside a memory's text: its conversation and day.

The memory tools, the entity facts of the middleware and the graph nodes, the middleware's
remembered turns (:mod:`langgraph_episodic.kinds.turns`), and episode recording know which
conversation (``config["configurable"]["thread_id"]``) and which day (the message's
time) a memory comes from. They store it as ``value["context"]``::

    {"day": "Monday, 8 May 2023", "thread": "alice:s1"}

and index the day beside the text (``index=["text", "context.day"]``), so that in
``ChromaStore`` the shared-field lift (:mod:`langgraph_episodic.chroma.ranking.shared_fields`)
joins memories of the same day as a question's best hits, and a question naming the month and
year ("in May 2023") finds the day's words. The thread is bookkeeping, like the user id, the
key and the times: a filter (``filter={"context.thread": "alice:s1"}``), never searchable text,
since a question naming the user ("How does Alice take her coffee?") is close to every
``"alice:..."`` thread id and would find every memory of hers. ``ChromaStore`` ranks no text
stored at :data:`UNRANKED_PATHS`, so memories written while the thread was indexed are ranked
by their text and day alone. What the context adds to recall is measured on LoCoMo by
``benchmarks/locomo_writers.py`` (``docs/benchmarks.md``, "Through the library's writers").

The day is written in English words (weekday, day, month, year), in the time zone of the
datetime the writer has: the keyword side stems English and German alike, and the month's name
is what a question says. ``config["configurable"]["memory_context"] = False`` turns it off for
a run: nothing is added and only the text is indexed, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ._config import configurable
from .errors import InvalidTypeError

CONTEXT_FIELD = "context"
"""The value's key holding the context."""
OPTION = "memory_context"
"""The ``config["configurable"]`` key that turns the context off (``False``)."""
THREAD_ID = "thread_id"
"""Where LangGraph keeps a run's conversation (``config["configurable"]``)."""
CONTEXT_PATHS: tuple[str, ...] = (f"{CONTEXT_FIELD}.day",)
"""The context's index paths, after the text: the day only (the thread is a filter)."""
UNRANKED_PATHS: frozenset[str] = frozenset({f"{CONTEXT_FIELD}.thread"})
"""Context paths that hold bookkeeping, not what a memory says. Earlier releases indexed the
thread; ``ChromaStore`` ranks no text stored at these paths, whoever asked to index it."""

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def day_text(when: datetime) -> str:
    """The day of ``when`` in words, the same in every locale.

    >>> day_text(datetime(2023, 5, 8, 13, 56))
    'Monday, 8 May 2023'
    """
    return f"{_WEEKDAYS[when.weekday()]}, {when.day} {_MONTHS[when.month - 1]} {when.year}"


def enabled(config: Mapping[str, Any] | None) -> bool:
    """Whether the run stores context: yes unless ``configurable["memory_context"]`` is False.

    Raises:
        TypeError: the option is set to something other than True or False.
    """
    value = configurable(config).get(OPTION, True)
    if not isinstance(value, bool):
        raise InvalidTypeError(
            f"config['configurable']['{OPTION}'] must be True or False, got {value!r}. "
            "Pass False to store memories without their conversation and day."
        )
    return value


def context_of(config: Mapping[str, Any] | None, when: datetime) -> dict[str, str] | None:
    """The context of a memory written at ``when`` in the run of ``config``: its day, and its
    conversation when the run has a ``thread_id``; None when the run turned it off.

    >>> context_of({"configurable": {"thread_id": "t1"}}, datetime(2023, 5, 8))
    {'day': 'Monday, 8 May 2023', 'thread': 't1'}
    >>> context_of({"configurable": {"memory_context": False}}, datetime(2023, 5, 8)) is None
    True
    """
    if not enabled(config):
        return None
    context = {"day": day_text(when)}
    thread = configurable(config).get(THREAD_ID)
    if thread is not None and str(thread).strip():
        context["thread"] = str(thread)
    return context


def index_paths(text_field: str, value: Mapping[str, Any]) -> list[str]:
    """The paths a writer indexes for ``value``: its text, then the context it holds.

    >>> index_paths("text", {"text": "x", "context": {"day": "Monday, 8 May 2023"}})
    ['text', 'context.day']
    >>> index_paths("text", {"text": "x"})
    ['text']
    """
    context = value.get(CONTEXT_FIELD)
    if not isinstance(context, Mapping):
        return [text_field]
    return [text_field, *(p for p in CONTEXT_PATHS if context.get(p.split(".", 1)[1]))]


def with_context(value: dict[str, Any], context: Mapping[str, str] | None) -> dict[str, Any]:
    """``value`` with ``context`` under :data:`CONTEXT_FIELD` (unchanged when None)."""
    return value if context is None else {**value, CONTEXT_FIELD: dict(context)}


def in_turn(ops: Sequence[Any]) -> list[list[Any]]:
    """``ops`` in order, cut into batches in which no two puts index the same text or context
    text.

    LangGraph's ``InMemoryStore`` embeds a text once per batch and then fails when two puts
    of the batch index it ("Number of embeddings (1) does not match number of indices (2)"):
    two versions of one fact written together (the new one and the one it closes) share their
    day.

    >>> from langgraph.store.base import PutOp
    >>> ctx = {"text": "a", "context": {"day": "Monday, 8 May 2023"}}
    >>> [len(b) for b in in_turn([PutOp(("u",), "1", ctx), PutOp(("u",), "2", {**ctx, "text": "b"})])]
    [1, 1]
    """
    indexed = [path.split(".", 1)[1] for path in CONTEXT_PATHS]
    out: list[list[Any]] = [[]]
    held: set[str] = set()
    for op in ops:
        value = getattr(op, "value", None)
        texts: set[str] = set()
        if isinstance(value, Mapping) and getattr(op, "index", None) is not False:
            context = value.get(CONTEXT_FIELD)
            if isinstance(context, Mapping):
                texts = {str(context[f]) for f in indexed if f in context}
            if isinstance(value.get("text"), str):
                texts.add(value["text"])  # two versions of one text, written together
        if texts & held:
            out.append([])
            held = set()
        out[-1].append(op)
        held |= texts
    return [batch for batch in out if batch]
