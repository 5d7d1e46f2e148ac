"""BM25 keyword search over documents grouped by namespace, kept in memory.

Local Chroma refuses sparse vector indexes, so the lexical half of hybrid search lives here:
an inverted index per namespace (term -> {doc_id: term frequency}) that a query reads only
for its own terms. No Chroma dependency; the owner (the store) feeds it every put and delete
and rebuilds it from stored documents after a restart. A search scores a snapshot of the
shards with numpy, over arrays each frozen shard builds once (:class:`_Arrays`); a write and
the search after it cost what was written, not the namespace (:class:`_Shard`).

Scoring is Okapi BM25 with Lucene's non-negative idf,
``idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))``, and
``score(d, q) = sum over query terms t of idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))``.
``N``, ``df`` and ``avgdl`` are computed over the namespaces being searched, so each user's
memories form their own collection statistics. Scores are higher-is-better and unbounded
(``>= 0``; ``0`` means no query term occurs in the document, and such documents are never
returned).
"""

from __future__ import annotations

import math
import threading
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import compress, repeat
from typing import Any, Generic, NamedTuple, TypeVar, overload

import numpy as np

from ..._types import Namespace
from ...errors import InvalidValueError, OperationError
from ...language.analysis import (
    LANGUAGES,
    Language,
    LanguageAnalyzer,
    analyzer,
)

Tokenizer = Callable[[str], list[str]]


DELTA_LIMIT = 2048
"""Documents written since a shard's base (added, replaced or removed) up to which a search
scores the base and the writes side by side (:meth:`_Arrays.layered`); past it, the search
merges them into one base (:func:`_merge`, in time proportional to the namespace)."""

_NO_POSTINGS = np.zeros(1, dtype=np.intp), np.zeros(0, dtype=np.int32), np.zeros(0, np.uint32)
"""A packed shard's ``starts``, ``where`` and ``tf`` when it holds no document."""


class Shard:
    """One namespace's part of a :class:`ShardedIndex`: changed in place until a reader holds
    it (``frozen``), never after: a write changes a :meth:`thaw` copy, which shares the frozen
    shard's inner dicts and copies each one the first time it changes it (:meth:`_entry`)."""

    __slots__ = ("_owned", "frozen")

    def __init__(self) -> None:
        self.frozen = False
        self._owned: set[Hashable] | None = None
        """In a copy: the keys of the inner dicts it made or copied (the others are shared)."""

    def thaw(self: _S) -> _S:
        raise NotImplementedError

    def discard(self, doc_id: str) -> None:
        raise NotImplementedError

    def _check_writable(self) -> None:
        if self.frozen:  # a bug, not bad input: readers rely on frozen shards never changing
            raise OperationError("A frozen shard cannot change; thaw() it first.")

    def _entry(self, table: dict[Any, dict[str, Any]], key: Hashable) -> dict[str, Any]:
        """``table[key]`` to change: made if missing, copied first if shared."""
        entry = table.get(key)
        owned = self._owned
        if entry is None or (owned is not None and key not in owned):
            entry = table[key] = {} if entry is None else dict(entry)
            if owned is not None:
                owned.add(key)
        return entry

    def _unlist(self, table: dict[Any, Any], keys: Iterable[Hashable], doc_id: str) -> None:
        """Take ``doc_id`` out of the entries of ``keys`` (an emptied entry goes)."""
        for key in keys:
            entry = self._entry(table, key)
            del entry[doc_id]
            if not entry:
                del table[key]


_S = TypeVar("_S", bound=Shard)


class ShardedIndex(Generic[_S]):
    """Namespace -> shard, every change under ``lock`` (pass the lock of the state that owns
    the index); a reader takes frozen shards (:meth:`_frozen`) and reads them outside it."""

    def __init__(self, new_shard: Callable[[], _S], lock: threading.RLock | None) -> None:
        self._new_shard = new_shard
        self._shards: dict[Namespace, _S] = {}
        self._lock = lock if lock is not None else threading.RLock()

    def _writable(self, namespace: Namespace) -> _S:
        """The namespace's shard for a change (a copy if a reader holds it); call under lock."""
        shard = self._shards.get(namespace)
        if shard is None:
            shard = self._shards[namespace] = self._new_shard()
        elif shard.frozen:
            shard = self._shards[namespace] = shard.thaw()
        return shard

    def _frozen(
        self, namespaces: Iterable[Namespace], read: Mapping[Namespace, _S] | None = None
    ) -> dict[Namespace, _S]:
        """The namespaces' shards, frozen to be read outside the lock (``read``: shards a
        search built but could not keep, used where this index holds none)."""
        found: dict[Namespace, _S] = {}
        with self._lock:
            for ns in dict.fromkeys(tuple(n) for n in namespaces):
                shard = self._shards.get(ns)
                if shard is None and read is not None:
                    shard = read.get(ns)
                if shard is not None:
                    shard.frozen = True
                    found[ns] = shard
        return found

    def put_shard(self, namespace: Namespace, shard: _S) -> None:
        """Make ``shard`` (from ``build_shard``) the namespace's contents."""
        with self._lock:
            self._shards[tuple(namespace)] = shard

    def remove(self, namespace: Namespace, doc_id: str) -> None:
        """Forget one document; unknown ids are ignored."""
        with self._lock:
            if tuple(namespace) in self._shards:
                self._writable(tuple(namespace)).discard(doc_id)

    def drop_namespace(self, namespace: Namespace) -> None:
        """Forget a namespace and all its documents (exactly this namespace, not its children)."""
        with self._lock:
            self._shards.pop(tuple(namespace), None)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._shards.clear()

    def has_namespace(self, namespace: Namespace) -> bool:
        """Whether the namespace is loaded (it may hold no documents after removes)."""
        with self._lock:
            return tuple(namespace) in self._shards


