"""The in-process vector ranking: blocked products give the same ranking as one product."""

from __future__ import annotations

import numpy as np
import pytest

from langgraph_episodic.chroma.ranking.vectors import (
    GEMV_ROWS,
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
