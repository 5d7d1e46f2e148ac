"""Retrieval quality on LoCoMo: BM25, dense, hybrid and LangGraph's InMemoryStore side by side.

For each conversation, every turn is put through the public store API as one memory (key = its
dia_id, value = {"text": "speaker: text", "time": session date, ...}) into its own namespace;
then every question goes through ``store.search(namespace, query=..., limit=10)``. Reported:
evidence recall@1/5/10 and hit@1/5/10 (overall and per category), puts/s and queries/s.

    python benchmarks/locomo.py                      # all rows, the development half
    python benchmarks/locomo.py --limit-conversations 1
    python benchmarks/locomo.py --fusion-study       # the standalone fusion measurements
    python benchmarks/locomo.py --server 127.0.0.1:8123   # the store rows on a `chroma run`
    python benchmarks/locomo.py --interleaved 3      # hybrid/dense speed, interleaved, 3 runs

``--fusion-study`` measures ranking methods without a store: MiniLM vectors in numpy, our
``LexicalIndex`` and rank_bm25 as the reference, and every fusion variant over the same
candidates (see docs/benchmarks.md for the findings).

The data (CC BY-NC 4.0) is read from ``../shared/data/locomo/locomo10-dev.json`` or ``--data``;
never copy it into this repository.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _embed_cache import CachedEmbeddings
from _fusion_reference import METHODS, fuse, missing_ids
from _locomo_data import (
    CATEGORIES,
    DEFAULT_DATA,
    KS,
    Conversation,
    RecallTally,
    format_table,
    load_conversations,
)
from _locomo_speed import interleaved

from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.language.analysis import STOPWORDS, tokenize

TOP_K = max(KS)
PUT_BATCH = 64
"""Turns per ``store.batch`` call (one embedding call each)."""

_REFERENCE_WORD = re.compile(r"\w+")


def reference_tokens(text: str) -> list[str]:
    """The reference BM25 tokenizer: lowercase ``\\w+`` words without stopwords."""
    return [w for w in _REFERENCE_WORD.findall(text.lower()) if w not in STOPWORDS]


@dataclass
class Row:
    """One method's results: its recall tally and throughput (``None`` when not measured)."""

    name: str
    tally: RecallTally
    puts_per_s: float | None = None
    queries_per_s: float | None = None
    note: str = ""


def _namespace(conv: Conversation) -> tuple[str, ...]:
    return ("locomo", conv.sample_id)


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# ---------------------------------------------------------------------------- store rows


def run_store(name: str, make_store: Callable[[], Any], conversations: list[Conversation]) -> Row:
    """Put every turn and ask every question through the public ``BaseStore`` API."""
    from langgraph.store.base import PutOp

    store = make_store()
    tally = RecallTally()
    put_time = query_time = 0.0
    n_puts = n_queries = 0
    for conv in conversations:
        ns = _namespace(conv)
        ops = [
            PutOp(
                ns,
                turn.dia_id,
                {
                    "text": turn.document,
                    "time": turn.time,
                    "speaker": turn.speaker,
                    "session": turn.session,
                },
            )
            for turn in conv.turns
        ]
        start = time.perf_counter()
        for chunk in _chunks(ops, PUT_BATCH):
            store.batch(chunk)
        put_time += time.perf_counter() - start
        n_puts += len(ops)
        for question in conv.questions:
            start = time.perf_counter()
            results = store.search(ns, query=question.question, limit=TOP_K)
            query_time += time.perf_counter() - start
            n_queries += 1
            tally.add(question, [item.key for item in results])
    close = getattr(store, "close", None)
    if callable(close):
        close()
    print(
        f"  measured {name}: {put_time:.0f} s putting, {query_time:.0f} s searching",
        file=sys.stderr,
    )
    return Row(name, tally, n_puts / put_time, n_queries / query_time)


def run_rank_bm25(conversations: list[Conversation]) -> Row:
    """BM25 alone: rank_bm25's ``BM25Okapi`` (k1=1.5, b=0.75) with the reference tokenizer."""
    from rank_bm25 import BM25Okapi

    tally = RecallTally()
    build_time = query_time = 0.0
    n_docs = n_queries = 0
    for conv in conversations:
        ids = [turn.dia_id for turn in conv.turns]
        start = time.perf_counter()
        bm25 = BM25Okapi([reference_tokens(turn.document) for turn in conv.turns])
        build_time += time.perf_counter() - start
        n_docs += len(ids)
        for question in conv.questions:
            start = time.perf_counter()
            scores = bm25.get_scores(reference_tokens(question.question))
            top = np.argsort(-scores, kind="stable")[:TOP_K]
            query_time += time.perf_counter() - start
            n_queries += 1
            tally.add(question, [ids[j] for j in top])
    return Row("BM25 alone (rank_bm25)", tally, n_docs / build_time, n_queries / query_time)


