"""The numpy BM25 scoring (per frozen shard arrays, ``TermScores``) against the pure-Python
scoring it replaced, kept here as the reference; snapshots never served a stale cache; and
``QueryCosines`` against ``similarities``."""

from __future__ import annotations

import heapq
import math
import threading
from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma.ranking.lexical import LexicalIndex, _Shard
from langgraph_episodic.chroma.ranking.vectors import (
    NamespaceVectors,
    QueryCosines,
    rank,
    similarities,
)

from ._support import switching_every_microsecond, unpacked

Namespace = tuple[str, ...]


# --- the reference: the scoring before issue 16's speed work, verbatim in its arithmetic ------


def reference_scores(
    index: LexicalIndex,
    terms: Mapping[str, float],
    shards: list[_Shard],
    only: list[str] | None = None,
) -> dict[str, float]:
    n_docs = sum(len(shard.lengths) for shard in shards)
    if n_docs == 0:
        return {}
    avgdl = sum(shard.total_length for shard in shards) / n_docs or 1.0
    k1, b = index.k1, index.b
    scores: dict[str, float] = {}
    for term, query_tf in terms.items():
        hits = [(shard, shard.postings[term]) for shard in shards if term in shard.postings]
        df = sum(len(posting) for _, posting in hits)
        if df == 0:
            continue
        weight = query_tf * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)) * (k1 + 1.0)
        for shard, posting in hits:
            lengths = shard.lengths
            if only is None:
                matches = list(posting.items())
            else:
                matches = [(d, posting[d]) for d in only if d in posting]
            for doc_id, tf in matches:
                norm = k1 * (1.0 - b + b * lengths[doc_id] / avgdl)
                scores[doc_id] = scores.get(doc_id, 0.0) + weight * tf / (tf + norm)
    return scores


def shards_of(index: LexicalIndex, namespaces: list[Namespace]) -> list[_Shard]:
    """The shards as dicts (every document in a copy's dicts), for the reference to read."""
    keys = dict.fromkeys(tuple(ns) for ns in namespaces)
    return [unpacked(index._shards[ns]) for ns in keys if ns in index._shards]


def reference_search(
    index: LexicalIndex, terms: Mapping[str, float], namespaces: list[Namespace], k: int
) -> list[tuple[str, float]]:
    if k <= 0 or not terms:
        return []
    scores = reference_scores(index, terms, shards_of(index, namespaces))
    return heapq.nsmallest(k, scores.items(), key=lambda item: (-item[1], item[0]))


def reference_of(
    index: LexicalIndex, terms: Mapping[str, float], namespaces: list[Namespace], ids: list[str]
) -> dict[str, float]:
    shards = shards_of(index, namespaces)
    wanted = list(dict.fromkeys(ids))
    known = [d for d in wanted if any(d in shard.lengths for shard in shards)]
    found = reference_scores(index, terms, shards, only=known) if terms else {}
    return {doc_id: found.get(doc_id, 0.0) for doc_id in known}


def reference_max(
    index: LexicalIndex, terms: Mapping[str, float], namespaces: list[Namespace]
) -> float:
    shards = shards_of(index, namespaces)
    n_docs = sum(len(shard.lengths) for shard in shards)
    total = 0.0
    for term, weight in terms.items():
        df = sum(len(shard.postings.get(term, ())) for shard in shards)
        total += weight * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
    return total * (index.k1 + 1.0)


def assert_same(
    index: LexicalIndex,
    terms: Mapping[str, float],
    namespaces: list[Namespace],
    k: int,
    truth: LexicalIndex | None = None,
) -> None:
    """Every read path equals the reference exactly (the same float operations in the same
    order), ties by doc id included. ``truth``: an index holding the same documents that the
    reference reads instead of ``index`` (one only ever written document by document, so its
    dicts owe nothing to the packed form under test)."""
    truth = truth if truth is not None else index
    all_ids = [d for shard in shards_of(truth, namespaces) for d in shard.lengths]
    expected_top = reference_search(truth, terms, namespaces, k)
    expected_of = reference_of(truth, terms, namespaces, [*reversed(all_ids), "nope"])
    expected_max = reference_max(truth, terms, namespaces)
    # the reference read the dicts; the arrays are built now (or were, by an earlier search)
    scored = index.score_terms(terms, namespaces)
    assert scored.of([*reversed(all_ids), "nope"]) == expected_of
    assert (scored.top(k) if terms else []) == expected_top
    assert scored.max_score == expected_max


