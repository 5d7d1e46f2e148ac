"""A namespace's keyword index held as a frozen base and the writes since: any interleaving of
writes, reloads and searches scores exactly as a fresh index of the same documents, under any
merge threshold, and readers racing a writer (and each other's merges) never see a torn or stale
shard."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.ranking import lexical
from langgraph_episodic.chroma.ranking.lexical import LexicalIndex

from ._support import switching_every_microsecond, unpacked

Namespace = tuple[str, ...]

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
NAMESPACES: list[Namespace] = [("u", "a"), ("u", "b")]


def plain(text: str) -> list[str]:
    return text.split()


@contextmanager
def merging_past(limit: int) -> Iterator[None]:
    """Searches merge a shard's writes into its base past ``limit`` writes."""
    with mock.patch.object(lexical, "DELTA_LIMIT", limit):
        yield


def fresh(held: Mapping[Namespace, Mapping[str, str]], b: float) -> LexicalIndex:
    """An index of the documents ``held``, each namespace built at once (as after a restart)."""
    index = LexicalIndex(tokenizer=plain, b=b)
    for ns, docs in held.items():
        index.load(ns, list(docs.items()))
    return index


Reading = tuple[list[tuple[str, float]], dict[str, float], float, set[str], int]


def read(index: LexicalIndex, query: dict[str, float], scope: list[Namespace], k: int) -> Reading:
    """Everything a search reads: the top ``k``, every document's score, the best possible
    score, the items held and the document count."""
    scores = index.score_terms(query, scope)
    every = [f"d{i}.t" for i in range(16)] + [f"d{i}" for i in range(16)] + ["nope"]
    held = index.held_items(scope)
    assert len(held) == len(set(held))  # (a set view: its length is its members')
    return (
        scores.top(k),
        scores.of(every),
        scores.max_score,
        set(held),
        index.doc_count(scope),
    )


ids = st.integers(0, 15).map(lambda i: f"d{i}.t" if i % 3 else f"d{i}")
"""Document ids, some tagged ``<item>.<tag>`` (the items ``held_items`` reports)."""
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), ids, texts),
        st.tuples(st.just("remove"), ids, st.just("")),
        st.tuples(st.just("reload"), ids, st.just("")),
        st.tuples(st.just("search"), ids, texts),
    ),
    min_size=1,
    max_size=40,
)
"""``reload``: the namespace of the id built again from what it holds (a packed base, as a
first search builds); ``search``: a snapshot of the scope scored for the text's terms (which
builds, and may merge, its shards' arrays)."""


