"""Language-aware scoring variants for ``german.py``: could a question in a language the embedder
does not cover (German, for the packaged English MiniLM) be scored so that the floor and the
ranking rest on what carries signal there?

Every variant is a function of the two parts the store's hybrid score is made of, for each
(question, fact): ``D``, the cosine measured from the question's baseline
(:mod:`langgraph_episodic.language.baseline`, negative counted as 0), and ``L``, the lexical share
(:func:`langgraph_episodic.chroma.ranking.fusion.lexical_share`, the store's analyzer and BM25). The
store's score is ``0.35 * D + 0.65 * L``. Scores here are computed over all 50 facts of a set
(the store's candidate depth covers them), so the "store formula" row equals the store's.

For each variant the floor is chosen on the *tune* half (the lowest floor, in steps of 0.0025,
that leaves at least half of the tune half's never-said questions empty) and the figures are
given on the held-out half and on the whole set; and, since a floor can be moved, the whole
trade-off: R@3 at each empty rate from 30 % to 80 % (its mean, per half), which no choice of
floor can improve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from _embed_cache import CachedEmbeddings
from _fusion_reference import lexical_share

from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT
from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.language.analysis import analyzer, detect, words
from langgraph_episodic.language.baseline import above_baseline, packaged_baseline

NS = ("memories", "user")
FLOOR_STEP = 0.0025
TARGET_EMPTY = 0.5
EMPTY_GRID = np.round(np.arange(0.30, 0.801, 0.05), 2)

Score = Callable[[np.ndarray, np.ndarray], np.ndarray]


class MemorySet(Protocol):
    """``german.EvalSet``: facts (id -> text), (question, fact id), never-said questions."""

    facts: dict[str, str]
    questions: list[tuple[str, str]]
    unrelated: list[str]


def _relu_above(level: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda d: np.maximum(0.0, d - level) / (1.0 - level)


VARIANTS: dict[str, Score] = {
    "store formula: 0.35 D + 0.65 L": lambda d, s: (1 - LEXICAL_WEIGHT) * d + LEXICAL_WEIGHT * s,
    "lexical-dominant 0.2 D + 0.8 L": lambda d, s: 0.2 * d + 0.8 * s,
    "lexical-dominant 0.1 D + 0.9 L": lambda d, s: 0.1 * d + 0.9 * s,
    "lexical only (D dropped)": lambda d, s: s,
    "dense as tie-breaker (L + 0.05 D) / 1.05": lambda d, s: (s + 0.05 * d) / 1.05,
    "dense capped at 0.1": lambda d, s: 0.35 * np.minimum(d, 0.1) + 0.65 * s,
    "dense capped at 0.2": lambda d, s: 0.35 * np.minimum(d, 0.2) + 0.65 * s,
    "dense gated by lexical: 0.65 L + 0.35 D min(1, L / 0.2)": (
        lambda d, s: 0.65 * s + 0.35 * d * np.minimum(1.0, s / 0.2)
    ),
    "dense only with a shared term: 0.65 L + 0.35 D [L > 0]": (
        lambda d, s: 0.65 * s + 0.35 * d * (s > 0)
    ),
    "dense above a German noise level 0.2": lambda d, s: 0.35 * _relu_above(0.2)(d) + 0.65 * s,
    "0.7 x dense above 0.25 + 0.3 L (best on the tune half)": (
        lambda d, s: 0.7 * _relu_above(0.25)(d) + 0.3 * s
    ),
    "max(L, dense above 0.2)": lambda d, s: np.maximum(s, _relu_above(0.2)(d)),
}


@dataclass(frozen=True)
class Parts:
    """``D`` and ``L`` of every (question, fact), for paraphrases and never-said questions."""

    dense_q: np.ndarray
    lexical_q: np.ndarray
    dense_u: np.ndarray
    lexical_u: np.ndarray
    gold: np.ndarray
    tune_q: np.ndarray
    tune_u: np.ndarray


def parts(
    data: MemorySet, embedder: CachedEmbeddings, tune: tuple[list[bool], list[bool]]
) -> Parts:
    """The store's two parts over every fact (``language="auto"``, as the store's default)."""
    facts, questions, unrelated = data.facts, data.questions, data.unrelated
    ids = list(facts)
    vecs = np.asarray(embedder.embed_documents([facts[i] for i in ids]), dtype=np.float64)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    index = LexicalIndex(tokenizer=analyzer("auto"))
    index.upsert_many((NS, i, facts[i]) for i in ids)
    base = packaged_baseline()

    def both(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        dense, lexical = [], []
        for text in texts:
            q = np.asarray(embedder.embed_query(text), dtype=np.float64)
            b = base.of(q, text, "auto")
            cosines = vecs @ (q / np.linalg.norm(q))
            dense.append([max(0.0, above_baseline(float(c), b)) for c in cosines])
            top = index.max_score(text, [NS])
            bm25 = index.scores(text, [NS], ids)
            lexical.append([lexical_share(bm25.get(i, 0.0), top) for i in ids])
        return np.asarray(dense), np.asarray(lexical)

    dq, lq = both([q for q, _ in questions])
    du, lu = both(unrelated)
    gold = np.asarray([ids.index(f) for _, f in questions])
    return Parts(dq, lq, du, lu, gold, np.asarray(tune[0]), np.asarray(tune[1]))


def _at(p: Parts, score: Score, floor: float, half: bool | None) -> tuple[float, float, float]:
    """R@1, R@3, empty at ``floor`` on the tune half (True), held-out (False) or all (None)."""
    sq, su = score(p.dense_q, p.lexical_q), score(p.dense_u, p.lexical_u)
    order = np.argsort(-sq, axis=1, kind="stable")
    r1, r3 = [], []
    for n, row in enumerate(order):
        kept = [j for j in row[:3] if sq[n, j] >= floor]
        r1.append(kept[:1] == [p.gold[n]])
        r3.append(p.gold[n] in kept)
    empty = su.max(axis=1) < floor
    mq = np.ones(len(r1), bool) if half is None else p.tune_q == half
    mu = np.ones(len(empty), bool) if half is None else p.tune_u == half
    return (
        float(np.mean(np.asarray(r1)[mq])),
        float(np.mean(np.asarray(r3)[mq])),
        float(np.mean(empty[mu])),
    )


def tune_floor(p: Parts, score: Score) -> float | None:
    """The lowest floor leaving at least half of the tune half's never-said questions empty."""
    for floor in np.arange(0.0, 1.0 + FLOOR_STEP, FLOOR_STEP):
        if _at(p, score, float(floor), True)[2] >= TARGET_EMPTY:
            return float(round(floor, 4))
    return None


