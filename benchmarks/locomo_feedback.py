"""Issue 16, second pass: pseudo-relevance feedback and field weights on LoCoMo, without a store.

Measures, over cached MiniLM vectors and ``LexicalIndex`` (the store's analyzer, k1=1.2,
b=0.3), with the store's calibrated score ``0.35 * cosine + 0.65 * lexical share`` computed
for every turn of the conversation (the store completes 30 candidates per side; the study of
``locomo_study.py`` found the same figures at depth 100):

* the session date in the lexical text (as ``fields=["text", "time"]`` indexes it), and field
  weights for it (BM25F-style: the date scored as its own field with a weight, or repeated);
* RM3-style lexical feedback: the top ``m`` turns of the first ranking give an expansion
  distribution ``P(t) ~ sum_f score_f * tf(t, f) / |f|``; its ``T`` best terms, as a second
  weighted query, are mixed in with weight ``lam``. "bounded": the expansion part is scaled by
  the best first-pass score, so no turn can score above what the best turn scored for the
  question itself (a floor keeps its meaning: a question with nothing above the floor still
  finds nothing). "excl": the question's own terms left out of the expansion;
* "lifted" (what ``ChromaStore(feedback=True)`` does, :mod:`langgraph_episodic.chroma.feedback`):
  ``first + lam * expansion share * (best - first)``, never lowering a score and (``lam < 1``)
  keeping the best turn first;
* dense Rocchio: the question vector moved toward the score-weighted mean of the top ``m``.

Parameters are chosen on the *tuning* conversations (1st, 3rd, 5th) by R@10 and reported on
all five and on the *held-out* 2nd and 4th.

    python benchmarks/locomo_feedback.py [--data PATH]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _embed_cache import CachedEmbeddings
from _locomo_data import DEFAULT_DATA, Conversation, RecallTally, format_table, load_conversations

from langgraph_episodic.chroma.ranking.analysis import analyzer
from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT
from langgraph_episodic.chroma.ranking.lexical import LexicalIndex

TOP = 10
TUNE, HELD = {0, 2, 4}, {1, 3}
ANALYZE = analyzer("auto")


@dataclass
class Conv:
    """One conversation's turns as vectors, tokens and lexical indexes."""

    n: int
    conv: Conversation
    ids: list[str]
    vectors: np.ndarray
    questions: np.ndarray
    indexes: dict[str, LexicalIndex]
    tokens: dict[str, list[list[str]]]
    stripped: np.ndarray
    """Question vectors with the leading question words removed ("When did X go" -> "X go")."""


LEXICAL_TEXTS: dict[str, Callable[..., str]] = {
    "text": lambda t: t.document,
    "text+date": lambda t: f"{t.document}\n{t.time}",
    "date": lambda t: t.time,
    "text+date x2": lambda t: f"{t.document}\n{t.time}\n{t.time}",
    "text+date+speaker": lambda t: f"{t.document}\n{t.time}\n{t.speaker}",
}


_QUESTION_WORDS = frozenset(
    [
        "what",
        "when",
        "where",
        "who",
        "whom",
        "whose",
        "why",
        "how",
        "which",
        "did",
        "does",
        "do",
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "would",
        "could",
        "can",
        "will",
        "kind",
        "of",
        "the",
        "a",
        "an",
    ]
)


def strip_question(question: str) -> str:
    """The question without its leading question words and auxiliaries (query-side handling).

    >>> strip_question("When did Caroline go to the LGBTQ support group?")
    'Caroline go to the LGBTQ support group'
    """
    found = re.findall(r"[\w']+", question)
    start = 0
    while start < len(found) and found[start].lower() in _QUESTION_WORDS:
        start += 1
    return " ".join(found[start:]) or question


