"""Structured lookup before fuzzy search: the user's entities and profile facts, by name.

When a question names something memory holds as a record (an entity the entity-extract node
stored under ``("entities", user_id)``, keyed by its lowercased name; a profile fact under
``("user_profiles", user_id)`` that mentions it), that record answers first and the vector
hits fill the rest. Names are found without a model:

* every run of one to three words of the question is tried as an entity key (one ``get``
  each, all in the same store batch as the search), so "What does Bruno eat?" finds the entity
  ``bruno`` and "Was macht Anna Weber?" finds ``anna weber``;
* a profile fact comes first when it contains, as whole words, the name of a found entity or a
  word of the question written like a name (capitalised but not the first word, an acronym,
  inner capitals such as ``LangGraph``, letters with digits).

Everything here is pure: :func:`plan_lookup` builds the store ops and :func:`structured_hits`
reads their results; the recall tool's plan yields them, with its search, as one ``batch`` /
``abatch`` call (:mod:`langgraph_episodic._effects`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import GetOp, Item, SearchOp

from .._config import (
    ENTITY_NAMESPACE,
    USER_PROFILES,
    USER_SLOT,
    MissingConfigError,
    fill_namespace,
)
from ..language.analysis import STOPWORDS

PROFILE_TEMPLATE: tuple[str, ...] = (USER_PROFILES, USER_SLOT)
"""Where :class:`~langgraph_episodic.graph.profiles.UserProfiles` keeps a user's facts."""
MAX_WORDS = 3
"""Longest entity name tried, in words."""
PROFILE_SCAN = 200
"""Most profile facts read per lookup."""

_WORD = re.compile(r"[\w][\w'’.+#-]*[\w+#]|\w", re.UNICODE)


@dataclass(frozen=True)
class LookupPlan:
    """The ops of one lookup: entity ``get``s (one per candidate name) and a profile listing."""

    entity_ops: tuple[GetOp, ...]
    profile_op: SearchOp | None
    name_words: frozenset[str]

    @property
    def ops(self) -> list[GetOp | SearchOp]:
        """All ops, to run in one batch before (or with) the search."""
        return [*self.entity_ops, *([self.profile_op] if self.profile_op else [])]


def _name_like(word: str, first: bool) -> bool:
    if any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
        return True
    if sum(c.isupper() for c in word) >= 2 or re.search(r"[a-z][A-Z]", word):
        return True
    return not first and word[:1].isupper() and word.casefold() not in STOPWORDS


def candidate_keys(question: str) -> list[str]:
    """Entity keys to try: every run of 1..3 words, lowercased (stop words alone are skipped).

    >>> candidate_keys("Who is Anna Weber?")
    ['anna', 'weber', 'who is', 'is anna', 'anna weber', 'who is anna', 'is anna weber']
    """
    words = [w.strip(".'’") for w in _WORD.findall(question)]
    words = [w for w in words if w]
    keys: list[str] = []
    for size in range(1, MAX_WORDS + 1):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            if size == 1 and run[0].casefold() in STOPWORDS:
                continue
            key = " ".join(run).lower()
            if key not in keys:
                keys.append(key)
    return keys


def plan_lookup(
    question: str,
    config: RunnableConfig,
    *,
    entities: tuple[str, ...] | None = ENTITY_NAMESPACE,
    profiles: tuple[str, ...] | None = PROFILE_TEMPLATE,
) -> LookupPlan:
    """The ops that find the question's named records; none when the templates cannot be
    filled from the config (a tool set up without ``user_id`` then just searches)."""
    ns, pns = _filled(entities, config), _filled(profiles, config)
    entity_ops = () if ns is None else tuple(GetOp(ns, key) for key in candidate_keys(question))
    profile_op = None if pns is None else SearchOp(pns, limit=PROFILE_SCAN, refresh_ttl=False)
    words = _WORD.findall(question)
    names = frozenset(w.casefold() for i, w in enumerate(words) if _name_like(w, first=i == 0))
    return LookupPlan(entity_ops, profile_op, names)


def _filled(template: tuple[str, ...] | None, config: RunnableConfig) -> tuple[str, ...] | None:
    try:
        return None if template is None else fill_namespace(template, config)
    except MissingConfigError:
        return None


def _contains(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text.casefold()) is not None


def structured_hits(plan: LookupPlan, results: Sequence[Any]) -> list[Item]:
    """The records the question names, entities first (longest name first), then profile facts.

    ``results`` are the outcomes of :attr:`LookupPlan.ops`, in order.
    """
    n = len(plan.entity_ops)
    found = [item for item in results[:n] if isinstance(item, Item)]
    found.sort(key=lambda item: -len(item.key))
    # A shorter name inside a longer one found ("anna" within "anna weber") is the same mention.
    entities: list[Item] = []
    for item in found:
        if not any(item.key in longer.key.split() for longer in entities):
            entities.append(item)
    names = set(plan.name_words)
    for item in entities:
        name = item.value.get("name") if isinstance(item.value, Mapping) else None
        names.add(str(name or item.key).casefold())
    facts: list[Item] = []
    if plan.profile_op is not None and names:
        for item in results[n]:
            text = item.value.get("text") if isinstance(item.value, Mapping) else None
            if isinstance(text, str) and any(_contains(text, name) for name in names):
                facts.append(item)
    return [*entities, *facts]
