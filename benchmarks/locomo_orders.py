"""Same results before and after a speed change: every LoCoMo question's order and scores.

    python benchmarks/locomo_orders.py --out after.json          # dump this code's results
    python benchmarks/locomo_orders.py --compare before.json after.json

The dump holds, for every question of the file (the development half by default) and for each
store (lexical, hybrid, and hybrid with the session date indexed,
``fields=["text", "time"]``), the keys and scores of two pages: ``limit=10`` and ``limit=5,
offset=3``. ``--compare`` counts the orders that differ per store and the largest score
difference. Query vectors come from the benchmark's file cache (``.cache/``), as in
``locomo.py``; run the dump of the code before a change with that code first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _embed_cache import CachedEmbeddings
from _locomo_data import DEFAULT_DATA, load_conversations
from _locomo_speed import _load

STORES: tuple[tuple[str, list[str], str], ...] = (
    ("lexical", ["text"], "lexical"),
    ("hybrid", ["text"], "hybrid"),
    ("dated hybrid", ["text", "time"], "hybrid"),
)
"""(label, indexed fields, search mode) of each store."""

PAGES: tuple[tuple[int, int], ...] = ((10, 0), (5, 3))
"""(limit, offset) of each page asked per question."""


def dump(data: Path, limit_conversations: int | None) -> dict[str, list[list[list[Any]]]]:
    """Per store: per question and page, ``[[key, score], ...]`` in result order."""
    from langgraph_episodic.chroma.store import ChromaStore
    from langgraph_episodic.embeddings import default_embeddings

    conversations = load_conversations(data)[:limit_conversations]
    embedder = CachedEmbeddings(default_embeddings())
    dims = len(embedder.embed_query("probe"))
    out: dict[str, list[list[list[Any]]]] = {}
    for label, fields, mode in STORES:
        index = {"dims": dims, "embed": embedder, "fields": fields}
        store = ChromaStore.ephemeral(index=index, search_mode=mode)
        _load(store, conversations)
        pages: list[list[list[Any]]] = []
        for conv in conversations:
            ns = ("locomo", conv.sample_id)
            for question in conv.questions:
                for limit, offset in PAGES:
                    found = store.search(ns, query=question.question, limit=limit, offset=offset)
                    pages.append([[item.key, item.score] for item in found])
        store.close()
        out[label] = pages
        print(f"  {label}: {len(pages)} pages", file=sys.stderr)
    return out


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    """One line per store: orders that differ, and the largest score difference."""
    lines = []
    for label in before:
        old, new = before[label], after.get(label, [])
        if len(old) != len(new):
            lines.append(f"{label}: {len(old)} pages before, {len(new)} after")
            continue
        differ = sum(
            [key for key, _ in a] != [key for key, _ in b] for a, b in zip(old, new, strict=True)
        )
        largest = max(
            (
                abs(sa - sb)
                for a, b in zip(old, new, strict=True)
                for (_, sa), (_, sb) in zip(a, b, strict=False)
            ),
            default=0.0,
        )
        lines.append(
            f"{label}: {differ} of {len(old)} orders differ; largest score difference {largest:.2e}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Dump or compare, as the command line says."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--out", type=Path, help="write this code's results here")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(path.read_text()) for path in args.compare)
        print(compare(before, after))
        return
    if args.out is None:
        parser.error("give --out FILE or --compare BEFORE AFTER")
    args.out.write_text(json.dumps(dump(args.data, args.limit_conversations)))


if __name__ == "__main__":
    main()
