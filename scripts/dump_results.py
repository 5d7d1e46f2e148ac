"""Write the benchmarks' results as plain text, to compare two versions of the code byte for byte.

    python scripts/dump_results.py OUT_DIR                    # every part
    python scripts/dump_results.py OUT_DIR --only german,facts
    diff -r OUT_A OUT_B                                       # the same results?

One file per part, each line one search or one answer, with keys, texts and ``repr``'d scores:

* ``locomo``: every question of the LoCoMo development half (``../shared/data/locomo``) searched
  as ``benchmarks/locomo.py`` asks it (every turn put raw, ``store.search(ns, query=question,
  limit=10)``) in each of its stores (search modes; ``fields=["text"]`` or ``["text",
  "time"]``); then the first ``--tool-conversations`` conversations saved through the memory
  tool as ``benchmarks/locomo_writers.py`` does and searched as the recall tool does;
* ``german``: the German and English sets of ``benchmarks/german.py``, every question and
  never-said question through each of its store searches (top 3) and its standalone rankings;
* ``facts``: ``benchmarks/facts_over_time.py``'s timelines (year and indirect, every row): the
  per-question scores, then every fact version in the store (``fact_history``);
* ``learning``: ``benchmarks/learning.py`` (seeded), every world on ``InMemoryStore`` and one on
  ``ChromaStore``: tail success, recoveries, flags per policy;
* ``lived_in``: ``benchmarks/lived_in.py``'s held-out personas, both apps: what the recall
  tool and the middleware return for each question.

The embedders are the benchmarks' own file caches (``.cache/`` or ``--cache``, filled by the
first run): a text embedded before always gets the same vector, however the code batches its
calls. Compare two checkouts (``--root``) with the same ``--cache`` folder, after one run that
filled it.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _name, _value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                      "ANONYMIZED_TELEMETRY": "False", "TOKENIZERS_PARALLELISM": "false"}.items():
    os.environ.setdefault(_name, _value)

LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo10-dev.json"
"""The LoCoMo development half (CC BY-NC 4.0, never copied into the repository)."""
PARTS = ("locomo", "german", "facts", "learning", "lived_in")
Lines = Iterator[str]


def _hits(results: Iterable[Any]) -> str:
    """``[(key, score), ...]`` of store search results."""
    return repr([(item.key, item.score) for item in results])


def _embedder(name: str = "minilm") -> Any:
    from _embed_cache import CachedEmbeddings

    from langgraph_episodic.embeddings import default_embeddings

    return CachedEmbeddings(default_embeddings(), name=name)


def _multilingual(name: str = "use-m3") -> Any:
    from _embed_cache import CachedEmbeddings

    from langgraph_episodic.multilingual import MultilingualEmbeddings

    return CachedEmbeddings(MultilingualEmbeddings(), name=name)


def locomo(args: argparse.Namespace) -> Lines:
    import locomo_writers as writers
    from _locomo_data import load_conversations

    from langgraph_episodic.chroma.store import ChromaStore
    from langgraph_episodic.embeddings import MODEL_DIMS
    from langgraph_episodic.facts.recall import search_op
    from langgraph_episodic.tools.memory_tools import DEFAULT_NAMESPACE

    conversations = load_conversations(args.locomo)
    embedder = _embedder()
    # The stores of benchmarks/locomo.py's rows: each search mode over the text, and over the
    # text and the session date (with and without the shared-field lift).
    for fields, options in (
        (["text"], {"search_mode": "lexical"}),
        (["text"], {"search_mode": "dense"}),
        (["text"], {}),
        (["text", "time"], {"search_mode": "dense"}),
        (["text", "time"], {}),
        (["text", "time"], {"field_lift": False}),
    ):
        store = ChromaStore.ephemeral(index={"dims": MODEL_DIMS, "embed": embedder,
                                             "fields": fields}, **options)
        writers._raw(store, conversations)
        for conv in conversations:
            ns = ("locomo", conv.sample_id)
            for n, q in enumerate(conv.questions):
                found = store.search(ns, query=q.question, limit=10)
                yield (f"raw {fields} {options} {conv.sample_id} q{n} {q.question!r}: "
                       f"{_hits(found)}")
        store.close()
    told = conversations[: args.tool_conversations]
    store = ChromaStore.ephemeral(index={"dims": MODEL_DIMS, "embed": embedder, "fields": ["$"]})
    answers = writers._saved(store, told, context=True)
    yield f"save tool answers: {sorted(answers.items())!r}"
    for conv in told:
        user_ns = tuple(p.replace("{user_id}", conv.sample_id) for p in DEFAULT_NAMESPACE)
        for n, q in enumerate(conv.questions):
            recalled: Any = store.batch([search_op(user_ns, q.question, 10)])[0]
            texts = [(item.value.get("text"), item.score) for item in recalled]
            yield f"tool {conv.sample_id} q{n} {q.question!r}: {texts!r}"
    store.close()
    embedder.save()


def german(args: argparse.Namespace) -> Lines:
    import german as bench

    from langgraph_episodic.bilingual import BilingualEmbeddings
    from langgraph_episodic.language.analysis import analyzer, tokenize

    embedder, multilingual = _embedder(), _multilingual()
    for lang, path in bench.SETS.items():
        data = bench.load(path)
        searches: dict[str, Callable[[str], list[tuple[str, float]]]] = {
            "before": bench.standalone(data, embedder, tokenizer=tokenize, b=0.75,
                                       method="minmax"),
            "plain tokens": bench.standalone(data, embedder, tokenizer=tokenize, b=0.3,
                                             method="calibrated"),
            "no compounds": bench.standalone(data, embedder, b=0.3, method="calibrated",
                                             tokenizer=analyzer("auto", compounds=False)),
            "raw cosine": bench.through_store(data, bench.RawCosine(embedder)),
            "default": bench.through_store(data, embedder),
            f"language={lang}": bench.through_store(data, embedder, language=lang),
            "dense": bench.through_store(data, embedder, search_mode="dense"),
            "multilingual": bench.through_store(data, multilingual),
            "bilingual": bench.through_store(data, BilingualEmbeddings(embedder, multilingual)),
            f"bilingual language={lang}": bench.through_store(
                data, BilingualEmbeddings(embedder, multilingual), language=lang),
            "multilingual dense": bench.through_store(data, multilingual, search_mode="dense"),
        }
        questions = [q for q, _ in data.questions] + data.unrelated
        for name, search in searches.items():
            for q in questions:
                yield f"{lang} {name} {q!r}: {search(q)!r}"
    embedder.save()
    multilingual.save()


@contextmanager
def _captured_stores(module: Any) -> Iterator[list[Any]]:
    """Each store ``module._store()`` makes, kept to read after the timeline was told."""
    made: list[Any] = []
    original = module._store

    def keep() -> Any:
        made.append(original())
        return made[-1]

    module._store = keep
    try:
        yield made
    finally:
        module._store = original


def facts(args: argparse.Namespace) -> Lines:
    import facts_over_time as bench
    from _facts_indirect import INDIRECT

    from langgraph_episodic.bilingual import BILINGUAL_DIMS, BilingualEmbeddings
    from langgraph_episodic.facts import current_facts, fact_history

    # The timelines garble on purpose (the garbage row); its warnings are not results.
    logging.getLogger("langgraph_episodic.facts").setLevel(logging.ERROR)
    caches = [_embedder(), _multilingual()]
    bench.INDEX = {"dims": BILINGUAL_DIMS, "fields": ["$"], "embed": BilingualEmbeddings(*caches)}
    runs: list[tuple[str, Callable[[], Any]]] = []
    for lang in bench.SETS:
        for row in ("today", "rules", "model", "garbage"):
            runs.append((f"year {lang} {row}", partial(bench.evaluate, lang, row)))
        for half in INDIRECT[lang]:
            for row in ("rules", "model"):
                runs.append((f"indirect {lang} {half} {row}",
                             partial(bench.evaluate_indirect, lang, half, row)))
    for label, run in runs:
        with _captured_stores(bench) as stores:
            scores = run()
        if hasattr(scores, "seconds"):
            scores.seconds = 0.0  # wall time, not a result
        yield f"{label} scores: {scores!r}"
        for store in stores:
            for key, record in fact_history(store, bench.NS):
                yield f"{label} fact {key}: {record!r}"
            current = [key for key, _ in current_facts(store, bench.NS, k=1000)]
            yield f"{label} current: {current!r}"
            store.close()
    for cache in caches:
        cache.save()


def learning(args: argparse.Namespace) -> Lines:
    import learning as bench

    for store, worlds, episodes in (("memory", bench.WORLDS, args.learning_episodes),
                                    ("chroma", ("abrupt",), args.learning_episodes // 2)):
        options = argparse.Namespace(episodes=episodes, seeds=args.learning_seeds, first_seed=0,
                                     window=50, store=store, policies=None, draws="policy")
        for world in worlds:
            result = bench.run_world(world, options)
            for name in ("tails", "recoveries", "flags", "own"):
                for policy, values in getattr(result, name).items():
                    yield f"{store} {world} {episodes}x{args.learning_seeds} {name} {policy}: " \
                          f"{values!r}"


def lived_in(args: argparse.Namespace) -> Lines:
    import lived_in as bench

    index, caches = bench.cached_index()
    for persona in bench.HALVES["held-out"]:
        for row in bench.ROWS:
            for o in bench.run_persona(persona, row, index):
                yield (f"{persona.user_id} {row} {o.view} {o.question.text!r}: ok={o.ok} "
                       f"lines={o.answer.lines!r} prompt={o.answer.prompt!r}")
    for cache in caches:
        cache.save()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for the dumps (one .txt per part)")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"comma-separated parts (default: all of {', '.join(PARTS)})")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="the checkout whose package and benchmarks run (default: this one)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="folder of the embedding caches (default: the checkout's .cache)")
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="the LoCoMo JSON file")
    parser.add_argument("--tool-conversations", type=int, default=2,
                        help="LoCoMo conversations also saved through the memory tool")
    parser.add_argument("--learning-episodes", type=int, default=300)
    parser.add_argument("--learning-seeds", type=int, default=2)
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"unknown parts {unknown}; choose from {', '.join(PARTS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    sys.path[:0] = [str(args.root), str(args.root / "benchmarks")]
    import _embed_cache

    import langgraph_episodic

    if args.cache is not None:
        _embed_cache.CACHE_DIR = args.cache

    print(f"package: {Path(langgraph_episodic.__file__).parent}", file=sys.stderr)
    for part in parts:
        started = time.perf_counter()
        path = args.out / f"{part}.txt"
        with path.open("w", encoding="utf-8") as out:
            for line in globals()[part](args):
                out.write(line + "\n")
        print(f"{part}: {time.perf_counter() - started:.0f} s -> {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
