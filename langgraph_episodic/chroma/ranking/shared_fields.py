"""Shared-field lift for hybrid search: memories that share a secondary field's exact value
(the same session date, place, project) with the best hits are lifted toward them.

When a store indexes more than one field (``fields=["text", "time"]``), the first is the
memory's content and the others describe its context. After the hybrid ranking, the best live
hits for the question (at most :data:`LIFT_DOCS`) name their context values; every candidate
of the ranking that holds one of those exact values in the same namespace, and has evidence of
its own for the question (a score above 0), is lifted toward the best hit's score:

    score = first + w * share * (best - first)

``first`` is a candidate's hybrid score (only candidates of the hybrid ranking are lifted),
``best`` the best live hit's, ``w`` = :data:`LIFT_WEIGHT` (``< 1``) and ``share`` in
``[0, 1]`` the score-weighted part of the other best hits' context values the memory holds:
``share(d) = sum over best hits h != d of score_h * |values(d) & values(h)| / |values(h)| /
sum over best hits of score_h``. So no score is lowered and none reaches ``best``. A value
held by too many memories of a namespace (:data:`MAX_GROUP`, :data:`MAX_SHARE`) tells nothing
and is skipped.

:class:`FieldIndex` maps ``(namespace, field, value digest) -> memories``, kept current on
every write under the store's lock; readers score frozen shards and writes change a copy (as
the lexical shards). Measured by ``benchmarks/locomo_lift.py``.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from ..._types import Namespace
from ...errors import InvalidValueError
from .lexical import Shard, ShardedIndex

LIFT_DOCS = 3
"""How many of the best live hits name the context values (chosen on LoCoMo tuning
conversations among 3 / 5 / 10)."""
LIFT_WEIGHT = 0.8
"""How far a memory sharing all of the best hits' context values is lifted toward the best
hit (below 1, so that the best hit stays first). Chosen on LoCoMo tuning conversations among
0.5 / 0.8 / 0.9."""
MAX_GROUP = 100
"""A value held by more memories of one namespace than this is not used to lift."""
MAX_SHARE = 0.5
"""Nor is a value held by more than this part of a namespace's memories (of at least
:data:`MIN_MEMORIES`; in a smaller one, a value all of them hold): lifting every fact told on
one day only reorders the best hits (our English set: 0.75 without the rule, 0.70 with it)."""
MIN_MEMORIES = 10
"""From this many memories in a namespace on, :data:`MAX_SHARE` applies."""
EACH_FIRST = ""
"""The ``primary`` meaning "each memory's own first indexed field": a store indexing one field
lifts by the context fields a put indexed after its content (``index=["text", "context.day"]``,
as :mod:`langgraph_episodic.memory_context` writes). Never a field path."""

FieldKey = tuple[str, int]
"""(field path, digest of the value)."""

_LIST_ITEM = re.compile(r"^(.*\[\*\].*)\.\d+$")


def field_key(path: str, text: str) -> FieldKey:
    """The key of one indexed text: its field (a list's elements share their field: ``tags[*]``
    for ``tags[*].0``) and a digest of its text, folded (case, runs of whitespace).

    >>> field_key("time", "8 May 2023") == field_key("time", " 8  may 2023")
    True
    >>> field_key("tags[*].1", "x")[0]
    'tags[*]'
    """
    return _key(path, text, {})


def _key(path: str, text: str, fields: dict[str, str]) -> FieldKey:
    """:func:`field_key`, with the field of each path kept in ``fields``."""
    field = fields.get(path)
    if field is None:
        found = _LIST_ITEM.match(path)
        field = fields[path] = found.group(1) if found else path
    folded = " ".join(text.split()).casefold().encode()
    return field, int.from_bytes(hashlib.blake2b(folded, digest_size=8).digest(), "big")


class _Shard(Shard):
    """One namespace's memories by value (``groups``) and values by memory (``keys``)."""

    __slots__ = ("groups", "keys", "several")

    def __init__(self) -> None:
        super().__init__()
        self.groups: dict[FieldKey, dict[str, None]] = {}
        self.keys: dict[str, tuple[FieldKey, ...]] = {}
        self.several = 0
        """How many memories indexed more than one field (none: nothing to lift by)."""

    def thaw(self) -> _Shard:
        """A changeable copy; a group is copied when a write first touches it."""
        copy = _Shard()
        copy.groups = dict(self.groups)
        copy.keys = dict(self.keys)
        copy.several = self.several
        copy._owned = set()
        return copy

    def add(self, doc_id: str, keys: Iterable[FieldKey]) -> None:
        self.discard(doc_id)  # (raises on a frozen shard)
        self.fill(doc_id, tuple(dict.fromkeys(keys)))

    def fill(self, doc_id: str, unique: tuple[FieldKey, ...]) -> None:
        """:meth:`add` of a memory the shard does not hold, with distinct keys."""
        if unique:
            for key in unique:
                self._entry(self.groups, key)[doc_id] = None
            self.keys[doc_id] = unique
            self.several += _several(unique)

    def discard(self, doc_id: str) -> None:
        self._check_writable()
        old = self.keys.pop(doc_id, ())
        self.several -= _several(old)
        self._unlist(self.groups, old, doc_id)


