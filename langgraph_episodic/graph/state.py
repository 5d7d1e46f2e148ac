"""The graph state the memory nodes share, and the reducer that merges entities.

Every value in the state is JSON-safe (strings, numbers, dicts, lists, LangChain messages), so
any checkpointer can store it without pickling or allow-listing classes: tasks, episodes and
feedback are kept as the dicts of their records (``TaskDescription.to_dict()`` ...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from langgraph.graph import MessagesState

MAX_DESCRIPTION_SENTENCES = 10
"""An entity description keeps at most this many sentences (the oldest are dropped first)."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def _norm(text: str) -> str:
    return _NON_WORD.sub(" ", text.lower()).strip()


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if _norm(s)]


def merge_description(old: str | None, new: str | None) -> str:
    """Merge a new entity description into an existing one without repeating anything.

    The result keeps each sentence of ``old`` and ``new`` that no other sentence contains
    (ignoring case and punctuation; of equal ones the first spelling), in the place of the
    first sentence it contains: a sentence of ``new`` already in ``old`` is skipped, one that
    extends old ones replaces them, the rest are appended. Sentences are re-joined so that they
    split the same way again. Merging is idempotent:
    ``merge_description(a, merge_description(a, b)) == merge_description(a, b)``.

    >>> merge_description("Alice is a developer.", "Alice is a developer at ACME.")
    'Alice is a developer at ACME.'
    >>> merge_description("Alice likes tea.", "alice likes tea")
    'Alice likes tea.'
    """
    sentences = [*_sentences(old or ""), *_sentences(new or "")]
    norms = [_norm(s) for s in sentences]
    kept: list[tuple[int, int]] = []  # (index of the first sentence it contains, own index)
    for i, norm in enumerate(norms):
        if any(norm in other and (norm != other or j < i) for j, other in enumerate(norms)
               if j != i):
            continue  # contained in a longer sentence, or a repeat of an earlier one
        kept.append((min(j for j, other in enumerate(norms) if other in norm), i))
    merged = [sentences[i] for _, i in sorted(kept)][-MAX_DESCRIPTION_SENTENCES:]
    return " ".join(
        s if i == len(merged) - 1 or s.endswith((".", "!", "?")) else s + "."
        for i, s in enumerate(merged)
    )


def entity_key(name: str) -> str:
    """The case- and space-insensitive key two spellings of one entity share."""
    return " ".join(name.lower().split())


def merge_entities(
    left: Mapping[str, str | None] | None, right: Mapping[str, str | None] | None
) -> dict[str, str]:
    """Reducer for ``entities``: merge ``right`` into ``left`` by name (case-insensitive).

    Descriptions are merged with :func:`merge_description`; the first spelling of a name is
    kept. A value of ``None`` in ``right`` removes that entity.

    >>> merge_entities({"Alice": "A developer."}, {"alice": "Works at ACME."})
    {'Alice': 'A developer. Works at ACME.'}
    """
    merged: dict[str, str] = {k: v for k, v in (left or {}).items() if v is not None}
    names = {entity_key(name): name for name in merged}
    for name, description in (right or {}).items():
        key = entity_key(name)
        existing = names.get(key)
        if description is None:
            if existing is not None:
                del merged[existing]
                del names[key]
            continue
        if existing is None:
            merged[name] = merge_description(None, description)
            names[key] = name
        else:
            merged[existing] = merge_description(merged[existing], description)
    return merged


class EpisodicState(MessagesState, total=False):
    """State shared by the memory nodes; subclass it to add your own keys.

    Keys (all optional except ``messages``):

    - ``messages``: the conversation (``add_messages`` reducer).
    - ``summary``: the running summary written by the summarise node.
    - ``entities``: name -> one-sentence description, merged by :func:`merge_entities`.
    - ``task``: the current task, a string or ``TaskDescription.to_dict()``; when absent the
      episode nodes use the last human message.
    - ``recalled``: the recalled episodes as dicts (each ``Episode.to_dict()`` plus
      ``"priority"`` and ``"similarity"``), best first.
    - ``replay_prompt``: the replay context formatted for the agent's prompt.
    - ``strategy`` / ``strategy_instruction``: the chosen strategy and its instruction.
    - ``feedback`` / ``outcome``: how the current task went (``Feedback.to_dict()`` and an
      ``OutcomeStatus`` value), read by the record-episode node.
    - ``episode_id``: the id of the episode the record-episode node wrote last.

    >>> from langgraph.graph import StateGraph
    >>> class MyState(EpisodicState):
    ...     attempts: int
    >>> builder = StateGraph(MyState)
    """

    summary: str
    entities: Annotated[dict[str, str], merge_entities]
    task: str | dict[str, Any]
    recalled: list[dict[str, Any]]
    replay_prompt: str
    strategy: str
    strategy_instruction: str
    feedback: dict[str, Any] | None
    outcome: str | None
    episode_id: str
