"""LoCoMo told to an agent with the library's memory, and what it stored mapped back.

Two apps, as a user of the library would write them (``through``):

* ``"middleware"``: ``create_agent(GenericFakeChatModel(...), tools=[], middleware=[
  EpisodicMemoryMiddleware(store=store, clock=clock)], store=store,
  checkpointer=InMemorySaver())``;
* ``"nodes"``: ``build_memory_graph(GenericFakeChatModel(...), store=store,
  checkpointer=InMemorySaver(), turns=TurnOptions(clock=clock))``, the memory nodes wired
  around a chat agent node (``recall_memories`` before it, ``remember_turn`` after it).

Every option at its default but the clock (no chat model of its own: the rule-based entity
extractor and the extractive summary; formation inline; the turns remembered, answers too).
The fake chat model only answers the turns (scripted).

Each LoCoMo conversation is one user (``user_id`` = its sample id), each session one thread,
one ``invoke`` per user turn carrying that turn as the new human message. Two ways to cast the
two speakers (``roles``):

* ``"ab"``: the conversation's first speaker is the user, the other the assistant. The user's
  turns are the human messages; the other speaker's next turn is the model's scripted answer.
  A session the other speaker opens starts with that turn as an AI message before the user's.
* ``"all"``: every turn is a human message of the one user; the model answers "OK.".

Each message carries its LoCoMo speaker as its ``name`` (as a group chat names its
participants; the middleware stores a named message as ``"name: text"``, the form the save
tool's rows save), unless ``names=False``. A user message's id is its LoCoMo ``dia_id``.
The run's clock is the session's date and time, as the save tool's ``clock`` is in
``locomo_writers.py``: the middleware's ``clock=``, the nodes' ``TurnOptions(clock=...)``; each
dates the turns and the entity facts taken from them.

Mapping back: a remembered turn holds its message id (a user turn, or an AI message before the
user's: its ``dia_id``) or the id of the user message it answers (``reply_to``): it counts for
that turn or for the answer's turn. A stored fact holds the clause it was extracted from, not the message, and
keeps no link to the message. A fact counts for every turn told as a human message from which
the middleware's extraction (the default redaction, then the rule-based extractor) takes its
text: the turn that wrote it and every turn that confirmed it, as the save tool's rows count a
memory for every turn of its text. An entity's item (its name and the current facts about it)
counts for the turns of the facts its description shows (the newest ten).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from _locomo_data import Conversation, SessionClock, Turn, session_time

REPLY = "OK."
"""The scripted answer when no other speaker's turn follows."""
SCAN = 1000
"""Items read per page when the stored memories are listed."""


class _Replies:
    """The fake chat model's answers: whatever the script set last."""

    def __init__(self) -> None:
        self.next: Any = REPLY

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> Any:
        return self.next


@dataclass(frozen=True)
class Step:
    """One ``invoke``: earlier AI messages (a session the assistant opens), the user's turn,
    the scripted answer (the other speaker's next turn, or none: "OK.")."""

    before: tuple[Turn, ...]
    user: Turn
    reply: Turn | None = None


def steps(session: Sequence[Turn], user: str, roles: str) -> list[Step]:
    """The invokes of one session when ``user`` speaks as the user (``roles="ab"``) or every
    turn is the user's (``"all"``)."""
    if roles == "all":
        return [Step((), t) for t in session]
    out: list[Step] = []
    before: list[Turn] = []
    i = 0
    while i < len(session):
        turn = session[i]
        if turn.speaker != user:
            before.append(turn)  # only at a session's start: the speakers alternate
            i += 1
            continue
        following = session[i + 1] if i + 1 < len(session) else None
        answer = following is not None and following.speaker != user
        out.append(Step(tuple(before), turn, following if answer else None))
        before = []
        i += 2 if answer else 1
    return out


@dataclass
class Written:
    """What writing took: seconds, and the turns told as human messages per conversation."""

    seconds: float = 0.0
    told: dict[str, list[Turn]] = field(default_factory=dict)
    answered_by: dict[str, str] = field(default_factory=dict)
    """A told turn's ``dia_id`` -> the ``dia_id`` of the turn that answered it."""


THROUGH = ("middleware", "nodes")
"""The apps the conversations can be told to (see the module docstring)."""


def write(store: Any, conversations: Sequence[Conversation], *, roles: str,
          names: bool = True, through: str = "middleware", **options: Any) -> Written:
    """Tell every conversation to the app ``through`` names (see the module docstring);
    ``options`` go to the middleware or to ``add_memory_nodes``."""
    import time

    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_episodic import EpisodicMemoryMiddleware, build_memory_graph
    from langgraph_episodic.graph import TurnOptions

    if through not in THROUGH:
        raise ValueError(f"through= takes one of {THROUGH}, got {through!r}.")
    clock, replies = SessionClock(), _Replies()
    model = GenericFakeChatModel(messages=replies)
    middleware = None
    if through == "nodes":
        agent = build_memory_graph(model, store=store, checkpointer=InMemorySaver(),
                                   turns=TurnOptions(clock=clock), **options)
    else:
        middleware = EpisodicMemoryMiddleware(store=store, clock=clock, **options)
        agent = create_agent(model, tools=[], middleware=[middleware], store=store,
                             checkpointer=InMemorySaver())
    written = Written()
    started = time.perf_counter()
    for conv in conversations:
        user = conv.turns[0].speaker
        told = written.told.setdefault(conv.sample_id, [])
        for n, group in groupby(conv.turns, key=lambda t: t.session):
            session = list(group)
            clock.now = session_time(session[0].time)
            config = {"configurable": {"user_id": conv.sample_id,
                                       "thread_id": f"{conv.sample_id}/session-{n}"}}
            for step in steps(session, user, roles):
                reply = step.reply
                replies.next = REPLY if reply is None else AIMessage(
                    reply.text, name=reply.speaker if names else None)
                if reply is not None:
                    written.answered_by[step.user.dia_id] = reply.dia_id
                messages = [*(AIMessage(t.text, id=t.dia_id, name=t.speaker if names else None)
                              for t in step.before),
                            HumanMessage(step.user.text, id=step.user.dia_id,
                                         name=step.user.speaker if names else None)]
                agent.invoke({"messages": messages}, config)
                told.append(step.user)
    written.seconds = time.perf_counter() - started
    if middleware is not None:
        middleware.close()
    return written


