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

``--sets indirect``: changes said in other words (``_facts_indirect.py``: per language a
tune and a held-out half, 14 changes each among facts that stay), rows ``rules`` and
``model``, held-out figures first and the tune half's in brackets. ``current@1`` and
``stale`` are read from the recall tool's answer (k=3: a replaced version there without the
"possibly outdated" mark counts as stale), ``as-of`` and ``history`` as above, ``predecessor
shown`` is the share of changes whose old fact was among the candidates shown to the decider,
``wrongly closed`` the facts closed that the user did not change, ``prompt tokens`` about how
many tokens a model's prompt for one decision holds (4 characters a token; the rule row
shows what a model would be shown by the rules' candidate reads).
Row ``told`` (``--rows told``) is the rule row whose recall is told exactly which statements
are changes (a perfect :func:`~langgraph_episodic.facts.phrasing.says_changed`): what the
recall's lead allows with the packaged models, whatever words a change is said in.

A last table: the cost of a save with consolidation (rules) against a plain ``put``.

    python benchmarks/facts_over_time.py
    python benchmarks/facts_over_time.py --sets indirect --rows rules,model --cost-rounds 0
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from unittest.mock import patch

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _facts_data import SETS, Event
from _facts_indirect import INDIRECT

from langgraph_episodic import ChromaStore
from langgraph_episodic.facts import current_facts, fact_history
from langgraph_episodic.facts import recall as facts_recall
from langgraph_episodic.facts.consolidate import RuleDecider
from langgraph_episodic.facts.model_decider import ModelDecider, prompt
from langgraph_episodic.facts.records import memory_key
from langgraph_episodic.facts.rules import Candidate
from langgraph_episodic.tools import create_memory_tools
from langgraph_episodic.tools.texts import texts_for

BASE = datetime(2025, 1, 1, 12, tzinfo=timezone.utc)
NS = ("memories", "u")
CONFIG: Any = {"configurable": {"user_id": "u"}}
K = 3
VERBOSE = False
INDEX: Any = None
"""The store's index: None for the packaged model, or ``multilingual_index()``."""


def _store() -> ChromaStore:
    return ChromaStore.ephemeral() if INDEX is None else ChromaStore.ephemeral(index=INDEX)