def prepare(conversations: list[Conversation], embedder: CachedEmbeddings) -> list[Conv]:
    out = []
    for n, conv in enumerate(conversations):
        ids = [t.dia_id for t in conv.turns]
        vectors = np.asarray(embedder.embed_documents([t.document for t in conv.turns]))
        questions = np.asarray(embedder.embed_documents([q.question for q in conv.questions]))
        ns = ("locomo", conv.sample_id)
        indexes, tokens = {}, {}
        for name, text in LEXICAL_TEXTS.items():
            texts = [text(t) for t in conv.turns]
            index = LexicalIndex()
            index.upsert_many((ns, i, d) for i, d in zip(ids, texts, strict=True))
            indexes[name] = index
            tokens[name] = [ANALYZE(d) for d in texts]
        stripped = np.asarray(
            embedder.embed_documents([strip_question(q.question) for q in conv.questions])
        )
        out.append(Conv(n, conv, ids, vectors, questions, indexes, tokens, stripped))
    return out


def share(c: Conv, field: str, terms: Counter[str] | dict[str, float]) -> np.ndarray:
    """Lexical share of every turn for weighted query terms (BM25 / its maximum)."""
    index = c.indexes[field]
    ns = ("locomo", c.conv.sample_id)
    shards = index._select([ns])
    scores = index._score(Counter(terms), shards)
    position = {d: i for i, d in enumerate(c.ids)}
    out = np.zeros(len(c.ids))
    for doc, score in scores.items():
        out[position[doc]] = score
    shard = shards[0]
    n_docs = len(shard.lengths)
    top = sum(
        w
        * np.log(
            1
            + (n_docs - len(shard.postings.get(t, ())) + 0.5)
            / (len(shard.postings.get(t, ())) + 0.5)
        )
        for t, w in terms.items()
    ) * (index.k1 + 1)
    return np.minimum(out / top, 1.0) if top > 0 else out


Ranker = Callable[[Conv, int], np.ndarray]
"""(conversation, question number) -> a score per turn."""


def calibrated(c: Conv, cos: np.ndarray, lexical: np.ndarray) -> np.ndarray:
    return (1 - LEXICAL_WEIGHT) * np.clip(cos, 0, 1) + LEXICAL_WEIGHT * lexical


def base(field: str) -> Ranker:
    def run(c: Conv, j: int) -> np.ndarray:
        terms = Counter(ANALYZE(c.conv.questions[j].question))
        return calibrated(c, c.vectors @ c.questions[j], share(c, field, terms))

    return run


def stripped_question(how: str) -> Ranker:
    """The dense side on the stripped question: alone, or the max / mean with the full one."""

    def run(c: Conv, j: int) -> np.ndarray:
        terms = Counter(ANALYZE(c.conv.questions[j].question))
        full, short = c.vectors @ c.questions[j], c.vectors @ c.stripped[j]
        cos = {"alone": short, "max": np.maximum(full, short), "mean": (full + short) / 2}[how]
        return calibrated(c, cos, share(c, "text", terms))

    return run


def field_weight(alpha: float) -> Ranker:
    """BM25F-style: the text's share plus ``alpha`` times the date field's own share."""

    def run(c: Conv, j: int) -> np.ndarray:
        terms = Counter(ANALYZE(c.conv.questions[j].question))
        lexical = share(c, "text", terms) + alpha * share(c, "date", terms)
        return calibrated(c, c.vectors @ c.questions[j], np.minimum(lexical, 1.0))

    return run


def feedback(
    field: str,
    *,
    m: int,
    lam: float = 0.0,
    terms_kept: int = 10,
    beta: float = 0.0,
    bounded: bool = False,
    exclude: bool = False,
    lift: bool = False,
) -> Ranker:
    def run(c: Conv, j: int) -> np.ndarray:
        terms = Counter(ANALYZE(c.conv.questions[j].question))
        cos = c.vectors @ c.questions[j]
        lexical = share(c, field, terms)
        first = calibrated(c, cos, lexical)
        fb = np.argsort(-first, kind="stable")[:m]
        weights = first[fb]
        if weights.sum() <= 0:
            return first
        weights = weights / weights.sum()
        if beta:
            q = c.questions[j] + beta * (weights @ c.vectors[fb])
            cos = c.vectors @ (q / np.linalg.norm(q))
        if lam:
            dist: Counter[str] = Counter()
            for w, i in zip(weights, fb, strict=True):
                toks = c.tokens[field][i]
                for t, tf in Counter(toks).items():
                    dist[t] += w * tf / max(len(toks), 1)
            if exclude:
                for t in terms:
                    dist.pop(t, None)
            kept = dict(dist.most_common(terms_kept))
            total = sum(kept.values()) or 1.0
            expansion = share(c, field, {t: v / total for t, v in kept.items()})
            gate = float(first.max()) if bounded else 1.0
            if lift:  # the store's feedback: toward the best, never lowered
                best = float(first.max())
                return first + lam * expansion * np.maximum(best - first, 0.0)
            if bounded:  # (1 - lam) * first + lam * best * expansion <= best
                return (1 - lam) * calibrated(c, cos, lexical) + lam * gate * expansion
            lexical = (1 - lam) * lexical + lam * expansion
        return calibrated(c, cos, lexical)

    return run