def trade_off(p: Parts, score: Score, half: bool) -> float:
    """Mean over empty rates 30-80 % of the best R@3 any floor gives with at least that rate."""
    points = [_at(p, score, float(f), half) for f in np.arange(0.0, 0.6, FLOOR_STEP)]
    best = [max((r3 for _, r3, e in points if e >= target - 1e-9), default=0.0) for target in EMPTY_GRID]
    return float(np.mean(best))


def auc(p: Parts, score: Score, *, shared_term: bool = False) -> float:
    """How often a paraphrase's right fact outscores the best memory of a never-said question
    (0.5 = chance). ``shared_term``: only pairs where both share a term with the question."""
    rows = np.arange(len(p.gold))
    pos = score(p.dense_q, p.lexical_q)[rows, p.gold]
    su = score(p.dense_u, p.lexical_u)
    best = su.argmax(axis=1)
    neg = su[np.arange(len(su)), best]
    if shared_term:
        pos = pos[p.lexical_q[rows, p.gold] > 0]
        best_lexical = p.lexical_u.argmax(axis=1)
        has = p.lexical_u.max(axis=1) > 0
        neg = su[np.arange(len(su)), best_lexical][has]
    if not len(pos) or not len(neg):
        return float("nan")
    return float(np.mean([(a > b) + 0.5 * (a == b) for a in pos for b in neg]))


def rows(lang: str, p: Parts) -> list[list[object]]:
    """One table row per variant."""
    body: list[list[object]] = []
    for name, score in VARIANTS.items():
        floor = tune_floor(p, score)
        if floor is None:
            continue
        r1, r3, empty = _at(p, score, floor, None)
        t, h = _at(p, score, floor, True), _at(p, score, floor, False)
        body.append(
            [
                lang,
                name,
                f"{floor:.4g}",
                f"{r1:.2f} / {r3:.2f} / {empty:.2f}",
                f"{t[0]:.2f} / {t[1]:.2f} / {t[2]:.2f}",
                f"{h[0]:.2f} / {h[1]:.2f} / {h[2]:.2f}",
                f"{trade_off(p, score, True):.3f} / {trade_off(p, score, False):.3f}",
            ]
        )
    return body


HEADERS = [
    "lang",
    "variant (D: cosine above baseline, L: lexical share)",
    "floor (tune)",
    "R@1 / R@3 / empty, whole",
    "tune",
    "held-out",
    "trade-off tune / held",
]


def dense_only(d: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The dense part alone."""
    return d


def lexical_only(d: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The lexical part alone."""
    return s


def signal(lang: str, p: Parts) -> list[object]:
    """Where the signal is: AUCs and how many right facts share a term with their question."""
    rows_ = np.arange(len(p.gold))
    return [
        lang,
        f"{auc(p, dense_only):.2f}",
        f"{auc(p, dense_only, shared_term=True):.2f}",
        f"{auc(p, lexical_only):.2f}",
        f"{np.mean(p.lexical_q[rows_, p.gold] > 0):.2f}",
        f"{np.mean(p.lexical_u.max(axis=1) > 0):.2f}",
    ]


SIGNAL_HEADERS = [
    "lang",
    "dense AUC",
    "dense AUC, shared term only",
    "lexical AUC",
    "right fact shares a term",
    "never-said: some memory shares a term",
]


def misdetected(data: MemorySet, lang: str) -> list[str]:
    """Texts of a set (facts, questions, never-said) that ``language="auto"`` takes for the
    other language."""
    texts = [*data.facts.values(), *(q for q, _ in data.questions), *data.unrelated]
    return [t for t in texts if detect(words(t)) != lang]