def _own_embedder_store() -> ChromaStore:
    """A fresh store with the default index but an embedder of its own (the same models)."""
    if INDEX is not None:
        return ChromaStore.ephemeral(index=INDEX)
    from langgraph_episodic.bilingual import BILINGUAL_DIMS, BilingualEmbeddings

    return ChromaStore.ephemeral(index={"dims": BILINGUAL_DIMS, "embed": BilingualEmbeddings(),
                                        "fields": ["$"]})


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

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedDecider:
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
            asked = questions.get(topic)
            if asked is None:
                continue
            ranked = top(asked, day((v.start + v.end) // 2))
            mine = [t for t in ranked if topic_of.get(t) == topic]
            as_of.append(bool(mine) and mine[0] == v.text)
            if VERBOSE and not as_of[-1]:
                print(f"  [{row}] as-of miss: {asked!r} day {(v.start + v.end) // 2} -> "
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


@contextmanager
def shown_to_decider() -> Iterator[list[tuple[str, list[str]]]]:
    """Records ``(new text, shown candidates' texts)`` of every decision, rules or model."""
    seen: list[tuple[str, list[str]]] = []
    originals = {cls: cls.decide for cls in (RuleDecider, ModelDecider)}

    def spy(original: Any) -> Any:
        def decide(self: Any, text: str, candidates: Sequence[Any]) -> Any:
            seen.append((text, [c.text for c in candidates]))
            return (yield from original(self, text, candidates))
        return decide

    for cls, original in originals.items():
        cls.decide = spy(original)  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        for cls, original in originals.items():
            cls.decide = original  # type: ignore[method-assign]


@dataclass
class IndirectScores:
    current: list[bool]
    stale: list[bool]
    as_of: list[bool]
    history: list[float]
    shown: list[bool]
    wrongly_closed: int
    tokens: list[int]
    marks: int = 0
    wrong_marks: int = 0

    def cells(self) -> list[str]:
        mean = lambda xs: f"{statistics.fmean(xs):.2f}" if xs else "-"  # noqa: E731
        pct = lambda xs: f"{100 * statistics.fmean(xs):.0f} %" if xs else "-"  # noqa: E731
        return [mean(self.current), pct(self.stale), mean(self.as_of), mean(self.history),
                pct(self.shown), str(self.wrongly_closed), f"{self.wrong_marks}/{self.marks}",
                f"{statistics.fmean(self.tokens):.0f}" if self.tokens else "-"]


def _answer_lines(answer: str) -> list[str]:
    return [line[2:] for line in answer.splitlines() if line.startswith("- ")]


def evaluate_indirect(lang: str, half: str, row: str) -> IndirectScores:
    """One half of the indirect timelines (``_facts_indirect.py``) through the tools.

    ``current@1``: in the recall tool's answer (k=3) to a topic's question, the first line of
    the topic's versions is the current one; ``stale``: an earlier version of the topic is in
    that answer without a mark (as current: neither "earlier:" nor "possibly outdated");
    ``as-of`` and ``history`` as for the year's timelines; ``shown``: the share of changes
    whose predecessor was among the candidates shown to the decider; ``wrongly closed``: facts
    closed that the user did not change (or closed by a fact of another topic); ``wrongly
    marked``: of the answer lines marked "possibly outdated", those that are no earlier version
    of the question's topic (a true fact the answer casts doubt on), over all marked lines.
    """
    events, questions, past = INDIRECT[lang][half]
    store = _store()
    clock = {"now": BASE}
    model = ScriptedDecider(decide=oracle(events)) if row == "model" else None
    save, recall = create_memory_tools(store=store, locale=lang, clock=lambda: clock["now"],
                                       model=model, min_score=None, k=K, should_store=None)
    if row == "told":  # the rules' recall, told exactly which statements are changes
        changes = {text for _, _, op, text in events if op == "update"}
        with patch.object(facts_recall, "says_changed", changes.__contains__):
            return _scored(lang, half, "rules", events, questions, past, store, save, recall,
                           clock)
    return _scored(lang, half, row, events, questions, past, store, save, recall, clock)


def _scored(lang: str, half: str, row: str, events: Sequence[Event], questions: dict[str, str],
            past: dict[str, str], store: ChromaStore, save: Any, recall: Any,
            clock: dict[str, datetime]) -> IndirectScores:
    """:func:`evaluate_indirect`'s timeline saved and asked."""
    topics = truth(events)
    topic_of = {v.text: topic for topic, vs in topics.items() for v in vs}
    with shown_to_decider() as seen:
        for when, _, _, text in events:
            clock["now"] = day(when)
            save.invoke({"information": text}, CONFIG)
    before = {text: versions[i - 1].text for versions in topics.values()
              for i, v in enumerate(versions) if i > 0 and (text := v.text)}
    shown_for = {text: shown for text, shown in seen}
    shown = [before[text] in shown_for.get(text, []) for _, _, op, text in events if op == "update"]
    outdated = _outdated_mark(lang)
    current, stale = [], []
    marks = wrong_marks = 0
    for topic, question in questions.items():
        now = topics[topic][-1]
        lines = _answer_lines(recall.invoke(_recall_args(lang, question), CONFIG))
        mine = [(line, t) for line in lines for t in (v.text for v in topics[topic])
                if line.startswith(t)]
        current.append(bool(mine) and mine[0][1] == now.text)
        stale.append(any(t != now.text and outdated not in line for line, t in mine))
        earlier = [v.text for v in topics[topic][:-1]]
        for line in lines:
            if outdated in line:
                marks += 1
                wrong_marks += not any(line.startswith(t) for t in earlier)
        if VERBOSE and (not current[-1] or stale[-1]):
            print(f"  [{lang} {half} {row}] {question!r} -> {lines} (want {now.text!r})")
            if not mine:
                print(f"      no version in the answer: {_ranks(store, question, topics[topic])}")
    as_of = []
    for topic, versions in topics.items():
        asked = questions.get(topic)
        for v in versions[:-1]:
            if asked is None or v.end is None or v.end - v.start < 2:
                continue
            found = current_facts(store, NS, asked, k=K, as_of=day((v.start + v.end) // 2))
            mine_texts = [rec.text for _, rec in found if topic_of.get(rec.text) == topic]
            as_of.append(bool(mine_texts) and mine_texts[0] == v.text)
    history = []
    for topic, question in past.items():
        earlier = [v.text for v in topics[topic] if v.end is not None]
        answer = recall.invoke(_recall_args(lang, question), CONFIG)
        history.append(sum(t in answer for t in earlier) / len(earlier))
    pairs = fact_history(store, NS)
    text_of_key = {key: rec.text for key, rec in pairs}
    wrong = 0
    for _, rec in pairs:
        if rec.current:
            continue
        version = next(v for v in topics[topic_of[rec.text]] if v.text == rec.text)
        successor = text_of_key.get(rec.superseded_by or "", rec.ended_by or "")
        if version.end is None or topic_of.get(successor) != topic_of[rec.text]:
            wrong += 1
            if VERBOSE:
                print(f"  [{lang} {half} {row}] wrongly closed {rec.text!r} by {successor!r}")
    tokens = [_prompt_tokens(text, shown) for text, shown in seen]
    return IndirectScores(current, stale, as_of, history, shown, wrong, tokens, marks, wrong_marks)


def _ranks(store: ChromaStore, question: str, versions: Sequence[Version]) -> str:
    """Where the question's search ranks a topic's versions: the current one among the current
    facts, the earlier ones among the replaced (a replaced one stands in for its current one)."""
    current = [item.value["text"] for item in store.search(
        NS, query=question, filter={"kind": "fact", "current": True}, limit=50)]
    past = [(item.value["text"], item.score) for item in store.search(
        NS, query=question, filter={"kind": "fact", "current": False}, limit=50)]
    where = []
    for v in versions:
        if v.text in current:
            where.append(f"{v.text!r} current #{current.index(v.text) + 1}")
        for i, (text, score) in enumerate(past):
            if text == v.text:
                where.append(f"{v.text!r} replaced #{i + 1} (score {score:.3f})")
    return "; ".join(where) or "not found"


def _prompt_tokens(text: str, shown: Sequence[str]) -> int:
    """About how many tokens the model's prompt for one decision holds (4 characters each)."""
    messages = prompt(text, [Candidate(str(i), t) for i, t in enumerate(shown)])
    return sum(len(str(m.content)) for m in messages) // 4


def _outdated_mark(lang: str) -> str:
    """The mark the recall tool puts on a current fact that a newer one may have replaced."""
    return texts_for(lang).outdated


def indirect_table(lang: str, rows: Sequence[str], halves: Sequence[str] = ("held", "tune")) -> str:
    """One row per decider: the first half's figures, the second's in brackets."""
    header = ["row", "current@1", "stale", "as-of", "history", "predecessor shown",
              "wrongly closed", "wrongly marked", "prompt tokens"]
    out = []
    for row in rows:
        cells = [evaluate_indirect(lang, half, row).cells() for half in halves]
        joined = [" ".join([column[0], *(f"({c})" for c in column[1:])])
                  for column in zip(*cells, strict=True)]
        out.append([row, *joined])
    return table(header, out)


def _recall_args(lang: str, question: str) -> dict[str, str]:
    return {"frage" if lang == "de" else "query": question}


def cost(lang: str, rounds: int) -> tuple[float, float]:
    """Median ms per plain put and per consolidated save (rules), same texts, fresh stores,
    each with its own embedder (sharing the models): the embedder keeps the vectors of the
    texts it embedded last, so a store sharing it would find the other's texts embedded."""
    events = SETS[lang][0]
    plain_ms, facts_ms = [], []
    for _ in range(rounds):
        plain = _own_embedder_store()
        facts = _own_embedder_store()
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
    parser.add_argument("--sets", default="year,indirect",
                        help="year: the year's timelines; indirect: changes in other words")
    parser.add_argument("--halves", default="held,tune",
                        help="halves of the indirect timelines; the first is shown, the rest "
                             "in brackets (tune only on 'tune')")
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
    sets = args.sets.split(",")
    for lang in args.langs.split(",") if "year" in sets else []:
        rows = [evaluate(lang, row).row(row) for row in args.rows.split(",")]
        print(f"\n{lang}: {len(SETS[lang][0])} events, embedder: {args.embedder}")
        print(table(header, rows))
    for lang in args.langs.split(",") if "indirect" in sets else []:
        indirect = [row for row in args.rows.split(",") if row in ("rules", "model", "told")]
        halves = INDIRECT[lang]
        chosen = args.halves.split(",")
        print(f"\n{lang}, changes in other words ({len(halves['held'][0])} events per half): "
              f"{chosen[0]} half" + "".join(f", {h} half in brackets" for h in chosen[1:]))
        print(indirect_table(lang, indirect, chosen))
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
