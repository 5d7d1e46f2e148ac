"""The entities: remember who and what the user talks about, across sessions.

The entity-extract node and the middleware extract entities (a name and one sentence saying
what the text tells about it) from the last human message (``source="last"``: the last
message) and save each sentence as a **fact about the entity** (:mod:`langgraph_episodic.facts`,
``subject`` = the entity's key) under ``("entities", user_id)``, consolidated on write as the
memory tools' facts are: a change closes the old version (kept as history), an end closes it.
The entity's own item (key: its lowercased name) holds its name and its **description**, its
current facts joined newest first; that is what ``state["entities"]`` carries and what the
memory tools' lookup by name finds.

With a chat model, extraction and consolidation are structured calls
(:class:`~langgraph_episodic.facts.ModelDecider`); without one the rules of
:mod:`.entity_rules` run (``"method": "rules"`` in each entity's item). An entity stored before
entities had facts keeps its description: it becomes its first fact at its next mention.
Each save of one entity holds a per-(store, namespace, key) lock in this process
(:mod:`langgraph_episodic._keylock`); across processes the facts converge as the memory tools'
do (``docs/facts.md``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, SearchOp
from pydantic import BaseModel, Field

from .._config import ENTITY_NAMESPACE
from .._effects import Plan, call
from .._keylock import arun_locked, run_locked
from .._messages import last_human_text, message_text
from .._model_calls import internal_config, retrying
from ..errors import InvalidTypeError
from ..facts.consolidate import Clock, FactWriter, Outcome, Said, Subject
from ..facts.model_decider import ModelDecider
from ..facts.recall import newest_per_lineage
from ..facts.records import FACT_KIND, FactRecord
from ..relevance import is_worth_storing
from .entity_rules import QUESTION_WORDS, entity_key, find_names, is_question, statements

logger = logging.getLogger(__name__)

__all__ = [
    "ENTITY_INSTRUCTIONS",
    "ENTITY_NAMESPACE",
    "QUESTION_WORDS",
    "EntityWriter",
    "ExtractedEntities",
    "ExtractedEntity",
    "Told",
    "by_turn",
    "extract_entities_by_rules",
    "is_question",
    "load_entities",
    "statements",
    "text_of_source",
]

ENTITY_INSTRUCTIONS = (
    "Extract the named entities (people, organisations, products, tools, places, projects) the "
    "text states something about. For each give its name and one sentence, in the text's "
    "language, saying what the text tells about it. Ignore anything only asked about. Return "
    "an empty list when there is nothing."
)

TURNS_INSTRUCTIONS = (
    " The text is several messages of the user, oldest first, each after its number in "
    "brackets on a line of its own ([1], [2], ...). Read each message on its own: give an "
    "entity once for every message that states something about it, with that message's "
    "number as turn, also when a later message changes what an earlier one said."
)
"""Added to :data:`ENTITY_INSTRUCTIONS` when one call extracts several turns
(:meth:`EntityWriter.extract_turns`)."""


class ExtractedEntity(BaseModel):
    """One entity a text states something about."""

    name: str = Field(description="The entity's name as written in the text.")
    description: str = Field(description="One sentence: what the text says about it.")
    turn: int | None = Field(default=None, description=(
        "The number of the message that says it, when the messages are numbered ([1], [2], "
        "...); null otherwise."))


class ExtractedEntities(BaseModel):
    """The entities found in a text (empty when there are none)."""

    entities: list[ExtractedEntity] = Field(default_factory=list)


def extract_entities_by_rules(text: str) -> list[ExtractedEntity]:
    """Rule-based extraction (no model): see :mod:`.entity_rules` for what it finds.

    >>> [e.name for e in extract_entities_by_rules("I work at ACME and I use LangGraph daily.")]
    ['ACME', 'LangGraph']
    >>> extract_entities_by_rules("Find and fix the crash in the CSV export.")
    []
    """
    return [ExtractedEntity(name=name, description=description)
            for name, description in find_names(text)]


def _structured(model: BaseChatModel) -> Any:
    try:
        return retrying(model.with_structured_output(ExtractedEntities))
    except NotImplementedError as exc:
        raise InvalidTypeError(
            f"{type(model).__name__} does not support structured output. Pass a chat model "
            "with tool calling, or model=None to use the rule-based extractor."
        ) from exc


def _worth(text: str) -> bool:
    """Whether entities are looked for in ``text`` (a lower bar than a memory's)."""
    return is_worth_storing(text, min_chars=8, min_words=2)


def by_turn(entities: Sequence[ExtractedEntity],
            texts: Sequence[str]) -> list[list[ExtractedEntity]]:
    """The entities of one extraction over the numbered ``texts``, under the text each comes
    from, in their order: the one its ``turn`` (1-based) names; without a valid number, the
    first text that names it and has no mention of it yet (the last that names it once all
    have one; the newest text when none names it).

    >>> said = [ExtractedEntity(name="Bello", description="Er ist vier.", turn=2),
    ...         ExtractedEntity(name="Bello", description="Er ist drei.")]
    >>> [[e.description for e in found] for found in by_turn(said, ["Bello ist drei.",
    ...                                                              "Bello ist vier."])]
    [['Er ist drei.'], ['Er ist vier.']]
    """
    found: list[list[ExtractedEntity]] = [[] for _ in texts]
    unnumbered: list[ExtractedEntity] = []
    for entity in entities:
        if entity.turn is not None and 1 <= entity.turn <= len(texts):
            found[entity.turn - 1].append(entity)
        else:
            unnumbered.append(entity)
    for entity in unnumbered:
        name, key = entity.name.strip().casefold(), entity_key(entity.name)
        naming = [i for i, text in enumerate(texts) if name and name in text.casefold()]
        free = [i for i in naming if all(entity_key(e.name) != key for e in found[i])]
        found[free[0] if free else naming[-1] if naming else len(texts) - 1].append(entity)
    if unnumbered:
        logger.debug("entities: %d of %d extracted without a valid turn number, placed by name",
                     len(unnumbered), len(entities))
    return found


@dataclass(frozen=True)
class Told:
    """What one turn said about entities (:meth:`EntityWriter.save_told`)."""

    entities: tuple[ExtractedEntity, ...]
    said_at: datetime | None = None
    """When the turn was said (None: the writer's clock, by default now)."""
    config: Mapping[str, Any] | None = None
    """The turn's run config: the context of its facts (:mod:`langgraph_episodic.memory_context`)."""


def text_of_source(messages: Sequence[BaseMessage], source: str) -> str:
    if source == "last":
        return message_text(messages[-1]) if messages else ""
    return last_human_text(messages)


DESCRIPTION_FACTS = 10
"""An entity's description joins at most this many of its current facts (the newest)."""
ENTITY_KIND = "entity"
"""The ``kind`` of an entity's item (its name and current description)."""
SUBJECT_SCAN = 200
"""Most current facts read about one entity when its description is rebuilt."""


class EntityWriter:
    """Extracts entities from a text and saves what it says about each as a fact about it.

    Shared by :func:`entity_extract_node` and the middleware. ``model=None``: rules extract and
    consolidate; a model does both (:class:`~langgraph_episodic.facts.ModelDecider`). ``clock``
    gives the time a fact became true (default: now).
    """

    def __init__(self, model: BaseChatModel | None = None, *, clock: Clock | None = None) -> None:
        self.method = "rules" if model is None else "llm"
        self._structured = _structured(model) if model is not None else None
        self._facts = FactWriter(ModelDecider(model) if model is not None else None, clock=clock)

    def extract(self, text: str) -> Plan[list[ExtractedEntity]]:
        """Plan: the entities ``text`` states something about."""
        if self._structured is None:
            text = "\n".join(statements(text))  # one line each: a request stays its own
            return extract_entities_by_rules(text) if _worth(text) else []
        return (yield from self._ask(ENTITY_INSTRUCTIONS, text)) if _worth(text) else []

    def _ask(self, instructions: str, text: str) -> Plan[list[ExtractedEntity]]:
        """Plan: the model's entities of ``text``."""
        assert self._structured is not None
        result = yield call(self._structured.invoke, self._structured.ainvoke,
                            [SystemMessage(instructions), HumanMessage(text)],
                            internal_config("entities"))
        if isinstance(result, dict):
            result = ExtractedEntities.model_validate(result)
        if not isinstance(result, ExtractedEntities):
            raise InvalidTypeError(
                f"Structured output returned {type(result).__name__}, not ExtractedEntities.")
        return result.entities

    @property
    def clock(self) -> Clock:
        """The time a fact is said when its turn gives none (default: now, UTC)."""
        return self._facts.clock

    def extract_turns(self, texts: Sequence[str]) -> Plan[list[list[ExtractedEntity]]]:
        """Plan: for each of ``texts`` (one user's turns, oldest first) the entities
        :meth:`extract` finds in it. With a model, several texts cost one call: numbered in
        the request, each entity comes back with its text's number (:func:`by_turn`)."""
        found: list[list[ExtractedEntity]] = []
        worth = [i for i, text in enumerate(texts) if _worth(text)]
        if self._structured is None or len(worth) <= 1:
            for text in texts:
                found.append((yield from self.extract(text)))
            return found
        found = [[] for _ in texts]
        numbered = "\n".join(f"[{n}]\n{texts[i]}" for n, i in enumerate(worth, start=1))
        said = yield from self._ask(ENTITY_INSTRUCTIONS + TURNS_INSTRUCTIONS, numbered)
        for i, entities in zip(worth, by_turn(said, [texts[i] for i in worth]), strict=True):
            found[i] = entities
        return found

    def save_one(
        self, store: BaseStore, ns: tuple[str, ...], entity: ExtractedEntity, *,
        config: Mapping[str, Any] | None = None,
    ) -> Plan[tuple[str, str | None]]:
        """Plan: :meth:`save_told` of one entity said now; returns its display name and current
        description. The caller holds the entity's lock."""
        saved = yield from self.save_told(store, ns, [Told((entity,), config=config)])
        return saved[entity_key(entity.name)]

    def save_told(
        self, store: BaseStore, ns: tuple[str, ...], turns: Sequence[Told], *,
        card_extra: Mapping[str, Any] | None = None,
        cards: Mapping[str, Item | None] | None = None,
    ) -> Plan[dict[str, tuple[str, str | None]]]:
        """Plan: save what ``turns`` (oldest first) said about entities, each mention a fact
        said at its turn's time, consolidated as one turn after the other would be, the store
        calls batched (:meth:`FactWriter.save_many <langgraph_episodic.facts.FactWriter.save_many>`);
        each entity's item is rebuilt in the batch of the last facts (``card_extra`` added).
        ``cards``: the items when the caller read them (key -> item or None). The caller holds
        every entity's lock. Returns key -> (display name, current description)."""
        mentions = [(key, e, n) for n, told in enumerate(turns) for e in told.entities
                    if (key := entity_key(e.name)) and e.description.strip()]
        keys = list(dict.fromkeys(key for key, _, _ in mentions))
        read_cards = cards is None or not all(key in cards for key in keys)
        found = yield call(store.batch, store.abatch,
                           [*(facts_op(ns, k) for k in keys),
                            *(GetOp(ns, k) for k in (keys if read_cards else ()))])
        if read_cards:
            cards = dict(zip(keys, found[len(keys):], strict=True))
        assert cards is not None
        current = {key: current_facts_of(items, ns) for key, items in zip(keys, found, strict=False)}
        display: dict[str, str] = {}
        for key, entity, _ in mentions:
            if key in display:
                continue
            card = cards[key]
            display[key] = str(card.value.get("name", entity.name.strip())) if card \
                else entity.name.strip()
            if card is None or card.value.get("kind") == ENTITY_KIND:
                continue
            # Stored before entities had facts: its description becomes its first fact.
            old = card.value.get("description")
            if isinstance(old, str) and old.strip():
                since = card.updated_at if card.updated_at.tzinfo else card.updated_at.replace(
                    tzinfo=timezone.utc)
                yield from self._facts.save(store, ns, old.strip(), said_at=since, subject=key,
                                            subject_name=display[key])
            again = yield call(store.batch, store.abatch, [facts_op(ns, key)])
            current[key] = current_facts_of(again[0], ns)

        def items(outcomes: list[Outcome]) -> list[Op]:
            for (key, _, _), outcome in zip(mentions, outcomes, strict=True):
                current[key] = after(current[key], outcome)
            return [self._item(ns, key, display[key], current[key], card_extra) for key in keys]

        when = [told.said_at or self._facts.clock() for told in turns]
        yield from self._facts.save_many(
            store, ns, [Said(e.description.strip(), Subject(key, display[key]), when[n],
                             turns[n].config) for key, e, n in mentions], then=items)
        return {key: (display[key], describe(current[key])) for key in keys}

    def _item(self, ns: tuple[str, ...], key: str, display: str,
              current: Mapping[str, FactRecord],
              extra: Mapping[str, Any] | None = None) -> PutOp:
        """The write of an entity's item from its current facts (deleted when none is left)."""
        description = describe(current)
        if description is None:
            return PutOp(ns, key, None)
        return PutOp(ns, key, {
            "name": display, "description": description, "text": f"{display}: {description}",
            "method": self.method, "updated_at": time.time(), "kind": ENTITY_KIND,
            "facts": len(current), **(extra or {})})

    def merge(
        self, store: BaseStore, ns: tuple[str, ...], entities: Sequence[ExtractedEntity],
        config: Mapping[str, Any] | None = None,
    ) -> Plan[dict[str, str | None]]:
        """Plan: save ``entities``' facts (with the context of the run of ``config``), each
        entity under its lock; return name -> its current description (None when none of its
        facts holds any more)."""
        update: dict[str, str | None] = {}
        for entity in entities:
            key = entity_key(entity.name)
            if not key or not entity.description.strip():
                continue
            lock_key = (id(store), ns, key)
            display, description = yield call(run_locked, arun_locked, lock_key,
                                              lambda e=entity: self.save_one(store, ns, e,
                                                                             config=config))
            update[display] = description
        return update


def facts_op(ns: tuple[str, ...], key: str) -> SearchOp:
    """The read of the current facts about the entity ``key`` (see :func:`current_facts_of`)."""
    return SearchOp(ns, filter={"kind": FACT_KIND, "subject": key, "current": True},
                    limit=SUBJECT_SCAN, refresh_ttl=False)


def current_facts_of(found: Sequence[Item], ns: tuple[str, ...]) -> dict[str, FactRecord]:
    """Key -> current fact among what :func:`facts_op` found (the newest version of each
    lineage, items of ``ns`` only), in the order found."""
    own = [item for item in newest_per_lineage(found) if tuple(item.namespace) == ns]
    return {item.key: rec for item in own
            if (rec := FactRecord.from_value(item.value)) and rec.current}


def after(current: Mapping[str, FactRecord], outcome: Outcome) -> dict[str, FactRecord]:
    """The current facts (key -> fact) once ``outcome`` is written: the version written
    first (as a search finds the latest write), the version it closed or ended gone."""
    record = outcome.record
    gone = {outcome.key}  # ended, or put back first below
    if record is not None and record.supersedes and outcome.replaced is not None:
        gone.add(record.supersedes)
    kept = {key: rec for key, rec in current.items() if key not in gone}
    if record is not None and record.current:
        return {outcome.key: record, **kept}
    return kept


def describe(current: Mapping[str, FactRecord]) -> str | None:
    """An entity's description: its current facts, newest said (recorded or confirmed) first,
    each ending in a stop; None when it has none."""
    facts = sorted(current.values(), key=lambda r: max(r.recorded_at, r.confirmed_at or ""),
                   reverse=True)
    if not facts:
        return None
    texts = [" ".join(f.text.split()) for f in facts[:DESCRIPTION_FACTS]]
    return " ".join(t if t.endswith((".", "!", "?")) or i == len(texts) - 1 else t + "."
                    for i, t in enumerate(texts))


def load_entities(
    store: BaseStore, ns: tuple[str, ...], limit: int
) -> Plan[dict[str, str]]:
    """Plan: up to ``limit`` of the user's stored entities, name -> description."""
    if limit <= 0:
        return {}
    items = yield call(store.search, store.asearch, ns, limit=limit,
                       filter={"kind": {"$ne": FACT_KIND}})
    return {item.value["name"]: item.value["description"] for item in items
            if "name" in item.value and "description" in item.value}
