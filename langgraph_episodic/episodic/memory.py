"""EpisodicMemory: record episodes in any LangGraph store and recall the ones that matter.

Each episode is one store item in the memory's namespace (key = episode id, value =
``Episode.to_dict()``), with only its task text embedded. Recall asks the store for
``top_k * candidate_factor`` semantically similar candidates and re-ranks them by replay priority
(similarity, recency, reward, outcome; see :mod:`.priority`). A short-term window keeps the
newest ``short_term_limit`` episodes in process; it is rebuilt from the store on first use, so it
survives restarts. Namespaces are per user (``("episodes", user_id)``): one user's recall never
sees another's episodes.

Sync and async methods share one core: each operation is a plan of store and embedding calls
(:mod:`langgraph_episodic._effects`).

>>> from langgraph.store.memory import InMemoryStore
>>> from langgraph_episodic.embeddings import HashEmbeddings
>>> from langgraph_episodic.episodic.records import (
...     Episode, Feedback, OutcomeStatus, TaskCategory, TaskDescription)
>>> store = InMemoryStore(index={"dims": 64, "embed": HashEmbeddings(64)})
>>> memory = EpisodicMemory.for_user(store, "alice")
>>> task = TaskDescription("Fix the failing date parser test", TaskCategory.DEBUGGING)
>>> memory.record(Episode("e1", task, "Parse with fromisoformat", Feedback(0.9),
...                       OutcomeStatus.SUCCESS, timestamp=1000.0, strategy_used="iterative"))
True
>>> [r.episode.episode_id for r in memory.recall("date parser test fails", current_time=2000.0)]
['e1']
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, Item

from .._config import EPISODE_NAMESPACE, EPISODES, RESERVED_LABEL, fill_namespace, namespace_label
from .._effects import Effect, Plan, call, twins
from ..embeddings import as_embeddings
from ..errors import Error, InvalidTypeError, InvalidValueError
from ..memory_context import index_paths, with_context
from .change import DEFAULT_CHANGE_DETECTION, ChangeDetection
from .priority import PrioritizedResult, ReplayWeights, rank, weights_for_size
from .records import (
    Episode,
    EpisodeSchemaError,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
    as_enum,
    require,
)
from .similarity import DEFAULT_HALF_LIFE, cosine_similarity
from .skills import SkillProfile, SkillTally

logger = logging.getLogger(__name__)

T = TypeVar("T")

SCAN_PAGE = 200
"""Items fetched per page when the memory reads its whole namespace."""
TEXT_FIELD = "text"
"""The value field that is embedded (the task description)."""
AUTO: Final = "auto"
"""``min_score="auto"`` (the default of :meth:`EpisodicMemory.recall`): the floor for the
store's kind of score, :data:`HYBRID_FLOOR` or :data:`COSINE_FLOOR`."""
HYBRID_FLOOR = 0.20
"""The default relevance floor on a ``ChromaStore``'s hybrid (or lexical) score, which means
the same for every task: below it a past task is not recalled."""
COSINE_FLOOR = 0.40
"""The default relevance floor on a raw cosine (``InMemoryStore``, ``ChromaStore`` with
``search_mode="dense"``, the memory's own ``embeddings``), where unrelated texts score higher.
Both floors are chosen on ``benchmarks/episode_relevance.py``."""


class EpisodeConflictError(Error, ValueError):
    """An episode id is already recorded with different content; episodes are immutable."""


@dataclass
class _State:
    """What the memory knows in process: built by a full scan, then updated on record."""

    ids: set[str]
    window: list[tuple[tuple[float, float, str], Episode]]
    tally: SkillTally


