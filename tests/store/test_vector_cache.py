"""The in-process vector ranking: blocked products give the same ranking as one product."""

from __future__ import annotations

import numpy as np
import pytest

from langgraph_episodic.chroma.ranking.vectors import (
    GEMV_ROWS,
    BlockView,
    NamespaceVectors,
    block_rows,
    cosines,
    rank,
)


def _unit_rows(n: int, dims: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dims)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.mark.parametrize("dims", [384, 896])
def test_blocked_cosines_equal_one_product_across_block_edges(dims: int) -> None:
    rows = block_rows(dims)
    assert rows * dims <= GEMV_ROWS * 384  # wider vectors: fewer rows per product
    for n in (1, rows - 1, rows, rows + 1, 2 * rows + 17):
        matrix = _unit_rows(n, dims, seed=n)
        q = _unit_rows(1, dims, seed=0)[0]
        got = cosines(matrix, q)
        assert got.shape == (n,)
        np.testing.assert_allclose(got, matrix @ q, rtol=1e-5, atol=1e-6)


def test_rank_over_more_rows_than_a_block_matches_brute_force() -> None:
    n = 2 * GEMV_ROWS + 300  # two vectors per item: items span block edges
    vectors = _unit_rows(n, 384, seed=7)
    block = NamespaceVectors("v1")
    for item in range(n // 2):
        block.replace_item(
            f"i{item}",
            [(f"i{item}#t#text", vectors[2 * item]), (f"i{item}#t#time", vectors[2 * item + 1])],
        )
    q = _unit_rows(1, 384, seed=1)[0]
    got = rank([block.current_view()], q, depth=25)
    best = np.maximum(vectors[0::2] @ q, vectors[1::2] @ q)
    expected = [f"i{j}#t" for j in np.argsort(-best, kind="stable")[:25]]
    assert [key for key, _ in got] == expected
    np.testing.assert_allclose([s for _, s in got], np.sort(best)[::-1][:25], rtol=1e-5)


def test_a_loaded_block_is_the_per_row_block_byte_for_byte() -> None:
    rng = np.random.default_rng(3)
    rows: list[tuple[str, str, np.ndarray]] = []
    for item in range(300):
        for field in range(1 + item % 3):  # items of one to three vectors, read interleaved
            vec = rng.normal(size=16).astype(np.float32) * (0.0 if item == 7 else 3.0)
            rows.append((f"i{item}", f"i{item}.t{item % 5}#{field}", vec))
    rows.sort(key=lambda row: (row[1][-1], row[0]))
    rows.append(("i2", "i2.t2#0", rng.normal(size=16).astype(np.float32)))  # a later duplicate
    per_row = NamespaceVectors("v")
    by_item: dict[str, list[tuple[str, np.ndarray]]] = {}
    for iid, vid, vec in rows:
        by_item.setdefault(iid, []).append((vid, vec))
    for iid, item_rows in by_item.items():
        per_row.replace_item_rows(iid, item_rows)
    expected = per_row.current_view()
    loaded = NamespaceVectors.loaded("v", rows)
    got = loaded.view()
    assert isinstance(got, BlockView)  # built: no per-row rebuild is left for the first search
    assert got.one_per_item == expected.one_per_item
    assert got.matrix.dtype == np.float32
    assert got.matrix.tobytes() == expected.matrix.tobytes()
    assert list(got.owners) == list(expected.owners)
    assert len(loaded) == len(per_row)
    q = rng.normal(size=16).astype(np.float32)
    assert rank([got], q, depth=40) == rank([expected], q, depth=40)


@pytest.mark.parametrize("named", [True, False], ids=["ids-name-items", "other-item-ids"])
def test_a_loaded_block_replaces_an_item_whole_as_one_built_row_by_row(named: bool) -> None:
    """A block loaded from Chroma makes its item -> vector ids map on its first write (from
    the ids, which name their items) or at once (when a caller's ids do not): either way a
    replaced item loses every old row, as in a block built row by row."""
    rng = np.random.default_rng(7)
    item = (lambda iid: iid) if named else (lambda iid: f"other-{iid}")
    rows = [
        (item("a"), "a#0", rng.normal(size=8).astype(np.float32)),
        (item("a"), "a#1", rng.normal(size=8).astype(np.float32)),
        (item("b"), "b.t#0", rng.normal(size=8).astype(np.float32)),
        (item("c"), "c", rng.normal(size=8).astype(np.float32)),
    ]
    loaded = NamespaceVectors.loaded("v", rows)
    reference = NamespaceVectors("v")
    for iid in dict.fromkeys(iid for iid, _, _ in rows):
        reference.replace_item(iid, [(vid, vec) for i, vid, vec in rows if i == iid])
    assert loaded.current_view().one_per_item is reference.current_view().one_per_item is False
    new = rng.normal(size=8).astype(np.float32)
    for block in (loaded, reference):
        block.replace_item(item("a"), [("a#0", new)])
    got, expected = loaded.current_view(), reference.current_view()
    assert sorted(got.owners) == sorted(expected.owners) == ["a", "b.t", "c.item"]
    assert got.one_per_item and expected.one_per_item
    assert len(loaded) == len(reference) == 3
    q = rng.normal(size=8).astype(np.float32)
    assert rank([got], q, depth=5) == rank([expected], q, depth=5)