def open_chroma_store(server: str | None, **kwargs: Any) -> Any:
    """An ephemeral ``ChromaStore``, or one in a new collection on ``server`` (``host:port``),
    for ``--interleaved``."""
    from langgraph_episodic.chroma.store import ChromaStore

    if server is None:
        return ChromaStore.ephemeral(**kwargs)
    host, _, port = server.rpartition(":")
    collection = f"locomo-{time.time_ns()}"
    return ChromaStore.http(host, int(port), collection=collection, **kwargs)


def store_rows(
    conversations: list[Conversation], embedder: Any, server: str | None = None
) -> list[Row]:
    """All rows of the main table, in order; rows that cannot run say why. With ``server``
    (``host:port`` of a ``chroma run``) the ChromaStore rows use a store on that server, each in
    its own collection."""
    from langgraph.store.memory import InMemoryStore

    index = {"dims": len(embedder.embed_query("probe")), "embed": embedder, "fields": ["text"]}
    rows = [run_rank_bm25(conversations)]
    try:
        from langgraph_episodic.chroma.store import ChromaStore
    except ImportError as exc:
        for mode in ("lexical", "dense", "hybrid"):
            rows.append(Row(f"ChromaStore {mode}", RecallTally(), note=f"not available: {exc}"))
    else:
        where = "server" if server else "embedded"

        def open_store(**kwargs: Any) -> Any:
            if server is None:
                return ChromaStore.ephemeral(**kwargs)
            host, _, port = server.rpartition(":")
            collection = f"locomo-{time.time_ns()}"
            return ChromaStore.http(host, int(port), collection=collection, **kwargs)

        for mode in ("lexical", "dense", "hybrid"):

            def make(mode: str = mode) -> Any:
                return open_store(index=index, search_mode=mode)

            rows.append(run_store(f"ChromaStore {mode} ({where})", make, conversations))
        # The same turns with the session date indexed too (``fields=["text", "time"]``):
        # hybrid search lifts turns of the best hits' date by default (the shared-field lift).
        dated = {**index, "fields": ["text", "time"]}
        for mode, lift in (("dense", True), ("hybrid", True), ("hybrid", False)):

            def make_dated(mode: str = mode, lift: bool = lift) -> Any:
                return open_store(index=dated, search_mode=mode, field_lift=lift)

            label = "" if lift or mode == "dense" else ", field_lift=False"
            rows.append(
                run_store(
                    f"ChromaStore {mode}, fields text+time{label} ({where})",
                    make_dated,
                    conversations,
                )
            )
    rows.append(
        run_store(
            "InMemoryStore (same embedder)", lambda: InMemoryStore(index=index), conversations
        )
    )
    return rows


def main_table(rows: list[Row]) -> str:
    """R@k, hit@k and throughput per row."""
    headers = ["method", *(f"R@{k}" for k in KS), *(f"hit@{k}" for k in KS), "puts/s", "queries/s"]
    body: list[list[object]] = []
    for row in rows:
        if row.note:
            body.append([row.name, *["-"] * (2 * len(KS) + 2)])
            continue
        summary = row.tally.summary()
        body.append(
            [
                row.name,
                *(summary[f"R@{k}"] for k in KS),
                *(summary[f"hit@{k}"] for k in KS),
                f"{row.puts_per_s:,.0f}" if row.puts_per_s else "-",
                f"{row.queries_per_s:,.1f}" if row.queries_per_s else "-",
            ]
        )
    return format_table(headers, body)


def category_table(rows: list[Row]) -> str:
    """R@1/R@5/R@10 per question category for every measured row."""
    measured = [row for row in rows if not row.note]
    if not measured:
        return ""
    categories = sorted({c for row in measured for c in row.tally.categories()})
    headers = ["category", "n", *(row.name for row in measured)]
    body: list[list[object]] = []
    for cat in [*categories, None]:
        label = "all" if cat is None else f"{cat} {CATEGORIES.get(cat, '?')}"
        cells: list[object] = [label, measured[0].tally.count(cat)]
        for row in measured:
            s = row.tally.summary(cat)
            cells.append("/".join(f"{s[f'R@{k}']:.3f}" for k in KS))
        body.append(cells)
    return format_table(headers, body)


# ---------------------------------------------------------------------------- fusion study