class EpisodicMemory:
    """Long-term episodes in a LangGraph ``BaseStore`` plus a short-term window of the newest.

    Args:
        store: Any LangGraph store; for semantic recall it should have an index
            (``index={...}``). Only the task text of an episode is embedded.
        namespace: A tuple such as ``("episodes", "alice")``, one per user or agent; see
            :meth:`for_user` and :meth:`from_config`.
        short_term_limit: How many of the newest episodes the short-term window holds.
        candidate_factor: Recall fetches ``top_k * candidate_factor`` candidates by similarity
            before ranking them by priority.
        embeddings: Only used when the store has no semantic index: a LangChain ``Embeddings``
            or a ``str -> vector`` function; the memory then scans its namespace and computes
            cosine similarity itself. Without either, recall ranks by recency, reward and
            outcome alone.
        weights: Fixed replay weights; ``None`` picks the phase preset by episode count
            (:func:`~.priority.weights_for_size`).
        half_life: Default half-life of recency, in seconds.
        recency_floor: Lowest recency weight an old episode can fall to (0 = no floor).
        change_detection: When a category's skill profile is flagged as changed
            (:class:`~.change.ChangeDetection`); ``None`` turns detection off.
        clock: Returns the current time in seconds; used when ``current_time`` is not given.

    The similarity of a recalled episode is the store's search score: cosine similarity for
    ``InMemoryStore`` and ``ChromaStore(search_mode="dense")``; for ``ChromaStore``'s default
    hybrid mode ``0.35 * cosine + 0.65 * lexical share`` (in [0, 1]).

    Counts, skill profiles and the short-term window are read from the store on first use and
    then kept up to date by this instance's own ``record`` calls; :meth:`refresh` picks up
    episodes written by another process. Recording checks the id and then writes, which is not
    atomic across processes.
    """

    def __init__(
        self,
        store: BaseStore,
        namespace: tuple[str, ...],
        *,
        short_term_limit: int = 5,
        candidate_factor: int = 2,
        embeddings: Embeddings | Callable[..., Any] | None = None,
        weights: ReplayWeights | None = None,
        half_life: float = DEFAULT_HALF_LIFE,
        recency_floor: float = 0.0,
        clock: Callable[[], float] = time.time,
        change_detection: ChangeDetection | None = DEFAULT_CHANGE_DETECTION,
    ) -> None:
        if not isinstance(store, BaseStore):
            raise InvalidTypeError(
                f"store must be a LangGraph BaseStore, got {type(store).__name__}. "
                "Pass e.g. ChromaStore.ephemeral() or InMemoryStore()."
            )
        self._namespace = _check_namespace(namespace)
        require(short_term_limit >= 0, f"short_term_limit must be >= 0; got {short_term_limit}.")
        require(candidate_factor >= 1, f"candidate_factor must be >= 1; got {candidate_factor}.")
        require(half_life > 0, f"half_life must be a positive number of seconds; got {half_life}.")
        require(0 <= recency_floor <= 1, f"recency_floor must be in [0, 1]; got {recency_floor}.")
        self._store = store
        self.short_term_limit = short_term_limit
        self.candidate_factor = candidate_factor
        self.weights = weights
        self.half_life = half_life
        self.recency_floor = recency_floor
        self.change_detection = change_detection
        self._clock = clock
        self._embeddings = as_embeddings(embeddings) if embeddings is not None else None
        self._vectors: dict[str, list[float]] = {}
        self._state: _State | None = None
        self._lock = threading.Lock()
        # a store without ``index_config`` is trusted to search by meaning
        self._semantic = bool(getattr(store, "index_config", True))
        if not self._semantic and self._embeddings is None:
            logger.warning(
                "The store for namespace %s has no semantic index and no embeddings were given: "
                "recall will rank by recency, reward and outcome only. Pass index={...} to the "
                "store or embeddings=... to EpisodicMemory.",
                self._namespace,
            )

    @classmethod
    def for_user(
        cls, store: BaseStore, user_id: str, *, prefix: str = EPISODES, **options: Any
    ) -> EpisodicMemory:
        """Return the memory of one user, in namespace ``(prefix, user_id)`` (the id made a
        safe label by :func:`~langgraph_episodic._config.namespace_label`)."""
        return cls(store, (prefix, namespace_label(user_id)), **options)

    @classmethod
    def from_config(
        cls,
        store: BaseStore,
        config: RunnableConfig | Mapping[str, Any],
        *,
        template: tuple[str, ...] = EPISODE_NAMESPACE,
        **options: Any,
    ) -> EpisodicMemory:
        """Return the memory whose namespace ``template`` is filled from ``config["configurable"]``
        (``MissingConfigError`` when a placeholder is missing)."""
        return cls(store, fill_namespace(template, config), **options)

    @property
    def namespace(self) -> tuple[str, ...]:
        return self._namespace

    @property
    def store(self) -> BaseStore:
        return self._store

    # Each operation is one plan; ``twins`` makes its sync method and its async twin.

    def _load_once(self) -> Plan[None]:
        """Read the namespace once (count, skills, short-term window); later calls do nothing."""
        yield from self._load()

    load, aload = twins(_load_once, "load")

    def _reload(self) -> Plan[None]:
        """Re-read the namespace, e.g. to see episodes recorded by another process."""
        yield from self._load(force=True)

    refresh, arefresh = twins(_reload, "refresh")

    def _record(self, episode: Episode, *, context: Mapping[str, str] | None = None) -> Plan[bool]:
        """Store an episode; return True if written, False if the identical one was there
        (``EpisodeConflictError`` if the id holds different content).

        ``context`` (``{"day": ..., "thread": ...}``, :mod:`langgraph_episodic.memory_context`)
        is stored as ``value["context"]``, its day indexed after the task text.
        """
        if not isinstance(episode, Episode):
            raise InvalidTypeError(f"record() takes an Episode, got {type(episode).__name__}.")
        state = yield from self._load()
        existing = yield self._get(episode.episode_id)
        if existing is not None:
            if self._decode(existing) == episode:
                return False
            raise EpisodeConflictError(
                f"Episode {episode.episode_id!r} is already recorded in {self._namespace} with "
                "different content, and episodes are immutable. Record the new attempt under a "
                "new id (Episode.new(...) makes one)."
            )
        value = with_context(episode.to_dict(), context)
        store = self._store
        yield call(store.put, store.aput, self._namespace, episode.episode_id, value,
                   index=index_paths(TEXT_FIELD, value))
        with self._lock:
            self._add_to_state(self._state or state, episode, self._clock())
        return True

    record, arecord = twins(_record, "record")

    def _recall(
        self,
        query: str | TaskDescription,
        top_k: int = 3,
        *,
        current_time: float | None = None,
        weights: ReplayWeights | None = None,
        half_life: float | None = None,
        category: TaskCategory | str | None = None,
        outcome: OutcomeStatus | str | None = None,
        min_score: float | Literal["auto"] | None = AUTO,
    ) -> Plan[list[PrioritizedResult]]:
        """Return up to ``top_k`` past episodes for ``query``, highest priority first.

        ``top_k * candidate_factor`` candidates are found by similarity of their task text
        (optionally of one ``category`` and ``outcome``), then ranked by
        :func:`~.priority.compute_priority` at ``current_time`` (default: now); ``weights`` and
        ``half_life`` override the memory's. ``min_score`` drops candidates less similar than
        that before ranking (``None``: keep all), so a task unlike every past one recalls
        nothing. ``"auto"`` takes the floor for the store's kind of score: :data:`HYBRID_FLOOR`
        for ``ChromaStore``'s hybrid ranking, :data:`COSINE_FLOOR` for a raw cosine. A memory
        that cannot score similarity (no index and no ``embeddings``) applies no floor.
        """
        text = query.description if isinstance(query, TaskDescription) else query
        if not isinstance(text, str) or not text.strip():
            raise InvalidValueError("recall() needs a non-empty query text or TaskDescription.")
        require(top_k >= 1, f"top_k must be >= 1; got {top_k}.")
        floor = self._floor(min_score)
        filter_ = _episode_filter(category, outcome)
        limit = top_k * self.candidate_factor
        state = yield from self._load()
        if self._semantic:
            items = yield self._search(text, filter_, limit)
            candidates = [PrioritizedResult(episode, float(getattr(item, "score", None) or 0.0))
                          for item, episode in self._readable(items)]
        else:
            candidates = yield from self._local_candidates(text, filter_, limit)
        if floor is not None:
            candidates = [c for c in candidates if c.similarity >= floor]
        with self._lock:
            count = len(state.ids)
        now = self._clock() if current_time is None else current_time
        ranked = rank(candidates, now, weights or self.weights or weights_for_size(count),
                      self.half_life if half_life is None else half_life,
                      recency_floor=self.recency_floor)
        return ranked[:top_k]

    recall, arecall = twins(_recall, "recall")

    def _get_episode(self, episode_id: str) -> Plan[Episode | None]:
        """Return the episode recorded under ``episode_id``, or None."""
        item = yield self._get(episode_id)
        return None if item is None else self._decode(item)

    get, aget = twins(_get_episode, "get")

    def _episodes(
        self,
        *,
        category: TaskCategory | str | None = None,
        outcome: OutcomeStatus | str | None = None,
    ) -> Plan[list[Episode]]:
        """Return every episode (optionally of one category/outcome), oldest first (reads the
        whole namespace)."""
        found = yield from self._scan(_episode_filter(category, outcome))
        return [episode for episode, _ in found]

    episodes, aepisodes = twins(_episodes, "episodes")

    def _short_term(self) -> Plan[list[Episode]]:
        """Return the short-term window: the newest ``short_term_limit`` episodes, oldest first
        (by episode timestamp, then by when the store saw the item, then by id)."""
        return (yield from self._read_state(lambda s: [ep for _, ep in s.window]))

    short_term, ashort_term = twins(_short_term, "short_term")

    def _count(self) -> Plan[int]:
        """Return the number of episodes (as of the last load plus this instance's records)."""
        return (yield from self._read_state(lambda s: len(s.ids)))

    count, acount = twins(_count, "count")

    def _skill_profiles(self) -> Plan[dict[TaskCategory, SkillProfile]]:
        """Return a :class:`~.skills.SkillProfile` per category, with per-strategy stats."""
        return (yield from self._read_state(lambda s: s.tally.profiles()))

    skill_profiles, askill_profiles = twins(_skill_profiles, "skill_profiles")

    def now(self) -> float:
        """The current time by the memory's clock (what recall uses without ``current_time``)."""
        return self._clock()

    # --- effects and plans (the shared core) ---

    def _get(self, key: str) -> Effect:
        return call(self._store.get, self._store.aget, self._namespace, key)

    def _search(
        self, query: str | None, filter_: dict[str, Any] | None, limit: int, offset: int = 0
    ) -> Effect:
        store = self._store
        return call(store.search, store.asearch, self._namespace, query=query, filter=filter_,
                    limit=limit, offset=offset)

    def _load(self, *, force: bool = False) -> Plan[_State]:
        """The state, read from the store on first use (and again when ``force``)."""
        if self._state is not None and not force:
            return self._state
        found = yield from self._scan(None)
        state = _State(ids=set(), window=[], tally=SkillTally(self.change_detection))
        for episode, seen_at in found:
            self._add_to_state(state, episode, seen_at)
        with self._lock:
            if force or self._state is None:
                self._state = state
            return self._state

    def _read_state(self, read: Callable[[_State], T]) -> Plan[T]:
        state = yield from self._load()
        with self._lock:
            return read(state)

    def _scan(self, filter_: dict[str, Any] | None) -> Plan[list[tuple[Episode, float]]]:
        """Every episode of the namespace (matching ``filter_``), oldest first."""
        found: dict[str, tuple[Episode, float]] = {}
        offset = 0
        while True:
            items = yield self._search(None, filter_, SCAN_PAGE, offset)
            for item, episode in self._readable(items):
                found.setdefault(item.key, (episode, _seen_at(item)))
            if len(items) < SCAN_PAGE:
                break
            offset += SCAN_PAGE
        return sorted(found.values(), key=lambda pair: _order_key(*pair))

    def _local_candidates(
        self, text: str, filter_: dict[str, Any] | None, limit: int
    ) -> Plan[list[PrioritizedResult]]:
        """Candidates when the store cannot search by meaning: scan and compare here."""
        episodes = [ep for ep, _ in (yield from self._scan(filter_))]
        emb = self._embeddings
        if emb is None:
            return [PrioritizedResult(ep, 0.0) for ep in episodes]
        missing = [ep for ep in episodes if ep.episode_id not in self._vectors]
        if missing:
            vectors = yield call(emb.embed_documents, emb.aembed_documents,
                                 [ep.task.description for ep in missing])
            for ep, vector in zip(missing, vectors, strict=True):
                self._vectors[ep.episode_id] = list(vector)
        query = yield call(emb.embed_query, emb.aembed_query, text)
        scored = [PrioritizedResult(ep, cosine_similarity(query, self._vectors[ep.episode_id]))
                  for ep in episodes]
        return sorted(scored, key=lambda r: -r.similarity)[:limit]

    def _floor(self, min_score: float | str | None) -> float | None:
        """The relevance floor recall applies for ``min_score`` (None: none)."""
        require(not isinstance(min_score, str) or min_score == AUTO,
                f"min_score must be a number, None (no floor) or 'auto' (the floor for the "
                f"store's kind of score); got {min_score!r}.")
        if min_score is None or not (self._semantic or self._embeddings is not None):
            return None  # no floor asked, or no similarity to put one on
        if min_score == AUTO:
            # ChromaStore's hybrid (or lexical) score is on the same scale for every query
            hybrid = getattr(self._store, "search_mode", None) in ("hybrid", "lexical")
            return HYBRID_FLOOR if self._semantic and hybrid else COSINE_FLOOR
        return float(min_score)

    def _readable(self, items: Sequence[Item]) -> list[tuple[Item, Episode]]:
        """Each item of this very namespace (searches match prefixes) with its readable episode."""
        return [(item, episode) for item in items if tuple(item.namespace) == self._namespace
                and (episode := self._decode(item)) is not None]

    def _decode(self, item: Item) -> Episode | None:
        try:
            return Episode.from_dict(item.value)
        except (EpisodeSchemaError, ValueError, TypeError) as exc:
            logger.warning("Skipping item %r in %s: not a readable episode (%s).", item.key,
                           self._namespace, exc)
            return None

    def _add_to_state(self, state: _State, episode: Episode, seen_at: float) -> None:
        if episode.episode_id in state.ids:
            return
        state.ids.add(episode.episode_id)
        state.tally.add(episode)
        if self.short_term_limit:
            entry = (_order_key(episode, seen_at), episode)
            bisect.insort(state.window, entry, key=lambda e: e[0])
            del state.window[: max(0, len(state.window) - self.short_term_limit)]


