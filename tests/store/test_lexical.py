"""The in-memory BM25 index: scoring, updates without stale terms, removes, drops, scoping."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rank_bm25 import BM25Okapi

from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.language.analysis import s_stem, tokenize

from ._support import CHROMA_BACKENDS, PERSISTENT, FakeClock, backend_param

ALICE = ("alice",)
ALICE2 = ("alice2",)
BOB = ("bob",)


class LuceneIdfBM25(BM25Okapi):
    """rank_bm25's Okapi BM25 with Lucene's idf, ln(1 + (N - df + 0.5) / (df + 0.5)).

    rank_bm25 uses ln((N - df + 0.5) / (df + 0.5)) with negative values floored at
    ``epsilon * mean idf``; our index uses Lucene's always-positive variant. Everything else
    (tf saturation with k1, length normalisation with b and avgdl) is rank_bm25's own code.
    """

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


CORPUS = [
    "The deploy failed with ECONNREFUSED on port 5432 again",
    "Postgres listens on port 5432 by default",
    "We had pasta for dinner and the pasta was great",
    "The nightly deploy succeeded after the retry",
    "ECONNREFUSED means nothing listens on that port",
    "Dinner plans: pasta, salad, and a walk",
]


def ids_of(results: list[tuple[str, float]]) -> list[str]:
    return [doc_id for doc_id, _ in results]


def fresh(docs: dict[tuple[str, ...], dict[str, str]]) -> LexicalIndex:
    index = LexicalIndex()
    index.upsert_many(
        (ns, doc_id, text) for ns, texts in docs.items() for doc_id, text in texts.items()
    )
    return index


# --- scoring -------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["deploy port", "pasta dinner", "ECONNREFUSED 5432", "walk"])
def test_scores_match_rank_bm25_with_the_same_idf(query: str) -> None:
    index = LexicalIndex(k1=1.2, b=0.75)
    index.upsert_many((ALICE, f"d{i}", text) for i, text in enumerate(CORPUS))
    reference = LuceneIdfBM25([tokenize(t) for t in CORPUS], k1=1.2, b=0.75)
    expected = reference.get_scores(tokenize(query))

    got = dict(index.search(query, [ALICE], k=len(CORPUS)))

    for i, score in enumerate(expected):
        if score > 0:
            assert got[f"d{i}"] == pytest.approx(score)
        else:
            assert f"d{i}" not in got


def test_ranking_agrees_with_plain_rank_bm25_where_idf_variants_agree_in_order() -> None:
    # Every query term is in fewer than half the documents, so both idf variants are positive
    # and ordered alike; with one query term the rankings must then be identical.
    index = LexicalIndex(k1=1.5, b=0.75)
    index.upsert_many((ALICE, f"d{i}", text) for i, text in enumerate(CORPUS))
    reference = BM25Okapi([tokenize(t) for t in CORPUS], k1=1.5, b=0.75)
    for query in ["pasta", "deploy", "ECONNREFUSED", "listens"]:
        scores = reference.get_scores(tokenize(query))
        expected = sorted(
            (i for i in range(len(CORPUS)) if scores[i] > 0), key=lambda i: (-scores[i], f"d{i}")
        )
        assert ids_of(index.search(query, [ALICE], k=10)) == [f"d{i}" for i in expected]


def test_results_are_best_first_and_limited_to_k() -> None:
    index = fresh({ALICE: {f"d{i}": t for i, t in enumerate(CORPUS)}})
    results = index.search("port deploy pasta", [ALICE], k=3)
    assert len(results) == 3
    assert [s for _, s in results] == sorted((s for _, s in results), reverse=True)
    assert index.search("port", [ALICE], k=0) == []


def test_only_documents_sharing_a_term_are_returned() -> None:
    index = fresh({ALICE: {"a": "red apples", "b": "green pears"}})
    assert ids_of(index.search("apples", [ALICE], k=10)) == ["a"]
    assert index.search("bananas", [ALICE], k=10) == []


def test_a_query_of_stopwords_only_finds_nothing() -> None:
    index = fresh({ALICE: {"a": "the and of", "b": "der die das und"}})
    assert index.search("The AND of und", [ALICE], k=10) == []


def test_ties_are_broken_by_doc_id() -> None:
    index = fresh({ALICE: {"z": "same words here", "a": "same words here", "m": "same words here"}})
    assert ids_of(index.search("words", [ALICE], k=10)) == ["a", "m", "z"]


def test_allowed_filters_before_the_top_k_is_taken() -> None:
    index = fresh({ALICE: {f"d{i}": "coffee " * (i + 1) for i in range(6)}})
    everything = ids_of(index.search("coffee", [ALICE], k=6))
    kept = ids_of(index.search("coffee", [ALICE], k=2, allowed=lambda d: d in {"d0", "d1", "d2"}))
    assert len(kept) == 2
    assert set(kept) <= {"d0", "d1", "d2"}
    assert kept == [d for d in everything if d in {"d0", "d1", "d2"}][:2]


def test_scores_of_given_documents_match_search_and_zero_for_no_shared_term() -> None:
    index = fresh({ALICE: {f"d{i}": t for i, t in enumerate(CORPUS)}, BOB: {"b1": "pasta"}})
    searched = dict(index.search("pasta port", [ALICE], k=10))
    scores = index.scores("pasta port", [ALICE], ["d0", "d2", "d3", "b1", "unknown"])
    assert set(scores) == {"d0", "d2", "d3"}  # b1 is not in ALICE, unknown is not indexed
    assert scores["d0"] == pytest.approx(searched["d0"])
    assert scores["d2"] == pytest.approx(searched["d2"])
    assert scores["d3"] == 0.0  # shares no term with the query


# --- updates, removes, drops: no stale statistics ------------------------------------------


def test_upserting_an_existing_id_replaces_its_terms() -> None:
    index = fresh({ALICE: {"m1": "meeting with the dentist", "m2": "dentist bill paid"}})
    index.upsert(ALICE, "m1", "meeting with the plumber")

    assert index.search("meeting", [ALICE], k=10)[0][0] == "m1"
    assert ids_of(index.search("dentist", [ALICE], k=10)) == ["m2"]
    assert index.doc_count([ALICE]) == 2
    expected = fresh({ALICE: {"m1": "meeting with the plumber", "m2": "dentist bill paid"}})
    for query in ["dentist", "plumber", "meeting bill"]:
        assert index.search(query, [ALICE], k=10) == expected.search(query, [ALICE], k=10)


def test_remove_forgets_a_document_and_its_statistics() -> None:
    index = fresh({ALICE: {"a": "coffee beans", "b": "coffee mug", "c": "tea leaves"}})
    index.remove(ALICE, "b")
    index.remove(ALICE, "never-there")
    index.remove(("nobody",), "b")

    expected = fresh({ALICE: {"a": "coffee beans", "c": "tea leaves"}})
    assert index.search("coffee mug", [ALICE], k=10) == expected.search("coffee mug", [ALICE], k=10)
    assert index.doc_count([ALICE]) == 2
    assert index.has_namespace(ALICE)


def test_drop_namespace_forgets_it_and_nothing_else() -> None:
    index = fresh(
        {ALICE: {"a": "coffee"}, ("alice", "work"): {"w": "coffee at work"}, BOB: {"b": "coffee"}}
    )
    index.drop_namespace(ALICE)

    assert not index.has_namespace(ALICE)
    assert index.search("coffee", [ALICE], k=10) == []
    assert ids_of(index.search("coffee", [("alice", "work")], k=10)) == ["w"]
    assert ids_of(index.search("coffee", [BOB], k=10)) == ["b"]


def test_load_replaces_a_namespace_and_marks_empty_ones_loaded() -> None:
    index = fresh({ALICE: {"old": "stale words"}})
    index.load(ALICE, [("new", "fresh words")])
    assert ids_of(index.search("words", [ALICE], k=10)) == ["new"]
    assert index.search("stale", [ALICE], k=10) == []

    index.load(BOB, [])
    assert index.has_namespace(BOB)
    assert index.doc_count([BOB]) == 0
    index.clear()
    assert not index.has_namespace(ALICE)


OPS = st.lists(
    st.tuples(
        st.sampled_from(["upsert", "upsert", "upsert", "remove", "drop"]),
        st.sampled_from([ALICE, ALICE2, BOB]),
        st.sampled_from(["k1", "k2", "k3", "k4"]),
        st.lists(st.sampled_from(["coffee", "tea", "deploy", "port", "pasta", "walk"]), max_size=6),
    ),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(
    ops=OPS,
    query=st.lists(
        st.sampled_from(["coffee", "tea", "deploy", "port", "pasta"]), min_size=1, max_size=3
    ),
)
def test_any_history_scores_like_an_index_built_from_the_final_contents(
    ops: list[tuple[str, tuple[str, ...], str, list[str]]], query: list[str]
) -> None:
    index = LexicalIndex()
    model: dict[tuple[str, ...], dict[str, str]] = {}
    for op, ns, doc_id, words in ops:
        if op == "upsert":
            index.upsert(ns, doc_id, " ".join(words))
            model.setdefault(ns, {})[doc_id] = " ".join(words)
        elif op == "remove":
            index.remove(ns, doc_id)
            model.get(ns, {}).pop(doc_id, None)
        else:
            index.drop_namespace(ns)
            model.pop(ns, None)
    expected = fresh(model)
    text = " ".join(query)
    for scope in ([ALICE], [ALICE, BOB], [ALICE, ALICE2, BOB]):
        got = index.search(text, scope, k=10)
        want = expected.search(text, scope, k=10)
        assert ids_of(got) == ids_of(want)
        assert [s for _, s in got] == pytest.approx([s for _, s in want])
        assert index.doc_count(scope) == expected.doc_count(scope)


# --- namespaces: scoping and per-namespace statistics --------------------------------------


def test_search_never_crosses_into_a_namespace_sharing_a_prefix_string() -> None:
    index = fresh({ALICE: {"a1": "my secret is coffee"}, ALICE2: {"x1": "my secret is coffee"}})
    assert ids_of(index.search("secret coffee", [ALICE], k=10)) == ["a1"]
    assert ids_of(index.search("secret coffee", [ALICE2], k=10)) == ["x1"]
    assert index.search("secret", [("alic",)], k=10) == []


def test_child_namespaces_are_separate_unless_named() -> None:
    index = fresh({ALICE: {"a": "coffee"}, ("alice", "work"): {"w": "coffee"}})
    assert ids_of(index.search("coffee", [ALICE], k=10)) == ["a"]
    assert sorted(ids_of(index.search("coffee", [ALICE, ("alice", "work")], k=10))) == ["a", "w"]
    assert index.namespaces(ALICE) == [ALICE, ("alice", "work")]
    assert index.namespaces(("alic",)) == []


def test_statistics_come_from_the_searched_namespaces_only() -> None:
    alice = {"a1": "coffee with milk", "a2": "walk in the park", "a3": "read a book"}
    # bob says "coffee" everywhere: that must not make coffee a common word for alice
    bob = {f"b{i}": "coffee coffee" for i in range(50)}
    index = fresh({ALICE: alice, BOB: bob})
    alone = fresh({ALICE: alice})
    assert index.search("coffee", [ALICE], k=10) == alone.search("coffee", [ALICE], k=10)
    both = dict(index.search("coffee", [ALICE, BOB], k=100))
    assert both["a1"] < dict(alone.search("coffee", [ALICE], k=10))["a1"]


def test_repeated_namespaces_in_a_search_count_once() -> None:
    index = fresh({ALICE: {f"d{i}": t for i, t in enumerate(CORPUS)}})
    assert index.search("pasta port", [ALICE, ALICE], k=10) == index.search(
        "pasta port", [ALICE], k=10
    )


# --- tokenizer -----------------------------------------------------------------------------


def test_tokenizer_drops_english_and_german_stopwords_and_keeps_content() -> None:
    assert tokenize("The cat and the hat were on the mat") == ["cat", "hat", "mat"]
    assert tokenize("Der Hund und der Igel sind nicht hier") == ["hund", "igel"]
    # German stopwords that are English content words stay
    assert tokenize("the war ended, the man wore a hat") == ["war", "ended", "man", "wore", "hat"]


def test_tokenizer_lowercases_unicode_words_and_keeps_identifiers() -> None:
    assert tokenize("Müller fixed parse_config() in ÉCOLE.py") == [
        "müller",
        "fixed",
        "parse_config",
        "école",
        "py",
    ]
    assert tokenize("Caroline's dog") == ["caroline", "dog"]
    assert tokenize("I don't know") == ["know"]
    assert tokenize("I’m here") == tokenize("I'm here") == []


def test_plural_stemming_is_opt_in() -> None:
    assert tokenize("parties and boxes") == ["parties", "boxes"]
    assert tokenize("parties and boxes", stem=True) == ["party", "boxe"]
    assert s_stem("glass") == "glass"
    assert s_stem("status") == "status"


def test_a_custom_tokenizer_is_used_for_documents_and_queries() -> None:
    index = LexicalIndex(tokenizer=partial(tokenize, stem=True))
    index.upsert(ALICE, "a", "two parties")
    assert ids_of(index.search("party", [ALICE], k=10)) == ["a"]
    chars = LexicalIndex(tokenizer=list)
    chars.upsert(ALICE, "a", "xyz")
    assert ids_of(chars.search("zz", [ALICE], k=10)) == ["a"]


def test_invalid_parameters_are_refused_with_the_range() -> None:
    with pytest.raises(ValueError, match="0 <= b <= 1"):
        LexicalIndex(b=1.5)
    with pytest.raises(ValueError, match="k1 >= 0"):
        LexicalIndex(k1=-1)


# --- through ChromaStore: the lexical side stays right under writes, TTL and reopen ----------
# These use only the public store API; "lexical" mode isolates the index, "hybrid" uses it
# alongside the dense ranking.

SHOP = ("shop",)


def keys(results: list[Any]) -> list[str]:
    return [item.key for item in results]


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_store_update_leaves_no_stale_terms(make_store: Any) -> None:
    store = make_store(search_mode="lexical")
    store.put(SHOP, "k1", {"text": "dentist appointment on Tuesday"})
    store.put(SHOP, "k2", {"text": "the dentist sent a bill"})
    store.put(SHOP, "k1", {"text": "plumber visit on Friday"})

    assert keys(store.search(SHOP, query="dentist")) == ["k2"]
    assert keys(store.search(SHOP, query="plumber")) == ["k1"]
    assert keys(store.search(SHOP, query="Tuesday")) == []


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_store_delete_removes_the_document(make_store: Any, mode: str) -> None:
    store = make_store(search_mode=mode)
    store.put(SHOP, "gone", {"text": "ECONNREFUSED on port 5432"})
    store.put(SHOP, "kept", {"text": "pasta for dinner"})
    store.delete(SHOP, "gone")

    assert "gone" not in keys(store.search(SHOP, query="ECONNREFUSED 5432"))
    if mode == "lexical":
        assert keys(store.search(SHOP, query="ECONNREFUSED 5432")) == []


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_store_search_stays_in_its_namespace(make_store: Any, mode: str) -> None:
    store = make_store(search_mode=mode)
    store.put(("alice",), "a", {"text": "my locker code is 4417"})
    store.put(("alice2",), "x", {"text": "my locker code is 4417"})
    store.put(("alice", "work"), "w", {"text": "locker code at work 4417"})

    assert keys(store.search(("alice2",), query="locker code 4417")) == ["x"]
    assert sorted(keys(store.search(("alice",), query="locker code 4417"))) == ["a", "w"]


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_store_hybrid_ranks_an_exact_rare_term_first(make_store: Any) -> None:
    store = make_store(search_mode="hybrid")
    store.put(SHOP, "err", {"text": "the build failed with error E1107 in the linker"})
    for i in range(8):
        store.put(SHOP, f"n{i}", {"text": f"the build failed again, attempt {i}, in the linker"})

    results = store.search(SHOP, query="E1107", limit=3)
    assert results[0].key == "err"
    assert all(0.0 <= (item.score or 0.0) <= 1.0 for item in results)


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_store_expired_items_are_not_found_before_or_after_a_sweep(
    make_store: Any, mode: str
) -> None:
    clock = FakeClock()
    store = make_store(search_mode=mode, clock=clock)
    store.put(SHOP, "brief", {"text": "temporary wifi password zebra42"}, ttl=1)
    store.put(SHOP, "stays", {"text": "permanent wifi password zebra42"})
    clock.advance(minutes=2)

    assert keys(store.search(SHOP, query="zebra42")) == ["stays"]
    store.sweep_ttl()
    assert keys(store.search(SHOP, query="zebra42")) == ["stays"]


@pytest.mark.parametrize("backend", [backend_param(PERSISTENT)])
def test_store_lexical_index_is_rebuilt_on_reopen(make_store: Any, reopen: Any) -> None:
    store = make_store(search_mode="lexical")
    store.put(SHOP, "k1", {"text": "dentist appointment on Tuesday"})
    store.put(SHOP, "k2", {"text": "the dentist sent a bill"})
    store.put(SHOP, "k3", {"text": "dentist parking ticket"})
    assert len(store.search(SHOP, query="dentist")) == 3  # loads the namespace before the writes
    store.put(SHOP, "k1", {"text": "plumber visit on Friday"})
    store.delete(SHOP, "k3")

    again = reopen(store)
    assert keys(again.search(SHOP, query="dentist")) == ["k2"]
    assert keys(again.search(SHOP, query="plumber")) == ["k1"]
    assert keys(again.search(SHOP, query="Tuesday parking")) == []


def test_docstring_examples_run() -> None:
    import doctest

    from langgraph_episodic.chroma.ranking import lexical

    result = doctest.testmod(lexical, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