def _several(keys: tuple[FieldKey, ...]) -> int:
    """1 when ``keys`` come from more than one field, else 0."""
    return int(bool(keys) and any(key[0] != keys[0][0] for key in keys[1:]))


class FieldView:
    """A reader's snapshot of some namespaces' shards (see :meth:`FieldIndex.snapshot`)."""

    __slots__ = ("_shards",)

    def __init__(self, shards: list[_Shard]) -> None:
        self._shards = shards

    def any_context(self) -> bool:
        """Whether some memory here indexed more than one field (else the lift has nothing)."""
        return any(shard.several for shard in self._shards)

    def neighbours(self, doc_id: str, primary: str) -> tuple[list[Mapping[str, None]], int]:
        """The memories sharing each of ``doc_id``'s values outside the field ``primary``
        (:data:`EACH_FIRST`: its own first field), one read-only group per value not too
        common (``doc_id`` is in each), and how many such values it has in all."""
        for shard in self._shards:
            keys = shard.keys.get(doc_id)
            if keys is None:
                continue
            own = keys[0][0] if primary == EACH_FIRST else primary
            groups = [shard.groups[key] for key in keys if key[0] != own]
            n = len(shard.keys)
            most = min(MAX_GROUP, MAX_SHARE * n if n >= MIN_MEMORIES else n - 1)
            return [group for group in groups if len(group) <= most], len(groups)
        return [], 0


class FieldIndex(ShardedIndex[_Shard]):
    """``(namespace, field, value) -> memories`` for the lift; every change happens under
    ``lock`` (the store state's), readers take frozen shards (:meth:`snapshot`)."""

    def __init__(self, lock: threading.RLock | None = None) -> None:
        super().__init__(_Shard, lock)

    @staticmethod
    def build_shard(docs: Iterable[tuple[str, Iterable[tuple[str, str]]]]) -> _Shard:
        """A namespace's shard from ``(doc_id, [(path, text), ...])`` (no lock: for
        :meth:`put_shard`)."""
        shard = _Shard()
        fields: dict[str, str] = {}  # path -> field: a namespace has few paths, many texts
        for doc_id, rows in docs:
            unique = tuple(dict.fromkeys(_key(path, text, fields) for path, text in rows))
            if doc_id in shard.keys:  # a later duplicate wins
                shard.add(doc_id, unique)
            else:
                shard.fill(doc_id, unique)
        return shard

    def upsert(self, namespace: Namespace, doc_id: str, rows: Iterable[tuple[str, str]]) -> None:
        """Index a memory's ``(path, text)`` rows under ``doc_id`` (replacing earlier ones)."""
        keys = [field_key(path, text) for path, text in rows]
        with self._lock:
            self._writable(tuple(namespace)).add(doc_id, keys)

    def snapshot(
        self, namespaces: Iterable[Namespace], read: Mapping[Namespace, _Shard] | None = None
    ) -> FieldView:
        """The namespaces' current shards, frozen, to read outside the lock (``read``: shards
        this search built but could not keep, used where this index holds none)."""
        return FieldView(list(self._frozen(namespaces, read).values()))

    def groups_of(self, namespace: Namespace) -> dict[FieldKey, frozenset[str]]:
        """Every value of a namespace with its memories (a copy; for checks and tests)."""
        with self._lock:
            shard = self._shards.get(tuple(namespace))
            if shard is None:
                return {}
            return {key: frozenset(group) for key, group in shard.groups.items()}