class _Shard(Shard):
    """One namespace's documents: a frozen ``base`` (:class:`_Arrays`, empty in a new shard;
    ``dead``: the positions in it of documents removed or replaced since) and, in dicts
    (``postings``, ``terms``, ``lengths``), the documents written since. :meth:`thaw` keeps the
    base and copies the dicts; a search scores both side by side up to :data:`DELTA_LIMIT`
    writes, then merges them. A shard built from stored documents is packed (a base alone)."""

    __slots__ = (
        "_arrays", "_items", "base", "dead", "lengths", "postings", "terms", "total_length",
    )  # fmt: skip

    def __init__(self, base: _Arrays | None = None, total_length: int = 0) -> None:
        super().__init__()
        self.base = _Arrays.packed([], np.zeros(0), {}, *_NO_POSTINGS) if base is None else base
        self.dead: set[int] = set()
        self.postings: dict[str, dict[str, int]] = {}
        self.terms: dict[str, tuple[str, ...]] = {}
        self.lengths: dict[str, int] = {}
        self.total_length = total_length
        """The length of every live document."""
        self._arrays: _Arrays | None = None
        """A frozen shard's numpy form, built by its first search."""
        self._items: AbstractSet[str] | None = None
        """A frozen shard's item ids, built by its first :meth:`items`."""

    @classmethod
    def of_arrays(cls, arrays: _Arrays) -> _Shard:
        """A packed shard holding ``arrays``."""
        shard = cls(arrays, int(arrays.lengths.sum()))
        shard._arrays = arrays
        shard.frozen = True
        return shard

    @property
    def packed(self) -> bool:
        """Held as its base alone: nothing written since."""
        return not self.lengths and not self.dead

    def n_docs(self) -> int:
        return len(self.lengths) + len(self.base.ids) - len(self.dead)

    def arrays(self) -> _Arrays:
        """The shard as numpy arrays: built once for a frozen shard (by any reader: all build
        the same), afresh for a changeable one (then call under the lock)."""
        if not self.frozen:
            return self.build()
        arrays = self._arrays
        if arrays is None:
            arrays = self._arrays = self.build()
        return arrays

    def build(self, merge: bool = False) -> _Arrays:
        """The shard as new arrays (``merge``: whole ones, however many writes since the base)."""
        if self.packed:
            return self.base
        if merge or len(self.lengths) + len(self.dead) > DELTA_LIMIT:
            return _merge(self.base, self.dead, self)
        return _Arrays.layered(self.base, self.dead, self)

    def items(self) -> AbstractSet[str]:
        """The item ids of the shard's documents (document ids are ``<item>.<tag>`` or an
        item's own), kept as :meth:`arrays` is."""
        found = self._items
        if found is None:
            base = self.base
            if self.packed:
                found = base.item_counts().keys()
            else:
                gone = Counter(_item_of(base.ids[at]) for at in self.dead)
                added = frozenset(_item_of(doc_id) for doc_id in self.lengths)
                found = _HeldItems(base.item_counts(), gone, added)
            if self.frozen:
                self._items = found
        return found

    def thaw(self) -> _Shard:
        """A changeable copy: over the arrays a search built when they are whole, else over the
        same base with copies of the dicts."""
        arrays = self._arrays
        if arrays is not None and arrays.whole:
            return _Shard(arrays, self.total_length)
        copy = _Shard(self.base, self.total_length)
        copy.dead = set(self.dead)
        copy.postings = dict(self.postings)
        copy.terms = dict(self.terms)
        copy.lengths = dict(self.lengths)
        copy._owned = set()
        return copy

    def add(self, doc_id: str, tokens: list[str]) -> None:
        self.discard(doc_id)  # (raises on a frozen shard)
        counts = Counter(tokens)
        for term, tf in counts.items():
            self._entry(self.postings, term)[doc_id] = tf
        self.terms[doc_id] = tuple(counts)
        self.lengths[doc_id] = len(tokens)
        self.total_length += len(tokens)

    def discard(self, doc_id: str) -> None:
        self._check_writable()
        terms = self.terms.pop(doc_id, None)
        if terms is not None:  # (its copy in the base, if any, is dead already)
            self._unlist(self.postings, terms, doc_id)
            self.total_length -= self.lengths.pop(doc_id)
            return
        at = self.base.position.get(doc_id)
        if at is not None and at not in self.dead:
            self.dead.add(at)
            self.total_length -= int(self.base.lengths[at])


