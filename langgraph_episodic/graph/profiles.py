"""Cross-session user facts, kept in the store under ``("user_profiles", user_id)``.

A fact is one short text ("prefers Python for data analysis") kept as a fact record with its
period (:mod:`langgraph_episodic.facts`), consolidated on save like the memory tools' facts:
saving the same fact twice (ignoring case and spacing) keeps one item, "Lives in Berlin now"
replaces "Lives in Munich" (kept as history), "No longer has a dog" ends a fact. ``list`` and
``search`` return current facts; :func:`langgraph_episodic.facts.fact_history` shows all.
Facts that carry nothing (greetings, thanks, too short; see
:func:`~langgraph_episodic.relevance.is_worth_storing`) are refused unless ``force=True``.

Like the library's other writers, a saved fact holds the context of the run it was saved in,
``value["context"] = {"day": ..., "thread": ...}`` (:mod:`langgraph_episodic.memory_context`),
indexed after the text: from the ``config`` passed to :meth:`UserProfiles.save`, else the
config of the LangGraph run it is called in (a node, a tool). Outside a run and with no
``config`` a fact holds none; ``config["configurable"]["memory_context"] = False`` turns it off.
"""

from __future__ import annotations

import builtins
import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.store.base import BaseStore, Item

from .._config import namespace_label
from .._effects import Plan, call, twins
from .._fence import prompt_block, single_line
from .._runner import all_items
from ..facts.consolidate import Clock, FactWriter
from ..facts.model_decider import ModelDecider
from ..facts.recall import newest_per_lineage
from ..facts.records import CURRENT_FILTER, FactRecord, from_iso
from ..kinds.namespaces import USER_PROFILES
from ..memory_context import context_of, enabled, index_paths, with_context
from ..privacy.redaction import DEFAULT_REDACTOR, SaveRedactor, redact_saved
from ..relevance import is_worth_storing

PROFILE_NAMESPACE = USER_PROFILES
"""First label of the profile namespace; the second is the user id."""

FACTS_LABEL = "USER FACTS"
"""Label of the fence :meth:`UserProfiles.as_prompt` puts around the facts."""


@dataclass(frozen=True)
class UserFact:
    """One fact about a user."""

    key: str
    text: str
    created_at: float
    updated_at: float

    @classmethod
    def from_item(cls, item: Item) -> UserFact:
        """Read a fact from a store item written by :class:`UserProfiles`."""
        value = item.value
        record = FactRecord.from_value(value)
        if record is not None:  # its own times: some stores reset created_at on update
            return cls(
                key=item.key,
                text=record.text,
                created_at=from_iso(record.recorded_at).timestamp(),
                updated_at=from_iso(record.confirmed_at or record.recorded_at).timestamp(),
            )
        return cls(
            key=item.key,
            text=str(value.get("text", "")),
            created_at=float(value.get("created_at", item.created_at.timestamp())),
            updated_at=float(value.get("updated_at", item.updated_at.timestamp())),
        )


def fact_key(text: str) -> str:
    """The key a fact is stored under: a hash of its case- and space-normalised text."""
    normal = " ".join(text.lower().split())
    return hashlib.blake2b(normal.encode("utf-8"), digest_size=12).hexdigest()


def _scoped_key(text: str, scope: str) -> str:
    return fact_key(text) if not scope else fact_key(f"{scope} {text}")


def _is_current(item: Item) -> bool:
    record = FactRecord.from_value(item.value)
    return record is None or record.current


