"""``QueryCosines`` over arrays (each key's best row by ``reduceat``, the top by partition)
equals the code it replaced, kept here as the reference: the same keys, rows, order and values
for one view or several, one or several rows per key, exact ties and NaN cosines."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma.ranking.vectors import (
    BlockView,
    NamespaceVectors,
    QueryCosines,
    normalise,
)


class ReferenceCosines:
    """The ranking and look-ups of ``QueryCosines`` before they went over arrays."""

    def __init__(self, parts: list[tuple[BlockView, np.ndarray]]) -> None:
        self.parts = parts

    def top_rows(self, depth: int) -> tuple[list[int], list[float]]:
        view, flat = self.parts[0]
        order = np.argsort(-flat, kind="stable")
        if view.one_per_item:
            rows = order[:depth].tolist()
            return rows, flat[rows].astype(np.float64).tolist()
        seen: set[str] = set()
        best: list[int] = []
        for i in order.tolist():
            if view.owners[i] not in seen:
                seen.add(view.owners[i])
                best.append(i)
                if len(best) >= depth:
                    break
        return best, flat[best].astype(np.float64).tolist()

    def top(self, depth: int) -> tuple[list[str], list[float]]:
        if not self.parts:
            return [], []
        owners: list[str] = []
        for view, _ in self.parts:
            owners.extend(view.owners)
        flat = np.concatenate([scores for _, scores in self.parts])
        order = np.argsort(-flat, kind="stable")
        if all(view.one_per_item for view, _ in self.parts):
            top = order[:depth].tolist()
            return [owners[i] for i in top], flat[top].astype(np.float64).tolist()
        best: dict[str, float] = {}
        for i in order.tolist():
            if owners[i] not in best:
                best[owners[i]] = float(flat[i])
                if len(best) >= depth:
                    break
        return list(best), list(best.values())

    def at(self, item_ids: Iterable[str]) -> tuple[list[str], list[float]]:
        ids = list(item_ids)
        if len(self.parts) == 1 and self.parts[0][0].one_per_item:  # one row per key
            view, scores = self.parts[0]
            first = {owner: n for n, owner in reversed(list(enumerate(view.owners)))}
            found = sorted((first[iid], iid) for iid in set(ids) if iid in first)
            return [iid for _, iid in found], scores[[r for r, _ in found]].astype(np.float64).tolist()
        cosines = self.of(ids)
        return list(cosines), list(cosines.values())

    def of(self, item_ids: Iterable[str]) -> dict[str, float]:
        wanted = set(item_ids)
        out: dict[str, float] = {}
        for view, scores in self.parts:
            index: dict[str, list[int]] = {}
            for n, owner in enumerate(view.owners):
                index.setdefault(owner, []).append(n)
            found = sorted(
                ((index[iid], iid) for iid in wanted if iid in index), key=lambda p: p[0][0]
            )
            for rows, iid in found:
                best = max(scores[rows].tolist()) if len(rows) > 1 else float(scores[rows[0]])
                if best > out.get(iid, -2.0):
                    out[iid] = best
        return out


def _views(rows: Sequence[tuple[int, int, int]], n_views: int) -> list[BlockView]:
    blocks = [NamespaceVectors("v1") for _ in range(n_views)]
    for n, (item, vec, view) in enumerate(rows):
        blocks[view % n_views].replace_item_rows(f"k{item}", [(f"k{item}#r{n}", _BASE[vec])])
    return [block.current_view() for block in blocks]


_BASE = [*np.random.default_rng(7).normal(size=(4, 6)).tolist(), [float("nan")] * 6]
"""Few distinct vectors, so exact ties between rows and keys happen; the last one is NaN (a
broken embedder's), whose cosines are NaN."""


def _same(a: Sequence[float], b: Sequence[float]) -> bool:
    return len(a) == len(b) and all(x == y or (x != x and y != y) for x, y in zip(a, b, strict=True))


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 12), st.integers(0, 4), st.integers(0, 2)), min_size=0, max_size=50
    ),
    n_views=st.integers(1, 3),
    seed=st.integers(0, 2**16),
    depth=st.integers(1, 15),
    ask=st.lists(st.integers(0, 14), max_size=12),
)
def test_query_cosines_equal_the_reference(
    rows: list[tuple[int, int, int]],
    n_views: int,
    seed: int,
    depth: int,
    ask: list[int],
) -> None:
    views = _views(rows, n_views)
    q = np.random.default_rng(seed).normal(size=6)
    cosines = QueryCosines(views, q)
    qn = normalise(q)
    parts = [(view, view.matrix @ qn) for view in views if len(view.owners)]
    reference = ReferenceCosines(parts)

    keys, values = cosines.top(depth)
    ref_keys, ref_values = reference.top(depth)
    assert keys == ref_keys
    assert _same(values.tolist(), ref_values)
    if len(parts) == 1:
        got_rows, got_values = cosines.top_rows(depth)
        ref_rows, ref_row_values = reference.top_rows(depth)
        assert got_rows.tolist() == ref_rows
        assert _same(got_values.tolist(), ref_row_values)
    ids = [f"k{i}" for i in ask]
    got, expected = cosines.of(ids), reference.of(ids)
    assert list(got) == list(expected)  # the same order (fusion breaks exact ties by it)
    assert _same(list(got.values()), list(expected.values()))
    found, at_values = cosines.at(ids)
    ref_found, ref_at = reference.at(ids)
    assert found == ref_found
    assert _same(at_values.tolist(), ref_at)
