"""How to make the packaged English model's cosine mean the same in German and English: the
variants measured (scores), outside the store, over the same vectors.

For each variant of the dense side (the lexical side and the fusion ``0.35 * dense + 0.65 *
lexical share`` are the store's): the lowest floor (0.005 steps) at which more than half of the
never-said questions of *both* tune halves come back empty, and at that floor R@1 / R@3 / empty
per language on the tune and held-out halves (``german.py``'s split); the dense side's AUC
(how often a paraphrase's right fact scores above the best memory of a never-said question, over
all pairs; 0.5 is chance); then LoCoMo development
R@5 / R@10 with the store's candidate generation (dense top 30 by raw cosine, BM25 top 30,
each completed on the other side). Variants:

* ``raw``: the cosine (the calibrated fusion's first score);
* ``centred``: ``(q - m) . (d - m) / (|q - m| |d - m|)`` with ``m`` the mean vector of the
  question's language (our background sentences), optionally also removing the top ``k``
  principal directions of that background ("all-but-the-top");
* ``namespace mean``: the same with ``m`` the mean of the memories searched;
* ``z-score``: ``(cos - mean) / std`` of the question's cosines with the background sentences,
  divided by 10;
* ``above baseline`` (what the store does now, :mod:`langgraph_episodic.language.baseline`):
  ``(cos - q . m) / (1 - q . m)``.

    python benchmarks/baseline_study.py [--data ../shared/data/locomo/locomo10-dev.json]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from _embed_cache import CachedEmbeddings
from _fusion_reference import fuse, lexical_share, missing_ids
from _locomo_data import DEFAULT_DATA, RecallTally, format_table, load_conversations
from german import SETS, EvalSet, load, tune_half

from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT
from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.language.analysis import detect, words

DATA = Path(__file__).resolve().parent / "data"
NS = ("memories", "user")
DEPTH = 30
Dense = Callable[[np.ndarray, np.ndarray, str], np.ndarray]
"""``(query vector, memory vectors, query text) -> dense scores``."""


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


class Background:
    """Background vectors per language, their means and principal directions."""

    def __init__(self, embedder: CachedEmbeddings) -> None:
        self.vectors = {
            lang: np.asarray(
                embedder.embed_documents(
                    (DATA / f"background_{lang}.txt").read_text(encoding="utf-8").splitlines()
                ),
                dtype=np.float64,
            )
            for lang in ("de", "en")
        }
        self.means = {lang: v.mean(axis=0) for lang, v in self.vectors.items()}
        self.directions = {
            lang: np.linalg.svd(v - self.means[lang], full_matrices=False)[2]
            for lang, v in self.vectors.items()
        }

    def variants(self) -> dict[str, Dense]:
        def lang(text: str) -> str:
            return detect(words(text))

        def centred(k: int) -> Dense:
            def score(q: np.ndarray, m: np.ndarray, text: str) -> np.ndarray:
                mean, top = self.means[lang(text)], self.directions[lang(text)][:k]

                def project(x: np.ndarray) -> np.ndarray:
                    y = x - mean
                    return unit(y - (y @ top.T) @ top)

                return project(m) @ project(q)

            return score

        def namespace_mean(q: np.ndarray, m: np.ndarray, text: str) -> np.ndarray:
            mean = m.mean(axis=0)
            return unit(m - mean) @ unit(q - mean)

        def z_score(q: np.ndarray, m: np.ndarray, text: str) -> np.ndarray:
            b = unit(self.vectors[lang(text)]) @ q
            return (m @ q - b.mean()) / b.std() / 10.0

        def above_baseline(q: np.ndarray, m: np.ndarray, text: str) -> np.ndarray:
            b = float(q @ self.means[lang(text)])
            return (m @ q - b) / (1.0 - b)

        return {
            "raw cosine": lambda q, m, text: m @ q,
            "centred (background mean)": centred(0),
            "centred, top 3 directions removed": centred(3),
            "centred, top 8 directions removed": centred(8),
            "centred (namespace mean)": namespace_mean,
            "z-score / 10": z_score,
            "above baseline (chosen)": above_baseline,
        }


def fused(dense: np.ndarray, lexical: np.ndarray, ids: Sequence[str], k: int) -> list[tuple[str, float]]:
    scores = (1.0 - LEXICAL_WEIGHT) * np.clip(dense, 0.0, 1.0) + LEXICAL_WEIGHT * lexical
    order = np.argsort(-scores, kind="stable")[:k]
    return [(ids[j], float(scores[j])) for j in order]


def memory_rows(data: EvalSet, embedder: CachedEmbeddings, dense: Dense) -> list[tuple[list[tuple[str, float]], str | None, bool]]:
    """Top 3 of every question (fact id, or None for never-said) and whether it is tuning."""
    ids = list(data.facts)
    memories = np.asarray(embedder.embed_documents([data.facts[i] for i in ids]), dtype=np.float64)
    index = LexicalIndex()
    index.upsert_many((NS, i, data.facts[i]) for i in ids)
    tune_q, tune_u = tune_half(data)
    asked = [(q, f, t) for (q, f), t in zip(data.questions, tune_q, strict=True)]
    asked += [(q, None, t) for q, t in zip(data.unrelated, tune_u, strict=True)]
    rows = []
    for text, fid, tune in asked:
        q = np.asarray(embedder.embed_query(text), dtype=np.float64)
        top = index.max_score(text, [NS])
        bm25 = index.scores(text, [NS], ids)
        lexical = np.array([lexical_share(bm25.get(i, 0.0), top) for i in ids])
        rows.append((fused(dense(q, memories, text), lexical, ids, 3), fid, tune))
    return rows


def dense_auc(data: EvalSet, embedder: CachedEmbeddings, dense: Dense) -> float:
    """How often the right fact's dense score beats the best dense score of a never-said
    question (area under the ROC curve; 0.5 is chance)."""
    ids = list(data.facts)
    memories = np.asarray(embedder.embed_documents([data.facts[i] for i in ids]), dtype=np.float64)

    def scores(text: str) -> np.ndarray:
        return dense(np.asarray(embedder.embed_query(text), dtype=np.float64), memories, text)

    right = np.array([scores(q)[ids.index(fid)] for q, fid in data.questions])
    unrelated = np.array([scores(q).max() for q in data.unrelated])
    wins = (right[:, None] > unrelated[None, :]).mean()
    ties = (right[:, None] == unrelated[None, :]).mean()
    return float(wins + 0.5 * ties)


def at_floor(rows: list[tuple[list[tuple[str, float]], str | None, bool]], floor: float, tune: bool) -> tuple[float, float, float]:
    kept = [([d for d, s in top if s >= floor], fid) for top, fid, t in rows if t == tune]
    r1 = np.mean([hits[:1] == [fid] for hits, fid in kept if fid])
    r3 = np.mean([fid in hits for hits, fid in kept if fid])
    empty = np.mean([not hits for hits, fid in kept if not fid])
    return float(r1), float(r3), float(empty)


def locomo(path: Path, embedder: CachedEmbeddings, dense: Dense) -> tuple[float, float]:
    """LoCoMo R@5 / R@10 with the store's candidates and fusion, ``dense`` as the dense side."""
    tally = RecallTally()
    for conv in load_conversations(path):
        ids = [t.dia_id for t in conv.turns]
        docs = [t.document for t in conv.turns]
        memories = np.asarray(embedder.embed_documents(docs), dtype=np.float64)
        index = LexicalIndex()
        index.upsert_many((NS, i, d) for i, d in zip(ids, docs, strict=True))
        position = {d: j for j, d in enumerate(ids)}
        for question in conv.questions:
            q = np.asarray(embedder.embed_query(question.question), dtype=np.float64)
            raw = memories @ q
            scores = dense(q, memories, question.question)
            top_dense = [(ids[j], float(raw[j])) for j in np.argsort(-raw, kind="stable")[:DEPTH]]
            top_lexical = index.search(question.question, [NS], DEPTH)
            need_dense, need_lexical = missing_ids(top_dense, top_lexical)
            best = index.max_score(question.question, [NS])
            lexical = [
                (d, lexical_share(s, best))
                for d, s in [*top_lexical, *index.scores(question.question, [NS], need_lexical).items()]
            ]
            candidates = [d for d, _ in top_dense] + need_dense
            ranked = fuse(
                [(d, float(scores[position[d]])) for d in candidates],
                lexical,
                limit=10,
                method="calibrated",
                weight=LEXICAL_WEIGHT,
            )
            tally.add(question, [d for d, _ in ranked])
    summary = tally.summary()
    return summary["R@5"], summary["R@10"]


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    args = parser.parse_args(argv)
    from langgraph_episodic.embeddings import default_embeddings

    embedder = CachedEmbeddings(default_embeddings())
    background = Background(embedder)
    sets = {lang: load(path) for lang, path in SETS.items()}
    body: list[list[object]] = []
    for name, dense in background.variants().items():
        rows = {lang: memory_rows(data, embedder, dense) for lang, data in sets.items()}
        floor = next(
            (
                f
                for f in np.arange(0.0, 0.6, 0.005)
                if all(at_floor(r, f, tune=True)[2] > 0.5 for r in rows.values())
            ),
            float("nan"),
        )
        cells: list[object] = [name, f"{floor:.3f}"]
        for lang in ("de", "en"):
            for tune in (True, False):
                cells.append("/".join(f"{v:.2f}" for v in at_floor(rows[lang], floor, tune)))
        aucs = [f"{dense_auc(data, embedder, dense):.2f}" for data in sets.values()]
        r5, r10 = locomo(args.data, embedder, dense)
        body.append([*cells, " / ".join(aucs), f"{r5:.3f}", f"{r10:.3f}"])
    embedder.save()
    headers = [
        "dense side",
        "floor",
        "de tune R@1/R@3/empty",
        "de held-out",
        "en tune",
        "en held-out",
        "dense AUC de / en",
        "LoCoMo R@5",
        "LoCoMo R@10",
    ]
    print("\nDense-side variants at the lowest floor emptying > 50 % of both tune halves\n")
    print(format_table(headers, body))


if __name__ == "__main__":
    main()