def shares(
    sources: Sequence[tuple[str, float]],
    view: FieldView,
    primary: str,
    among: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """Each memory's ``share`` of the ``(doc_id, score)`` best hits' context values (see the
    module docstring); memories sharing nothing, or not ``among`` the given ones, are left out.

    >>> index = FieldIndex()
    >>> for doc, day in [("a", "May 8"), ("b", "May 8"), ("c", "May 9"), ("d", "May 9")]:
    ...     index.upsert(("u",), doc, [("text", doc), ("time", day)])
    >>> view = index.snapshot([("u",)])
    >>> {d: round(s, 2) for d, s in shares([("a", 0.6), ("c", 0.2)], view, "text").items()}
    {'b': 0.75, 'd': 0.25}
    """
    total = sum(max(score, 0.0) for _, score in sources)
    if total <= 0.0:
        return {}
    out: dict[str, float] = {}
    for doc_id, score in sources:
        if score <= 0.0:
            continue
        groups, n_values = view.neighbours(doc_id, primary)
        if not groups:
            continue
        part = score / total / n_values
        for group in groups:
            for other in group.keys() & among.keys() if among is not None else group:
                if other != doc_id:
                    out[other] = out.get(other, 0.0) + part
    return {doc_id: min(1.0, share) for doc_id, share in out.items()}


def lift(
    fused: Sequence[tuple[str, float]],
    sources: Sequence[tuple[str, float]],
    view: FieldView,
    primary: str,
    weight: float | None = None,
) -> list[tuple[str, float]]:
    """``fused`` (best first) re-ranked by the lift: the ``sources`` (best live hits, best
    first) lift the candidates sharing their values outside the field ``primary``, as
    the module docstring says (a score at or above ``best`` is kept as it is). Ties keep
    the order of ``fused``. Only candidates of ``fused`` are lifted: also scoring the memories
    found only through a shared value measured the same recall on LoCoMo at twice the cost.
    ``weight``: ``w`` (default :data:`LIFT_WEIGHT`).

    >>> index = FieldIndex()
    >>> for doc, day in [("a", "May 8"), ("b", "May 8"), ("c", "May 9")]:
    ...     index.upsert(("u",), doc, [("text", doc), ("time", day)])
    >>> fused = [("a", 0.6), ("c", 0.3), ("b", 0.1)]
    >>> ranked = lift(fused, fused[:1], index.snapshot([("u",)]), "text")
    >>> [(doc, round(score, 2)) for doc, score in ranked]
    [('a', 0.6), ('b', 0.5), ('c', 0.3)]
    """
    w = LIFT_WEIGHT if weight is None else weight
    if not 0.0 <= w < 1.0:
        raise InvalidValueError(f"weight must be in [0, 1), got {w!r}.")
    if not sources:
        return list(fused)
    scored = dict(fused)
    lifted = shares(sources, view, primary, among=scored)
    if not lifted:
        return list(fused)
    best = sources[0][1]
    for doc_id, share in lifted.items():
        first = scored[doc_id]
        if 0.0 < first < best:  # a memory with no evidence of its own is not lifted
            scored[doc_id] = first + w * share * (best - first)
    return sorted(scored.items(), key=itemgetter(1), reverse=True)  # stable: ties keep order
