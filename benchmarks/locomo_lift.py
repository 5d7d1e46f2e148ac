"""The shared-field lift on LoCoMo, through the store: its settings, and the alternatives.

Every turn is put into a ``ChromaStore`` (one namespace per conversation, value
``{"text", "time", "speaker"}``) indexing ``fields=["text"]``, ``["text", "time"]`` (the
session date) and ``["text", "time", "time"]`` (the date with weight 2 in the lexical text);
every question then goes through ``store.search(..., limit=10)`` under each variant:

* the lift (:mod:`langgraph_episodic.chroma.ranking.shared_fields`) off and on, over a grid of
  ``m`` (best hits naming their values) and ``w`` (the lift's weight);
* "lexical date lift": the same lifted rule, but a memory's share is the lexical share of a
  query made of the best hits' date *tokens* (their BM25 over the lexical index), instead of
  an exact match of the value.

Settings are chosen on the *tuning* conversations (1st, 3rd, 5th) by R@10 (then R@5) and
reported on all five and on the *held-out* 2nd and 4th.

    python benchmarks/locomo_lift.py --data ../shared/data/locomo/locomo10-dev.json
"""

from __future__ import annotations

import argparse
import contextlib
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from _embed_cache import CachedEmbeddings
from _fusion_reference import lexical_share
from _locomo_data import DEFAULT_DATA, Conversation, RecallTally, format_table, load_conversations

from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.ranking import shared_fields

TUNE, HELD = {0, 2, 4}, {1, 3}
PUT_BATCH = 64
GRID_M = (3, 5, 10)
GRID_W = (0.5, 0.8, 0.9)


def _load(store: Any, conversations: Sequence[Conversation]) -> None:
    from langgraph.store.base import PutOp

    for conv in conversations:
        ns = ("locomo", conv.sample_id)
        ops = [
            PutOp(ns, t.dia_id, {"text": t.document, "time": t.time, "speaker": t.speaker})
            for t in conv.turns
        ]
        for start in range(0, len(ops), PUT_BATCH):
            store.batch(ops[start : start + PUT_BATCH])


@contextlib.contextmanager
def _settings(m: int, w: float) -> Iterator[None]:
    old = shared_fields.LIFT_DOCS, shared_fields.LIFT_WEIGHT
    shared_fields.LIFT_DOCS, shared_fields.LIFT_WEIGHT = m, w
    try:
        yield
    finally:
        shared_fields.LIFT_DOCS, shared_fields.LIFT_WEIGHT = old


class _LexicalDateShares:
    """A stand-in for :func:`shared_fields.shares`: the lexical share of the best hits' date
    tokens (weighted by their scores) instead of an exact match of the value."""

    def __init__(self, store: Any, conversations: Sequence[Conversation]) -> None:
        self.store = store
        self.time_of = {
            record_format.item_id(("locomo", c.sample_id), t.dia_id): t.time
            for c in conversations
            for t in c.turns
        }
        self.ns: tuple[str, ...] = ()

    def __call__(
        self,
        sources: Sequence[tuple[str, float]],
        view: Any,
        primary: str,
        among: Any = None,
    ) -> dict[str, float]:
        index = self.store._backend.scope(self.ns, vectors=False).lexical
        total = sum(max(s, 0.0) for _, s in sources)
        terms: Counter[str] = Counter()
        for key, score in sources:
            tokens = index.tokenizer(self.time_of[record_format.split_entry_key(key)[0]])
            for token in tokens:
                terms[token] += score / total / len(tokens)
        if not terms:
            return {}
        scored = index.score_terms(terms, [self.ns])
        return {
            key: lexical_share(score, scored.max_score)
            for key, score in scored.of(among).items()
            if score > 0.0
        }


