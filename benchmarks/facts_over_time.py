"""Facts that change over time: current-fact accuracy, stale rate, as-of accuracy, history.

One user's year in German and in English (``_facts_data.py``: 54 events each, 18 updates, 6
endings, 2 restatements), saved in order through the memory tools with the clock at each
event's day, on ``ChromaStore.ephemeral()`` with the packaged embedder. Rows:

* ``today``: every fact a plain ``put`` (as the tools did before facts had periods); recall is
  the store's search.
* ``rules``: ``create_memory_tools()`` (consolidation by rules).
* ``model``: ``create_memory_tools(model=...)`` with a scripted model that decides as a good
  one would: it knows each event's ground truth and names the shown candidate of the same
  topic (``new`` when that candidate was not shown).
* ``garbage``: a model answering unusable output (prose, unknown numbers, unknown actions).

Columns: ``current@1`` (for a question about a topic that still holds, the first of the
topic's facts among the top 3 is its current version: currency, given the search finds the
topic), ``top-1`` (the very first result is the topic's current version: retrieval and
currency together; a multi-valued topic's other current fact counts as a miss), ``stale`` (share of current questions where a replaced or ended version
ranks above the current one in the top 3, or appears there at all when the topic ended),
``as-of`` (with ``as_of=`` a day inside an earlier period, the first of the topic's facts in
the top 3 is the version valid then), ``history`` (share of
earlier versions that the answer to a question about the past names), ``since`` (the current
version's ``valid_from`` is the day it was said).

A second table: the cost of a save with consolidation (rules) against a plain ``put``.

    python benchmarks/facts_over_time.py
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _facts_data import SETS, Event

from langgraph_episodic import ChromaStore
from langgraph_episodic.facts import current_facts
from langgraph_episodic.tools import create_memory_tools
from langgraph_episodic.tools._core import memory_key

BASE = datetime(2025, 1, 1, 12, tzinfo=timezone.utc)
NS = ("memories", "u")
CONFIG: Any = {"configurable": {"user_id": "u"}}
K = 3
VERBOSE = False
INDEX: Any = None
"""The store's index: None for the packaged model, or ``multilingual_index()``."""


def _store() -> ChromaStore:
    return ChromaStore.ephemeral() if INDEX is None else ChromaStore.ephemeral(index=INDEX)


def day(n: int) -> datetime:
    return BASE + timedelta(days=n)


@dataclass
class Version:
    text: str
    start: int
    end: int | None = None
    ended: bool = False


def truth(events: Sequence[Event]) -> dict[str, list[Version]]:
    """Each topic's versions as the timeline defines them."""
    topics: dict[str, list[Version]] = {}
    for when, topic, op, text in events:
        versions = topics.setdefault(topic, [])
        if op in ("new", "update"):
            if versions and versions[-1].end is None:
                versions[-1].end = when
            versions.append(Version(text, when))
        elif op == "end":
            versions[-1].end = when
            versions[-1].ended = True
    return topics


class ScriptedDecider(BaseChatModel):
    """A chat model answering ``FactDecision`` tool calls from a function of the prompt."""

    decide: Any

    @property
    def _llm_type(self) -> str:
        return "scripted-decider"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedDecider:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        reply = self.decide(str(messages[-1].content))
        message = reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply))
        return ChatResult(generations=[ChatGeneration(message=message)])


def _parse_prompt(prompt: str) -> tuple[str, list[str]]:
    new_part, _, listing = prompt.partition("\n\nCURRENT facts:\n")
    new = new_part.removeprefix("NEW fact:\n")
    shown = [line.split(". ", 1)[1] for line in listing.splitlines() if ". " in line]
    return new, shown


def _call(action: str, fact: int | None) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "FactDecision", "id": "c1",
                                              "args": {"action": action, "fact": fact},
                                              "type": "tool_call"}])