def tally(convs: list[Conv], rank: Ranker, which: set[int] | None = None) -> dict[str, float]:
    t = RecallTally()
    for c in convs:
        if which is not None and c.n not in which:
            continue
        for j, question in enumerate(c.conv.questions):
            scores = rank(c, j)
            t.add(question, [c.ids[i] for i in np.argsort(-scores, kind="stable")[:TOP]])
    return t.summary()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    conversations = load_conversations(args.data)
    from langgraph_episodic.embeddings import default_embeddings

    embedder = CachedEmbeddings(default_embeddings())
    convs = prepare(conversations, embedder)
    embedder.save()

    rows: list[tuple[str, Ranker]] = [
        ("text (the default row)", base("text")),
        ("text + date in one lexical text (fields text+time)", base("text+date")),
        ("text + date + speaker in one lexical text", base("text+date+speaker")),
        ("text + date twice (date weight 2)", base("text+date x2")),
    ]
    rows += [(f"BM25F-style: text + {a} x date field", field_weight(a)) for a in (0.25, 0.5, 1.0)]
    rows += [
        (f"question words stripped for the dense side ({how}), text", stripped_question(how))
        for how in ("alone", "max", "mean")
    ]
    grids: dict[str, list[tuple[str, Ranker]]] = {}
    for field in ("text", "text+date"):
        grids[f"dense Rocchio, {field}"] = [
            (f"dense Rocchio m={m} beta={b}, {field}", feedback(field, m=m, beta=b))
            for m in (3, 5, 10)
            for b in (0.3, 0.7, 1.5)
        ]
        for bounded in (False, True):
            label = "bounded" if bounded else "unbounded"
            grids[f"RM3 {label}, {field}"] = [
                (
                    f"RM3 {label} m={m} lam={lam} T={k}{' excl' if ex else ''}, {field}",
                    feedback(field, m=m, lam=lam, terms_kept=k, bounded=bounded, exclude=ex),
                )
                for m in (3, 5, 10)
                for lam in (0.2, 0.3, 0.5)
                for k in (10,)
                for ex in (False, True)
            ]
        grids[f"RM3 lifted, {field}"] = [
            (
                f"RM3 lifted (the store's feedback) m={m} lam={lam} T=10 excl, {field}",
                feedback(field, m=m, lam=lam, exclude=True, lift=True),
            )
            for m in (3, 5, 10)
            for lam in (0.5, 0.8)
        ]
    for grid in grids.values():
        tuned = {label: tally(convs, rank, TUNE) for label, rank in grid}
        best = max(grid, key=lambda row: (tuned[row[0]]["R@10"], tuned[row[0]]["R@5"]))
        rows.append((f"{best[0]} (best of {len(grid)} on tuning)", best[1]))
    headers = ["variant", "R@1", "R@5", "R@10", "R@5 tune", "R@10 tune", "R@5 held", "R@10 held"]
    body: list[list[object]] = []
    for label, rank in rows:
        a, t, h = tally(convs, rank), tally(convs, rank, TUNE), tally(convs, rank, HELD)
        body.append(
            [label, a["R@1"], a["R@5"], a["R@10"], t["R@5"], t["R@10"], h["R@5"], h["R@10"]]
        )
    n = sum(len(c.conv.questions) for c in convs)
    print(f"{n} questions; tuning = conversations 1, 3, 5; held-out = 2, 4\n")
    print(format_table(headers, body))


if __name__ == "__main__":
    main()