def run(
    store: Any, conversations: Sequence[Conversation], lexical: _LexicalDateShares | None = None
) -> list[RecallTally]:
    """One tally per conversation."""
    tallies = []
    original = shared_fields.shares
    try:
        if lexical is not None:
            shared_fields.shares = lexical  # type: ignore[assignment]  # (benchmark only)
        for conv in conversations:
            ns = ("locomo", conv.sample_id)
            if lexical is not None:
                lexical.ns = ns
            tally = RecallTally()
            for q in conv.questions:
                tally.add(q, [r.key for r in store.search(ns, query=q.question, limit=10)])
            tallies.append(tally)
    finally:
        shared_fields.shares = original  # type: ignore[assignment]
    return tallies


def summary(tallies: list[RecallTally], which: set[int] | None = None) -> dict[str, float]:
    """Recall over the chosen conversations, weighted by their question counts."""
    chosen = [t for n, t in enumerate(tallies) if which is None or n in which]
    count = sum(t.count() for t in chosen)
    out: dict[str, float] = {}
    for key in ("R@1", "R@5", "R@10"):
        out[key] = sum(t.summary()[key] * t.count() for t in chosen) / max(count, 1)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    args = parser.parse_args(argv)
    conversations = load_conversations(args.data)
    from langgraph_episodic.chroma.store import ChromaStore
    from langgraph_episodic.embeddings import default_embeddings

    embedder = CachedEmbeddings(default_embeddings())
    embedder.embed_documents(
        [t.document for c in conversations for t in c.turns]
        + [t.time for c in conversations for t in c.turns]
        + [q.question for c in conversations for q in c.questions]
    )
    embedder.save()
    dims = len(embedder.embed_query("probe"))
    stores = {}
    for label, fields in (
        ("text", ["text"]),
        ("text+date", ["text", "time"]),
        ("text+date x2", ["text", "time", "time"]),
    ):
        store = ChromaStore.ephemeral(index={"dims": dims, "embed": embedder, "fields": fields})
        _load(store, conversations)
        stores[label] = store
    rows: list[tuple[str, list[RecallTally]]] = []

    def measure(label: str, store: Any, *, lift: bool) -> list[RecallTally]:
        store.field_lift = lift
        tallies = run(store, conversations)
        rows.append((label, tallies))
        return tallies

    measure("text (default search, lift inactive)", stores["text"], lift=True)
    measure("text+date, no lift", stores["text+date"], lift=False)
    measure("text+date x2 (date weight 2), no lift", stores["text+date x2"], lift=False)
    for name in ("text+date", "text+date x2"):
        grid = []
        for m in GRID_M:
            for w in GRID_W:
                with _settings(m, w):
                    store = stores[name]
                    store.field_lift = True
                    grid.append((m, w, run(store, conversations)))
        for m, w, tallies in grid:
            rows.append((f"{name}, lift m={m} w={w}", tallies))
        m, w, _ = max(grid, key=lambda g: (summary(g[2], TUNE)["R@10"], summary(g[2], TUNE)["R@5"]))
        print(f"best on tuning for {name}: m={m} w={w}")
    store = stores["text+date"]
    for m in GRID_M:
        for w in GRID_W:
            with _settings(m, w):
                store.field_lift = True
                lexical = _LexicalDateShares(store, conversations)
                rows.append((f"lexical date lift m={m} w={w}", run(store, conversations, lexical)))
    headers = ["variant", "R@1", "R@5", "R@10", "R@5 tune", "R@10 tune", "R@5 held", "R@10 held"]
    body: list[list[object]] = []
    for label, tallies in rows:
        a, t, h = summary(tallies), summary(tallies, TUNE), summary(tallies, HELD)
        body.append(
            [label, a["R@1"], a["R@5"], a["R@10"], t["R@5"], t["R@10"], h["R@5"], h["R@10"]]
        )
    n = sum(len(c.questions) for c in conversations)
    print(f"{n} questions; tuning = conversations 1, 3, 5; held-out = 2, 4\n")
    print(format_table(headers, body))
    for store in stores.values():
        store.close()


if __name__ == "__main__":
    main()
