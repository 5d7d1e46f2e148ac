"""Which retrieval ideas move LoCoMo recall: a study over cached vectors, without a store.

Every idea is measured on the same precomputed scores (MiniLM vectors from the
file cache, ``LexicalIndex`` with each analyzer), so one run takes seconds once the vectors are
cached. Weights are chosen on the *tuning* conversations (the 1st, 3rd and 5th of the
development half) and reported on the *held-out* ones (2nd and 4th) and on all five.

    python benchmarks/locomo_study.py [--data PATH]

The store's default search is measured by ``benchmarks/locomo.py``; this script says why it is
built the way it is (``docs/benchmarks.md``, "Retrieval quality").
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
from _embed_cache import CachedEmbeddings
from _fusion_reference import fuse, lexical_share
from _locomo_data import (
    DEFAULT_DATA,
    KS,
    Conversation,
    RecallTally,
    format_table,
    load_conversations,
)

from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT
from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.language.analysis import analyzer, tokenize
from langgraph_episodic.memory_kinds import DEFAULT_MIN_SCORE

TOP = max(KS)
LEX = "snowball en + date k1=1.2 b=0.3"
"""The lexical variant the fusion weights are chosen with."""
STORE_LEX = "store default: snowball auto, k1=1.2 b=0.3"


@dataclass
class Q:
    """One question's scores: cosine per turn, and BM25 per analyzer (sparse)."""

    question: object
    conv: int
    ids: list[str]
    cos: np.ndarray
    bm25: dict[str, dict[str, float]]
    bm25_max: dict[str, float]
    extra: dict[str, np.ndarray]


ANALYZERS: dict[str, Callable[[str], list[str]]] = {
    "plain (before)": tokenize,
    "plural s-stem": partial(tokenize, stem=True),
    "snowball en": analyzer("en"),
    "snowball auto": analyzer("auto"),
}


def prepare(conversations: list[Conversation], embedder: CachedEmbeddings) -> list[Q]:
    """Score every question against every turn of its conversation, once."""
    out: list[Q] = []
    for c, conv in enumerate(conversations):
        ids = [t.dia_id for t in conv.turns]
        docs = [t.document for t in conv.turns]
        turn_vecs = np.asarray(embedder.embed_documents(docs), dtype=np.float32)
        qvecs = np.asarray(
            embedder.embed_documents([q.question for q in conv.questions]), dtype=np.float32
        )
        sims = qvecs @ turn_vecs.T
        date_vecs = np.asarray(embedder.embed_documents([t.time for t in conv.turns]), dtype=np.float32)
        dated_vecs = np.asarray(embedder.embed_documents([f"{t.document} ({t.time})" for t in conv.turns]), dtype=np.float32)
        sims_maxfield = np.maximum(sims, qvecs @ date_vecs.T)
        sims_dated = qvecs @ dated_vecs.T
        ns = ("locomo", conv.sample_id)
        indexes: dict[str, LexicalIndex] = {}
        for name, tok in ANALYZERS.items():
            indexes[name] = LexicalIndex(tokenizer=tok, b=0.75)  # the previous default b
            indexes[name].upsert_many((ns, i, d) for i, d in zip(ids, docs, strict=True))
        dated = LexicalIndex(tokenizer=analyzer("en"), b=0.75)
        dated.upsert_many(
            (ns, t.dia_id, f"{t.document} ({t.time})") for t in conv.turns
        )
        indexes["snowball en + session date"] = dated
        store_default = LexicalIndex()
        store_default.upsert_many((ns, i, d) for i, d in zip(ids, docs, strict=True))
        indexes[STORE_LEX] = store_default
        for k1, b in ((0.9, 0.4), (1.5, 0.75), (1.2, 0.3), (0.9, 0.3), (0.7, 0.3)):
            idx = LexicalIndex(tokenizer=analyzer("en"), k1=k1, b=b)
            idx.upsert_many((ns, i, d) for i, d in zip(ids, docs, strict=True))
            indexes[f"snowball en k1={k1} b={b}"] = idx
        for k1, b in ((0.9, 0.4), (1.2, 0.3)):
            idx = LexicalIndex(tokenizer=analyzer("en"), k1=k1, b=b)
            idx.upsert_many((ns, t.dia_id, f"{t.document} ({t.time})") for t in conv.turns)
            indexes[f"snowball en + date k1={k1} b={b}"] = idx
        for j, question in enumerate(conv.questions):
            bm, mx = {}, {}
            for name, idx in indexes.items():
                bm[name] = dict(idx.search(question.question, [ns], len(ids)))
                mx[name] = idx.max_score(question.question, [ns])
            extra = {"maxfield": sims_maxfield[j], "dated": sims_dated[j]}
            out.append(Q(question, c, ids, sims[j], bm, mx, extra))
    return out


def ranked(q: Q, scores: dict[str, float]) -> list[str]:
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]]


def dense_only(q: Q) -> list[str]:
    order = np.argsort(-q.cos, kind="stable")[:TOP]
    return [q.ids[i] for i in order]


