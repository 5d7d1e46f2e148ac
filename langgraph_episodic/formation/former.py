"""What a deferred formation does with a user's pending turns: turns, entities, episodes.

:class:`Former` takes one user's pending turns, oldest first, and forms them as the inline
nodes would, with two differences that make a burst cheap and a replay harmless:

- A batch forms what its turns, formed one by one, would form: the entities each turn states
  something about are found in that turn's text (without a model, each turn by itself; with
  one, all the turns in *one* call, numbered, each entity coming back with its turn's
  number: ten quick turns cost one model call, not ten), and each mention is saved as a
  fact said at its own turn's time, in turn order (consolidated as the inline node does, so
  a later statement supersedes an earlier one as it would inline), under the same
  per-entity lock.
- Every entity it writes carries ``formed_through``, the key of the newest pending turn it
  includes. An entity that already carries a key at or after the batch's is left alone: a
  batch replayed after a crash (formed, not yet deleted) writes nothing twice, and an older
  batch never overwrites what a newer one wrote.

The turns to remember (:mod:`langgraph_episodic.kinds.turns`) were built in the turn; they are
put as they are, under keys a replay repeats.

Episodes are recorded by the record-episode node's own plan
(:func:`~langgraph_episodic.kinds.episodes.record_episode`), whose episode id is
deterministic: recording a replayed turn again keeps one episode.

The messages a deferred compaction removed from a thread (:mod:`.summary`) are folded into the
thread's stored summary, all of a batch's in one fold per thread; the summary records
``through``, so a replayed batch folds nothing twice.

A batch is formed in two steps: :meth:`Former.prepare` makes the model calls that need no lock
(the extraction, the summaries) and :meth:`Former.write` writes. The worker runs ``write``
under the user's lock after checking that the batch is still queued, so a forget that ran
since the batch was read leaves nothing written.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.messages import messages_from_dict
from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from .._config import fill_namespace
from .._effects import Plan, call, run
from .._keylock import locked
from ..kinds.entities import ENTITY_NAMESPACE, EntityWriter, ExtractedEntity, Told
from ..kinds.entity_rules import entity_key
from ..kinds.episodes import EPISODE_NAMESPACE, EpisodeMemories, Scorer, record_episode
from ..kinds.summaries import Summarizer
from ..kinds.turns import TurnItem, store_turns
from .pending import SUMMARY_KEY, PendingTurn, summary_namespace

FORMED_THROUGH = "formed_through"
"""Key in a formed entity's value: the newest pending turn (its queue key) it includes."""


@dataclass(frozen=True)
class Formed:
    """What one batch formed: entity names written, entity names skipped as already formed,
    episodes recorded."""

    entities: tuple[str, ...]
    skipped: tuple[str, ...]
    episodes: int
    summaries: int = 0
    """Threads whose stored summary this batch folded messages into."""


@dataclass(frozen=True)
class EntityBatch:
    """One namespace's extracted entities of a batch: what each turn told, in turn order."""

    namespace: tuple[str, ...]
    told: tuple[Told, ...]
    """One per turn that states something about an entity, each at its turn's time."""
    through: str
    """The key of the batch's newest turn in this namespace."""

    def by_key(self) -> dict[str, list[ExtractedEntity]]:
        """Each entity's mentions (key -> in turn order)."""
        found: dict[str, list[ExtractedEntity]] = {}
        for told in self.told:
            for entity in told.entities:
                found.setdefault(entity_key(entity.name), []).append(entity)
        return found


@dataclass(frozen=True)
class FoldedSummary:
    """A thread's new summary: ``value`` goes to ``(SUMMARY, user, thread)``."""

    namespace: tuple[str, ...]
    value: dict[str, Any]


@dataclass(frozen=True)
class Prepared:
    """What :meth:`Former.prepare` made of a batch, for :meth:`Former.write`."""

    turns: tuple[PendingTurn, ...]
    entities: tuple[EntityBatch, ...]
    summaries: tuple[FoldedSummary, ...]