@dataclass
class _Question:
    """One question's full dense and lexical scores, computed once for every variant."""

    ids: list[str]
    dense: np.ndarray
    lexical: dict[str, float]
    lexical_stemmed: dict[str, float]
    reference: list[str]


def _prepare(conversations: list[Conversation], embedder: Any) -> list[tuple[Any, _Question]]:
    from functools import partial

    from rank_bm25 import BM25Okapi

    prepared = []
    for conv in conversations:
        ids = [turn.dia_id for turn in conv.turns]
        docs = [turn.document for turn in conv.turns]
        turn_vecs = np.asarray(embedder.embed_documents(docs), dtype=np.float32)
        question_vecs = np.asarray(
            embedder.embed_documents([q.question for q in conv.questions]), dtype=np.float32
        )
        sims = question_vecs @ turn_vecs.T
        ns = [_namespace(conv)]
        plain, stemmed = LexicalIndex(), LexicalIndex(tokenizer=partial(tokenize, stem=True))
        for index in (plain, stemmed):
            index.upsert_many((ns[0], i, d) for i, d in zip(ids, docs, strict=True))
        bm25 = BM25Okapi([reference_tokens(d) for d in docs])
        for j, question in enumerate(conv.questions):
            ref = bm25.get_scores(reference_tokens(question.question))
            prepared.append(
                (
                    question,
                    _Question(
                        ids=ids,
                        dense=sims[j],
                        lexical=dict(plain.search(question.question, ns, len(ids))),
                        lexical_stemmed=dict(stemmed.search(question.question, ns, len(ids))),
                        reference=[ids[i] for i in np.argsort(-ref, kind="stable")[:TOP_K]],
                    ),
                )
            )
    return prepared


def _dense_top(q: _Question, depth: int) -> list[tuple[str, float]]:
    order = np.argsort(-q.dense, kind="stable")[:depth]
    return [(q.ids[j], float(q.dense[j])) for j in order]


def _lexical_top(scores: dict[str, float], depth: int) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]


def hybrid_ranking(
    q: _Question, *, depth: int, method: Any, weight: float, complete: bool
) -> list[str]:
    """Fuse the top ``depth`` of each side; ``complete`` scores every candidate on both sides."""
    dense, lexical = _dense_top(q, depth), _lexical_top(q.lexical, depth)
    if complete:
        need_dense, need_lexical = missing_ids(dense, lexical)
        position = {doc_id: j for j, doc_id in enumerate(q.ids)}
        dense += [(d, float(q.dense[position[d]])) for d in need_dense]
        lexical += [(d, q.lexical.get(d, 0.0)) for d in need_lexical]
    return [d for d, _ in fuse(dense, lexical, limit=TOP_K, method=method, weight=weight)]


def fusion_study(conversations: list[Conversation], embedder: Any) -> tuple[str, str]:
    """Every ranking variant over the same precomputed scores; returns (table, notes)."""
    prepared = _prepare(conversations, embedder)
    variants: list[tuple[str, Callable[[_Question], list[str]]]] = [
        ("BM25 rank_bm25 (k1=1.5, reference tokenizer)", lambda q: q.reference),
        ("dense MiniLM cosine", lambda q: [d for d, _ in _dense_top(q, TOP_K)]),
        (
            "LexicalIndex BM25 (k1=1.2, b=0.75)",
            lambda q: [d for d, _ in _lexical_top(q.lexical, TOP_K)],
        ),
        (
            "LexicalIndex BM25 + plural stemming",
            lambda q: [d for d, _ in _lexical_top(q.lexical_stemmed, TOP_K)],
        ),
    ]
    for depth in (10, 20, 100):
        for complete in (False, True):
            for method in METHODS:
                label = f"{method} depth={depth} {'completed' if complete else 'top lists'}"
                variants.append(
                    (
                        label,
                        lambda q, d=depth, m=method, c=complete: hybrid_ranking(
                            q, depth=d, method=m, weight=0.5, complete=c
                        ),
                    )
                )
    for weight in (0.3, 0.4, 0.6, 0.7):
        variants.append(
            (
                f"minmax depth=20 completed, lexical weight {weight}",
                lambda q, w=weight: hybrid_ranking(
                    q, depth=20, method="minmax", weight=w, complete=True
                ),
            )
        )
    body: list[list[object]] = []
    for label, rank in variants:
        tally = RecallTally()
        for question, q in prepared:
            tally.add(question, rank(q))
        s = tally.summary()
        body.append([label, *(s[f"R@{k}"] for k in KS), *(s[f"hit@{k}"] for k in KS)])
    overlap = np.mean(
        [
            len(
                {d for d, _ in _dense_top(q, TOP_K)}
                & {d for d, _ in _lexical_top(q.lexical, TOP_K)}
            )
            / TOP_K
            for _, q in prepared
        ]
    )
    headers = [
        "variant (weight 0.5 unless named)",
        *(f"R@{k}" for k in KS),
        *(f"hit@{k}" for k in KS),
    ]
    notes = (
        f"{len(prepared)} questions; dense and LexicalIndex top-{TOP_K} lists share "
        f"{overlap:.0%} of their items on average."
    )
    return format_table(headers, body), notes