def _run_config(config: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """``config``, else the config of the LangGraph run this is called in (None outside one).

    Raises:
        TypeError: ``configurable["memory_context"]`` is neither True nor False.
    """
    if config is None:
        from langgraph.config import get_config

        try:
            config = get_config()
        except RuntimeError:  # not called in a run: no conversation to name
            return None
    enabled(config)
    return config


class UserProfiles:
    """Save, list, search and delete facts about users, in any LangGraph ``BaseStore``.

    >>> from langgraph.store.memory import InMemoryStore
    >>> profiles = UserProfiles(InMemoryStore())
    >>> key = profiles.save("alice", "Prefers Python for data analysis")
    >>> [f.text for f in profiles.list("alice")]
    ['Prefers Python for data analysis']
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        namespace: str = PROFILE_NAMESPACE,
        redact: SaveRedactor | None = DEFAULT_REDACTOR,
        model: BaseChatModel | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self._writer = FactWriter(ModelDecider(model) if model is not None else None,
                                  clock=clock, key=_scoped_key)
        """Consolidates each saved fact (rules, or one call of ``model``); ``clock`` gives
        the time a fact became true."""
        self.namespace = namespace
        self.redact = redact
        """Applied to each fact before it is stored (default: personal data such as e-mail
        addresses becomes ``[EMAIL]``); ``None`` keeps facts verbatim."""

    def _ns(self, user_id: str) -> tuple[str, ...]:
        return (self.namespace, namespace_label(user_id))

    # Each operation is one plan; ``twins`` makes its sync method and its async twin.

    def _save(
        self,
        user_id: str,
        text: str,
        *,
        key: str | None = None,
        force: bool = False,
        config: Mapping[str, Any] | None = None,
    ) -> Plan[str | None]:
        """Save a fact and return its key, or ``None`` when it is not worth storing.

        The fact is consolidated with the user's current ones (see the module docstring):
        saving the same text again confirms the one item. Pass ``key`` to overwrite a
        specific fact without consolidation (e.g. a corrected one).

        ``config`` (a run's, default: the LangGraph run this is called in) gives the fact its
        context, the day and the run's ``thread_id``, stored beside the text (the day indexed) unless
        ``configurable["memory_context"]`` is False (:mod:`langgraph_episodic.memory_context`).

        Raises:
            TypeError: ``configurable["memory_context"]`` is neither True nor False.
        """
        config = _run_config(config)
        text = redact_saved(" ".join(text.split()), self.redact)
        if not force and not is_worth_storing(text, min_chars=8, min_words=2):
            return None
        ns = self._ns(user_id)
        if key is None:
            outcome = yield from self._writer.save(self.store, ns, text, config=config)
            return outcome.key
        old = yield call(self.store.get, self.store.aget, ns, key)
        now = time.time()
        created = old.value.get("created_at", now) if old else now
        context = context_of(config, self._writer.clock()) if config is not None else None
        value = with_context({"text": text, "created_at": created, "updated_at": now}, context)
        index = index_paths("text", value) if context is not None else None
        yield call(self.store.put, self.store.aput, ns, key, value, index)
        return key

    save, asave = twins(_save, "save")

    def _list(self, user_id: str) -> Plan[builtins.list[UserFact]]:
        """All facts of a user, oldest first."""
        items = yield from all_items(self.store, self._ns(user_id))
        own = [i for i in items if i.namespace == self._ns(user_id) and _is_current(i)]
        facts = [UserFact.from_item(i) for i in newest_per_lineage(own)]
        return sorted(facts, key=lambda f: (f.created_at, f.key))

    list, alist = twins(_list, "list")

    def _search(
        self, user_id: str, query: str, *, limit: int = 5
    ) -> Plan[builtins.list[UserFact]]:
        """A user's facts closest to ``query`` (semantic when the store has an index)."""
        items = yield call(
            self.store.search, self.store.asearch, self._ns(user_id), query=query, limit=limit,
            filter=dict(CURRENT_FILTER),
        )
        return [UserFact.from_item(i) for i in newest_per_lineage(items)]

    search, asearch = twins(_search, "search")

    def _delete(self, user_id: str, key: str) -> Plan[None]:
        """Delete one fact (no error when it does not exist)."""
        yield call(self.store.delete, self.store.adelete, self._ns(user_id), key)

    delete, adelete = twins(_delete, "delete")

    def _clear(self, user_id: str) -> Plan[int]:
        """Delete every fact of a user; return how many were deleted."""
        items = yield from all_items(self.store, self._ns(user_id))
        own = [i for i in items if i.namespace == self._ns(user_id)]
        for item in own:  # replaced versions too: clearing leaves no history
            yield from self._delete(user_id, item.key)
        return sum(_is_current(i) for i in own)

    clear, aclear = twins(_clear, "clear")

    @staticmethod
    def as_prompt(facts: Sequence[UserFact]) -> str:
        """Format facts for a system prompt as quoted data ('' when there are none).

        The facts come from users, so they are fenced: a notice that they are data, not
        instructions, then one ``| fact`` line each between ``<<<BEGIN USER FACTS ...>>>`` and
        ``<<<END USER FACTS>>>``, with copies of the markers neutralised (see
        :mod:`langgraph_episodic._fence`).
        """
        if not facts:
            return ""
        return prompt_block("Known facts about the user:", [single_line(f.text) for f in facts],
                     FACTS_LABEL, "facts about the user")
