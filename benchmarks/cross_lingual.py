"""Cross-lingual recall with the default embedder: English questions about German memories and
German questions about English memories, at the memory tools' floor 0.10.

Two sets, each language's memories one user's namespace, asked in the other language:

* *ours*: ``_cross_lingual_data.py`` (30 memories and 15 never-said questions each way), held
  out for every constant;
* *parallel*: the German facts of ``data/german_memory.jsonl`` asked with the English
  questions of ``data/english_memory.jsonl`` (the same facts in English), and the reverse. The
  English questions' multilingual floor (``bilingual.CROSS_FLOOR``) was chosen on its tune half
  (questions about odd-numbered facts, never-said u01-u30): the lowest floor at which half of
  those never-said questions come back empty on the German facts (the sweep is printed).

``R@1`` / ``R@3``: the question's memory is first / among the first three after the floor;
``empty``: nothing passes the floor for a never-said question. *before* scores an English
question by its English reading alone (as the default did before the second reading).
``--cost`` also times a search over 10,000 memories in one namespace and one embedding.

    python benchmarks/cross_lingual.py
    python benchmarks/cross_lingual.py --cost
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _cross_lingual_data import ENGLISH_MEMORIES, GERMAN_MEMORIES, NEVER_SAID
from _embed_cache import CachedEmbeddings
from _locomo_data import format_table
from langgraph.store.base import PutOp

from langgraph_episodic.bilingual import (
    CROSS_MARGIN,
    TOOLS_FLOOR,
    BilingualEmbeddings,
    _german_gate,
    _shifted,
)
from langgraph_episodic.chroma.store import ChromaStore
from langgraph_episodic.language.baseline import Calibration

DATA = Path(__file__).resolve().parent / "data"
FLOOR = TOOLS_FLOOR
NS = ("memories", "user")


@dataclasses.dataclass(frozen=True)
class CrossSet:
    """Memories (id -> text) of one language, questions (text, id) and never-said questions
    in the other; ``tune``: which questions and never-said ones are the tune half."""

    memories: dict[str, str]
    questions: list[tuple[str, str]]
    never_said: list[str]
    tune: tuple[list[bool], list[bool]] | None = None


class EnglishReadingOnly(BilingualEmbeddings):
    """The default embedder without the second reading: an English question scored by its
    English reading alone (the behaviour before it)."""

    def calibration(self, query_vector: Sequence[float] | np.ndarray) -> Calibration:
        return dataclasses.replace(super().calibration(query_vector), second=None)


def ours() -> dict[str, CrossSet]:
    """Our own set, both ways: ``"en->de"`` (English questions, German memories) and back."""
    out = {}
    for name, pairs, lang in (("en->de", GERMAN_MEMORIES, "en"), ("de->en", ENGLISH_MEMORIES, "de")):
        memories = {f"m{n:02d}": text for n, (text, _) in enumerate(pairs)}
        questions = [(q, f"m{n:02d}") for n, (_, q) in enumerate(pairs)]
        out[name] = CrossSet(memories, questions, list(NEVER_SAID[lang]))
    return out


def parallel() -> dict[str, CrossSet]:
    """The German memory set's facts asked with the English set's questions, and back."""
    rows = {
        lang: [json.loads(line) for line in (DATA / f"{name}_memory.jsonl").read_text("utf-8").splitlines()]
        for lang, name in (("de", "german"), ("en", "english"))
    }  # fmt: skip
    out = {}
    for name, facts_of, asked_in in (("en->de", "de", "en"), ("de->en", "en", "de")):
        memories = {r["id"]: r["text"] for r in rows[facts_of] if r["type"] == "fact"}
        questions = [(r["text"], r["fact"]) for r in rows[asked_in] if r["type"] == "question"]
        never = [(r["text"], r["id"]) for r in rows[asked_in] if r["type"] == "unrelated"]
        tune = (
            [int(fid[1:]) % 2 == 1 for _, fid in questions],
            [int(uid[1:]) <= 30 for _, uid in never],
        )
        out[name] = CrossSet(memories, questions, [t for t, _ in never], tune)
    return out


Search = Callable[[str], list[tuple[str, float]]]


def through_store(data: CrossSet, embedder: Any) -> Search:
    store = ChromaStore.ephemeral(index={"dims": 896, "embed": embedder})
    for key, text in data.memories.items():
        store.put(NS, key, {"text": text}, index=["text"])

    def search(query: str) -> list[tuple[str, float]]:
        return [(it.key, float(it.score or 0.0)) for it in store.search(NS, query=query, limit=3)]

    return search


def measure(data: CrossSet, search: Search, floor: float = FLOOR) -> dict[str, float]:
    """R@1, R@3 and never-said empty, on the whole set and (when it has one) its halves."""
    found = []
    for question, key in data.questions:
        kept = [k for k, score in search(question) if score >= floor]
        found.append((kept[:1] == [key], key in kept[:3]))
    empty = [not [s for _, s in search(q) if s >= floor] for q in data.never_said]
    out = {
        "R@1": statistics.mean(a for a, _ in found),
        "R@3": statistics.mean(b for _, b in found),
        "empty": statistics.mean(empty),
    }
    if data.tune is not None:
        for half, want in (("tune", True), ("held", False)):
            q_in = [f for f, t in zip(found, data.tune[0], strict=True) if t == want]
            e_in = [e for e, t in zip(empty, data.tune[1], strict=True) if t == want]
            out[f"R@3 {half}"] = statistics.mean(b for _, b in q_in)
            out[f"empty {half}"] = statistics.mean(e_in)
    return out


def cost(emb: BilingualEmbeddings) -> list[list[object]]:
    """Milliseconds per search over 10,000 memories in one namespace (query vectors
    precomputed: the ranking alone), and per embedding of an English question."""
    rng = np.random.default_rng(7)
    words = [f"w{n}" for n in range(5000)]
    texts = [" ".join(rng.choice(words, 8)) for _ in range(10_000)]
    # Random unit halves; a tenth of the memories' English halves placed on the German side.
    gate, _ = _german_gate()
    vecs = rng.normal(size=(10_000, 896))
    vecs[:1000, :384] += 40 * gate[:384] / np.linalg.norm(gate[:384])
    vecs[:, :384] /= np.linalg.norm(vecs[:, :384], axis=1, keepdims=True)
    vecs[:, 384:] /= np.linalg.norm(vecs[:, 384:], axis=1, keepdims=True)
    vecs /= np.sqrt(2)
    table = dict(zip(texts, vecs.tolist(), strict=True))
    english = np.concatenate([vecs[5, :384], vecs[7, 384:]])
    queries = {"q one": english, "q none": np.concatenate([vecs[5, :384], np.zeros(512)])}

    class Fixed(BilingualEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [table[t] for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return list(queries[text])

    store = ChromaStore.ephemeral(index={"dims": 896, "embed": Fixed(emb.english, emb.multilingual)})
    for start in range(0, 10_000, 500):
        store.batch([PutOp(NS, f"k{n}", {"text": texts[n]}, index=["text"]) for n in range(start, start + 500)])
    rows: list[list[object]] = []
    for label, query in (("with the second reading", "q one"), ("English half only (before)", "q none")):
        store.search(NS, query=query, limit=10)
        times = []
        for _ in range(30):
            t0 = time.perf_counter()
            store.search(NS, query=query, limit=10)
            times.append(1000 * (time.perf_counter() - t0))
        rows.append([f"search, 10,000 memories, {label}", f"{statistics.median(times):.2f}"])
    emb.load()
    for label, fn in (
        ("embed an English question: both models", lambda q: emb.embed_query(q)),
        ("embed an English question: MiniLM only (before)", lambda q: emb.english.embed_query(q)),
    ):
        fn("warm up")
        times = []
        for n in range(30):
            t0 = time.perf_counter()
            fn(f"What is the name of my dog number {n}?")
            times.append(1000 * (time.perf_counter() - t0))
        rows.append([label, f"{statistics.median(times):.2f}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cost", action="store_true", help="also time searches and embeddings")
    args = parser.parse_args(argv)
    from langgraph_episodic.embeddings import default_embeddings
    from langgraph_episodic.multilingual import MultilingualEmbeddings

    english = CachedEmbeddings(default_embeddings())
    multilingual = CachedEmbeddings(MultilingualEmbeddings(), name="use-m3")
    sets = {"ours": ours(), "parallel": parallel()}
    body: list[list[object]] = []
    for set_name, by_way in sets.items():
        for way, data in by_way.items():
            print(f"  {set_name} {way} ...", file=sys.stderr)
            for label, cls in (("before", EnglishReadingOnly), ("after", BilingualEmbeddings)):
                if way == "de->en" and label == "before":
                    continue  # a German question has no second reading: before = after
                m = measure(data, through_store(data, cls(english, multilingual)))
                halves = (
                    f"{m['R@3 tune']:.2f} / {m['R@3 held']:.2f}; {m['empty tune']:.2f} / {m['empty held']:.2f}"
                    if "R@3 tune" in m else ""
                )  # fmt: skip
                body.append([set_name, way, label, f"{m['R@1']:.2f}", f"{m['R@3']:.2f}",
                             f"{m['empty']:.2f}", halves])  # fmt: skip
    english.save()
    multilingual.save()
    print(f"\nCross-lingual recall at the floor {FLOOR} (each language's memories asked in the other)\n")
    print(format_table(
        ["set", "questions -> memories", "", "R@1", "R@3", "never-said empty",
         "R@3 tune / held; empty tune / held"], body))  # fmt: skip
    print(f"\nThe English questions' multilingual floor (parallel en->de, tune half); default "
          f"margin {CROSS_MARGIN:.4f}\n")  # fmt: skip
    data = sets["parallel"]["en->de"]
    sweep = []
    for floor in (0.14, 0.145, 0.15, 0.152, 0.155, 0.16, 0.17):
        margin = (floor - TOOLS_FLOOR) / (1.0 - TOOLS_FLOOR)
        cls = _with_margin(margin)
        m = measure(data, through_store(data, cls(english, multilingual)))
        sweep.append([f"{floor}", f"{m['R@3 tune']:.2f}", f"{m['empty tune']:.2f}",
                      f"{m['R@3 held']:.2f}", f"{m['empty held']:.2f}"])  # fmt: skip
    print(format_table(["floor above background", "R@3 tune", "empty tune", "R@3 held", "empty held"], sweep))
    if args.cost:
        from langgraph_episodic.bilingual import bilingual_embeddings

        print("\nCost (median ms of 30)\n")
        print(format_table(["what", "ms"], cost(bilingual_embeddings())))
    return 0


def _with_margin(margin: float) -> type[BilingualEmbeddings]:
    class Margin(BilingualEmbeddings):
        def calibration(self, query_vector: Sequence[float] | np.ndarray) -> Calibration:
            own = super().calibration(query_vector)
            if own.second is None:
                return own
            multi = np.asarray(query_vector, dtype=np.float64)[384:]
            second = dataclasses.replace(
                own.second,
                calibration=dataclasses.replace(
                    own.second.calibration, baseline=_shifted(multi, "en", margin)
                ),
            )
            return dataclasses.replace(own, second=second)

    return Margin


if __name__ == "__main__":
    raise SystemExit(main())
