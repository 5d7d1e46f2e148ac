"""Recall in a memory that has been lived in: a few sessions of chat, then questions.

Each persona of ``_lived_in_data.py`` (an English, a German and a bilingual user per half)
talks to an agent over about six sessions: facts said in passing, small talk, help requests,
their own questions, replies that repeat their words, and facts that change later. The
conversations are told to ``create_agent`` with :class:`~langgraph_episodic.EpisodicMemoryMiddleware`
and a scripted chat model, each session one thread ``"{user}:s{n}"`` with the clock at the
session's date, into a fresh ``ChromaStore.ephemeral()`` with the default embedder. Two apps
(rows):

* ``A``: the agent also has the memory tools (``create_memory_tools()``, German, defaults)
  and calls ``memory_speichern`` with the fact sentence the data marks whenever a user turn
  states a fact; the middleware remembers the turns;
* ``B``: the middleware alone, every option at its default.

Then every question is asked two ways (views), as an agent would see the answer:

* ``tool``: ``memory_abrufen`` called with the question (the user's ``user_id``, a new thread);
  the returned ``- ...`` lines;
* ``middleware``: the question sent as a user message in a new thread; the lines of the
  saved-memories block the middleware puts into the model's request (captured from the
  system message the fake model receives). While the questions are asked the store drops
  writes, so one question never becomes memory for the next.

Metrics per row, view and language of the persona (en / de / mixed):

* ``answer@3``: an answerable question has a marker (whole words, any case) in the first 3
  returned lines;
* ``false empty``: a question with an answer (answerable, cross-lingual, changed) came back
  with no line;
* ``never-said empty``: a question about something never said came back with no line;
* ``cross@3``: answer@3 of the questions asked in the other language than the memory;
* ``changed first``: the current marker's line is in the first 3 and before any line with
  the old marker alone (a line naming both tells the change);
* ``wrongly outdated``: of the returned lines marked "possibly outdated" (a newer fact on
  their topic came first), how many hold no earlier version of a fact that changed (marked
  wrongly / marked, every question of the cell);
* ``wrongly closed``: of the user's saved facts that a later save closed (ended or replaced),
  how many hold no earlier version of a fact that changed (closed wrongly / closed);
* ``noise``: the share of returned lines that are the user's own questions / requests or the
  assistant's replies (a reply is ``you said`` in the prompt; in the tool's answer it is
  recognised by its text).
* ``in prompt`` (middleware view only): a marker anywhere in what the middleware adds to the
  request (the entities block too, which is not ranked by the question).

    python benchmarks/lived_in.py                  # held-out and tune tables
    python benchmarks/lived_in.py --half tune --verbose
    python benchmarks/lived_in.py --ceiling        # what the two models allow (no store logic)
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.store.base import BaseStore, Op, PutOp, Result

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _lived_in_data import HALVES, Persona, Question, Session

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "TOKENIZERS_PARALLELISM": "false"}
"""Set (unless set) when run as a script: no model hub, no telemetry."""

ROWS = ("A", "B")
VIEWS = ("tool", "middleware")
LANGUAGES = ("en", "de", "mixed")
TOP = 3
"""A marker counts when it is in one of the first ``TOP`` returned lines."""
MARKER_LABEL = "SAVED MEMORIES"
"""The fence of the ranked memory block the middleware view reads."""
SAVE_TOOL, RECALL_TOOL = "memory_speichern", "memory_abrufen"


# --- the scripted chat model ---


@dataclass
class Script:
    """What the fake model answers next, and the system prompts it was sent."""

    facts: tuple[str, ...] = ()
    reply: str = "OK."
    prompts: list[str] = field(default_factory=list)
    calls: int = 0

    def respond(self, messages: Sequence[BaseMessage]) -> AIMessage:
        system = next((m for m in messages if isinstance(m, SystemMessage)), None)
        self.prompts.append(system.text if system is not None else "")
        last_human = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        saved = any(isinstance(m, ToolMessage) for m in messages[last_human:])
        if self.facts and not saved:
            calls = []
            for fact in self.facts:
                self.calls += 1
                calls.append({"name": SAVE_TOOL, "args": {"information": fact},
                              "id": f"call_{self.calls}", "type": "tool_call"})
            return AIMessage("", tool_calls=calls)
        return AIMessage(self.reply)


class ScriptedModel(BaseChatModel):
    """A chat model that answers what its :class:`Script` says (tool calls included)."""

    script: Any

    @property
    def _llm_type(self) -> str:
        return "lived-in-script"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.script.respond(messages))])


class ReadOnly(BaseStore):
    """A store that reads through to ``inner`` and drops every write (the questions' runs)."""

    def __init__(self, inner: BaseStore) -> None:
        self.inner = inner

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        reads = [op for op in ops if not isinstance(op, PutOp)]
        found = iter(self.inner.batch(reads) if reads else [])
        return [None if isinstance(op, PutOp) else next(found) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return self.batch(ops)


@dataclass
class Clock:
    """The time the app is told it is: set to each session's date."""

    now: datetime = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


# --- telling the conversations ---


@dataclass(frozen=True)
class App:
    """One row's app over one store: the agent, its script, its recall tool."""

    agent: Any
    script: Script
    recall: Any


def build_app(store: BaseStore, row: str, clock: Clock) -> App:
    """Row ``A`` (tools and middleware) or ``B`` (middleware alone) over ``store``."""
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_episodic import EpisodicMemoryMiddleware, create_memory_tools

    script = Script()
    save, recall = create_memory_tools(store=store, clock=clock)
    tools = [save] if row == "A" else []
    agent = create_agent(ScriptedModel(script=script), tools=tools,
                         middleware=[EpisodicMemoryMiddleware(store=store, clock=clock)],
                         store=store, checkpointer=InMemorySaver())
    return App(agent, script, recall)


def session_time(session: Session) -> datetime:
    return datetime.fromisoformat(session.date).replace(tzinfo=timezone.utc)


def tell(app: App, persona: Persona, row: str, clock: Clock) -> None:
    """Every session of ``persona`` told to ``app``, one invoke per user turn."""
    for n, session in enumerate(persona.sessions, start=1):
        config = {"configurable": {"user_id": persona.user_id,
                                   "thread_id": f"{persona.user_id}:s{n}"}}
        start = session_time(session)
        for i, turn in enumerate(session.turns):
            clock.now = start + timedelta(minutes=2 * i)
            app.script.facts = turn.facts if row == "A" else ()
            app.script.reply = turn.reply
            app.agent.invoke({"messages": [HumanMessage(turn.text)]}, config)


# --- asking ---


@dataclass(frozen=True)
class Answer:
    """What one view returned for one question: its lines, best first, and (middleware)
    every line the middleware added to the request."""

    lines: tuple[str, ...]
    prompt: tuple[str, ...] = ()


def tool_answer(app: App, persona: Persona, question: Question, n: int) -> Answer:
    from langgraph_episodic.tools.texts import texts_for

    config = {"configurable": {"user_id": persona.user_id,
                               "thread_id": f"{persona.user_id}:tool{n}"}}
    text = str(app.recall.invoke({"frage": question.text}, config))
    if text == texts_for("de").nothing_found:
        return Answer(())
    return Answer(tuple(line[2:] for line in text.splitlines() if line.startswith("- ")))


def fenced(prompt: str, label: str | None = None) -> list[str]:
    """The data lines of the fenced blocks in ``prompt`` (of the block ``label`` only, if given)."""
    out: list[str] = []
    inside = False
    for line in prompt.splitlines():
        if line.startswith("<<<BEGIN "):
            inside = label is None or line.startswith(f"<<<BEGIN {label}:")
        elif line.startswith("<<<END "):
            inside = False
        elif inside and line.startswith("| "):
            out.append(line[2:])
    return out


def middleware_answer(asker: App, persona: Persona, question: Question, n: int) -> Answer:
    config = {"configurable": {"user_id": persona.user_id,
                               "thread_id": f"{persona.user_id}:ask{n}"}}
    asker.script.facts, asker.script.reply = (), "OK."
    asker.script.prompts.clear()
    asker.agent.invoke({"messages": [HumanMessage(question.text)]}, config)
    prompt = asker.script.prompts[0] if asker.script.prompts else ""
    return Answer(tuple(fenced(prompt, MARKER_LABEL)), tuple(fenced(prompt)))


# --- scoring ---


def said_text(line: str) -> str:
    """A prompt line's text without its ``<day>, the user said: `` / ``you said: `` prefix."""
    for tag in ("the user said: ", "you said: "):
        head, sep, rest = line.partition(tag)
        if sep and len(head) < 60:
            return rest
    return line


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


@dataclass(frozen=True)
class Kinds:
    """The persona's texts by what they are: the user's questions / requests, the replies."""

    asks: frozenset[str]
    replies: frozenset[str]

    @classmethod
    def of(cls, persona: Persona) -> Kinds:
        turns = [t for s in persona.sessions for t in s.turns]
        return cls(frozenset(_norm(t.text)[:80] for t in turns if t.ask and not t.facts),
                   frozenset(_norm(t.reply)[:80] for t in turns))

    def is_noise(self, line: str) -> bool:
        if "you said: " in line[:60]:
            return True
        key = _norm(said_text(line))[:80]
        return key in self.asks or key in self.replies


def has(line: str, markers: Sequence[str]) -> bool:
    """Whether ``line`` holds one of ``markers`` as whole words, in any case."""
    low = line.casefold()
    return any(re.search(rf"\b{re.escape(m.casefold())}\b", low) for m in markers)


def first_index(lines: Sequence[str], markers: Sequence[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if has(line, markers)), None)


@dataclass(frozen=True)
class Outcome:
    """One question asked one way: what came back and how it scored."""

    persona: Persona
    question: Question
    row: str
    view: str
    answer: Answer
    ok: bool
    noise: int
    marks: int = 0
    """Lines marked as possibly outdated (a newer fact on their topic came first)."""
    wrong_marks: int = 0
    """Of those, lines holding no earlier version of a fact that changed."""
    closed: tuple[str, ...] = ()
    """The texts of the user's facts that a later save closed (the same for every question
    of the persona and row)."""

    @property
    def empty(self) -> bool:
        return not self.answer.lines


def score(question: Question, answer: Answer) -> bool:
    """Whether the answer is right for the question's kind (see the module docstring)."""
    lines = answer.lines
    if question.kind == "never":
        return not lines
    at = first_index(lines, question.markers)
    if at is None or at >= TOP:
        return False
    if question.kind == "changed":  # a line naming both is the change itself: current
        old = next((i for i, line in enumerate(lines)
                    if has(line, question.old) and not has(line, question.markers)), None)
        return old is None or at < old
    return True


def marked(line: str) -> bool:
    """Whether a recall line carries the "possibly outdated" mark (either language)."""
    from langgraph_episodic.tools.texts import texts_for

    return any(texts_for(lang).outdated in line for lang in ("de", "en"))


def closed_facts(store: BaseStore, persona: Persona) -> tuple[str, ...]:
    """The texts of ``persona``'s saved facts that a later save closed (ended or replaced)."""
    items = store.search(("memories", persona.user_id), limit=10_000)
    return tuple(str(it.value.get("text")) for it in items
                 if it.value.get("kind") != "turn" and it.value.get("valid_to"))


def ask_all(persona: Persona, row: str, app: App, asker: App,
            closed: tuple[str, ...] = ()) -> list[Outcome]:
    kinds = Kinds.of(persona)
    old = [m for q in persona.questions if q.kind == "changed" for m in q.old]
    out: list[Outcome] = []
    for n, question in enumerate(persona.questions):
        for view in VIEWS:
            answer = (tool_answer(app, persona, question, n) if view == "tool"
                      else middleware_answer(asker, persona, question, n))
            marks = [line for line in answer.lines if marked(line)]
            out.append(Outcome(persona, question, row, view, answer, score(question, answer),
                               sum(kinds.is_noise(line) for line in answer.lines), len(marks),
                               sum(not has(line, old) for line in marks), closed))
    return out


def cached_index() -> tuple[dict[str, Any], list[Any]]:
    """The store's default index (the two-language embedder over the whole value) with each
    model behind a file cache (``_embed_cache``), so rows A and B and later runs embed each
    text once; and the caches, to save."""
    from _embed_cache import CachedEmbeddings

    from langgraph_episodic.bilingual import BILINGUAL_DIMS, BilingualEmbeddings
    from langgraph_episodic.embeddings import default_embeddings
    from langgraph_episodic.multilingual import MultilingualEmbeddings

    caches = [CachedEmbeddings(default_embeddings(), name="lived-in-minilm"),
              CachedEmbeddings(MultilingualEmbeddings(), name="lived-in-use-m3")]
    return {"dims": BILINGUAL_DIMS, "embed": BilingualEmbeddings(*caches), "fields": ["$"]}, caches


def run_persona(persona: Persona, row: str, index: dict[str, Any] | None = None) -> list[Outcome]:
    """Tell ``persona`` to row ``row``'s app in a fresh store (``index``: the default's), then
    ask every question."""
    from langgraph_episodic import ChromaStore

    store = ChromaStore.ephemeral() if index is None else ChromaStore.ephemeral(index=index)
    try:
        clock = Clock()
        app = build_app(store, row, clock)
        tell(app, persona, row, clock)
        clock.now = session_time(persona.sessions[-1]) + timedelta(days=3)
        asker = build_app(ReadOnly(store), row, clock)
        return ask_all(persona, row, app, asker, closed_facts(store, persona))
    finally:
        store.close()


# --- the table ---


def _share(hits: Sequence[bool]) -> str:
    return f"{sum(hits) / len(hits):.2f}" if hits else "  - "


METRICS = ("answer@3", "false empty", "never-said empty", "cross@3", "changed first",
           "wrongly outdated", "wrongly closed", "noise", "in prompt")


def metric(outcomes: Sequence[Outcome], name: str) -> str:
    """One metric over ``outcomes`` (one row, view and language)."""
    kinds = {"answer@3": ("answerable",), "cross@3": ("cross",), "changed first": ("changed",)}
    if name in kinds:
        return _share([o.ok for o in outcomes if o.question.kind in kinds[name]])
    if name == "false empty":
        return _share([o.empty for o in outcomes if o.question.kind != "never"])
    if name == "never-said empty":
        return _share([o.empty for o in outcomes if o.question.kind == "never"])
    if name == "wrongly outdated":
        marks = sum(o.marks for o in outcomes)
        return f"{sum(o.wrong_marks for o in outcomes)}/{marks}"
    if name == "wrongly closed":
        closed = {(o.persona.user_id, text): o.persona for o in outcomes for text in o.closed}
        old = {p.user_id: [m for q in p.questions if q.kind == "changed" for m in q.old]
               for p in closed.values()}
        wrong = sum(not has(text, old[user]) for user, text in closed)
        return f"{wrong}/{len(closed)}"
    if name == "noise":
        lines = sum(len(o.answer.lines) for o in outcomes)
        return f"{sum(o.noise for o in outcomes) / lines:.2f}" if lines else "  - "
    if outcomes and outcomes[0].view == "tool":
        return "  - "
    return _share([has(" ".join(o.answer.prompt), o.question.markers) for o in outcomes
                   if o.question.kind != "never"])


def table(outcomes: Sequence[Outcome]) -> str:
    """Rows A-tool ... B-middleware; each cell ``en de mixed``."""
    from _locomo_data import format_table

    body: list[list[object]] = []
    for row in ROWS:
        for view in VIEWS:
            mine = [o for o in outcomes if o.row == row and o.view == view]
            body.append([f"{row}-{view}", *(
                " ".join(metric([o for o in mine if o.persona.language == lang], name)
                         for lang in LANGUAGES) for name in METRICS)])
    return format_table(["row (en de mixed)", *METRICS], body)


def failures(outcomes: Sequence[Outcome]) -> Iterator[str]:
    """Each failed question with what came back."""
    for o in outcomes:
        if o.ok:
            continue
        q = o.question
        want = "nothing" if q.kind == "never" else " | ".join(q.markers)
        old = f" (old: {' | '.join(q.old)})" if q.old else ""
        yield f"[{o.row}-{o.view} {o.persona.user_id} {q.kind}] {q.text!r} wants {want}{old}"
        for line in o.answer.lines[:5] or ["(nothing)"]:
            yield f"      {line[:150]}"


def run_half(personas: Sequence[Persona]) -> list[Outcome]:
    """Every persona through both rows."""
    index, caches = cached_index()
    outcomes: list[Outcome] = []
    for persona in personas:
        for row in ROWS:
            started = time.perf_counter()
            outcomes += run_persona(persona, row, index)
            print(f"  {persona.user_id} ({persona.language}) row {row}: "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    for cache in caches:
        cache.save()
    return outcomes


# --- what the models allow (--ceiling) ---


def ceiling(personas: Sequence[Persona]) -> str:
    """What the two packaged models allow on these memories, whatever a store does with their
    cosines: each persona told to row A, then for every question the rank of the first memory
    holding a marker among all the user's memories by each model's plain cosine (and their
    sum), and how well the best cosine tells a never-said question from an answerable one (the
    share of (answerable, never-said) pairs it orders right, and the answerable questions it
    leaves under a cut that empties 80% of the never-said ones). Per question language."""
    import numpy as np
    from _locomo_data import format_table

    from langgraph_episodic import ChromaStore
    from langgraph_episodic.bilingual import bilingual_embeddings

    index, caches = cached_index()
    english, multilingual = caches
    language = bilingual_embeddings().language
    found: dict[str, dict[str, list[bool]]] = {}
    best: dict[str, dict[bool, list[float]]] = {}
    for persona in personas:
        store = ChromaStore.ephemeral(index=index)
        try:
            clock = Clock()
            tell(build_app(store, "A", clock), persona, "A", clock)
            texts = [str(i.value.get("text")) for i in store.search(("memories", persona.user_id),
                                                                     limit=10_000)]
        finally:
            store.close()
        rows = {name: np.asarray(model.embed_documents(texts))
                for name, model in (("MiniLM", english), ("multilingual", multilingual))}
        for q in persona.questions:
            lang = language(q.text)
            cos = {name: rows[name] @ np.asarray(model.embed_documents([q.text])[0])
                   for name, model in (("MiniLM", english), ("multilingual", multilingual))}
            cos["sum"] = cos["MiniLM"] + cos["multilingual"]
            if q.kind == "never":
                best.setdefault(lang, {}).setdefault(False, []).append(
                    float(cos["sum"].max()))
                continue
            best.setdefault(lang, {}).setdefault(True, []).append(float(cos["sum"].max()))
            hits = [has(t, q.markers) for t in texts]
            for name, c in cos.items():
                top = np.argsort(-c)[:TOP]
                found.setdefault(lang, {}).setdefault(name, []).append(
                    any(hits[i] for i in top))
    for cache in caches:
        cache.save()
    body: list[list[object]] = []
    for lang in sorted(found):
        yes, no = np.asarray(best[lang][True]), np.asarray(best[lang].get(False, [np.nan]))
        ordered = float(np.mean(yes[:, None] > no[None, :]))
        cut = float(np.quantile(no, 0.8))
        body.append([lang, len(yes), *(_share(found[lang][n]) for n in
                                       ("MiniLM", "multilingual", "sum")),
                     f"{ordered:.2f}", f"{float(np.mean(yes <= cut)):.2f}"])
    return format_table(["question", "answerable", "top 3: MiniLM", "multilingual", "sum",
                         "never-said ordered below", "false empty at 80% never-said empty"],
                        body)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--half", choices=("tune", "held-out", "both"), default="both")
    parser.add_argument("--verbose", action="store_true",
                        help="print each failed question with what came back")
    parser.add_argument("--ceiling", action="store_true",
                        help="what the two models allow on these memories (see ceiling())")
    args = parser.parse_args(argv)
    for name, value in OFFLINE.items():
        os.environ.setdefault(name, value)
    halves = ("held-out", "tune") if args.half == "both" else (args.half,)
    if args.ceiling:
        for half in halves:
            print(f"\n{half}: what the models allow\n")
            print(ceiling(HALVES[half]))
        return
    for half in halves:
        outcomes = run_half(HALVES[half])
        if args.verbose:
            print(f"\nFailures, {half}:")
            for line in failures(outcomes):
                print(line)
        print(f"\n{half} ({len(HALVES[half])} personas, "
              f"{sum(len(p.questions) for p in HALVES[half])} questions)")
        print(table(outcomes))


if __name__ == "__main__":
    main()
