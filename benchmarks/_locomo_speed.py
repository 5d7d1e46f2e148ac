"""Hybrid against dense search speed on LoCoMo, measured interleaved (``locomo.py --interleaved``).

On a shared machine the load changes from one second to the next, so rows timed one after
the other (as the recall table does) cannot be compared. Here every store holds the same
turns, and each question goes through every store in turn (the order rotating from question
to question) before the next question is asked; a run asks every question once. The ratios
of one run are therefore measured under the same load. The query vectors come from the file
cache, so the times leave the model out; two more stores ("model" in their label) embed each
question with the packaged model, as a user calling ``store.search`` sees it (end to end).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from _locomo_data import Conversation, format_table
from langchain_core.embeddings import Embeddings

PUT_BATCH = 64

STORES: tuple[tuple[str, list[str], str, bool], ...] = (
    ("dense", ["text"], "dense", True),
    ("hybrid", ["text"], "hybrid", True),
    ("dated dense", ["text", "time"], "dense", True),
    ("dated hybrid", ["text", "time"], "hybrid", True),
    ("dated hybrid, no lift", ["text", "time"], "hybrid", False),
    ("dense, model", ["text"], "dense", True),
    ("hybrid, model", ["text"], "hybrid", True),
)
"""(label, indexed fields, search mode, field_lift) of each store; "dated" = the
session date indexed too (``fields=["text", "time"]``), where the shared-field lift (on by
default) acts; ", model": the question embedded by the model."""

RATIOS: tuple[tuple[str, str], ...] = (
    ("hybrid", "dense"),
    ("dated hybrid", "dated dense"),
    ("dated hybrid, no lift", "dated dense"),
    ("hybrid, model", "dense, model"),
)
"""(numerator, denominator): queries/s of the first over the second."""


class ModelQueries(Embeddings):
    """The benchmark's cached embedder for documents (the turns), the model itself for every
    question: what a search costs end to end."""

    def __init__(self, cached: Any) -> None:
        self.cached = cached
        self.is_packaged = getattr(cached, "is_packaged", False) is True

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.cached.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        inner = getattr(self.cached, "inner", self.cached)
        return inner.embed_query(text)


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


def interleaved(
    conversations: Sequence[Conversation],
    embedder: Any,
    open_store: Callable[..., Any],
    runs: int,
) -> str:
    """Per run: ms per search of each store and the queries/s ratios; returns the tables."""
    dims = len(embedder.embed_query("probe"))
    stores = []
    for label, fields, mode, lift in STORES:
        embed = ModelQueries(embedder) if label.endswith(", model") else embedder
        index = {"dims": dims, "embed": embed, "fields": fields}
        store = open_store(index=index, search_mode=mode, field_lift=lift)
        _load(store, conversations)
        stores.append((label, store))
    questions = [(("locomo", c.sample_id), q.question) for c in conversations for q in c.questions]
    for _, store in stores:  # warm up: every namespace loaded, every shard's arrays built
        for ns, text in questions[:: max(1, len(questions) // 50)]:
            store.search(ns, query=text, limit=10)
    labels = [label for label, _ in stores]
    time_rows: list[list[object]] = []
    ratio_rows: list[list[object]] = []
    for run in range(1, runs + 1):
        spent = dict.fromkeys(labels, 0.0)
        for n, (ns, text) in enumerate(questions):
            for j in range(len(stores)):
                label, store = stores[(n + j) % len(stores)]
                start = time.perf_counter()
                store.search(ns, query=text, limit=10)
                spent[label] += time.perf_counter() - start
        load = os.getloadavg()[0]
        ms = {label: 1000 * spent[label] / len(questions) for label in labels}
        time_rows.append([run, f"{load:.1f}", *(f"{ms[label]:.3f}" for label in labels)])
        ratio_rows.append(
            [run, f"{load:.1f}", *(f"{ms[den] / ms[num]:.2f}" for num, den in RATIOS)]
        )
        print(f"  run {run}: load {load:.1f}", file=sys.stderr)
    for _, store in stores:
        close = getattr(store, "close", None)
        if callable(close):
            close()
    times = format_table(["run", "load", *(f"{label} ms" for label in labels)], time_rows)
    ratios = format_table(
        ["run", "load", *(f"{num} / {den}" for num, den in RATIOS)], ratio_rows
    )
    return (
        f"{len(questions)} questions x {len(stores)} stores per run, interleaved; "
        "ms per search, model left out but in the \", model\" stores (the packaged model embeds "
        "each question); load = 1-minute load average at the end of the run\n\n"
        f"{times}\n\nQueries/s ratios (higher: the first is faster; target >= 0.5, model "
        f"left out)\n\n{ratios}"
    )
