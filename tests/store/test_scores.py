"""What a hybrid search score means: ``0.35 * cosine + 0.65 * lexical share``, the same scale
for every query and namespace, monotone in relevance; floors on it are honoured."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT
from langgraph_episodic.chroma.testing import bm25_k1
from langgraph_episodic.embeddings import packaged_index
from langgraph_episodic.episodic import EpisodicMemory
from langgraph_episodic.episodic.records import Episode, Feedback, TaskDescription

DENSE_WEIGHT = 1.0 - LEXICAL_WEIGHT


class AngleEmbeddings(Embeddings):
    """2-d unit vectors: a text ending in "@<degrees>" points that many degrees from the
    x-axis, everything else (questions) along the x-axis. So cos(text, question) is known."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)

    @staticmethod
    def _vec(text: str) -> list[float]:
        angle = float(text.rsplit("@", 1)[1]) if "@" in text else 0.0
        return [math.cos(math.radians(angle)), math.sin(math.radians(angle))]


def cos(degrees: float) -> float:
    return math.cos(math.radians(degrees))


def make() -> ChromaStore:
    return ChromaStore.ephemeral(index={"dims": 2, "embed": AngleEmbeddings(), "fields": ["text"]})


def scores(store: Any, prefix: tuple[str, ...], query: str) -> dict[str, float]:
    return {h.key: h.score for h in store.search(prefix, query=query, limit=50)}


def test_an_unrelated_best_candidate_is_not_lifted_to_a_perfect_score() -> None:
    store = make()
    store.put(("u",), "only", {"text": "pasta for dinner @80"})
    (hit,) = store.search(("u",), query="which editor")
    assert hit.score == pytest.approx(DENSE_WEIGHT * cos(80))
    assert hit.score < 0.1


def test_the_score_is_the_weighted_cosine_plus_the_lexical_share() -> None:
    store = make()
    store.put(("u",), "all", {"text": "neovim editor @60"})
    store.put(("u",), "none", {"text": "pasta dinner @30"})
    got = scores(store, ("u",), "neovim editor")
    assert got["none"] == pytest.approx(DENSE_WEIGHT * cos(30))
    # Every query term once in a document of average length: 1 / (k1 + 1) of the maximum.
    share = (got["all"] - DENSE_WEIGHT * cos(60)) / LEXICAL_WEIGHT
    assert share == pytest.approx(1 / (1 + bm25_k1(store)))
    assert min(got.values()) >= 0.0 and max(got.values()) <= 1.0


def test_scores_are_the_same_whichever_namespaces_are_searched_with_them() -> None:
    store = make()
    store.put(("users", "a"), "x", {"text": "coffee black @20"})
    store.put(("users", "a"), "y", {"text": "tea green @40"})
    store.put(("users", "b"), "z", {"text": "coffee latte @10"})
    store.put(("users", "b"), "w", {"text": "bicycle commute @70"})
    alone_a = scores(store, ("users", "a"), "coffee")
    alone_b = scores(store, ("users", "b"), "coffee")
    together = scores(store, ("users",), "coffee")
    # A one-term query's share does not depend on idf; documents of equal length keep their score.
    assert together["x"] == pytest.approx(alone_a["x"])
    assert together["z"] == pytest.approx(alone_b["z"])
    assert together["y"] == pytest.approx(alone_a["y"]) == pytest.approx(DENSE_WEIGHT * cos(40))


def test_scores_are_monotone_in_relevance() -> None:
    store = make()
    # Same angle: only the lexical side differs (0, 1, 2 or 3 of the query's terms).
    for n, text in enumerate(["apple pie", "neovim pie", "neovim lua pie", "neovim lua config"]):
        store.put(("u",), f"d{n}", {"text": f"{text} @45"})
    # Same terms: only the angle differs.
    for angle in (10, 30, 50, 70):
        store.put(("v",), f"a{angle}", {"text": f"salad @{angle}"})
    lexical = store.search(("u",), query="neovim lua config", limit=4)
    assert [h.key for h in lexical] == ["d3", "d2", "d1", "d0"]
    assert [h.score for h in lexical] == sorted((h.score for h in lexical), reverse=True)
    assert len({h.score for h in lexical}) == 4
    dense = store.search(("v",), query="which editor", limit=4)
    assert [h.key for h in dense] == ["a10", "a30", "a50", "a70"]
    assert all(a.score > b.score for a, b in itertools.pairwise(dense))


def _episode(n: int, text: str) -> Episode:
    return Episode.new(
        TaskDescription(text), "done", Feedback(reward=1.0), "success", episode_id=f"e{n}"
    )


@pytest.mark.parametrize("kind", ["chroma", "memory"])
def test_episodic_recall_honours_the_floor(kind: str) -> None:
    index: Any = {"dims": 2, "embed": AngleEmbeddings(), "fields": ["text"]}
    store = make() if kind == "chroma" else InMemoryStore(index=index)
    memory = EpisodicMemory(store, ("episodes", "alice"))
    memory.record(_episode(1, "fix the date parser @5"))
    memory.record(_episode(2, "bake bread @85"))
    every = memory.recall("fix the date parser", top_k=5, min_score=None)
    assert {r.episode.episode_id for r in every} == {"e1", "e2"}
    floored = memory.recall("fix the date parser", top_k=5, min_score=0.3)
    assert [r.episode.episode_id for r in floored] == ["e1"]
    assert all(r.similarity >= 0.3 for r in floored)
    assert memory.recall("fix the date parser", top_k=5, min_score=1.01) == []


@pytest.mark.model
def test_searching_every_namespace_ranks_the_relevant_record_above_bookkeeping() -> None:
    """The CLI's ``search`` over all namespaces (issue 16: the demo's progress record and an
    entity named "Find" came first for a date-parser question under min-max fusion)."""
    store = ChromaStore.ephemeral(index=packaged_index())  # the packaged MiniLM model
    store.put(("demo_runs", "demo"), "progress", {"seed": 7, "next_task": 40, "runs": 1, "policy": "thompson"})
    store.put(
        ("entities", "demo"),
        "find",
        {"name": "Find", "description": "Find and fix the crash in the rate limiter.",
         "text": "Find: Find and fix the crash in the rate limiter."},
    )
    tasks = ["Write a new date parser module", "Find and fix the crash in the date parser",
             "Add pagination to the users endpoint"]
    for n, text in enumerate(tasks):
        store.put(("episodes", "demo"), f"e{n}", {"text": text}, index=["text"])
    hits = store.search((), query="fix the crash in the date parser", limit=5)
    assert hits[0].key == "e1"
    progress = next(h for h in hits if h.key == "progress")
    assert progress.score is not None and progress.score < 0.12  # below the tools' floor
    assert [h.key for h in hits].index("progress") > [h.key for h in hits].index("e0")