# --- random corpora, writes between snapshots ---------------------------------------------

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
NAMESPACES: list[Namespace] = [("u", "a"), ("u", "b"), ("v",)]

texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
doc_ids = st.sampled_from([f"d{i}" for i in range(12)])
writes = st.lists(
    st.tuples(st.sampled_from(["upsert", "remove", "reload"]), doc_ids, texts),
    min_size=1,
    max_size=12,
)
"""``reload``: the doc's namespace built again from what it holds (a packed shard, as a first
search builds), so later writes unpack it."""
queries = st.dictionaries(
    st.sampled_from([*WORDS, "unknown"]),
    st.one_of(st.integers(1, 3).map(float), st.floats(0.01, 2.0)),
    max_size=6,
)


def plain(text: str) -> list[str]:
    return text.split()


@settings(max_examples=150, deadline=None)
@given(
    rounds=st.lists(st.tuples(writes, queries), min_size=1, max_size=5),
    scope=st.lists(st.sampled_from(NAMESPACES), min_size=1, max_size=3),
    k=st.integers(0, 14),
    b=st.sampled_from([0.0, 0.3, 0.75, 1.0]),
)
def test_array_scoring_equals_the_reference_after_any_writes(
    rounds: list[tuple[list[tuple[str, str, str]], dict[str, float]]],
    scope: list[Namespace],
    k: int,
    b: float,
) -> None:
    index = LexicalIndex(tokenizer=plain, b=b)
    truth = LexicalIndex(tokenizer=plain, b=b)  # the same writes, never reloaded
    home: dict[str, Namespace] = {}  # doc ids are unique across namespaces, as documented
    held: dict[Namespace, dict[str, str]] = {ns: {} for ns in NAMESPACES}
    for round_writes, query in rounds:
        for action, doc_id, text in round_writes:
            ns = home.setdefault(doc_id, NAMESPACES[int(doc_id[1:]) % len(NAMESPACES)])
            if action == "upsert":
                index.upsert(ns, doc_id, text)
                truth.upsert(ns, doc_id, text)
                held[ns][doc_id] = text
            elif action == "remove":
                index.remove(ns, doc_id)
                truth.remove(ns, doc_id)
                held[ns].pop(doc_id, None)
            else:
                index.load(ns, list(held[ns].items()))
        view = index.snapshot(scope)
        assert_same(view, query, scope, k, truth)
        assert_same(view, query, scope, k, truth)  # again: now from the arrays built above
        assert_same(index, query, scope, k, truth)  # the live index, shards frozen by the read


def test_a_snapshot_keeps_its_scores_and_the_next_one_sees_the_write() -> None:
    index = LexicalIndex(tokenizer=plain)
    ns = ("u",)
    index.upsert_many([(ns, "a", "alpha beta"), (ns, "b", "beta"), (ns, "c", "gamma")])
    before = index.snapshot([ns])
    first = before.score_terms({"beta": 1.0}, [ns]).top(5)  # builds the shard's arrays
    index.upsert(ns, "c", "beta beta")  # thaws: a copy changes, the snapshot's shard does not
    index.remove(ns, "a")
    assert before.score_terms({"beta": 1.0}, [ns]).top(5) == first
    after = index.snapshot([ns])
    assert [d for d, _ in after.score_terms({"beta": 1.0}, [ns]).top(5)] == ["c", "b"]
    assert_same(after, {"beta": 1.0, "alpha": 1.0}, [ns], 5)


def test_a_frozen_shard_refuses_changes() -> None:
    index = LexicalIndex(tokenizer=plain)
    index.upsert(("u",), "a", "alpha")
    index.snapshot([("u",)])
    shard = index._shards[("u",)]
    with pytest.raises(RuntimeError, match="thaw"):
        shard.add("b", ["beta"])
    with pytest.raises(RuntimeError, match="thaw"):
        shard.discard("a")


