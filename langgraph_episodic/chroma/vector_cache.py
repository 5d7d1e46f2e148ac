"""Per-namespace vectors held in process, for exact dense search without a Chroma filter.

A Chroma query restricted by a metadata ``where`` (one user's namespace) cost 30-120 ms in our
measurements against about 1 ms unrestricted, because Chroma materialises the matching ids
first. Most agent searches are scoped to one user, so the store keeps each searched namespace's
normalised vectors as one float32 matrix and ranks them with a matrix product: exact (the same
scores as ``InMemoryStore``) and fast. The cache holds at most ``max_vectors`` vectors, least
recently used namespaces first out; a scope larger than that falls back to Chroma's index.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Sequence

import numpy as np


class NamespaceVectors:
    """The vectors of one namespace, each held once: as a row of one float32 matrix.

    Rows written since the last search wait in a small pending list and are stacked into the
    matrix on the next :meth:`matrix` call, so loading or updating an item copies the matrix
    at most once per search (a per-row array beside the matrix doubled the cache's memory).
    """

    __slots__ = ("_by_item", "_matrix", "_owners", "_pending", "_row", "_vids", "version")

    def __init__(self, version: str) -> None:
        self.version = version
        self._matrix: np.ndarray = np.zeros((0, 0), dtype=np.float32)
        self._vids: list[str] = []
        """Vector id of each matrix row (rows no longer in ``_row`` are dead)."""
        self._owners: list[str] = []
        """Item id of each matrix row."""
        self._row: dict[str, int] = {}
        """Live vector id -> its matrix row."""
        self._pending: dict[str, tuple[str, np.ndarray]] = {}
        """Vector id -> (item id, normalised vector), written since the matrix was built."""
        self._by_item: dict[str, dict[str, None]] = {}

    def __len__(self) -> int:
        """Number of live vectors."""
        return len(self._row) + len(self._pending)

    @property
    def one_per_item(self) -> bool:
        """Whether every item has exactly one vector (the usual case: one indexed field)."""
        return len(self._by_item) == len(self)

    def matrix(self) -> tuple[np.ndarray, list[str]]:
        """The stacked vectors and the item id of each row (rebuilt after changes)."""
        if self._pending or len(self._row) != len(self._vids):
            self._compact()
        return self._matrix, self._owners

    def replace_item(self, iid: str, vectors: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Replace all rows of item ``iid`` by ``(vector id, vector)`` rows."""
        for vid in self._by_item.pop(iid, {}):
            self._row.pop(vid, None)
            self._pending.pop(vid, None)
        self.replace_item_rows(iid, vectors)

    def replace_item_rows(self, iid: str, vectors: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Add or overwrite the given rows of item ``iid``, keeping its other rows."""
        for vid, vec in vectors:
            self._row.pop(vid, None)
            self._pending[vid] = (iid, normalise(vec))
            self._by_item.setdefault(iid, {})[vid] = None

    def _compact(self) -> None:
        keep = sorted(self._row.values())
        parts: list[np.ndarray] = []
        vids = [self._vids[r] for r in keep]
        owners = [self._owners[r] for r in keep]
        if keep:
            parts.append(self._matrix[np.asarray(keep, dtype=np.intp)])
        if self._pending:
            parts.append(np.stack([vec for _, vec in self._pending.values()]))
            vids.extend(self._pending)
            owners.extend(iid for iid, _ in self._pending.values())
        self._matrix = np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)
        self._vids, self._owners = vids, owners
        self._row = {vid: n for n, vid in enumerate(vids)}
        self._pending = {}


def normalise(vec: Sequence[float] | np.ndarray) -> np.ndarray:
    """A float32 unit vector (the zero vector stays zero)."""
    arr = np.asarray(vec, dtype=np.float32)
    norm = math.sqrt(float(arr @ arr))
    return arr / norm if norm else arr


class VectorCache:
    """Namespaces' vectors, least recently used evicted beyond ``max_vectors``."""

    def __init__(self, max_vectors: int = 200_000) -> None:
        self.max_vectors = max_vectors
        self._entries: OrderedDict[tuple[str, ...], NamespaceVectors] = OrderedDict()
        self._size = 0

    def get(self, namespace: tuple[str, ...]) -> NamespaceVectors | None:
        """The cached vectors of ``namespace`` (marks it recently used)."""
        entry = self._entries.get(namespace)
        if entry is not None:
            self._entries.move_to_end(namespace)
        return entry

    def put(self, namespace: tuple[str, ...], entry: NamespaceVectors) -> None:
        """Cache ``entry`` for ``namespace``, evicting the least recently used if over budget."""
        self.drop(namespace)
        self._entries[namespace] = entry
        self._size += len(entry)
        self._evict(keep=namespace)

    def drop(self, namespace: tuple[str, ...]) -> None:
        """Forget ``namespace``."""
        old = self._entries.pop(namespace, None)
        if old is not None:
            self._size -= len(old)

    def __len__(self) -> int:
        return len(self._entries)

    def resized(self, namespace: tuple[str, ...], before: int) -> None:
        """Account for rows added or removed in place."""
        entry = self._entries.get(namespace)
        if entry is not None:
            self._size += len(entry) - before
            self._evict(keep=namespace)

    def _evict(self, keep: tuple[str, ...]) -> None:
        while self._size > self.max_vectors and len(self._entries) > 1:
            ns = next(iter(self._entries))
            if ns == keep:
                self._entries.move_to_end(ns)
                ns = next(iter(self._entries))
            self.drop(ns)


def rank(
    entries: Sequence[NamespaceVectors], query: Sequence[float] | np.ndarray, depth: int
) -> list[tuple[str, float]]:
    """Item ids by best cosine similarity to ``query`` over all entries, best first."""
    q = normalise(query)
    scores: list[np.ndarray] = []
    owners: list[str] = []
    for entry in entries:
        matrix, ids = entry.matrix()
        if len(ids):
            _check_dims(matrix.shape[1], len(q))
            scores.append(matrix @ q)
            owners.extend(ids)
    if not owners:
        return []
    flat = np.concatenate(scores)
    order = np.argsort(-flat, kind="stable")
    if all(entry.one_per_item for entry in entries):
        top = order[:depth].tolist()
        return list(zip([owners[i] for i in top], flat[top].tolist(), strict=True))
    best: dict[str, float] = {}
    for i in order:
        iid = owners[int(i)]
        if iid not in best:
            best[iid] = float(flat[int(i)])
            if len(best) >= depth:
                break
    return list(best.items())


def _check_dims(stored: int, query: int) -> None:
    if stored != query:
        raise ValueError(
            f"The store holds {stored}-d vectors but the query embedding has {query} dimensions. "
            "Open the store with the embedder it was written with (index={'embed': ...})."
        )


def similarities(
    entries: Iterable[NamespaceVectors],
    query: Sequence[float] | np.ndarray,
    item_ids: Iterable[str],
) -> dict[str, float]:
    """Best cosine similarity to ``query`` of each given item found in ``entries``."""
    wanted = set(item_ids)
    q = normalise(query)
    out: dict[str, float] = {}
    for entry in entries:
        matrix, owners = entry.matrix()
        rows = [n for n, iid in enumerate(owners) if iid in wanted]
        if not rows:
            continue
        _check_dims(matrix.shape[1], len(q))
        scores = matrix[np.asarray(rows, dtype=np.intp)] @ q
        for n, score in zip(rows, scores.tolist(), strict=True):
            iid = owners[n]
            if score > out.get(iid, -2.0):
                out[iid] = score
    return out