def oracle(events: Sequence[Event]) -> Callable[[str], AIMessage]:
    """Decides as a good model would: by the ground truth of the event and the shown facts."""
    by_text = {text: (topic, op) for _, topic, op, text in events}

    def decide(prompt: str) -> AIMessage:
        new, shown = _parse_prompt(prompt)
        topic, op = by_text[new]
        if op == "new":
            return _call("new", None)
        for i, text in enumerate(shown, start=1):
            if by_text.get(text, ("", ""))[0] == topic:
                return _call(op, i)
        return _call("new", None)

    return decide


def garbage() -> Callable[[str], Any]:
    replies = [
        lambda: "Sure, I would say this one updates the first fact.",
        lambda: _call("update", 99),
        lambda: AIMessage(content="", tool_calls=[{"name": "FactDecision", "id": "c",
                                                   "args": {"action": "maybe", "fact": "x"},
                                                   "type": "tool_call"}]),
    ]
    state = {"n": 0}

    def decide(prompt: str) -> Any:
        state["n"] += 1
        return replies[state["n"] % len(replies)]()

    return decide


@dataclass
class Scores:
    current: list[bool]
    top1: list[bool]
    stale: list[bool]
    as_of: list[bool]
    history: list[float]
    since: list[bool] | None
    seconds: float

    def row(self, name: str) -> list[str]:
        def mean(xs: Sequence[float]) -> str:
            return f"{statistics.fmean(xs):.2f}" if xs else "-"

        return [name, mean(self.current), mean(self.top1), f"{100 * statistics.fmean(self.stale):.0f} %",
                mean(self.as_of), mean(self.history),
                "n/a" if self.since is None else mean(self.since), f"{self.seconds:.1f}"]


def _ranked_topics(texts: Sequence[str], topic_of: dict[str, str]) -> list[str]:
    return [topic_of.get(t, "?") for t in texts]