@settings(max_examples=300, deadline=None)
@given(
    initial=st.dictionaries(ids, texts, max_size=14),
    script=steps,
    limit=st.sampled_from([0, 1, 2, 5, 2048]),
    scope=st.sampled_from([NAMESPACES[:1], NAMESPACES]),
    k=st.integers(1, 10),
    b=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_any_interleaving_scores_as_a_fresh_index_of_the_same_documents(
    initial: dict[str, str],
    script: list[tuple[str, str, str]],
    limit: int,
    scope: list[Namespace],
    k: int,
    b: float,
) -> None:
    """``initial``: the documents stored before the process started (each namespace's first
    search builds them into a packed base)."""
    index = LexicalIndex(tokenizer=plain, b=b)
    held: dict[Namespace, dict[str, str]] = {ns: {} for ns in NAMESPACES}
    for doc_id, text in initial.items():
        held[NAMESPACES[int(doc_id[1:].partition(".")[0]) % 2]][doc_id] = text
    for ns in NAMESPACES:
        index.load(ns, list(held[ns].items()))
    kept: list[tuple[LexicalIndex, dict[str, float], Reading]] = []
    with merging_past(limit):
        for action, doc_id, text in script:
            ns = NAMESPACES[int(doc_id[1:].partition(".")[0]) % 2]
            if action == "upsert":
                index.upsert(ns, doc_id, text)
                held[ns][doc_id] = text
            elif action == "remove":
                index.remove(ns, doc_id)
                held[ns].pop(doc_id, None)
            elif action == "reload":
                index.load(ns, list(held[ns].items()))
            else:
                query = {term: 1.0 + n for n, term in enumerate(dict.fromkeys(text.split()))}
                view = index.snapshot(scope)
                got = read(view, query, scope, k)
                assert got == read(fresh(held, b), query, scope, k)
                assert read(view, query, scope, k) == got  # again, from the arrays built
                kept.append((view, query, got))
        for ns in NAMESPACES:  # the live index too, shards frozen by the read
            assert read(index, {w: 1.0 for w in WORDS}, [ns], k) == read(
                fresh(held, b), {w: 1.0 for w in WORDS}, [ns], k
            )
        for view, query, got in kept:  # a snapshot never changes after later writes
            assert read(view, query, scope, k) == got


def test_a_write_keeps_the_base_and_a_search_merges_past_the_limit() -> None:
    index = LexicalIndex(tokenizer=plain)
    ns = ("u",)
    index.load(ns, [(f"d{i}", f"alpha w{i}") for i in range(10)])
    base = index._shards[ns].base
    with merging_past(4):
        index.upsert(ns, "d1", "beta")  # replaces a base document
        index.remove(ns, "d2")
        index.upsert(ns, "n1", "alpha beta")
        shard = index._shards[ns]
        assert shard.base is base and shard.dead == {1, 2}
        assert list(shard.lengths) == ["d1", "n1"]
        top = index.score_terms({"beta": 1.0}, [ns]).top(5)  # 4 writes: scored side by side
        assert [d for d, _ in top] == ["d1", "n1"] or [d for d, _ in top] == ["n1", "d1"]
        assert not index._shards[ns].arrays().whole
        index.upsert(ns, "n2", "gamma")
        assert index._shards[ns].base is base  # the write copied 4 writes' dicts, no more
        assert index.score_terms({"gamma": 1.0}, [ns]).top(5)[0][0] == "n2"  # 5: merged
        merged = index._shards[ns].arrays()
        assert merged.whole and len(merged.ids) == 11  # 8 of the base, 3 written
        index.upsert(ns, "n3", "gamma")
        shard = index._shards[ns]
        assert shard.base is merged and not shard.dead and list(shard.lengths) == ["n3"]
    held = {ns: {f"d{i}": f"alpha w{i}" for i in range(10) if i not in (1, 2)}}
    held[ns].update({"d1": "beta", "n1": "alpha beta", "n2": "gamma", "n3": "gamma"})
    query = {"alpha": 1.0, "beta": 2.0, "gamma": 1.0}
    assert read(index, query, [ns], 20) == read(fresh(held, 0.3), query, [ns], 20)


def test_positions_of_vector_keys_follow_the_writes() -> None:
    """A hybrid search matches vector rows to documents by position (``_Arrays.aligned``)."""
    index = LexicalIndex(tokenizer=plain)
    ns = ("u",)
    index.load(ns, [("a", "alpha"), ("b", "beta"), ("c", "gamma")])
    index.snapshot([ns]).score_terms({"alpha": 1.0}, [ns])
    index.upsert(ns, "b", "beta beta")  # dead in the base, written since
    index.remove(ns, "c")
    index.upsert(ns, "d", "delta")
    arrays = index.snapshot([ns])._shards[ns].arrays()
    keys = ["d", "c", "a", "b", "a", "zz"]
    position, first = arrays.aligned(keys)
    assert [arrays.ids[j] if j >= 0 else None for j in position.tolist()] == [
        "d", None, "a", "b", "a", None
    ]  # fmt: skip
    assert {arrays.ids[j]: keys[n] for j, n in enumerate(first.tolist()) if n >= 0} == {
        "d": "d", "a": "a", "b": "b"
    }  # fmt: skip
    assert first[position[2]] == 2  # a key's first index


def test_readers_racing_a_writer_and_each_others_merges_see_whole_generations() -> None:
    """A writer rewrites two documents with generation ``g`` ("gen{g}" once in a, twice in b)
    and, every third generation, removes or restores a base document, over a base of 40;
    searches merge past 2 writes, so readers' merges race each other and the writer's copies.
    Every reader's snapshot must hold one whole generation, never an older one than it saw,
    and score exactly as a fresh index of that generation's documents."""
    ns = ("u",)
    static = {f"s{i}": f"word{i % 7} word{i % 3} y" for i in range(40)}
    generations = 200
    states: list[dict[str, str]] = []
    # The writer writes a generation in two calls (a and b together, then the base
    # document), so a reader may also see a generation's a and b before its base document.
    halfway: list[dict[str, str]] = []
    docs = dict(static)
    for g in range(generations + 1):
        docs.update({"a": f"gen{g} x", "b": f"gen{g} gen{g} y"})
        halfway.append(dict(docs))
        if g and g % 3 == 0:
            name = f"s{g % 40}"
            if name in docs:
                del docs[name]
            else:
                docs[name] = static[name]
        states.append(dict(docs))
    index = LexicalIndex(tokenizer=plain)
    index.load(ns, list(states[0].items()))
    barrier = threading.Barrier(4)
    errors: list[str] = []
    expected: dict[int, list[Reading]] = {}

    def writer() -> None:
        barrier.wait()
        for g in range(1, generations + 1):
            index.upsert_many([(ns, "a", f"gen{g} x"), (ns, "b", f"gen{g} gen{g} y")])
            if g % 3 == 0:
                name = f"s{g % 40}"
                if name in states[g]:
                    index.upsert(ns, name, static[name])
                else:
                    index.remove(ns, name)

    def reader() -> None:
        barrier.wait()
        seen = 0
        for _ in range(generations):
            view = index.snapshot([ns])
            got_a = view.score_terms({"x": 1.0}, [ns]).top(1)
            if not got_a:
                errors.append("a is missing")
                continue
            shard = unpacked(view._shards[ns])
            (gen_a,) = [t for t in shard.terms["a"] if t.startswith("gen")]
            (gen_b,) = [t for t in shard.terms["b"] if t.startswith("gen")]
            g = int(gen_a[3:])
            if gen_a != gen_b:
                errors.append(f"torn snapshot: {gen_a} / {gen_b}")
            if g < seen:
                errors.append(f"went back from gen{seen} to gen{g}")
            seen = g
            query = {gen_a: 1.0, "y": 0.5, "word1": 2.0}
            wants = expected.get(g)
            if wants is None:
                wants = expected[g] = [read(fresh({ns: docs}, 0.3), query, [ns], 10)
                                       for docs in (states[g], halfway[g])]
            if read(view, query, [ns], 10) not in wants:
                errors.append(f"gen{g}: scores differ from a fresh index")

    with merging_past(2), switching_every_microsecond():
        threads = [threading.Thread(target=writer)] + [
            threading.Thread(target=reader) for _ in range(3)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    query = {f"gen{generations}": 1.0, "y": 0.5, "word1": 2.0}
    final = read(index.snapshot([ns]), query, [ns], 10)
    assert final == read(fresh({ns: states[generations]}, 0.3), query, [ns], 10)


def test_a_store_written_after_its_first_search_ranks_as_one_opened_afresh(
    tmp_path: Path,
) -> None:
    """End to end, keyword search: a namespace searched (its index packed), then written
    (puts, rewrites, a delete, past merges) and searched again ranks with the same keys and
    the same float scores as a store opened afresh on the same folder, which builds its index
    at once."""
    index = {"dims": 16, "embed": HashEmbeddings(16)}
    ns = ("shared", "notes")
    queries = ["harbour crane", "seagull nests crane", "lighthouse keeper lamp"]
    with ChromaStore.persistent(tmp_path, index=index, search_mode="lexical") as store:
        store.batch(
            [
                PutOp(ns, f"k{i}", {"text": f"harbour crane {i} lifts {WORDS[i % 8]}"})
                for i in range(60)
            ]
        )
        assert store.search(ns, query=queries[0], limit=5)  # packs the namespace's index
        with merging_past(4):
            for n in range(9):  # past the limit: some searches merge
                store.put(ns, f"new{n}", {"text": f"a seagull nests on crane {n}"})
                if n % 3 == 0:
                    store.put(ns, f"k{n}", {"text": "the lighthouse keeper lamp"})
                if n == 4:
                    store.delete(ns, "k10")
                for query in queries:
                    store.search(ns, query=query, limit=8)
            kept = [
                [(h.key, h.score) for h in store.search(ns, query=query, limit=8)]
                for query in queries
            ]
    with ChromaStore.persistent(tmp_path, index=index, search_mode="lexical") as store:
        assert [
            [(h.key, h.score) for h in store.search(ns, query=query, limit=8)] for query in queries
        ] == kept
