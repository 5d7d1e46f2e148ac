"""LoCoMo written as the library's writers write a conversation: recall with and without context.

Rows:

* **raw puts, text**: every turn put through ``store.batch`` (value ``{"text", "time",
  "speaker"}``), the store indexing ``fields=["text"]``: the default search on text alone.
* **raw puts, text + date**: the same with ``fields=["text", "time"]`` (LoCoMo's session date
  string, "1:56 pm on 8 May, 2023"), the shared-field lift on.
* **save tool**: every turn saved with the memory tool (``create_memory_tools(store=store,
  locale="en")``, every other option at its default), in a default ``ChromaStore`` (the whole
  value indexed, the packaged model), one thread per LoCoMo session (``thread_id``), the tool's
  clock set to the session's date and time. Each question goes through the search the recall
  tool runs (current facts, :func:`langgraph_episodic.facts.recall.search_op`, ``limit=10``;
  no floor, as in the other rows). With the context stored by default, with
  ``configurable["memory_context"] = False``, and with only the day indexed (the thread
  stored, not indexed; set in this script only).

A turn is saved as ``"speaker: text"``; what the tool keeps (it refuses greetings and thanks,
and consolidates: the same text is one memory, a new value on a topic closes the old one) is
mapped back to every turn of that text, so a refused turn counts as missed. Recall is measured
as in ``benchmarks/locomo.py`` (``benchmarks/_locomo_data.py``).

    python benchmarks/locomo_writers.py --data ../shared/data/locomo/locomo10-dev.json
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from _embed_cache import CachedEmbeddings
from _locomo_data import DEFAULT_DATA, Conversation, RecallTally, format_table, load_conversations

from langgraph_episodic import memory_context

PUT_BATCH = 64
LOCOMO_TIME = "%I:%M %p on %d %B, %Y"
"""How LoCoMo writes a session's time ("1:56 pm on 8 May, 2023")."""


def session_time(text: str) -> datetime:
    """A LoCoMo session time as an aware datetime (UTC: the data names no zone)."""
    return datetime.strptime(text, LOCOMO_TIME).replace(tzinfo=timezone.utc)


def _raw(store: Any, conversations: Sequence[Conversation]) -> None:
    from langgraph.store.base import PutOp

    for conv in conversations:
        ns = ("locomo", conv.sample_id)
        ops = [
            PutOp(ns, t.dia_id, {"text": t.document, "time": t.time, "speaker": t.speaker})
            for t in conv.turns
        ]
        for start in range(0, len(ops), PUT_BATCH):
            store.batch(ops[start : start + PUT_BATCH])


def _raw_tallies(store: Any, conversations: Sequence[Conversation]) -> list[RecallTally]:
    tallies = []
    for conv in conversations:
        tally = RecallTally()
        for q in conv.questions:
            found = store.search(("locomo", conv.sample_id), query=q.question, limit=10)
            tally.add(q, [r.key for r in found])
        tallies.append(tally)
    return tallies