def evaluate(lang: str, row: str) -> Scores:
    events, questions, past, since = SETS[lang]
    topics = truth(events)
    topic_of = {v.text: topic for topic, vs in topics.items() for v in vs}
    store = _store()
    clock = {"now": BASE}
    model = None
    if row == "model":
        model = ScriptedDecider(decide=oracle(events))
    elif row == "garbage":
        model = ScriptedDecider(decide=garbage())
    save, recall = create_memory_tools(store=store, locale=lang, clock=lambda: clock["now"],
                                       model=model, min_score=None, k=5, should_store=None)
    start = time.perf_counter()
    for when, _, _, text in events:
        clock["now"] = day(when)
        if row == "today":
            store.put(NS, memory_key(text), {"text": text, "kind": "fact"}, index=["text"])
        else:
            save.invoke({"information": text}, CONFIG)
    seconds = time.perf_counter() - start

    def top(question: str, as_of: datetime | None = None) -> list[str]:
        if row == "today":
            return [item.value["text"] for item in store.search(NS, query=question, limit=K)]
        return [rec.text for _, rec in current_facts(store, NS, question, k=K, as_of=as_of)]

    current, stale, top1 = [], [], []
    for topic, question in questions.items():
        versions = topics[topic]
        ranked = top(question)
        mine = [t for t in ranked if topic_of.get(t) == topic]
        now = versions[-1]
        if now.end is None:
            current.append(bool(mine) and mine[0] == now.text)
            top1.append(bool(ranked) and ranked[0] == now.text)
            stale.append(bool(mine) and mine[0] != now.text)
            if VERBOSE and not current[-1]:
                print(f"  [{row}] current miss: {question!r} -> {ranked} (want {now.text!r})")
        else:
            stale.append(bool(mine))
    as_of = []
    for topic, versions in topics.items():
        for v in versions[:-1] if versions[-1].end is None else versions:
            if v.end is None or v.end - v.start < 2:
                continue
            question = questions.get(topic)
            if question is None:
                continue
            ranked = top(question, day((v.start + v.end) // 2))
            mine = [t for t in ranked if topic_of.get(t) == topic]
            as_of.append(bool(mine) and mine[0] == v.text)
            if VERBOSE and not as_of[-1]:
                print(f"  [{row}] as-of miss: {question!r} day {(v.start + v.end) // 2} -> "
                      f"{ranked[:2]} (want {v.text!r})")
    history = []
    for topic, question in past.items():
        earlier = [v.text for v in topics[topic] if v.end is not None]
        if row == "today":
            found = [item.value["text"] for item in store.search(NS, query=question, limit=5)]
            history.append(sum(t in found for t in earlier) / len(earlier))
        else:
            answer = recall.invoke(_recall_args(lang, question), CONFIG)
            history.append(sum(t in answer for t in earlier) / len(earlier))
            if VERBOSE and history[-1] < 1:
                print(f"  [{row}] history miss: {question!r} -> {answer!r} (want {earlier})")
    since_scores = None
    if row != "today":
        since_scores = []
        for topic, question in since.items():
            found = current_facts(store, NS, question, k=1)
            want = day(topics[topic][-1].start).date().isoformat()
            since_scores.append(bool(found) and found[0][1].valid_from.startswith(want))
    return Scores(current, top1, stale, as_of, history, since_scores, seconds)


def _recall_args(lang: str, question: str) -> dict[str, str]:
    return {"frage" if lang == "de" else "query": question}


def cost(lang: str, rounds: int) -> tuple[float, float]:
    """Median ms per plain put and per consolidated save (rules), same texts, fresh stores."""
    events = SETS[lang][0]
    plain_ms, facts_ms = [], []
    for _ in range(rounds):
        plain = _store()
        facts = _store()
        save, _ = create_memory_tools(store=facts, locale=lang, should_store=None,
                                      clock=lambda: BASE)
        plain.put(NS, "warm", {"text": "warm up"}, index=["text"])
        save.invoke({"information": "warm up the model"}, CONFIG)
        for _, _, _, text in events:
            t = time.perf_counter()
            plain.put(NS, memory_key(text), {"text": text, "kind": "fact"}, index=["text"])
            plain_ms.append(1000 * (time.perf_counter() - t))
            t = time.perf_counter()
            save.invoke({"information": text}, CONFIG)
            facts_ms.append(1000 * (time.perf_counter() - t))
    return statistics.median(plain_ms), statistics.median(facts_ms)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *map(line, rows)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--langs", default="de,en")
    parser.add_argument("--cost-rounds", type=int, default=2)
    parser.add_argument("--rows", default="today,rules,model,garbage")
    parser.add_argument("--verbose", action="store_true", help="print each miss")
    parser.add_argument("--embedder", choices=["model", "multilingual"], default="model")
    args = parser.parse_args(argv)
    global VERBOSE, INDEX
    VERBOSE = args.verbose
    if args.embedder == "multilingual":
        from langgraph_episodic.multilingual import multilingual_index

        INDEX = multilingual_index()
    # The garbage row makes the library warn on every save; the table is what matters here.
    logging.getLogger("langgraph_episodic.facts").setLevel(logging.ERROR)
    header = ["row", "current@1", "top-1", "stale", "as-of", "history", "since", "write s"]
    for lang in args.langs.split(","):
        rows = [evaluate(lang, row).row(row) for row in args.rows.split(",")]
        print(f"\n{lang}: {len(SETS[lang][0])} events, embedder: {args.embedder}")
        print(table(header, rows))
    if args.cost_rounds < 1:
        return 0
    print("\ncost of a save (median ms per fact, packaged embedder)")
    cost_rows = []
    for lang in args.langs.split(","):
        plain, facts = cost(lang, args.cost_rounds)
        cost_rows.append([lang, f"{plain:.1f}", f"{facts:.1f}", f"{facts / plain:.2f}x"])
    print(table(["set", "plain put", "save with consolidation", "ratio"], cost_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
