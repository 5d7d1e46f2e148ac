"""``ChromaStore.explain``: the hits of ``search`` with what each score is made of, computed by
the same stages; its order and scores are the search's, and its parts add up to the score."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT

WORDS = ["kayak", "lake", "coffee", "roast", "berlin", "trip", "dark", "may", "june", "museum"]
DAYS = ["May 8", "May 9", "June 1"]

memories = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
        st.sampled_from(DAYS),
        st.sampled_from(["a", "b"]),
        st.sampled_from(["u1", "u2"]),
    ),
    min_size=1,
    max_size=25,
)


def _store(mode: str, fields: list[str]) -> ChromaStore:
    return ChromaStore.ephemeral(
        index={"dims": 32, "embed": HashEmbeddings(32), "fields": fields}, search_mode=mode
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=memories,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    mode=st.sampled_from(["hybrid", "dense", "lexical"]),
    dated=st.booleans(),
    limit=st.integers(1, 8),
    offset=st.integers(0, 3),
    filtered=st.booleans(),
)
def test_explain_gives_the_hits_and_scores_of_search(
    docs: list[tuple[str, str, str, str]],
    query: str,
    mode: str,
    dated: bool,
    limit: int,
    offset: int,
    filtered: bool,
) -> None:
    store = _store(mode, ["text", "time"] if dated else ["text"])
    try:
        for n, (text, day, who, user) in enumerate(docs):
            store.put(("users", user), f"k{n}", {"text": text, "time": day, "who": who})
        args: dict[str, Any] = {"query": query, "limit": limit, "offset": offset}
        if filtered:
            args["filter"] = {"who": "a"}
        found = store.search(("users",), **args)
        explained = store.explain(("users",), **args, floor=0.2)
        assert [(tuple(h.item.namespace), h.item.key) for h in explained.hits] == [
            (tuple(h.namespace), h.key) for h in found
        ]
        assert [h.score for h in explained.hits] == [h.score for h in found]
        assert [h.rank for h in explained.hits] == list(range(offset + 1, offset + 1 + len(found)))
        for hit in explained.hits:
            assert hit.below_floor == (hit.score is None or hit.score < 0.2)
            if mode == "hybrid":
                assert hit.fused is not None and hit.score is not None
                # the parts add up to the fused score, and the lift to the rest
                assert math.isclose(hit.dense_part + hit.lexical_part, hit.fused, abs_tol=1e-12)
                assert math.isclose(hit.fused + hit.lift, hit.score, abs_tol=1e-12)
                assert hit.lift >= 0.0
                if not dated:
                    assert hit.lift == 0.0
            if mode == "dense":
                assert hit.cosine == hit.score
        assert explained.lexical_weight == LEXICAL_WEIGHT
        assert set(explained.under_floor) | set(explained.above_floor) == set(explained.hits)
    finally:
        store.close()


def test_a_lifted_hit_shows_its_lift() -> None:
    """A memory of the same day as the best hit, sharing no word with the question, is lifted
    above one of another day; its breakdown says the lift did it."""
    store = _store("hybrid", ["text", "time"])
    try:
        store.put(("u",), "best", {"text": "kayak trip on the lake", "time": "May 8"})
        store.put(("u",), "same-day", {"text": "coffee in berlin", "time": "May 8"})
        store.put(("u",), "other-day", {"text": "coffee museum", "time": "June 1"})
        hits = {h.item.key: h for h in store.explain(("u",), query="kayak trip", limit=3).hits}
        assert hits["same-day"].lift > 0.0
        assert hits["other-day"].lift == 0.0
        assert hits["best"].lift == 0.0
    finally:
        store.close()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=memories,
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    store_mode=st.sampled_from(["hybrid", "lexical"]),
    mode=st.sampled_from(["hybrid", "dense", "lexical"]),
    limit=st.integers(1, 8),
)
def test_a_mode_ranks_one_call_as_a_store_of_that_mode(
    docs: list[tuple[str, str, str, str]], query: str, store_mode: str, mode: str, limit: int
) -> None:
    """``explain(..., mode=m)`` gives the hits and scores a store of ``search_mode=m`` gives,
    and leaves the store's own searches as they were."""
    store, other = _store(store_mode, ["text"]), _store(mode, ["text"])
    try:
        for n, (text, _day, who, user) in enumerate(docs):
            for s in (store, other):
                s.put(("users", user), f"k{n}", {"text": text, "who": who})
        before = [(h.key, h.score) for h in store.search(("users",), query=query, limit=limit)]
        explained = store.explain(("users",), query=query, limit=limit, mode=mode)  # type: ignore[arg-type]  # (sampled from the modes)
        expected = other.search(("users",), query=query, limit=limit)
        assert explained.mode == mode
        assert [(h.item.key, h.score) for h in explained.hits] == [(h.key, h.score) for h in expected]
        after = [(h.key, h.score) for h in store.search(("users",), query=query, limit=limit)]
        assert after == before
    finally:
        store.close()
        other.close()


def test_a_mode_the_store_cannot_rank_by_is_refused_with_the_fix() -> None:
    plain = ChromaStore.ephemeral(index=None)
    hybrid = _store("hybrid", ["text"])
    try:
        plain.put(("u",), "k", {"text": "coffee"})
        with pytest.raises(ValueError, match=r"ranks by vectors.*open the store with an index"):
            plain.explain(("u",), query="coffee", mode="dense")
        with pytest.raises(ValueError, match="'hybrid', 'dense', 'lexical'"):
            hybrid.explain(("u",), query="coffee", mode="cosine")  # type: ignore[arg-type]  # (the wrong value under test)
        assert plain.get(("u",), "k") is not None  # nothing lost
    finally:
        plain.close()
        hybrid.close()