class _Clock:
    """The save tool's clock: the session being written."""

    def __init__(self) -> None:
        self.now = datetime(2023, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


def _kind(answer: str) -> str:
    """What the English save tool did, from its answer."""
    if answer.startswith("Not saved"):
        return "refused"
    for mark, kind in (("(replaces:", "replaced"), ("no longer holds", "ended"),
                       ("(already known)", "known")):
        if mark in answer:
            return kind
    return "new"


def _saved(store: Any, conversations: Sequence[Conversation], *, context: bool) -> dict[str, int]:
    """Save every turn through the memory tool; returns what the tool answered, by kind."""
    from langgraph_episodic import create_memory_tools

    clock = _Clock()
    save, _ = create_memory_tools(store=store, locale="en", clock=clock)
    answers: dict[str, int] = defaultdict(int)
    for conv in conversations:
        for turn in conv.turns:
            clock.now = session_time(turn.time)
            configurable: dict[str, Any] = {
                "user_id": conv.sample_id,
                "thread_id": f"{conv.sample_id}/session-{turn.session}",
            }
            if not context:
                configurable["memory_context"] = False
            answer = save.invoke({"information": turn.document}, {"configurable": configurable})
            answers[_kind(answer)] += 1
    return dict(answers)


def _tool_tallies(
    store: Any, conversations: Sequence[Conversation], *, current: bool
) -> list[RecallTally]:
    """``current``: the recall tool's search (current facts only); else every version kept."""
    from langgraph.store.base import SearchOp

    from langgraph_episodic.facts.recall import search_op
    from langgraph_episodic.tools.memory_tools import DEFAULT_NAMESPACE

    tallies = []
    for conv in conversations:
        ns = tuple(p.replace("{user_id}", conv.sample_id) for p in DEFAULT_NAMESPACE)
        turns_of: dict[str, list[str]] = defaultdict(list)
        for turn in conv.turns:
            turns_of[" ".join(turn.document.split())].append(turn.dia_id)
        tally = RecallTally()
        for q in conv.questions:
            op = search_op(ns, q.question, 10) if current else SearchOp(ns, None, 10, 0, q.question)
            (found,) = store.batch([op])
            ranked = [d for r in found for d in turns_of.get(r.value.get("text", ""), [])]
            tally.add(q, ranked)
        tallies.append(tally)
    return tallies


@contextlib.contextmanager
def _paths(paths: tuple[str, ...]) -> Iterator[None]:
    old = memory_context.CONTEXT_PATHS
    memory_context.CONTEXT_PATHS = paths
    try:
        yield
    finally:
        memory_context.CONTEXT_PATHS = old


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument("--rows", default="raw,raw-date,tool,tool-off,tool-day",
                        help="which rows, comma-separated (default: all)")
    args = parser.parse_args(argv)
    rows_wanted = args.rows.split(",")
    conversations = load_conversations(args.data)
    from langgraph_episodic.chroma.store import ChromaStore
    from langgraph_episodic.embeddings import MODEL_DIMS, default_embeddings

    embedder = CachedEmbeddings(default_embeddings())
    embedder.embed_documents(
        [t.document for c in conversations for t in c.turns]
        + [q.question for c in conversations for q in c.questions]
    )
    rows: list[list[object]] = []

    def add(label: str, tallies: list[RecallTally], extra: str = "") -> None:
        count = sum(t.count() for t in tallies)
        cells: list[object] = [label]
        for key in ("R@1", "R@5", "R@10", "hit@10"):
            cells.append(sum(t.summary()[key] * t.count() for t in tallies) / max(count, 1))
        rows.append([*cells, extra])
        print(f"{label}: R@10 {cells[3]:.3f}  {extra}", flush=True)

    for name, label, fields in (
        ("raw", "raw puts, text (fields=['text'])", ["text"]),
        ("raw-date", "raw puts, text + LoCoMo date (fields=['text', 'time'])", ["text", "time"]),
    ):
        if name not in rows_wanted:
            continue
        store = ChromaStore.ephemeral(
            index={"dims": MODEL_DIMS, "embed": embedder, "fields": fields}
        )
        _raw(store, conversations)
        add(label, _raw_tallies(store, conversations))
        store.close()
    for name, label, context, paths in (
        ("tool", "save tool, defaults (context: day and thread)", True,
         memory_context.CONTEXT_PATHS),
        ("tool-off", "save tool, memory_context=False", False, memory_context.CONTEXT_PATHS),
        ("tool-day", "save tool, context with only the day indexed", True,
         (f"{memory_context.CONTEXT_FIELD}.day",)),
    ):
        if name not in rows_wanted:
            continue
        with _paths(paths):
            store = ChromaStore.ephemeral(index={"dims": MODEL_DIMS, "embed": embedder,
                                                 "fields": ["$"]})
            started = time.perf_counter()
            answers = _saved(store, conversations, context=context)
            seconds = time.perf_counter() - started
            note = f"{seconds:.0f} s to save; answers: " + ", ".join(
                f"{k} {v}" for k, v in sorted(answers.items()))
            add(f"{label}, every version", _tool_tallies(store, conversations, current=False),
                note)
            add(f"{label}, current facts (the recall tool's search)",
                _tool_tallies(store, conversations, current=True))
            store.close()
    embedder.save()
    n = sum(len(c.questions) for c in conversations)
    print(f"\n{n} questions, {sum(len(c.turns) for c in conversations)} turns\n")
    print(format_table(["variant", "R@1", "R@5", "R@10", "hit@10", "notes"], rows))


if __name__ == "__main__":
    main()
