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
  no floor, as in the other rows). With the context stored by default (the day indexed after
  the text, the thread stored as a filter) and with ``configurable["memory_context"] = False``.
* **middleware** (``mw-ab``, ``mw-all``): the conversations told to an agent with
  ``EpisodicMemoryMiddleware`` at its defaults but the clock, as the first speaker to an
  assistant or every turn as a user message (``_locomo_middleware.py``), each message named after its speaker;
  scored by the recall tool's search over the turns it remembers (``("memories", user_id)``),
  by the middleware's own search before the model (``recall_memories``, its floor on), by the
  recall tool's search over the entity facts it stores, by the entities it loads before the
  model, and by every current fact (what any search could find). ``mw-ab-user``: answers not
  remembered (``remember_replies=False``); ``mw-all-anon``: messages without names;
  ``mw-all-facts``: turns not remembered (``remember_turns=False``, facts only).
* **memory nodes** (``nodes-ab``, ``nodes-all``): the same conversations, castings, names and
  clock told to ``build_memory_graph`` (the memory nodes around a chat agent node, every
  option at its default but ``turns=TurnOptions(clock=...)``); scored by the recall tool's
  search over the turns they remember and by the search their ``recall_memories`` node runs
  before the model (the middleware's, the same function), as the middleware rows.

For the save tool a turn is saved as ``"speaker: text"``; what the tool keeps (it refuses greetings and thanks,
and consolidates: the same text is one memory, a new value on a topic closes the old one) is
mapped back to every turn of that text, so a refused turn counts as missed. Recall is measured
as in ``benchmarks/locomo.py`` (``benchmarks/_locomo_data.py``).

    python benchmarks/locomo_writers.py --data ../shared/data/locomo/locomo10-dev.json
    python benchmarks/locomo_writers.py --rows mw-ab,mw-all --conversations 1 --sessions 2
    python benchmarks/locomo_writers.py --rows nodes-ab,nodes-all
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from _embed_cache import CachedEmbeddings
from _locomo_data import (
    DEFAULT_DATA,
    Conversation,
    RecallTally,
    SessionClock,
    format_table,
    load_conversations,
    session_time,
)

from langgraph_episodic import memory_context

PUT_BATCH = 64


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

    clock = SessionClock()
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


def _told_rows(store: Any, conversations: Sequence[Conversation], roles: str,
               options: Mapping[str, Any], *, through: str = "middleware",
               facts: bool = True) -> tuple[list[list[RecallTally]], str]:
    """Tell the conversations to the middleware or the memory nodes (``_locomo_middleware``,
    ``options`` to its ``write``); the tallies of the recall tool's search over the turns remembered, of the search before
    the model and, with ``facts``, of the recall tool's search over the entity facts stored,
    of the entities loaded before the model and of every current fact (what any search could
    find), and a note on what was stored per told turn."""
    import _locomo_middleware as mw

    written = mw.write(store, conversations, roles=roles, through=through, **options)
    by_tool, by_own, searched, loaded, ceiling = [], [], [], [], []
    told = stored = current = unmapped = empty = 0
    for conv in conversations:
        turns = written.told[conv.sample_id]
        told += len(turns)
        tool, own = RecallTally(), RecallTally()
        for q in conv.questions:
            tool.add_groups(q, mw.turn_groups(store, conv.sample_id, q.question, 10,
                                              written.answered_by, through="tool"))
            own.add_groups(q, mw.turn_groups(store, conv.sample_id, q.question, 10,
                                             written.answered_by, through="before_model"))
        by_tool.append(tool)
        by_own.append(own)
        if not facts:
            continue
        ns = ("entities", conv.sample_id)
        prov = mw.map_back(mw.stored(store, ns), turns)
        stored, current, unmapped = stored + prov.facts, current + prov.current, \
            unmapped + prov.unmapped
        empty += sum(1 for t in turns if not prov.facts_per_turn[t.dia_id])
        in_prompt = mw.prompt_turns(store, ns, prov)
        anywhere = frozenset(prov.facts_per_turn)
        search, prompt, every = RecallTally(), RecallTally(), RecallTally()
        for q in conv.questions:
            search.add_groups(q, mw.recall_groups(store, ns, q.question, 10, prov))
            prompt.add_groups(q, [in_prompt])
            every.add_groups(q, [anywhere])
        searched.append(search)
        loaded.append(prompt)
        ceiling.append(every)
    note = f"{written.seconds:.0f} s to tell {told} turns"
    if facts:
        note += (f"; {stored} facts ({current} current, {current / max(told, 1):.2f} per turn, "
                 f"{unmapped} unmapped); {empty / max(told, 1):.0%} of the turns leave no "
                 "current fact")
    return [by_tool, by_own, searched, loaded, ceiling], note


def _first_sessions(conversations: Sequence[Conversation], sessions: int) -> list[Conversation]:
    """Each conversation cut to its first ``sessions`` sessions, with the questions whose
    evidence lies in them."""
    out = []
    for conv in conversations:
        turns = tuple(t for t in conv.turns if t.session <= sessions)
        kept = {t.dia_id for t in turns}
        questions = tuple(q for q in conv.questions if set(q.evidence) <= kept)
        out.append(Conversation(conv.sample_id, turns, questions))
    return out


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
    parser.add_argument("--rows", default="raw,raw-date,tool,tool-off,mw-ab,mw-all,"
                        "nodes-ab,nodes-all",
                        help="which rows, comma-separated (default: all)")
    parser.add_argument("--conversations", type=int, default=None,
                        help="only the first N conversations (a quick check)")
    parser.add_argument("--sessions", type=int, default=None,
                        help="only each conversation's first N sessions and their questions")
    args = parser.parse_args(argv)
    rows_wanted = args.rows.split(",")
    conversations = load_conversations(args.data)[: args.conversations]
    if args.sessions is not None:
        conversations = _first_sessions(conversations, args.sessions)
    from langgraph_episodic.chroma.store import ChromaStore
    from langgraph_episodic.embeddings import MODEL_DIMS, default_embeddings

    embedder = CachedEmbeddings(default_embeddings())
    embedder.embed_documents(
        [t.document for c in conversations for t in c.turns]
        + [t.text for c in conversations for t in c.turns]
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
        ("tool", "save tool, defaults (context: the day indexed, the thread a filter)", True,
         memory_context.CONTEXT_PATHS),
        ("tool-off", "save tool, memory_context=False", False, memory_context.CONTEXT_PATHS),
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
    for name, label, options in (
        ("mw-ab", "middleware, defaults, first speaker the user, the other the assistant", {}),
        ("mw-ab-user", "middleware, remember_replies=False, first speaker the user",
         {"remember_replies": False}),
        ("mw-all", "middleware, defaults, every turn a user message", {}),
        ("mw-all-anon", "middleware, defaults, every turn a user message, no names",
         {"names": False}),
        ("mw-all-facts", "middleware, remember_turns=False, every turn a user message",
         {"remember_turns": False}),
    ):
        if name not in rows_wanted:
            continue
        store = ChromaStore.ephemeral(index={"dims": MODEL_DIMS, "embed": embedder,
                                             "fields": ["$"]})
        (tool, own, searched, loaded, ceiling), note = _told_rows(
            store, conversations, name.split("-")[1], options)
        if options.get("remember_turns", True):
            add(f"{label}: the recall tool's search over the turns it remembers", tool, note)
            add(f"{label}: its own search before the model (recall_memories, floor on)", own)
            note = ""
        add(f"{label}: the recall tool's search over its entity facts", searched, note)
        add(f"{label}: the entities it loads before the model (50, unranked)", loaded,
            "every column: the evidence turns behind the loaded entities")
        add(f"{label}: every current fact (what any search could find)", ceiling,
            "every column: the evidence turns some current fact came from")
        store.close()
    for name, label in (
        ("nodes-ab", "memory nodes (build_memory_graph), defaults, first speaker the user, "
                     "the other the assistant"),
        ("nodes-all", "memory nodes (build_memory_graph), defaults, every turn a user message"),
    ):
        if name not in rows_wanted:
            continue
        store = ChromaStore.ephemeral(index={"dims": MODEL_DIMS, "embed": embedder,
                                             "fields": ["$"]})
        (tool, own, *_), note = _told_rows(store, conversations, name.split("-")[1], {},
                                           through="nodes", facts=False)
        add(f"{label}: the recall tool's search over the turns they remember", tool, note)
        add(f"{label}: their own search before the model (recall_memories, floor on)", own)
        store.close()
    embedder.save()
    n = sum(len(c.questions) for c in conversations)
    print(f"\n{n} questions, {sum(len(c.turns) for c in conversations)} turns\n")
    print(format_table(["variant", "R@1", "R@5", "R@10", "hit@10", "notes"], rows))


if __name__ == "__main__":
    main()