def _norm(text: str) -> str:
    return " ".join(text.split())


def stored(store: Any, ns: tuple[str, ...]) -> list[Any]:
    """Every item under ``ns`` (facts of every version and the entities' items)."""
    items: list[Any] = []
    while True:
        page = store.search(ns, limit=SCAN, offset=len(items))
        items += [i for i in page if tuple(i.namespace) == ns]
        if len(page) < SCAN:
            return items


@dataclass
class Provenance:
    """Stored item key -> the told turns it came from, and what was stored per turn."""

    turns_of: dict[str, frozenset[str]]
    facts_per_turn: Counter[str]
    unmapped: int
    facts: int
    current: int


def extracted(text: str) -> frozenset[str]:
    """The clauses the middleware's extraction takes from a user's message, normalised."""
    from langgraph_episodic._effects import run
    from langgraph_episodic.kinds.entities import EntityWriter
    from langgraph_episodic.privacy.redaction import DEFAULT_REDACTOR, redact_saved

    found = run(EntityWriter().extract(redact_saved(text, DEFAULT_REDACTOR)))
    return frozenset(_norm(e.description) for e in found)


def map_back(items: Sequence[Any], told: Sequence[Turn]) -> Provenance:
    """Map facts to the told turns they were extracted from, entities' items to their facts'."""
    clauses = [(t.dia_id, extracted(t.text)) for t in told]
    turns_of: dict[str, frozenset[str]] = {}
    per_turn: Counter[str] = Counter()
    by_subject: dict[str, list[tuple[str, frozenset[str]]]] = {}
    unmapped = facts = current = 0
    for item in items:
        value = item.value
        if value.get("kind") != "fact":
            continue
        facts += 1
        fact = _norm(str(value.get("text", "")))
        ids = frozenset(d for d, found in clauses if fact in found)
        turns_of[item.key] = ids
        unmapped += not ids
        if value.get("current") is not False:
            current += 1
            per_turn.update(ids)
            by_subject.setdefault(str(value.get("subject")), []).append((fact, ids))
    for item in items:
        if item.value.get("kind") != "fact":
            shown = _norm(str(item.value.get("description", "")))
            turns_of[item.key] = frozenset(
                d for fact, ids in by_subject.get(item.key, ()) if fact in shown for d in ids)
    return Provenance(turns_of, per_turn, unmapped, facts, current)


def recall_groups(store: Any, ns: tuple[str, ...], question: str, k: int,
                  mapping: Provenance) -> list[frozenset[str]]:
    """The recall tool's search of current facts (``facts.recall.search_op``) run over the
    namespace the middleware writes: each hit's turns, best first."""
    from langgraph_episodic.facts.recall import search_op

    (found,) = store.batch([search_op(ns, question, k)])
    return [mapping.turns_of.get(r.key, frozenset()) for r in found]


def prompt_turns(store: Any, ns: tuple[str, ...], mapping: Provenance,
                 limit: int = 50) -> frozenset[str]:
    """The turns behind the entities the middleware loads before the model (``before_agent``:
    ``load_entities``, ``entity_limit=50``, not ranked by the question)."""
    from langgraph_episodic._effects import run
    from langgraph_episodic.kinds.entities import load_entities

    loaded = run(load_entities(store, ns, limit))
    keys = {k.casefold() for k in loaded}
    out: set[str] = set()
    for item in stored(store, ns):
        if item.value.get("kind") != "fact" and str(item.value.get("name", "")).casefold() in keys:
            out |= mapping.turns_of.get(item.key, frozenset())
    return frozenset(out)


def turn_of(value: Any, answered_by: dict[str, str]) -> frozenset[str]:
    """The LoCoMo turn a remembered turn's value stands for (empty for other memories)."""
    if value.get("kind") != "turn":
        return frozenset()
    if value.get("role") == "assistant" and value.get("reply_to") is not None:
        answer = answered_by.get(str(value.get("reply_to")))
        return frozenset() if answer is None else frozenset({answer})
    return frozenset({str(value.get("message_id"))})


def turn_groups(store: Any, user_id: str, question: str, k: int,
                answered_by: dict[str, str], *, through: str) -> list[frozenset[str]]:
    """The remembered turns a question finds, best first, as LoCoMo turn ids: ``through``
    ``"tool"`` is the recall tool's search of current memories (``facts.recall.search_op``
    over ``("memories", user_id)``, no floor), ``"before_model"`` the search the middleware
    and the graph's ``recall_memories`` node run before the model
    (:func:`langgraph_episodic.graph.memory_recall.recall_memories`, with its floor)."""
    from langgraph_episodic._effects import run
    from langgraph_episodic.facts.recall import search_op
    from langgraph_episodic.graph.memory_recall import recall_memories

    if through == "tool":
        (found,) = store.batch([search_op(("memories", user_id), question, k)])
    else:
        found = run(recall_memories(store, {"configurable": {"user_id": user_id}}, question,
                                    limit=k))
    return [turn_of(r.value, answered_by) for r in found]