# ---------------------------------------------------------------------------- command line


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The command line: ``--data``, ``--limit-conversations``, ``--server``, ``--interleaved``,
    ``--fusion-study``, ``--embedder``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument(
        "--limit-conversations", type=int, default=None, help="use only the first N conversations"
    )
    parser.add_argument(
        "--server",
        default=None,
        metavar="HOST:PORT",
        help="run the ChromaStore rows on a `chroma run` server instead of embedded",
    )
    parser.add_argument(
        "--interleaved",
        type=int,
        default=0,
        metavar="RUNS",
        help="instead of the tables: hybrid against dense speed, each question through every "
        "store in turn, RUNS runs",
    )
    parser.add_argument(
        "--fusion-study",
        action="store_true",
        help="measure ranking and fusion variants without a store instead of the store rows",
    )
    parser.add_argument(
        "--embedder",
        choices=("packaged", "multilingual", "default"),
        default="packaged",
        help="the packaged all-MiniLM-L6-v2 (the default's English half; default), "
        "MultilingualEmbeddings (USE-M v3) or the store's default, BilingualEmbeddings (both)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its tables."""
    args = parse_args(argv)
    conversations = load_conversations(args.data)[: args.limit_conversations]
    n_turns = sum(len(c.turns) for c in conversations)
    n_questions = sum(len(c.questions) for c in conversations)
    print(
        f"LoCoMo {args.data.name}: {len(conversations)} conversations, {n_turns} turns, "
        f"{n_questions} scored questions; top {TOP_K}; {os.cpu_count()} CPUs; "
        f"embedder: {args.embedder}"
    )
    embedder: Any
    if args.embedder == "multilingual":
        from langgraph_episodic.multilingual import MultilingualEmbeddings

        embedder = CachedEmbeddings(MultilingualEmbeddings(), name="use-m3")
    elif args.embedder == "default":
        from langgraph_episodic.bilingual import BilingualEmbeddings
        from langgraph_episodic.embeddings import default_embeddings
        from langgraph_episodic.multilingual import MultilingualEmbeddings

        halves = (
            CachedEmbeddings(default_embeddings()),
            CachedEmbeddings(MultilingualEmbeddings(), name="use-m3"),
        )
        texts = (
            [t.document for c in conversations for t in c.turns]
            + [t.time for c in conversations for t in c.turns]
            + [q.question for c in conversations for q in c.questions]
        )
        for half in halves:
            half.embed_documents(texts)
            half.save()
        embedder = BilingualEmbeddings(*halves)
        asked = [q.question for c in conversations for q in c.questions]
        german = sum(embedder.language(q) == "de" for q in asked)
        print(f"questions scored as German (multilingual half): {german} of {len(asked)}")
    else:
        from langgraph_episodic.embeddings import default_embeddings

        embedder = CachedEmbeddings(default_embeddings())
    embedder.embed_query("warm up")  # load the model outside the timings
    # Vectors come from .cache/ after the first run (saved here), so query timings leave the
    # model out and compare the stores' own work.
    if args.embedder != "default":
        embedder.embed_documents(
            [t.document for c in conversations for t in c.turns]
            + [t.time for c in conversations for t in c.turns]
            + [q.question for c in conversations for q in c.questions]
        )
        embedder.save()
    if args.fusion_study:
        table, notes = fusion_study(conversations, embedder)
        print("\nStandalone fusion study (numpy + LexicalIndex + rank_bm25)\n")
        print(table)
        print("\n" + notes)
        return
    if args.interleaved:
        print(f"\nSpeed, {'server ' + args.server if args.server else 'embedded'}\n")
        print(
            interleaved(
                conversations,
                embedder,
                lambda **kw: open_chroma_store(args.server, **kw),
                args.interleaved,
            )
        )
        return
    rows = store_rows(conversations, embedder, args.server)
    print("\nEvidence recall and hit rate (store API, limit 10)\n")
    print(main_table(rows))
    for row in rows:
        if row.note:
            print(f"- {row.name}: {row.note}")
    print("\nPer category, R@1/R@5/R@10\n")
    print(category_table(rows))


if __name__ == "__main__":
    main()
