"""Per-namespace vectors held in process, for exact dense search without a Chroma filter.

A Chroma query restricted by a metadata ``where`` (one user's namespace) costs many times an
unrestricted one, because Chroma materialises the matching ids first (``docs/benchmarks.md``,
"Throughput"). Most agent searches are scoped to one user, so the store keeps each searched
namespace's normalised vectors as one float32 matrix and ranks them with a matrix product:
exact (the same scores as ``InMemoryStore``) and fast. The cache holds at most
``max_vectors`` vectors, least recently used namespaces first out; a scope larger than that
falls back to Chroma's index.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from ...errors import InvalidValueError
from ..record_format import ITEM_TAG, entry_key, item_of_vector


def _owner(vid: str) -> str:
    """The entry key a vector id belongs to: the id without ``#<i>``, or for an item that is
    its own vector record (an id without ``#``) the item's entry key."""
    key = vid.rpartition("#")[0]
    return key if key else entry_key(vid, ITEM_TAG)


class BlockView(NamedTuple):
    """An immutable view of one namespace's vectors: what a search ranks, outside any lock."""

    matrix: np.ndarray
    owners: Owners
    """The entry key (:func:`..record_format.entry_key`) of each matrix row."""
    one_per_item: bool


class Groups(NamedTuple):
    """The rows of a built matrix grouped by entry key, as arrays (see :meth:`Owners.groups`)."""

    of_key: dict[str, int]
    """Entry key -> its group; groups are numbered in the order of their keys' first rows."""
    most: int
    """The most rows any key has."""
    order: np.ndarray
    """The rows by group, in row order within one: group ``g``'s are ``order[starts[g]:starts[g
    + 1]]``."""
    starts: np.ndarray
    rows: np.ndarray | None
    """``(groups, most)``: each group's rows in row order, padded with the row count (an index
    one past the last row); None when padding would take more than four times the rows."""


class Owners(list[str]):
    """The entry key of each row of a built matrix (never changed once built), with the rows of
    each key indexed on first use (by any reader: whoever builds it builds the same)."""

    __slots__ = ("_groups",)

    def groups(self) -> Groups:
        """The rows grouped by key, as arrays, built on first use."""
        found: Groups | None = getattr(self, "_groups", None)
        if found is None:
            of_key: dict[str, int] = {}
            n = len(self)
            group = np.fromiter((of_key.setdefault(key, len(of_key)) for key in self), np.intp, n)
            counts = np.bincount(group, minlength=len(of_key))
            most = int(counts.max()) if n else 0
            order = np.argsort(group, kind="stable")  # by group, then row
            starts = np.zeros(len(of_key) + 1, dtype=np.intp)
            np.cumsum(counts, out=starts[1:])
            rows = None
            if len(of_key) * most <= 4 * n:
                ordered = group[order]
                rows = np.full((len(of_key), most), n, dtype=np.intp)
                rows[ordered, np.arange(n) - starts[ordered]] = order
            found = self._groups = Groups(of_key, most, order, starts, rows)
        return found


def _descending(values: np.ndarray, m: int) -> np.ndarray:
    """The indexes of the values at or above the ``m``-th largest, largest first, equal values
    in index order (a stable sort of ``-values`` over those only). No NaN when ``m < n``."""
    n = len(values)
    if m <= 0:
        return np.zeros(0, dtype=np.intp)
    if m >= n:
        return np.argsort(-values, kind="stable")
    candidates = np.flatnonzero(values >= np.partition(values, n - m)[n - m])
    return candidates[np.argsort(-values[candidates], kind="stable")]


def _first_rows(
    owners: Sequence[str], flat: np.ndarray, order: np.ndarray, depth: int, one_per_item: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Each key's first row in ``order``, for the first ``depth`` keys, and their cosines."""
    if one_per_item:
        rows = order[:depth]
    else:
        seen: set[str] = set()
        best: list[int] = []
        for i in order.tolist():
            iid = owners[i]
            if iid not in seen:
                seen.add(iid)
                best.append(i)
                if len(best) >= depth:
                    break
        rows = np.asarray(best, dtype=np.intp)
    return rows, flat[rows].astype(np.float64)


class NamespaceVectors:
    """The vectors of one namespace, each held once: as a row of one float32 matrix.

    Rows written since the last search wait in a pending list and are stacked into the matrix
    on the next search, so writes copy the matrix at most once per search.

    Not thread-safe: the store's state mutates it under its lock. A search takes a
    :class:`BlockView` under the lock, or when rows are pending a :class:`Rebuild`, which it
    builds outside the lock and offers back (:meth:`install`); the offer is refused if a write
    landed meanwhile, so a rebuild never drops a newer row.
    """

    __slots__ = (
        "_by_item", "_matrix", "_n_items", "_owners", "_pending", "_row", "_stamp", "_vids",
        "version",
    )

    def __init__(self, version: str) -> None:
        self.version = version
        self._matrix: np.ndarray = np.zeros((0, 0), dtype=np.float32)
        self._vids: list[str] = []
        """Vector id of each matrix row (rows no longer in ``_row`` are dead)."""
        self._owners = Owners()
        """Entry key of each matrix row."""
        self._row: dict[str, int] = {}
        """Live vector id -> its matrix row."""
        self._pending: dict[str, tuple[str, np.ndarray]] = {}
        """Vector id -> (entry key, normalised vector), written since the matrix was built."""
        self._by_item: dict[str, dict[str, None]] | None = {}
        """Item id -> its live vector ids; None in a block :meth:`loaded` from Chroma until its
        first write, which makes it from the ids (:func:`.record_format.item_of_vector`)."""
        self._n_items = 0
        """How many items the rows belong to, while ``_by_item`` is None."""
        self._stamp = 0
        """Bumped by every change (a rebuild started before a change is not installed)."""

    @classmethod
    def loaded(
        cls, version: str, rows: Sequence[tuple[str, str, Sequence[float] | np.ndarray]]
    ) -> NamespaceVectors:
        """A block of ``(item id, vector id, vector)`` rows read from Chroma, its matrix built at
        once: byte for byte what :meth:`replace_item_rows` of each item's rows (in the order
        they first appear) then :meth:`view` give, without their per-row steps."""
        block = cls(version)
        by_item: dict[str, list[tuple[str, Sequence[float] | np.ndarray]]] = {}
        named = True  # every vector id names its item: the map is made on the first write
        for iid, vid, vec in rows:
            by_item.setdefault(iid, []).append((vid, vec))
            named = named and item_of_vector(vid) == iid
        item_map = None  # made on the first write, from the ids
        if not named:
            item_map = {iid: dict.fromkeys(vid for vid, _ in r) for iid, r in by_item.items()}
        vecs: dict[str, np.ndarray] = {}  # (a later duplicate takes the earlier one's row)
        for item_rows in by_item.values():
            for vid, vec in item_rows:
                vecs[vid] = np.asarray(vec, dtype=np.float32)
        if not vecs:
            return block
        vids, arrays = list(vecs), list(vecs.values())
        block._by_item = item_map
        block._n_items = len(by_item)
        matrix = np.stack(arrays)
        # The norms as :func:`normalise` takes them (row by row), then one float32 division.
        norms = np.array([math.sqrt(float(arr @ arr)) for arr in arrays], dtype=np.float32)
        norms[norms == 0] = 1.0  # (the zero vector stays zero)
        block._hold(matrix / norms[:, None], vids, Owners(_owner(vid) for vid in vids))
        return block

    @classmethod
    def restored(cls, version: str, matrix: np.ndarray, vids: list[str]) -> NamespaceVectors:
        """The block :meth:`loaded` built, byte for byte, from what :meth:`stacked` kept: the
        normalised float32 ``matrix`` and each row's vector id (naming its item). Raises
        ``ValueError`` when the rows do not form one (a damaged file)."""
        block = cls(version)
        if matrix.dtype != np.float32 or matrix.ndim != 2 or len(matrix) != len(vids):
            raise InvalidValueError("Not a vector block: its matrix does not fit its ids.")
        if not vids:
            return block
        block._by_item = None
        if any("#" in vid or "." in vid for vid in vids):
            block._n_items = len({item_of_vector(vid) for vid in vids})
            block._hold(matrix, vids, Owners(_owner(vid) for vid in vids))
        else:  # every row an item that is its own vector record (what :func:`_owner` gives)
            block._n_items = len(vids)
            block._hold(matrix, vids, Owners([f"{vid}.{ITEM_TAG}" for vid in vids]))
        if len(block._row) != len(vids):
            raise InvalidValueError("Not a vector block: a vector id repeats.")
        return block

    def _stale(self) -> bool:
        """Whether rows are pending or dead: the matrix needs stacking again."""
        return bool(self._pending) or len(self._row) != len(self._vids)

    def stacked(self) -> tuple[np.ndarray, list[str]] | None:
        """The matrix and each row's vector id, unless :meth:`_stale` (call under the state
        lock; neither is changed later)."""
        return None if self._stale() else (self._matrix, list(self._vids))

    def __len__(self) -> int:
        """Number of live vectors."""
        return len(self._row) + len(self._pending)

    def view(self) -> BlockView | Rebuild:
        """The current vectors, or the work to stack them first (call under the state lock)."""
        if self._stale():
            keep = sorted(self._row.values())
            return Rebuild(
                self,
                self._stamp,
                self._matrix,
                [self._vids[r] for r in keep],
                [self._owners[r] for r in keep],
                keep,
                list(self._pending.items()),
                self._one_per_item(),
            )
        return BlockView(self._matrix, self._owners, self._one_per_item())

    def current_view(self) -> BlockView:
        """:meth:`view` with any rebuild done in place (for single-threaded use)."""
        view = self.view()
        if isinstance(view, Rebuild):
            built = view.build()
            self.install(view, built)
            return view.view(built)
        return view

    def _one_per_item(self) -> bool:
        n_items = self._n_items if self._by_item is None else len(self._by_item)
        return n_items == len(self)

    def _items(self) -> dict[str, dict[str, None]]:
        """``_by_item``, made from the vector ids first if the block was loaded without it."""
        by_item = self._by_item
        if by_item is None:
            by_item = {}
            for vid in [*self._row, *self._pending]:
                by_item.setdefault(item_of_vector(vid), {})[vid] = None
            self._by_item = by_item
        return by_item

    def install(self, rebuild: Rebuild, built: tuple[np.ndarray, list[str], Owners]) -> bool:
        """Adopt a rebuilt matrix unless the block changed since the rebuild started."""
        if rebuild.stamp != self._stamp:
            return False
        self._hold(*built)
        self._stamp += 1
        return True

    def _hold(self, matrix: np.ndarray, vids: list[str], owners: Owners) -> None:
        """Make ``matrix`` the block's rows, of vector ids ``vids`` and entry keys ``owners``."""
        self._matrix, self._vids, self._owners = matrix, vids, owners
        self._row = dict(zip(vids, range(len(vids)), strict=True))
        self._pending = {}

    def replace_item(self, iid: str, vectors: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Replace all rows of item ``iid`` by ``(vector id, vector)`` rows."""
        for vid in self._items().pop(iid, {}):
            self._row.pop(vid, None)
            self._pending.pop(vid, None)
        self.replace_item_rows(iid, vectors)

    def replace_item_rows(self, iid: str, vectors: Sequence[tuple[str, Sequence[float]]]) -> None:
        """Add or overwrite the given rows of item ``iid``, keeping its other rows."""
        self._stamp += 1
        for vid, vec in vectors:
            self._row.pop(vid, None)
            self._pending[vid] = (_owner(vid), normalise(vec))
            self._items().setdefault(iid, {})[vid] = None


class Rebuild(NamedTuple):
    """What a search needs to stack a block's matrix outside the lock (see
    :class:`NamespaceVectors`)."""

    block: NamespaceVectors
    stamp: int
    matrix: np.ndarray
    vids: list[str]
    owners: list[str]
    keep: list[int]
    pending: list[tuple[str, tuple[str, np.ndarray]]]
    one_per_item: bool

    def build(self) -> tuple[np.ndarray, list[str], Owners]:
        """The stacked matrix, vector ids and entry keys (pure; no lock needed)."""
        parts: list[np.ndarray] = []
        vids, owners = list(self.vids), Owners(self.owners)
        if self.keep:
            parts.append(self.matrix[np.asarray(self.keep, dtype=np.intp)])
        if self.pending:
            parts.append(np.stack([vec for _, (_, vec) in self.pending]))
            vids.extend(vid for vid, _ in self.pending)
            owners.extend(key for _, (key, _) in self.pending)
        matrix = np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)
        return matrix, vids, owners

    def view(self, built: tuple[np.ndarray, list[str], Owners]) -> BlockView:
        return BlockView(built[0], built[2], self.one_per_item)


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
    views: Sequence[BlockView], query: Sequence[float] | np.ndarray, depth: int
) -> list[tuple[str, float]]:
    """Entry keys by best cosine similarity to ``query`` over all views, best first."""
    return QueryCosines(views, query).rank(depth)


class QueryCosines:
    """The cosine of one query to every row of some views, computed once: the ranking
    (:meth:`rank`) and any entry key's best cosine (:meth:`of`) read the same products."""

    __slots__ = ("_clean", "_parts")

    def __init__(self, views: Iterable[BlockView], query: Sequence[float] | np.ndarray) -> None:
        q = normalise(query)
        self._parts: list[tuple[BlockView, np.ndarray]] = []
        self._clean: bool | None = None
        for view in views:
            if len(view.owners):
                _check_dims(view.matrix.shape[1], len(q))
                self._parts.append((view, cosines(view.matrix, q)))

    @classmethod
    def read_twice(
        cls,
        views: Sequence[BlockView],
        query: Sequence[float] | np.ndarray,
        second: np.ndarray,
        gate: np.ndarray,
        gate_at: float,
    ) -> tuple[QueryCosines, QueryCosines]:
        """The cosines of ``query`` (as ``QueryCosines(views, query)``) and of ``second`` on
        the rows whose product with ``gate`` (not normalised) is above ``gate_at``, the other
        rows reading -2 (below any cosine), from one pass over each matrix."""
        q, q2 = normalise(query), normalise(second)
        g = np.asarray(gate, dtype=np.float32)
        first, other = cls((), q), cls((), q)  # (parts added below)
        for view in views:
            if len(view.owners):
                _check_dims(view.matrix.shape[1], len(q))
                # Each product over the columns its vector fills only (a product of several
                # columns at once wakes BLAS's threads: many times slower here).
                gated = _on_support(view.matrix, g) > gate_at
                read = np.where(gated, _on_support(view.matrix, q2), np.float32(-2.0))
                first._parts.append((view, _on_support(view.matrix, q)))
                other._parts.append((view, read))
        return first, other

    def _one_clean_view(self) -> tuple[BlockView, np.ndarray] | None:
        """:meth:`single` when no cosine is NaN (NaN cosines take the row-by-row code)."""
        single = self.single()
        if single is not None and self._clean is None:
            self._clean = not bool(np.isnan(single[1]).any())
        return single if self._clean else None

    def single(self) -> tuple[BlockView, np.ndarray] | None:
        """The one view and its rows' cosines, when there is one view."""
        return self._parts[0] if len(self._parts) == 1 else None

    def top_rows(self, depth: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`top` of the one view (:meth:`single`): each key's best row instead of the key."""
        view, flat = self._parts[0]
        # The first ``depth`` keys of the stable order lie within its first ``depth * most``
        # rows: order only the rows at or above that row's cosine.
        m = len(flat)
        if self._one_clean_view() is not None:
            m = depth if view.one_per_item else depth * view.owners.groups().most
        order = _descending(flat, m)
        return _first_rows(view.owners, flat, order, depth, view.one_per_item)

    def rank(self, depth: int) -> list[tuple[str, float]]:
        """Entry keys by best cosine similarity, best first (ties in row order), ``depth`` of them."""
        keys, values = self.top(depth)
        return list(zip(keys, values.tolist(), strict=True))

    def top(self, depth: int) -> tuple[list[str], np.ndarray]:
        """:meth:`rank` as the entry keys and their cosines (float64), in the same order."""
        if not self._parts:
            return [], np.zeros(0)
        if len(self._parts) == 1:
            rows, values = self.top_rows(depth)
            owners: Sequence[str] = self._parts[0][0].owners
        else:
            owners = [key for view, _ in self._parts for key in view.owners]
            flat = np.concatenate([scores for _, scores in self._parts])
            order = np.argsort(-flat, kind="stable")
            one = all(view.one_per_item for view, _ in self._parts)
            rows, values = _first_rows(owners, flat, order, depth, one)
        return [owners[i] for i in rows.tolist()], values

    def at(self, item_ids: Iterable[str]) -> tuple[list[str], np.ndarray]:
        """:meth:`of` as the entry keys found and their cosines (float64), in the same order."""
        if len(self._parts) == 1 and self._parts[0][0].one_per_item:
            view, scores = self._parts[0]
            of_key = view.owners.groups().of_key  # one row a key: its group is its row
            found = sorted((g, iid) for iid in set(item_ids) if (g := of_key.get(iid)) is not None)
            return [iid for _, iid in found], scores[[row for row, _ in found]].astype(np.float64)
        cosines = self.of(item_ids)
        return list(cosines), np.fromiter(cosines.values(), dtype=np.float64, count=len(cosines))

    def of(self, item_ids: Iterable[str]) -> dict[str, float]:
        """Best cosine of each given entry key found in the views (keys in the order of their
        first row, view by view, as :func:`similarities`)."""
        wanted = set(item_ids)
        clean = self._one_clean_view()
        groups = clean[0].owners.groups() if clean is not None else None
        if clean is not None and groups is not None and groups.rows is not None:
            # one view: the wanted keys' rows gathered at once (padding reads -inf)
            hits = sorted((g, iid) for iid in wanted if (g := groups.of_key.get(iid)) is not None)
            if not hits:
                return {}
            padded = np.append(clean[1], np.float32(-np.inf))
            best = padded[groups.rows[[g for g, _ in hits]]].max(axis=1).tolist()
            return {iid: value for (_, iid), value in zip(hits, best, strict=True)}
        out: dict[str, float] = {}
        for view, scores in self._parts:
            index = view.owners.groups()
            found = sorted((g, iid) for iid in wanted if (g := index.of_key.get(iid)) is not None)
            for g, iid in found:
                rows = index.order[index.starts[g] : index.starts[g + 1]]
                best = max(scores[rows].tolist()) if len(rows) > 1 else float(scores[rows[0]])
                if best > out.get(iid, -2.0):
                    out[iid] = best
        return out


GEMV_ROWS = 1024
"""Rows of 384 dimensions per matrix-vector product: above about 1,100 OpenBLAS splits one
product over its threads, and on a busy machine waking them costs far more than the product
(``docs/benchmarks.md``, "Throughput"). Smaller blocks stay on the calling thread."""

GEMV_ELEMENTS = GEMV_ROWS * 384
"""The split follows the matrix's size: wider vectors get fewer rows per block."""


def block_rows(dims: int) -> int:
    """Rows per product for ``dims``-d vectors: :data:`GEMV_ELEMENTS` over ``dims``.

    >>> block_rows(384), block_rows(896)
    (1024, 438)
    """
    return max(1, GEMV_ELEMENTS // max(1, dims))


def cosines(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``matrix @ q`` (rows and query already normalised; ``q`` may be several queries, one a
    column), computed in blocks of :func:`block_rows` rows."""
    rows = block_rows(matrix.shape[1])
    if len(matrix) <= rows:
        return matrix @ q
    return np.concatenate(
        [matrix[start : start + rows] @ q for start in range(0, len(matrix), rows)]
    )


def _on_support(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``cosines(matrix, q)`` over the span of columns where ``q`` is not zero (the same
    products; the rest of each row is not read)."""
    filled = np.flatnonzero(q)
    if not len(filled):
        return np.zeros(len(matrix), dtype=np.float32)
    span = slice(int(filled[0]), int(filled[-1]) + 1)
    return cosines(matrix[:, span], q[span])


def _check_dims(stored: int, query: int) -> None:
    if stored != query:
        raise InvalidValueError(
            f"The store holds {stored}-d vectors but the query embedding has {query} dimensions. "
            "Open the store with the embedder it was written with (index={'embed': ...})."
        )


def similarities(
    views: Iterable[BlockView],
    query: Sequence[float] | np.ndarray,
    item_ids: Iterable[str],
) -> dict[str, float]:
    """Best cosine similarity to ``query`` of each given entry key found in ``views``."""
    wanted = set(item_ids)
    q = normalise(query)
    out: dict[str, float] = {}
    for matrix, owners, _ in views:
        rows = [n for n, iid in enumerate(owners) if iid in wanted]
        if not rows:
            continue
        _check_dims(matrix.shape[1], len(q))
        scores = cosines(matrix[np.asarray(rows, dtype=np.intp)], q)
        for n, score in zip(rows, scores.tolist(), strict=True):
            iid = owners[n]
            if score > out.get(iid, -2.0):
                out[iid] = score
    return out