def _order_key(episode: Episode, seen_at: float) -> tuple[float, float, str]:
    return (episode.timestamp, seen_at, episode.episode_id)


def _seen_at(item: Item) -> float:
    created = getattr(item, "created_at", None)
    return created.timestamp() if created is not None else 0.0


def _episode_filter(
    category: TaskCategory | str | None, outcome: OutcomeStatus | str | None
) -> dict[str, Any] | None:
    """The store filter for a category and/or an outcome (None when neither)."""
    given = (("category", TaskCategory, category), ("outcome", OutcomeStatus, outcome))
    out = {name: str(as_enum(cls, value, name).value) for name, cls, value in given
           if value is not None}
    return out or None


def _check_namespace(namespace: Sequence[str]) -> tuple[str, ...]:
    if isinstance(namespace, str) or not isinstance(namespace, (tuple, list)) or not namespace:
        raise InvalidTypeError(
            f"namespace must be a non-empty tuple of strings such as ('episodes', 'alice'); "
            f"got {namespace!r}. EpisodicMemory.for_user(store, user_id) builds one."
        )
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise InvalidValueError(
                f"Invalid namespace label {label!r} in {tuple(namespace)!r}: labels must be "
                "non-empty strings without '.' or NUL. Replace or hash such ids first."
            )
    require(namespace[0] != RESERVED_LABEL,
            "A namespace may not start with 'langgraph' (reserved by LangGraph).")
    return tuple(namespace)