@pytest.mark.parametrize("reload", [False, True], ids=["writes", "writes-and-reloads"])
def test_readers_building_arrays_while_a_writer_thaws_never_see_a_stale_or_torn_shard(
    reload: bool,
) -> None:
    """Each write puts generation ``g`` in both documents ("gen{g}" once in a, twice in b).
    A reader's snapshot must score one whole generation: both documents hold the same one,
    its scores equal the reference on that snapshot, and a reader never goes back to an
    older generation than one it saw (no stale arrays served after a newer write). With
    ``reload``, every other generation comes as a namespace built again (a packed shard, which
    the next write unpacks)."""
    index = LexicalIndex(tokenizer=plain)
    ns = ("u",)
    generations = 300
    index.upsert_many([(ns, "a", "gen0 x"), (ns, "b", "gen0 gen0 y")])
    barrier = threading.Barrier(4)
    errors: list[str] = []

    def writer() -> None:
        barrier.wait()
        for g in range(1, generations + 1):
            if reload and g % 2:
                index.load(ns, [("a", f"gen{g} x"), ("b", f"gen{g} gen{g} y")])
            else:
                index.upsert_many([(ns, "a", f"gen{g} x"), (ns, "b", f"gen{g} gen{g} y")])

    def reader() -> None:
        barrier.wait()
        seen = 0
        for _ in range(generations):
            view = index.snapshot([ns])
            (shard,) = shards_of(view, [ns])
            (gen_a,) = [t for t in shard.terms["a"] if t.startswith("gen")]
            (gen_b,) = [t for t in shard.terms["b"] if t.startswith("gen")]
            g = int(gen_a[3:])
            if gen_a != gen_b:
                errors.append(f"torn snapshot: {gen_a} / {gen_b}")
            if g < seen:
                errors.append(f"went back from gen{seen} to gen{g}")
            seen = g
            query = {gen_a: 1.0, "y": 0.5}
            got = view.score_terms(query, [ns]).top(5)
            if got != reference_search(view, query, [ns], 5):
                errors.append(f"gen{g}: {got}")
            if [d for d, _ in view.score_terms({gen_a: 1.0}, [ns]).top(5)] != ["b", "a"]:
                errors.append(f"gen{g}: not both documents")
            live = index.score_terms({gen_a: 1.0}, [ns]).top(5)  # the live index, same moment
            if live and [d for d, _ in live] != ["b", "a"]:
                errors.append(f"live gen{g}: {live}")

    with switching_every_microsecond():
        threads = [threading.Thread(target=writer)] + [
            threading.Thread(target=reader) for _ in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    final = index.snapshot([ns])
    assert [d for d, _ in final.score_terms({f"gen{generations}": 1.0}, [ns]).top(5)] == ["b", "a"]
    assert final.score_terms({"gen0": 1.0}, [ns]).top(5) == []


# --- QueryCosines against rank / similarities ----------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3)), min_size=1, max_size=40),
    seed=st.integers(0, 2**16),
    depth=st.integers(1, 12),
    ask=st.lists(st.integers(0, 12), max_size=10),
)
def test_query_cosines_rank_and_look_up_as_rank_and_similarities(
    rows: list[tuple[int, int]], seed: int, depth: int, ask: list[int]
) -> None:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(4, 8))  # few distinct vectors: exact ties happen
    blocks = [NamespaceVectors("v1"), NamespaceVectors("v1")]
    for n, (item, vec) in enumerate(rows):
        block = blocks[item % 2]
        block.replace_item_rows(f"k{item}", [(f"k{item}#r{n}", base[vec].tolist())])
    views = [block.current_view() for block in blocks]
    q = rng.normal(size=8)
    cos = QueryCosines(views, q)
    assert cos.rank(depth) == rank(views, q, depth)
    ids = [f"k{i}" for i in ask]
    got, expected = cos.of(ids), similarities(views, q, ids)
    assert list(got) == list(expected)  # the same order (fusion breaks exact ties by it)
    assert got == pytest.approx(expected, abs=1e-6)