def _item_of(doc_id: str) -> str:
    """The item a document id ``<item>.<tag>`` names."""
    return doc_id.partition(".")[0]


class _HeldItems(AbstractSet[str]):
    """The item ids of a base and writes since, read from the base's counts (not copied)."""

    __slots__ = ("_added", "_base", "_gone", "_len")

    def __init__(self, base: Mapping[str, int], gone: Mapping[str, int], added: frozenset[str]):
        self._base, self._gone, self._added = base, gone, added
        lost = sum(1 for item, n in gone.items() if n >= base[item])
        self._len = len(base) - lost + sum(1 for item in added if not self._in_base(item))

    def _in_base(self, item: object) -> bool:
        return isinstance(item, str) and self._base.get(item, 0) > self._gone.get(item, 0)

    def __contains__(self, item: object) -> bool:
        return item in self._added or self._in_base(item)

    def __iter__(self) -> Iterator[str]:
        gone = self._gone
        yield from (item for item, n in self._base.items() if n > gone.get(item, 0))
        yield from (item for item in self._added if not self._in_base(item))

    def __len__(self) -> int:
        return self._len


class _Positions(Mapping[str, int]):
    """Document id -> position in a layered :class:`_Arrays` (a written one's, else the base's)."""

    __slots__ = ("_base", "_dead", "_delta")

    def __init__(
        self, base: Mapping[str, int], dead: AbstractSet[int], delta: Mapping[str, int]
    ) -> None:
        self._base, self._dead, self._delta = base, dead, delta

    def __getitem__(self, key: str) -> int:
        at = self._delta.get(key)
        if at is None:
            at = self._base.get(key)
            if at is None or at in self._dead:
                raise KeyError(key)
        return at

    def __iter__(self) -> Iterator[str]:
        dead = self._dead
        yield from (key for key, at in self._base.items() if at not in dead)
        yield from self._delta

    def __len__(self) -> int:
        return len(self._base) - len(self._dead) + len(self._delta)


def _pack(ids: Sequence[str], tokens: Iterable[list[str]]) -> _Shard:
    """A packed shard of the documents ``ids[n]`` with the ``n``-th of ``tokens`` (``ids`` may
    grow while ``tokens`` is read); a later duplicate id wins. Each ``(term, document)`` pair
    costs two 32-bit numbers, against a dict entry (and a dict per term) in the dict form."""
    slots: dict[str, int] = {}
    pair_slot, pair_at, pair_tf = array("i"), array("i"), array("I")
    order: list[str] = []
    lengths = array("q")
    seen: dict[str, int] = {}
    dead: list[int] = []
    for n, doc_tokens in enumerate(tokens):
        doc_id = ids[n]
        at = len(order)
        earlier = seen.get(doc_id)
        if earlier is not None:
            dead.append(earlier)
        seen[doc_id] = at
        order.append(doc_id)
        lengths.append(len(doc_tokens))
        for term, count in Counter(doc_tokens).items():
            pair_slot.append(slots.setdefault(term, len(slots)))
            pair_at.append(at)
            pair_tf.append(count)
    slot = np.frombuffer(pair_slot, dtype=np.intc).astype(np.intp)
    where = np.frombuffer(pair_at, dtype=np.intc).astype(np.int32)
    tf = np.frombuffer(pair_tf, dtype=np.uintc).astype(np.uint32)
    length = np.frombuffer(lengths, dtype=np.int64).astype(np.float64)
    if dead:  # drop the earlier copies of repeated ids
        order, length, slot, where, tf = _live(dead, order, length, slot, where, tf)
    position = None if dead else seen  # (with no repeated id, its map is the positions)
    return _Shard.of_arrays(_sorted(order, length, slots, slot, where, tf, position))


def _sorted(
    ids: list[str],
    lengths: np.ndarray,
    slots: dict[str, int],
    slot: np.ndarray,
    where: np.ndarray,
    tf: np.ndarray,
    position: dict[str, int] | None = None,
) -> _Arrays:
    """Packed arrays of the ``(term slot, position, tf)`` pairs, put in slot order (a slot's
    pairs keep theirs)."""
    sort = np.argsort(slot, kind="stable")
    starts = np.zeros(len(slots) + 1, dtype=np.intp)
    np.cumsum(np.bincount(slot, minlength=len(slots)), out=starts[1:])
    return _Arrays.packed(ids, lengths, slots, starts, where[sort], tf[sort], position)


def _alive(n: int, dead: Collection[int]) -> np.ndarray:
    """The mask of the positions ``0..n-1`` not in ``dead``."""
    alive = np.ones(n, dtype=bool)
    alive[np.fromiter(dead, dtype=np.intp, count=len(dead))] = False
    return alive


