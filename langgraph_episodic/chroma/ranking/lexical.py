"""BM25 keyword search over documents grouped by namespace, kept in memory.

Local Chroma refuses sparse vector indexes, so the lexical half of hybrid search lives here:
an inverted index per namespace (term -> {doc_id: term frequency}) that a query reads only
for its own terms. No Chroma dependency; the owner (the store) feeds it every put and delete
and rebuilds it from stored documents after a restart. Writes change dicts; a search scores a
snapshot of the shards with numpy, over arrays each frozen shard builds once (:class:`_Arrays`).
A shard built from stored documents (a namespace's first search) is held packed, as those
arrays alone, until its first write: see :class:`_Shard`.

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
import re
import threading
import unicodedata
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import islice, pairwise

import numpy as np

from ..._types import Namespace
from .analysis import (
    LANGUAGES,
    STOPWORDS,
    Language,
    LanguageAnalyzer,
    analyzer,
)

Tokenizer = Callable[[str], list[str]]


_WORD = re.compile(r"\w+(?:'\w+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def s_stem(word: str) -> str:
    """Harman's "S" stemmer: fold English plurals to the singular, nothing else.

    >>> [s_stem(w) for w in ["parties", "boxes", "cats", "glass", "status", "is"]]
    ['party', 'boxe', 'cat', 'glass', 'status', 'is']
    """
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith(("us", "ss")):
        return word
    return word[:-1]


def tokenize(text: str, *, stem: bool = False) -> list[str]:
    """Split text into lowercase unicode words, dropping English and German stopwords.

    Words keep inner apostrophes and underscores (``don't``, ``snake_case``), so identifiers
    stay whole; an English possessive ``'s`` is removed. ``stem=True`` also folds English
    plurals (:func:`s_stem`).

    >>> tokenize("Caroline's dog ISN'T chasing the ball_pit!")
    ['caroline', 'dog', 'chasing', 'ball_pit']
    """
    normal = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).casefold()
    tokens = []
    for word in _WORD.findall(normal):
        if word in STOPWORDS:
            continue
        if word.endswith("'s"):
            word = word[:-2]
        if stem:
            word = s_stem(word)
        tokens.append(word)
    return tokens


class _Shard:
    """One namespace's postings and document lengths, in one of two forms.

    * Dicts (``postings``, ``terms``, ``lengths``): what writes change.
    * Packed: a shard built from stored documents (:meth:`LexicalIndex.build_shard`, the first
      search of a namespace) keeps only its :class:`_Arrays`, built whole, with every posting
      as a slice of two flat arrays; its dicts stay empty. It is frozen from the start, and
      the first write to the namespace unpacks it into dicts (:meth:`thaw`). A namespace that
      is searched and not written keeps a fraction of the dicts' memory.
    """

    __slots__ = (
        "_arrays",
        "_items",
        "frozen",
        "lengths",
        "packed",
        "postings",
        "source",
        "terms",
        "total_length",
    )

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}
        self.terms: dict[str, tuple[str, ...]] = {}
        self.lengths: dict[str, int] = {}
        self.total_length = 0
        self.frozen = False
        """Handed to a reader by :meth:`LexicalIndex.snapshot`: never changed again (a write
        copies it first)."""
        self.packed = False
        """Held as :attr:`_arrays` alone (see the class docstring); always frozen."""
        self.source: _Shard | None = None
        """The frozen shard this one was copied from (their posting dicts are shared until
        a write copies one)."""
        self._arrays: _Arrays | None = None
        """The numpy form of a frozen shard, built by its first search (a packed shard's
        contents)."""
        self._items: frozenset[str] | None = None
        """The item ids of a frozen shard's documents, built by its first :meth:`items`."""

    @classmethod
    def of_arrays(cls, arrays: _Arrays, total_length: int) -> _Shard:
        """A packed shard holding ``arrays`` (from :func:`_pack`)."""
        shard = cls()
        shard._arrays = arrays
        shard.total_length = total_length
        shard.packed = shard.frozen = True
        return shard

    def n_docs(self) -> int:
        """How many documents the shard holds."""
        if self.packed:
            assert self._arrays is not None
            return len(self._arrays.ids)
        return len(self.lengths)

    def doc_ids(self) -> Iterable[str]:
        """The shard's document ids (a frozen or locked shard's: they must not change while
        read)."""
        if self.packed:
            assert self._arrays is not None
            return self._arrays.ids
        return self.lengths

    def arrays(self) -> _Arrays:
        """The shard as numpy arrays: built once for a frozen shard (its contents never
        change, so any reader may build it and every reader gets the same), and afresh for a
        changeable one (call under the index's lock then; nothing is kept)."""
        if not self.frozen:
            return _Arrays(self)
        arrays = self._arrays
        if arrays is None:
            arrays = self._arrays = _Arrays(self)
        return arrays

    def items(self) -> frozenset[str]:
        """The item ids of the shard's documents (a document id ``<item>.<tag>`` names item
        ``<item>``; one without a tag is its own item): built once for a frozen shard, and
        afresh for a changeable one (call under the index's lock then)."""
        found = self._items
        if found is None:
            found = frozenset(doc_id.partition(".")[0] for doc_id in self.doc_ids())
            if self.frozen:
                self._items = found
        return found

    def thaw(self) -> _Shard:
        """A changeable copy (posting dicts are copied when a write touches them; a packed
        shard's are made from its arrays, sharing nothing)."""
        copy = _Shard()
        copy.total_length = self.total_length
        if self.packed:
            assert self._arrays is not None
            copy.postings, copy.terms, copy.lengths = self._arrays.unpack()
            return copy
        copy.postings = dict(self.postings)
        copy.terms = dict(self.terms)
        copy.lengths = dict(self.lengths)
        copy.source = self
        return copy

    def _posting(self, term: str) -> dict[str, int]:
        """The posting of ``term`` for writing (copied first if shared with a frozen shard)."""
        posting = self.postings.get(term)
        if posting is None:
            posting = self.postings[term] = {}
        elif self.source is not None and self.source.postings.get(term) is posting:
            posting = self.postings[term] = dict(posting)
        return posting

    def add(self, doc_id: str, tokens: list[str]) -> None:
        if self.frozen:  # a bug, not bad input: readers rely on frozen shards never changing
            raise RuntimeError("A frozen lexical shard cannot change; thaw() it first.")
        self.discard(doc_id)
        counts = Counter(tokens)
        for term, tf in counts.items():
            self._posting(term)[doc_id] = tf
        self.terms[doc_id] = tuple(counts)
        self.lengths[doc_id] = len(tokens)
        self.total_length += len(tokens)

    def discard(self, doc_id: str) -> None:
        if self.frozen:
            raise RuntimeError("A frozen lexical shard cannot change; thaw() it first.")
        terms = self.terms.pop(doc_id, None)
        if terms is None:
            return
        for term in terms:
            posting = self._posting(term)
            del posting[doc_id]
            if not posting:
                del self.postings[term]
        self.total_length -= self.lengths.pop(doc_id)


def _pack(ids: Sequence[str], tokens: Iterable[list[str]]) -> _Shard:
    """A packed shard (see :class:`_Shard`) of the documents ``ids[n]`` whose terms are the
    ``n``-th of ``tokens`` (``ids`` may grow while ``tokens`` is read); a later duplicate id
    wins, as with :meth:`_Shard.add`.

    Each ``(term, document)`` pair costs two 32-bit numbers (the document's position, the
    term's frequency), against a dict entry, and a dict per term, in the dict form."""
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
    if dead:  # drop the earlier copies of repeated ids, and number the rest 0..n-1 again
        alive = np.ones(len(order), dtype=bool)
        alive[dead] = False
        keep = alive[where]
        slot, where, tf = slot[keep], where[keep], tf[keep]
        where = (np.cumsum(alive) - 1).astype(np.int32)[where]
        order = [doc_id for doc_id, live in zip(order, alive.tolist(), strict=True) if live]
        length = length[alive]
    sort = np.argsort(slot, kind="stable")
    starts = np.zeros(len(slots) + 1, dtype=np.intp)
    np.cumsum(np.bincount(slot, minlength=len(slots)), out=starts[1:])
    position = None if dead else seen  # (with no repeated id, its map is the positions)
    arrays = _Arrays.packed(order, length, slots, starts, where[sort], tf[sort], position)
    return _Shard.of_arrays(arrays, int(length.sum()))


class _Arrays:
    """A shard's documents as positions ``0..n-1`` (``ids``, ``position``), their lengths as
    a float array, and each term's posting as ``(positions, term frequencies)`` arrays: made
    on the first search that needs the term (terms no document holds are not kept), or, for a
    packed shard, slices of two flat arrays made at once (:func:`_pack`)."""

    __slots__ = (
        "_aligned", "_denominators", "_postings", "_slots", "_starts", "_terms", "_tf", "_where",
        "ids", "lengths", "position",
    )  # fmt: skip

    def __init__(self, shard: _Shard | None) -> None:
        ids = list(shard.lengths) if shard is not None else []
        self.ids: list[str] = ids
        self.position: dict[str, int] = dict(zip(ids, range(len(ids)), strict=True))
        self.lengths = (
            np.fromiter(shard.lengths.values(), dtype=np.float64, count=len(ids))
            if shard is not None
            else np.zeros(0)
        )
        self._postings: Mapping[str, dict[str, int]] = shard.postings if shard is not None else {}
        self._terms: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._denominators: dict[tuple[str, float, float, float], np.ndarray] = {}
        self._aligned: tuple[Sequence[str], np.ndarray, np.ndarray] | None = None
        self._slots: dict[str, int] | None = None
        """A packed shard's term -> its posting's slice ``_starts[k]:_starts[k + 1]`` of
        ``_where`` (positions) and ``_tf`` (term frequencies)."""
        self._starts = self._where = self._tf = np.zeros(0, dtype=np.intp)

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
        """A packed shard's arrays (see :func:`_pack`; ``position``: each id's index in
        ``ids``, when the caller has it)."""
        arrays = cls(None)
        arrays.ids = ids
        if position is None:
            position = dict(zip(ids, range(len(ids)), strict=True))
        arrays.position = position
        arrays.lengths = lengths
        arrays._slots, arrays._starts, arrays._where, arrays._tf = slots, starts, where, tf
        return arrays

    def unpack(self) -> tuple[dict[str, dict[str, int]], dict[str, tuple[str, ...]], dict[str, int]]:
        """A packed shard's contents as the dict form's ``(postings, terms, lengths)``
        (a namespace's first write after its first search pays this once)."""
        assert self._slots is not None
        ids, starts, where = self.ids, self._starts, self._where
        names = list(self._slots)  # the slots are numbered in insertion order
        doc_of = list(map(ids.__getitem__, where.tolist()))
        tf = self._tf.tolist()
        bounds = starts.tolist()
        postings = {
            names[k]: dict(zip(doc_of[at:end], tf[at:end], strict=True))
            for k, (at, end) in enumerate(pairwise(bounds))
            if at != end
        }
        # Each document's terms: the pairs grouped by document, in slot order within one.
        slot_of = np.repeat(np.arange(len(names)), np.diff(starts))
        by_doc = slot_of[np.argsort(where, kind="stable")].tolist()
        ends = np.cumsum(np.bincount(where, minlength=len(ids))).tolist()
        held = map(names.__getitem__, by_doc)
        terms: dict[str, tuple[str, ...]] = {}
        at = 0
        for doc_id, end in zip(ids, ends, strict=True):
            terms[doc_id] = tuple(islice(held, end - at))
            at = end
        lengths = dict(zip(ids, map(int, self.lengths.tolist()), strict=True))
        return postings, terms, lengths

    def aligned(self, keys: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(position of each key, first index of each position's key)``, ``-1`` where there
        is none, for an immutable sequence of ``keys`` (the entry keys of a vector matrix's
        rows): kept for the latest ``keys`` object, so a hybrid search matches its two sides'
        candidates by index, not by id."""
        aligned = self._aligned
        if aligned is None or aligned[0] is not keys:
            get = self.position.get
            position = np.fromiter((get(key, -1) for key in keys), dtype=np.intp, count=len(keys))
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
        kept for the latest ``(k1, b, avgdl)`` (a namespace searched alone always has the
        same)."""
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
            if self._slots is not None:
                k = self._slots.get(term)
                if k is None or self._starts[k] == self._starts[k + 1]:
                    return None
                at, end = self._starts[k], self._starts[k + 1]
                found = (self._where[at:end], self._tf[at:end])
            else:
                posting = self._postings.get(term)
                if posting is None:
                    return None
                n = len(posting)
                found = (
                    np.fromiter(map(self.position.__getitem__, posting), dtype=np.intp, count=n),
                    np.fromiter(posting.values(), dtype=np.float64, count=n),
                )
            self._terms[term] = found  # same arrays whoever builds them first
        return found


class TermScores:
    """BM25 scores of one weighted query over some namespaces' shards, computed once
    (:meth:`LexicalIndex.score_terms`): its best documents, the score of any document, and the
    most any document could score. Scoring the query once serves every step of a hybrid search.
    """

    __slots__ = ("_parts", "max_score")

    def __init__(
        self, parts: list[tuple[_Arrays, np.ndarray, np.ndarray]], max_score: float
    ) -> None:
        self._parts = parts
        """Per shard: its arrays, every document's score, and which documents hold a term."""
        self.max_score = max_score
        """:meth:`LexicalIndex.max_score` of the query."""

    def single(self) -> tuple[_Arrays, np.ndarray] | None:
        """The one shard's arrays and every document's score, when one shard was scored."""
        if len(self._parts) != 1:
            return None
        arrays, scores, _ = self._parts[0]
        return arrays, scores

    def top_positions(self, k: int) -> list[int]:
        """:meth:`top` of a single shard (:meth:`single`) as document positions."""
        if k <= 0:
            return []
        arrays, scores, matched = self._parts[0]
        found = np.flatnonzero(matched)
        if len(found) > k:
            values = scores[found]
            kth = np.partition(values, len(values) - k)[len(values) - k]
            found = found[values >= kth]
        ids = arrays.ids
        positions = found.tolist()
        negatives = (-scores[found]).tolist()
        keyed = sorted(zip(negatives, [ids[j] for j in positions], positions, strict=True))
        return [j for _, _, j in keyed[:k]]

    def top(self, k: int, allowed: Callable[[str], bool] | None = None) -> list[tuple[str, float]]:
        """The ``k`` best ``(doc_id, score)`` among documents sharing a term with the query,
        best first, ties by ``doc_id``; ``allowed`` filters ids before the top ``k``."""
        if k <= 0:
            return []
        keyed: list[tuple[float, str]] = []  # (-score, doc_id): sorted as plain tuples
        for arrays, scores, matched in self._parts:
            found = np.flatnonzero(matched)
            if allowed is None and len(found) > k:  # keep the k best of this shard, with ties
                values = scores[found]
                kth = np.partition(values, len(values) - k)[len(values) - k]
                found = found[values >= kth]
            ids = arrays.ids
            negatives = (-scores[found]).tolist()
            keyed.extend(zip(negatives, [ids[j] for j in found.tolist()], strict=True))
        if allowed is not None:
            keyed = [pair for pair in keyed if allowed(pair[1])]
        keyed.sort()
        return [(doc_id, -negative) for negative, doc_id in keyed[:k]]

    def at(self, doc_ids: Iterable[str]) -> tuple[list[str], np.ndarray]:
        """:meth:`of` as the ids found and their scores (float64), in the same order."""
        if len(self._parts) == 1:
            arrays, scores, _ = self._parts[0]
            position = arrays.position
            found = [
                (doc_id, j)
                for doc_id in dict.fromkeys(doc_ids)
                if (j := position.get(doc_id)) is not None
            ]
            return [doc_id for doc_id, _ in found], scores[[j for _, j in found]]
        known = self.of(doc_ids)
        return list(known), np.fromiter(known.values(), dtype=np.float64, count=len(known))

    def of(self, doc_ids: Iterable[str]) -> dict[str, float]:
        """The score of each given document (``0.0``: no shared term), in the given order;
        ids not in the shards are left out."""
        out: dict[str, float] = {}
        for doc_id in doc_ids:
            if doc_id in out:
                continue
            for arrays, scores, _ in self._parts:
                j = arrays.position.get(doc_id)
                if j is not None:
                    out[doc_id] = float(scores[j])
                    break
        return out


class LexicalIndex:
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
            raise ValueError(f"Need k1 >= 0 and 0 <= b <= 1, got k1={k1!r}, b={b!r}.")
        self.k1 = k1
        self.b = b
        self.tokenizer: Tokenizer = tokenizer or analyzer("auto")
        self.language: str | None = None if tokenizer else "auto"
        self._shards: dict[Namespace, _Shard] = {}
        self._lock = lock if lock is not None else threading.RLock()

    def _writable(self, namespace: Namespace) -> _Shard:
        """The namespace's shard for a change (a copy if a reader holds it); call under lock."""
        shard = self._shards.get(namespace)
        if shard is None:
            shard = self._shards[namespace] = _Shard()
        elif shard.frozen:
            shard = self._shards[namespace] = shard.thaw()
        return shard

    def snapshot(
        self, namespaces: Iterable[Namespace], read: Mapping[Namespace, _Shard] | None = None
    ) -> LexicalIndex:
        """A private index over the current shards of ``namespaces``, to score outside the
        lock; later changes to this index do not reach it. ``read``: shards this search built
        from Chroma but could not keep (a write landed meanwhile), used where this index holds
        none."""
        view = LexicalIndex(k1=self.k1, b=self.b, tokenizer=self.tokenizer)
        with self._lock:
            for ns in dict.fromkeys(tuple(n) for n in namespaces):
                shard = self._shards.get(ns)
                if shard is None and read is not None:
                    shard = read.get(ns)
                if shard is not None:
                    shard.frozen = True
                    shard.source = None  # a frozen shard never writes: keep no chain alive
                    view._shards[ns] = shard
        return view

    def use_language(self, language: Language) -> None:
        """Analyze text as ``"en"``, ``"de"`` or ``"auto"`` (detected per text) from now on.

        Raises ``ValueError`` when documents were already indexed another way (their terms
        would not match the new analysis).
        """
        if language not in LANGUAGES:
            raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}.")
        with self._lock:
            if language == self.language:
                return
            if any(shard.n_docs() for shard in self._shards.values()):
                raise ValueError(
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
        """A namespace's shard built from ``(doc_id, text)`` documents (no lock: to hand to
        :meth:`put_shard`), packed (see :class:`_Shard`); a later duplicate id wins."""
        ids: list[str] = []  # (the analyzer may read a few texts ahead of its answers)

        def texts() -> Iterator[str]:
            for doc_id, text in docs:
                ids.append(doc_id)
                yield text

        return _pack(ids, self.analyze_many(texts()))

    def analyze_many(self, texts: Iterable[str]) -> Iterable[list[str]]:
        """The tokenizer's terms of each text, in order: in one pass when it has a ``many``
        (as :class:`.analysis.LanguageAnalyzer`), else text by text."""
        if isinstance(self.tokenizer, LanguageAnalyzer):
            return self.tokenizer.many(texts)
        return map(self.tokenizer, texts)

    def put_shard(self, namespace: Namespace, shard: _Shard) -> None:
        """Make ``shard`` (from :meth:`build_shard`) the namespace's contents."""
        with self._lock:
            self._shards[tuple(namespace)] = shard

    def thaw_ahead(self, namespaces: Iterable[Namespace]) -> dict[Namespace, tuple[_Shard, _Shard]]:
        """``(packed shard, its changeable copy)`` of each given namespace held packed, the
        copies made outside the lock (a packed shard never changes); hand them to
        :meth:`adopt` under the lock before the writes, which then change the copies in place
        instead of unpacking under the lock."""
        with self._lock:
            shards = [(ns, self._shards.get(tuple(ns))) for ns in namespaces]
            packed = [(ns, shard) for ns, shard in shards if shard is not None and shard.packed]
        return {ns: (shard, shard.thaw()) for ns, shard in packed}

    def adopt(self, ahead: Mapping[Namespace, tuple[_Shard, _Shard]]) -> None:
        """Install the copies :meth:`thaw_ahead` made, where the namespace still holds the
        packed shard they were made from (a reload meanwhile leaves the new shard alone)."""
        with self._lock:
            for ns, (packed, thawed) in ahead.items():
                if self._shards.get(ns) is packed:
                    self._shards[ns] = thawed

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

    def namespaces(self, prefix: Namespace = ()) -> list[Namespace]:
        """Loaded namespaces that start with ``prefix``, matched by whole segments."""
        prefix = tuple(prefix)
        with self._lock:
            return [ns for ns in self._shards if ns[: len(prefix)] == prefix]

    def doc_count(self, namespaces: Iterable[Namespace]) -> int:
        """Number of documents in the given namespaces."""
        with self._lock:
            shards = self._select(namespaces)
            return sum(shard.n_docs() for shard in shards)

    def held_items(self, namespaces: Iterable[Namespace]) -> AbstractSet[str]:
        """The ids of the items with a document indexed in the given namespaces, under any tag
        (document ids are ``<item>.<tag>``), so an item rewritten since this index's snapshot
        still counts as held. The shards are frozen and each one's item ids built once (as
        :meth:`score_terms` freezes them): call it on a :meth:`snapshot`."""
        shards = self._frozen(namespaces)
        if len(shards) == 1:
            return shards[0].items()
        every: set[str] = set()
        for shard in shards:
            every.update(shard.items())
        return every

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
        namespaces are left out. Hybrid search uses this to score dense-only candidates.
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
        term's count), with the statistics of ``namespaces``; computed once, then read with
        :meth:`TermScores.top`, :meth:`TermScores.of` (as :meth:`scores`) and
        :attr:`TermScores.max_score` (as :meth:`max_score`).

        The namespaces' shards are frozen (as by :meth:`snapshot`) and scored outside the lock.
        Each term's part is ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))``,
        added term by term in the order of ``terms``.
        """
        shards = self._frozen(namespaces)
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

    def _select(self, namespaces: Iterable[Namespace]) -> list[_Shard]:
        keys = dict.fromkeys(tuple(ns) for ns in namespaces)
        return [self._shards[ns] for ns in keys if ns in self._shards]

    def _frozen(self, namespaces: Iterable[Namespace]) -> list[_Shard]:
        """The namespaces' shards, frozen so that a reader can use them outside the lock."""
        with self._lock:
            shards = self._select(namespaces)
            for shard in shards:
                if not shard.frozen:
                    shard.frozen = True
                    shard.source = None  # a frozen shard never writes: keep no chain alive
        return shards