class Former:
    """Forms one user's pending turns (see the module docstring).

    Args:
        writer: The entity extractor and merger (``None``: no entities).
        episodes: Record the queued episodes.
        memories: The episodic memories the turn recalled from (their store, namespace and
            options); with no store of their own, the store the batch is formed in.
        score: The record-episode node's score function.
        namespace: Namespace template of the entities.
    """

    def __init__(
        self,
        writer: EntityWriter | None,
        *,
        episodes: bool = True,
        memories: EpisodeMemories | None = None,
        score: Scorer | None = None,
        namespace: tuple[str, ...] = ENTITY_NAMESPACE,
        summarizer: Summarizer | None = None,
    ) -> None:
        self.writer, self.episodes, self.namespace = writer, episodes, namespace
        self.summarizer = summarizer
        self.memories, self.score = memories, score
        self._memories_by_store: dict[int, EpisodeMemories] = {}

    def _episode_memories(self, store: BaseStore) -> EpisodeMemories:
        """The episodic memories episodes are recorded in for ``store`` (the worker has no
        graph to take them from)."""
        memories = self._memories_by_store.get(id(store))
        if memories is None:
            memories = self.memories
            if memories is None or memories.store is None:
                options = memories.options if memories is not None else {}
                namespace = memories.namespace if memories is not None else EPISODE_NAMESPACE
                memories = EpisodeMemories(store, namespace=namespace, **options)
            self._memories_by_store[id(store)] = memories
        return memories

    def form(self, store: BaseStore, turns: Sequence[PendingTurn]) -> Formed:
        """Form ``turns`` (one user's, oldest first) into ``store``."""
        return self.write(store, self.prepare(store, turns))

    def prepare(self, store: BaseStore, turns: Sequence[PendingTurn]) -> Prepared:
        """The model calls of a batch that write nothing: the extraction of each turn's
        entities (:meth:`EntityWriter.extract_turns`, one model call per entity namespace)
        and each thread's summary fold."""
        batches: list[EntityBatch] = []
        if self.writer is not None:
            groups: dict[tuple[str, ...], list[PendingTurn]] = {}
            for turn in turns:
                groups.setdefault(fill_namespace(self.namespace, turn.config()), []).append(turn)
            for ns, group in groups.items():
                found = run(self.writer.extract_turns([t.text for t in group]))
                told = []
                for turn, entities in zip(group, found, strict=True):
                    kept = tuple(
                        e for e in entities if entity_key(e.name) and e.description.strip()
                    )
                    if kept:
                        told.append(Told(kept, turn.told(), turn.config()))
                if told:
                    batches.append(EntityBatch(ns, tuple(told), group[-1].key))
        return Prepared(tuple(turns), tuple(batches), tuple(self._summaries(store, turns)))

    def _summaries(self, store: BaseStore, turns: Sequence[PendingTurn]) -> list[FoldedSummary]:
        by_thread: dict[tuple[str, ...], list[PendingTurn]] = {}
        for turn in turns:
            if turn.leaving:
                ns = summary_namespace(turn.user_id, turn.thread_id)
                by_thread.setdefault(ns, []).append(turn)
        folded: list[FoldedSummary] = []
        summarizer = self.summarizer or Summarizer()
        for thread_ns, group in by_thread.items():
            stored = store.get(thread_ns, SUMMARY_KEY)
            through = str(stored.value.get("through", "")) if stored else ""
            fresh = [t for t in group if t.key > through]  # a replayed batch folds nothing
            if not fresh:
                continue
            previous = str(stored.value.get("text", "")) if stored else fresh[0].summary_base
            leaving = messages_from_dict([m for t in fresh for m in t.leaving])
            text = run(summarizer.fold(previous, leaving))
            count = int(stored.value.get("summarized_messages", 0)) if stored else 0
            folded.append(FoldedSummary(thread_ns, {
                "text": text, "through": fresh[-1].key, "method": summarizer.method,
                "summarized_messages": count + len(leaving)}))
        return folded

    def write(self, store: BaseStore, prepared: Prepared) -> Formed:
        """Write what :meth:`prepare` made: the turns to remember, the entities' facts, the
        summaries, the episodes."""
        turn_items = [TurnItem.from_dict(t) for turn in prepared.turns for t in turn.turns]
        if turn_items:
            run(store_turns(store, turn_items))  # deterministic keys: a replay writes no copy
        written: list[str] = []
        skipped: list[str] = []
        for batch in prepared.entities:
            done, left = self._entities(store, batch)
            written += done
            skipped += left
        if prepared.summaries:
            store.batch(
                [PutOp(s.namespace, SUMMARY_KEY, s.value, index=False) for s in prepared.summaries]
            )
        episodes = 0
        for turn in prepared.turns if self.episodes else ():
            if turn.episode is not None:
                update = run(record_episode(self._episode_memories(store), self.score, time.time,
                                            dict(turn.episode), turn.config()))
                episodes += bool(update.get("episode_id"))
        return Formed(tuple(written), tuple(skipped), episodes, len(prepared.summaries))

    def _entities(self, store: BaseStore, batch: EntityBatch) -> tuple[list[str], list[str]]:
        with ExitStack() as held:  # every entity's lock, in one order: no deadlock
            for key in sorted(batch.by_key()):
                held.enter_context(locked((id(store), batch.namespace, key)))
            return run(self._merge(store, batch))

    def _merge(self, store: BaseStore, batch: EntityBatch) -> Plan[tuple[list[str], list[str]]]:
        """Plan: save each turn's mentions as facts about their entities, each said at its
        turn's time, in turn order, the fact machinery consolidating them as it would one
        turn after the other, all the batch's entities in a few store calls
        (:meth:`EntityWriter.save_told`, given the items read here). An entity that already
        includes this batch is skipped."""
        assert self.writer is not None
        ns, by_key = batch.namespace, batch.by_key()
        keys = list(by_key)
        found = yield call(store.batch, store.abatch, [GetOp(ns, k) for k in keys])
        skipped: list[str] = []
        cards: dict[str, Item | None] = {}
        for key, old in zip(keys, found, strict=True):
            if old is not None and str(old.value.get(FORMED_THROUGH) or "") >= batch.through:
                skipped.append(by_key[key][0].name.strip())  # this batch (or a newer) is in it
                continue
            cards[key] = old
        told = [
            replace(t, entities=kept)
            for t in batch.told
            if (kept := tuple(e for e in t.entities if entity_key(e.name) in cards))
        ]
        if not told:
            return [], skipped
        saved = yield from self.writer.save_told(
            store, ns, told, card_extra={FORMED_THROUGH: batch.through}, cards=cards
        )
        return [display for display, _ in saved.values()], skipped