def _live(
    dead: Collection[int],
    ids: list[str],
    lengths: np.ndarray,
    slot: np.ndarray,
    where: np.ndarray,
    tf: np.ndarray,
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The documents not at ``dead``, numbered ``0..n-1`` again, and their ``(term slot,
    position, tf)`` pairs."""
    alive = _alive(len(ids), dead)
    keep = alive[where]
    where = (np.cumsum(alive) - 1).astype(np.int32)[where[keep]]
    return list(compress(ids, alive.tolist())), lengths[alive], slot[keep], where, tf[keep]


class PackedParts(NamedTuple):
    """A packed shard as plain arrays, to keep on disk: document ``n`` is ``ids[n]`` of length
    ``lengths[n]``; the posting of ``terms[k]`` is ``where[starts[k]:starts[k + 1]]``
    (document positions) with ``tf`` (term frequencies) alongside."""

    ids: list[str]
    lengths: np.ndarray
    terms: list[str]
    starts: np.ndarray
    where: np.ndarray
    tf: np.ndarray


def packed_parts(shard: _Shard) -> PackedParts:
    """A frozen shard's documents as a packed shard's arrays (merged with the writes since, if
    any). Terms no document holds any more (a merged base keeps their slots) are left out."""
    arrays = shard.build(merge=True)
    slots, starts, where, tf = arrays.flat()
    terms = list(slots)  # (slots are numbered in insertion order)
    counts = np.diff(starts)
    if len(counts) and not counts.all():
        held = counts > 0
        terms = list(compress(terms, held.tolist()))
        starts = np.zeros(len(terms) + 1, dtype=np.intp)
        np.cumsum(counts[held], out=starts[1:])
    return PackedParts(list(arrays.ids), arrays.lengths, terms, starts, where, tf)


def restore_packed(parts: PackedParts) -> _Shard:
    """The packed shard of ``parts`` read back from disk (scored as the shard they came from).
    Raises ``ValueError`` when the parts do not form one (a damaged file)."""
    ids, lengths, terms, starts, where, tf = parts
    n = len(ids)
    problem = None
    if lengths.dtype != np.float64 or lengths.shape != (n,):
        problem = "document lengths"
    elif starts.dtype != np.intp or starts.shape != (len(terms) + 1,):
        problem = "posting starts"
    elif where.dtype != np.int32 or tf.dtype != np.uint32 or where.shape != tf.shape:
        problem = "postings"
    elif where.ndim != 1 or starts[0] != 0 or starts[-1] != len(where):
        problem = "posting bounds"
    elif len(starts) > 1 and bool((np.diff(starts) < 0).any()):
        problem = "posting order"
    elif len(where) and (int(where.min()) < 0 or int(where.max()) >= n):
        problem = "document positions"
    elif not bool(np.isfinite(lengths).all()) or (n and float(lengths.min()) < 0):
        problem = "document lengths"
    position = dict(zip(ids, range(n), strict=True))
    slots = dict(zip(terms, range(len(terms)), strict=True))
    if problem is None and (len(position) != n or len(slots) != len(terms)):
        problem = "repeated ids or terms"
    if problem is not None:
        raise InvalidValueError(f"Not a packed lexical shard: its {problem} do not fit.")
    return _Shard.of_arrays(_Arrays.packed(ids, lengths, slots, starts, where, tf, position))


def _appended(written: _Shard, n: int) -> tuple[list[str], dict[str, int], np.ndarray]:
    """The ids, positions (from ``n`` on) and lengths of the documents in ``written``'s dicts."""
    added = list(written.lengths)
    at = dict(zip(added, range(n, n + len(added)), strict=True))
    return added, at, np.fromiter(written.lengths.values(), dtype=np.float64, count=len(added))


def _merge(base: _Arrays, dead: AbstractSet[int], written: _Shard) -> _Arrays:
    """Packed arrays of the documents of ``base`` not in ``dead``, then those ``written`` holds
    in its dicts (their pairs after their terms' in the base)."""
    slots, starts, where, tf = base.flat()
    names = dict(slots)
    slot = np.repeat(np.arange(len(slots), dtype=np.intp), np.diff(starts))
    ids, lengths = list(base.ids), base.lengths
    if dead:
        ids, lengths, slot, where, tf = _live(dead, ids, lengths, slot, where, tf)
    added, at, written_lengths = _appended(written, len(ids))
    new_slot, new_at, new_tf = array("q"), array("i"), array("I")
    for term, posting in written.postings.items():
        k = names.setdefault(term, len(names))
        for doc_id, count in posting.items():
            new_slot.append(k)
            new_at.append(at[doc_id])
            new_tf.append(count)
    return _sorted(
        ids + added,
        np.concatenate([lengths, written_lengths]),
        names,
        np.concatenate([slot, np.frombuffer(new_slot, dtype=np.int64).astype(np.intp)]),
        np.concatenate([where, np.frombuffer(new_at, dtype=np.intc).astype(np.int32)]),
        np.concatenate([tf, np.frombuffer(new_tf, dtype=np.uintc).astype(np.uint32)]),
    )


class _Arrays:
    """A shard's documents as positions ``0..n-1`` (``ids``, ``position``), their lengths,
    and each term's posting as ``(positions, term frequencies)`` arrays: for a packed shard
    slices of two flat arrays (:meth:`packed`).

    A layered one (:meth:`layered`) is a base's positions (a dead one is in no posting and has
    no ``position``), then those of the documents written since; so is each posting, made by
    the first search that needs the term."""

    __slots__ = (
        "_aligned", "_alive", "_base", "_denominators", "_item_counts", "_postings", "_slots",
        "_starts", "_terms", "_tf", "_where", "_written", "ids", "lengths", "position",
    )  # fmt: skip

    def __init__(
        self, ids: Sequence[str], position: Mapping[str, int], lengths: np.ndarray
    ) -> None:
        self.ids, self.position, self.lengths = ids, position, lengths
        self._terms: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._denominators: dict[tuple[str, float, float, float], np.ndarray] = {}
        self._aligned: tuple[Sequence[str], np.ndarray, np.ndarray] | None = None
        self._item_counts: dict[str, int] | None = None
        self._slots: dict[str, int] = {}
        """A packed one's term -> ``k``, its posting ``_starts[k]:_starts[k + 1]`` of
        ``_where`` (positions) and ``_tf`` (term frequencies)."""
        self._starts, self._where, self._tf = _NO_POSTINGS
        self._base: _Arrays | None = None
        """A layered one's base."""
        self._alive: np.ndarray | None = None
        """A layered one's mask of live base positions, None when all are."""
        self._written: dict[str, int] = {}
        """A layered one's documents written since the base -> their positions."""
        self._postings: Mapping[str, dict[str, int]] = {}
        """A layered one's postings of the documents written since."""

    @classmethod
    def packed(
        cls,
        ids: list[str],
        lengths: np.ndarray,
        slots: dict[str, int],
        starts: np.ndarray,
        where: np.ndarray,
        tf: np.ndarray,
        position: dict[str, int] | None = None,
    ) -> _Arrays:
        """A packed shard's arrays (``position``: each id's index, when the caller has it)."""
        if position is None:
            position = dict(zip(ids, range(len(ids)), strict=True))
        arrays = cls(ids, position, lengths)
        arrays._slots, arrays._starts, arrays._where, arrays._tf = slots, starts, where, tf
        return arrays

    @classmethod
    def layered(cls, base: _Arrays, dead: AbstractSet[int], written: _Shard) -> _Arrays:
        """``base`` without the documents at ``dead``, with those ``written`` holds in its dicts,
        made in time for the writes, not the base (the base's postings are only masked)."""
        added, at, lengths = _appended(written, len(base.ids))
        arrays = cls(
            _Joined(base.ids, added),
            _Positions(base.position, dead, at),
            np.concatenate([base.lengths, lengths]),
        )
        arrays._base, arrays._written, arrays._postings = base, at, written.postings
        if dead:
            arrays._alive = _alive(len(base.ids), dead)
        return arrays

    @property
    def whole(self) -> bool:
        """Holds every document in one set of arrays (not :meth:`layered`)."""
        return self._base is None

    def item_counts(self) -> dict[str, int]:
        """How many documents each item has here, counted once."""
        counts = self._item_counts
        if counts is None:
            counts = self._item_counts = Counter(map(_item_of, self.ids))
        return counts

    def flat(self) -> tuple[dict[str, int], np.ndarray, np.ndarray, np.ndarray]:
        """A whole one's postings: ``(term -> slot, starts, positions, term frequencies)``."""
        return self._slots, self._starts, self._where, self._tf

    def aligned(self, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(position of each key, first index of each position's key)``, ``-1`` where there
        is none, for the immutable entry keys of a vector matrix's rows (kept for the latest
        ``keys``): a hybrid search matches its two sides' candidates by index, not by id."""
        aligned = self._aligned
        if aligned is None or aligned[0] is not keys:
            base = self._base
            if base is None:
                position = _positions(self.position, keys)
            else:  # the base's positions, then the written documents' where the base has none
                position = _positions(base.position, keys)
                if self._alive is not None:
                    hit = position >= 0
                    position[hit] = np.where(self._alive[position[hit]], position[hit], -1)
                missed = np.flatnonzero(position < 0)
                if len(missed) and self._written:
                    get = self._written.get
                    missed_keys = map(keys.__getitem__, missed.tolist())
                    position[missed] = np.fromiter(
                        map(get, missed_keys, repeat(-1)), dtype=np.intp, count=len(missed)
                    )
            index = np.full(len(self.ids), -1, dtype=np.intp)
            found = np.flatnonzero(position >= 0)
            held, first = np.unique(position[found], return_index=True)
            index[held] = found[first]  # a key's first index
            aligned = self._aligned = (keys, position, index)
        return aligned[1], aligned[2]

    def denominator(
        self, term: str, posting: tuple[np.ndarray, np.ndarray], k1: float, b: float, avgdl: float
    ) -> np.ndarray:
        """``tf + k1 * (1 - b + b * |d| / avgdl)`` of each document of the term's ``posting``,
        kept (a namespace searched alone always has the same ``(k1, b, avgdl)``)."""
        key = (term, k1, b, avgdl)
        found = self._denominators.get(key)
        if found is None:
            where, tf = posting
            found = tf + k1 * (1.0 - b + b * self.lengths[where] / avgdl)
            if len(self._denominators) >= len(self._terms) + 64:  # other statistics: start over
                self._denominators = {}
            self._denominators[key] = found
        return found

    def posting(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Positions and term frequencies of the documents holding ``term`` (None: none)."""
        found = self._terms.get(term)
        if found is None:
            if self._base is not None:
                found = self._layered_posting(term)
                if found is None:
                    return None
            else:
                k = self._slots.get(term)
                if k is None or self._starts[k] == self._starts[k + 1]:
                    return None
                at, end = self._starts[k], self._starts[k + 1]
                found = (self._where[at:end], self._tf[at:end])
            self._terms[term] = found  # same arrays whoever builds them first
        return found

    def _layered_posting(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A layered one's posting of ``term``: the base's live part, then the written one."""
        assert self._base is not None
        wheres, tfs = [], []
        held = self._base.posting(term)
        if held is not None:
            where, tf = held
            if self._alive is not None:
                keep = self._alive[where]
                if not keep.all():
                    where, tf = where[keep], tf[keep]
            if len(where):
                wheres.append(where)
                tfs.append(tf)
        posting = self._postings.get(term)
        if posting:
            n = len(posting)
            wheres.append(np.fromiter(map(self._written.__getitem__, posting), np.intp, count=n))
            tfs.append(np.fromiter(posting.values(), dtype=np.float64, count=n))
        if not wheres:
            return None
        if len(wheres) == 1:
            return wheres[0], tfs[0]
        return np.concatenate(wheres), np.concatenate(tfs)


class _Joined(Sequence[str]):
    """Two lists read as one, without copying them (a layered :class:`_Arrays`' ids)."""

    __slots__ = ("_cut", "_first", "_second")

    def __init__(self, first: Sequence[str], second: list[str]) -> None:
        self._first, self._second, self._cut = first, second, len(first)

    @overload
    def __getitem__(self, at: int) -> str: ...

    @overload
    def __getitem__(self, at: slice) -> Sequence[str]: ...

    def __getitem__(self, at: int | slice) -> str | Sequence[str]:
        if isinstance(at, slice):
            return [*self._first, *self._second][at]
        if at < self._cut:  # (never asked for a negative index)
            return self._first[at]
        return self._second[at - self._cut]

    def __len__(self) -> int:
        return self._cut + len(self._second)


def _positions(position: Mapping[str, int], keys: Sequence[str]) -> np.ndarray:
    """Each key's position, ``-1`` where it has none."""
    return np.fromiter(map(position.get, keys, repeat(-1)), dtype=np.intp, count=len(keys))


class TermScores:
    """BM25 scores of one weighted query over some namespaces' shards, computed once
    (:meth:`LexicalIndex.score_terms`) for every step of a hybrid search: its best documents,
    the score of any document, and the most any document could score."""

    __slots__ = ("_parts", "max_score")

    def __init__(
        self, parts: list[tuple[_Arrays, np.ndarray, np.ndarray]], max_score: float
    ) -> None:
        self._parts = parts
        """Per shard: its arrays, every document's score, and which documents hold a term."""
        self.max_score = max_score
        """:meth:`LexicalIndex.max_score` of the query."""

    def single(self) -> tuple[_Arrays, np.ndarray] | None:
        """The one shard's arrays and scores, when one shard was scored."""
        if len(self._parts) != 1:
            return None
        arrays, scores, _ = self._parts[0]
        return arrays, scores

    def top(self, k: int, allowed: Callable[[str], bool] | None = None) -> list[tuple[str, float]]:
        """The ``k`` best ``(doc_id, score)`` among documents sharing a term with the query,
        best first, ties by ``doc_id``; ``allowed`` filters ids before the top ``k``."""
        if k <= 0:
            return []
        keyed: list[tuple[float, str]] = []  # (-score, doc_id): sorted as plain tuples
        for arrays, scores, matched in self._parts:
            found = np.flatnonzero(matched)
            if allowed is None and len(found) > k:  # those at or above the k-th best score
                values = scores[found]
                found = found[values >= np.partition(values, len(values) - k)[len(values) - k]]
            ids = arrays.ids
            negatives = (-scores[found]).tolist()
            keyed.extend(zip(negatives, [ids[j] for j in found.tolist()], strict=True))
        if allowed is not None:
            keyed = [pair for pair in keyed if allowed(pair[1])]
        keyed.sort()
        return [(doc_id, -negative) for negative, doc_id in keyed[:k]]

    def at(self, doc_ids: Iterable[str]) -> tuple[list[str], np.ndarray]:
        """:meth:`of` as the ids found and their scores (float64), in the same order."""
        found: list[str] = []
        values: list[float] = []
        for doc_id in dict.fromkeys(doc_ids):
            for arrays, scores, _ in self._parts:
                j = arrays.position.get(doc_id)
                if j is not None:
                    found.append(doc_id)
                    values.append(scores[j])
                    break
        return found, np.array(values, dtype=np.float64)

    def of(self, doc_ids: Iterable[str]) -> dict[str, float]:
        """The score of each given document (``0.0``: no shared term), in the given order;
        ids not in the shards are left out."""
        found, values = self.at(doc_ids)
        return dict(zip(found, values.tolist(), strict=True))


class LexicalIndex(ShardedIndex[_Shard]):
    """BM25 over documents grouped by namespace (a tuple of str).

    Each document is ``(namespace, doc_id, text)``; upserting an existing ``doc_id`` replaces
    its terms. A search names the namespaces to read, and the BM25 statistics (document count,
    document frequencies, average length) are computed over exactly those, so one user's
    memories are scored against that user's collection. ``doc_id`` values must be unique
    across namespaces searched together (the store uses its record ids). Thread-safe: every
    change happens under ``lock`` (pass the lock of the state that owns the index), and
    :meth:`snapshot` hands a reader the shards it needs so that scoring runs outside the lock
    (a shard a reader holds is copied before it changes).

    Args:
        k1: Term-frequency saturation (Lucene's default, 1.2).
        b: Length normalisation, 0 (none) to 1 (full). 0.3, not Lucene's 0.75: conversation
            turns are short and alike in length, and the lower value measured better on LoCoMo
            (``docs/benchmarks.md``, "Retrieval quality").
        tokenizer: ``str -> list[str]``; defaults to :func:`.analysis.analyze` with the
            language detected per text (Snowball stemming, German compounds);
            :func:`tokenize` is the plain one (no stemming).

    >>> index = LexicalIndex()
    >>> index.upsert(("alice",), "m1", "The deploy failed with ECONNREFUSED on port 5432")
    >>> index.upsert(("alice",), "m2", "We had pasta for dinner")
    >>> [doc_id for doc_id, _ in index.search("ECONNREFUSED", [("alice",)], k=5)]
    ['m1']
    """

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.3,
        tokenizer: Tokenizer | None = None,
        lock: threading.RLock | None = None,
    ) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise InvalidValueError(f"Need k1 >= 0 and 0 <= b <= 1, got k1={k1!r}, b={b!r}.")
        self.k1 = k1
        self.b = b
        self.tokenizer: Tokenizer = tokenizer or analyzer("auto")
        self.language: str | None = None if tokenizer else "auto"
        super().__init__(_Shard, lock)

    def snapshot(
        self, namespaces: Iterable[Namespace], read: Mapping[Namespace, _Shard] | None = None
    ) -> LexicalIndex:
        """A private index over the current shards of ``namespaces``, to score outside the
        lock; later changes to this index do not reach it. ``read``: shards this search built
        from Chroma but could not keep (a write landed meanwhile), used where this index holds
        none."""
        view = LexicalIndex(k1=self.k1, b=self.b, tokenizer=self.tokenizer)
        view._shards = self._frozen(namespaces, read)
        return view

    def use_language(self, language: Language) -> None:
        """Analyze text as ``"en"``, ``"de"`` or ``"auto"`` (detected per text) from now on.

        Raises ``ValueError`` when documents were already indexed another way (their terms
        would not match the new analysis).
        """
        if language not in LANGUAGES:
            raise InvalidValueError(f"language must be one of {LANGUAGES}, got {language!r}.")
        with self._lock:
            if language == self.language:
                return
            if any(shard.n_docs() for shard in self._shards.values()):
                raise InvalidValueError(
                    f"This Chroma's lexical index already analyzes text as {self.language!r}; "
                    f"open every store on it with language={self.language!r}, or use another "
                    "path or collection for a store in another language."
                )
            self.tokenizer = analyzer(language)
            self.language = language

    def upsert(self, namespace: Namespace, doc_id: str, text: str) -> None:
        """Index one document, replacing any earlier text under the same ``doc_id``."""
        self.upsert_many([(namespace, doc_id, text)])

    def upsert_many(self, docs: Iterable[tuple[Namespace, str, str]]) -> None:
        """Index many ``(namespace, doc_id, text)`` documents; later duplicates win."""
        listed = list(docs)
        terms = self.analyze_many(text for _, _, text in listed)
        tokenized = [
            (tuple(ns), doc_id, tokens)
            for (ns, doc_id, _), tokens in zip(listed, terms, strict=True)
        ]
        with self._lock:
            for ns, doc_id, tokens in tokenized:
                self._writable(ns).add(doc_id, tokens)

    def load(self, namespace: Namespace, docs: Iterable[tuple[str, str]]) -> None:
        """Replace a namespace's contents with ``(doc_id, text)`` documents.

        Afterwards :meth:`has_namespace` is true even when ``docs`` is empty, so an owner that
        loads namespaces lazily (after a restart) loads each one once.
        """
        self.put_shard(namespace, self.build_shard(docs))

    def build_shard(self, docs: Iterable[tuple[str, str]]) -> _Shard:
        """A namespace's packed shard built from ``(doc_id, text)`` documents (no lock: to hand
        to :meth:`put_shard`); a later duplicate id wins."""
        ids: list[str] = []  # (the analyzer may read a few texts ahead of its answers)

        def texts() -> Iterator[str]:
            for doc_id, text in docs:
                ids.append(doc_id)
                yield text

        return _pack(ids, self.analyze_many(texts()))

    def analyze_many(self, texts: Iterable[str]) -> Iterable[list[str]]:
        """The tokenizer's terms of each text, in order (in one pass for an analyzer)."""
        if isinstance(self.tokenizer, LanguageAnalyzer):
            return self.tokenizer.many(texts)
        return map(self.tokenizer, texts)

    def frozen(self, namespace: Namespace) -> _Shard | None:
        """The namespace's shard, frozen to read outside the lock; None when it is not loaded."""
        return self._frozen([namespace]).get(tuple(namespace))

    def namespaces(self, prefix: Namespace = ()) -> list[Namespace]:
        """Loaded namespaces that start with ``prefix``, matched by whole segments."""
        prefix = tuple(prefix)
        with self._lock:
            return [ns for ns in self._shards if ns[: len(prefix)] == prefix]

    def doc_count(self, namespaces: Iterable[Namespace]) -> int:
        """Number of documents in the given namespaces."""
        with self._lock:
            keys = dict.fromkeys(tuple(ns) for ns in namespaces)
            return sum(self._shards[ns].n_docs() for ns in keys if ns in self._shards)

    def held_items(self, namespaces: Iterable[Namespace]) -> AbstractSet[str]:
        """The ids of the items with a document indexed in the given namespaces, under any tag
        (document ids are ``<item>.<tag>``), so an item rewritten since this index's snapshot
        still counts as held. The shards are frozen and each one's item ids built once (as
        :meth:`score_terms` freezes them): call it on a :meth:`snapshot`."""
        shards = list(self._frozen(namespaces).values())
        if len(shards) == 1:
            return shards[0].items()
        return set[str]().union(*(shard.items() for shard in shards))

    def search(
        self,
        query: str,
        namespaces: Iterable[Namespace],
        k: int,
        allowed: Callable[[str], bool] | None = None,
    ) -> list[tuple[str, float]]:
        """The ``k`` best ``(doc_id, bm25_score)`` pairs for ``query``, best first.

        Only documents sharing at least one term with the query are returned. ``allowed``
        filters doc ids before the top ``k`` are taken (use it for metadata filters or
        expired records). Ties are broken by ``doc_id`` so results are deterministic.
        """
        if k <= 0:
            return []
        query_terms = Counter(self.tokenizer(query))
        if not query_terms:
            return []
        return self.score_terms(query_terms, namespaces).top(k, allowed)

    def scores(
        self, query: str, namespaces: Iterable[Namespace], doc_ids: Iterable[str]
    ) -> dict[str, float]:
        """BM25 scores of the given documents for ``query``, with the statistics of ``namespaces``.

        A document sharing no term with the query scores ``0.0``; ids not indexed in those
        namespaces are left out.
        """
        return self.score_terms(Counter(self.tokenizer(query)), namespaces).of(doc_ids)

    def max_score(self, query: str, namespaces: Iterable[Namespace]) -> float:
        """The highest BM25 score any document could reach for ``query`` in ``namespaces``:
        ``sum over query terms of idf(t) * (k1 + 1)`` (a term's part never exceeds it).

        Dividing a score by it gives the idf-weighted share of the query a document matches,
        in ``[0, 1]``, with the same meaning for every query (see :func:`.fusion.lexical_shares`).
        Terms no document holds count too: a query half made of unknown words matches at most
        half. ``0.0`` when the query has no terms.
        """
        return self.score_terms(Counter(self.tokenizer(query)), namespaces).max_score

    def score_terms(
        self, terms: Mapping[str, float], namespaces: Iterable[Namespace]
    ) -> TermScores:
        """Every document's BM25 score for weighted query terms (term -> weight, as a query
        term's count), with the statistics of ``namespaces``, each term's part added in the
        order of ``terms``. The shards are frozen (as by :meth:`snapshot`) and scored outside
        the lock."""
        shards = list(self._frozen(namespaces).values())
        n_docs = sum(shard.n_docs() for shard in shards)
        k1, b = self.k1, self.b
        every = [shard.arrays() for shard in shards]
        avgdl = (sum(shard.total_length for shard in shards) / n_docs or 1.0) if n_docs else 1.0
        total = 0.0
        # Per shard, each term's documents and parts, added up at the end in term order (a
        # bincount adds its weights in input order: the sums of adding term by term).
        found: list[tuple[list[np.ndarray], list[np.ndarray]]] = [([], []) for _ in every]
        for term, query_tf in terms.items():
            hits = [arrays.posting(term) for arrays in every]
            df = sum(len(posting[0]) for posting in hits if posting is not None)
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            total += query_tf * idf
            if df == 0:
                continue
            weight = query_tf * idf * (k1 + 1.0)
            for arrays, posting, (wheres, parts) in zip(every, hits, found, strict=True):
                if posting is None:
                    continue
                where, tf = posting
                wheres.append(where)
                parts.append(weight * tf / arrays.denominator(term, posting, k1, b, avgdl))
        scored: list[tuple[_Arrays, np.ndarray, np.ndarray]] = []
        for arrays, (wheres, parts) in zip(every, found, strict=True):
            n = len(arrays.ids)
            matched = np.zeros(n, dtype=bool)
            if not wheres:
                scored.append((arrays, np.zeros(n), matched))
                continue
            where = wheres[0] if len(wheres) == 1 else np.concatenate(wheres)
            part = parts[0] if len(parts) == 1 else np.concatenate(parts)
            matched[where] = True
            scored.append((arrays, np.bincount(where, weights=part, minlength=n), matched))
        return TermScores(scored, total * (k1 + 1.0))