def fused(
    q: Q, lex: str, method: str, weight: float, depth: int = 30, floor: float | None = None
) -> list[str]:
    """Top ``depth`` of each side, completed, then fused (as the store does)."""
    pos = {d: i for i, d in enumerate(q.ids)}
    order = np.argsort(-q.cos, kind="stable")[:depth]
    dense = [(q.ids[i], float(q.cos[i])) for i in order]
    bm = q.bm25[lex]
    lexical = sorted(bm.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]
    have_d = {d for d, _ in dense}
    have_l = {d for d, _ in lexical}
    dense += [(d, float(q.cos[pos[d]])) for d, _ in lexical if d not in have_d]
    lexical += [(d, bm.get(d, 0.0)) for d, _ in dense if d not in have_l]
    if method == "calibrated":
        mx = q.bm25_max[lex] or 1.0
        lexical = [(d, lexical_share(s, mx)) for d, s in lexical]
        top = fuse(dense, lexical, limit=TOP, method="calibrated", weight=weight)
        return [d for d, s in top if floor is None or s >= floor]
    if method.startswith("saturated"):
        c = float(method.split(":")[1])
        lexical = [(d, s / (s + c)) for d, s in lexical]
        return [d for d, _ in fuse(dense, lexical, limit=TOP, method="calibrated", weight=weight)]
    return [d for d, _ in fuse(dense, lexical, limit=TOP, method=method, weight=weight)]  # type: ignore[arg-type]


def neighbours(q: Q, base: list[str], share: float) -> list[str]:
    """Each of the top 3 pulls its next turn in right after it (same session)."""
    out: list[str] = []
    for rank, d in enumerate(base):
        if d not in out:
            out.append(d)
        if rank < 3 and share > 0:
            sess, turn = d[1:].split(":")
            nxt = f"D{sess}:{int(turn) + 1}"
            if nxt in q.ids and nxt not in out:
                out.append(nxt)
    return out[:TOP]


def tally(qs: Sequence[Q], rank: Callable[[Q], list[str]], convs: set[int] | None = None) -> dict[str, float]:
    t = RecallTally()
    for q in qs:
        if convs is None or q.conv in convs:
            t.add(q.question, rank(q))  # type: ignore[arg-type]
    return t.summary()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    conversations = load_conversations(args.data)
    from langgraph_episodic.embeddings import default_embeddings

    embedder = CachedEmbeddings(default_embeddings())
    qs = prepare(conversations, embedder)
    embedder.save()
    tune, held = {0, 2, 4}, {1, 3}

    rows: list[tuple[str, Callable[[Q], list[str]]]] = [("dense MiniLM cosine", dense_only)]
    for lex in qs[0].bm25:
        rows.append((f"BM25 alone, {lex}", lambda q, lex=lex: ranked(q, q.bm25[lex])))
    rows.append(("hybrid minmax w=0.5, plain (before)", lambda q: fused(q, "plain (before)", "minmax", 0.5)))
    for lex in qs[0].bm25:
        rows.append((f"hybrid minmax w=0.5, {lex}", lambda q, lex=lex: fused(q, lex, "minmax", 0.5)))

    # Weights chosen on the tuning conversations.
    best_lex = LEX
    choices: dict[str, float] = {}
    for method in ("minmax", "calibrated", "saturated:5", "rrf"):
        grid = [x / 20 for x in range(2, 19)]
        scores = {w: tally(qs, lambda q, w=w, m=method: fused(q, best_lex, m, w), tune)["R@10"] for w in grid}
        choices[method] = max(grid, key=lambda w: (scores[w], -abs(w - 0.5)))
        w = choices[method]
        rows.append((f"hybrid {method} w={w} (chosen on tuning convs), {best_lex}", lambda q, w=w, m=method: fused(q, best_lex, m, w)))
    w = choices["calibrated"]

    def with_dense(q: Q, which: str) -> Q:
        return replace(q, cos=q.extra[which])

    rows.append((f"calibrated w={w} depth 100", lambda q: fused(q, best_lex, "calibrated", w, depth=100)))
    rows.append((f"calibrated w={w} dense max(text, date field)", lambda q: fused(with_dense(q, "maxfield"), best_lex, "calibrated", w)))
    rows.append((f"calibrated w={w} dense on 'text (date)'", lambda q: fused(with_dense(q, "dated"), best_lex, "calibrated", w)))
    rows.append(("dense max(text, date field)", lambda q: dense_only(with_dense(q, "maxfield"))))
    rows.append(
        (
            f"store default: calibrated w={LEXICAL_WEIGHT}, snowball auto, no date",
            lambda q: fused(q, STORE_LEX, "calibrated", LEXICAL_WEIGHT),
        )
    )
    rows.append(
        (
            f"  same, only hits scoring >= {DEFAULT_MIN_SCORE} (the tools' floor)",
            lambda q: fused(q, STORE_LEX, "calibrated", LEXICAL_WEIGHT, floor=DEFAULT_MIN_SCORE),
        )
    )
    rows.append(
        (
            f"+ neighbour expansion (calibrated w={w})",
            lambda q, w=w: neighbours(q, fused(q, best_lex, "calibrated", w), 1.0),
        )
    )

    headers = ["variant", *(f"R@{k}" for k in KS), "R@10 tune", "R@10 held-out"]
    body: list[list[object]] = []
    for label, rank in rows:
        s = tally(qs, rank)
        body.append([label, *(s[f"R@{k}"] for k in KS), tally(qs, rank, tune)["R@10"], tally(qs, rank, held)["R@10"]])
    print(f"{len(qs)} questions, {len(conversations)} conversations; tuning = convs 1,3,5, held-out = 2,4\n")
    print(format_table(headers, body))
    print("\nweights chosen on tuning conversations:", choices)


if __name__ == "__main__":
    main()
