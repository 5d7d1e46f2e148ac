"""One formation, any batching: turns formed in deferred batches leave the same entity facts,
versions and periods as the same turns formed inline, one by one, in order.

The reproductions drive real graphs (inline and with the default ``DeferredFormation``); the
property test drives the inline node and :class:`Former` on LangGraph's ``InMemoryStore``
with a fixed clock per turn, over random statements and random batch splits (what the debounce
cuts a user's turns into), without a model and with a scripted one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore, EpisodicMemoryMiddleware, build_memory_graph
from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.facts.rules import Candidate, decide_by_rules, slot_of
from langgraph_episodic.formation import DeferredFormation, Formed, Former, PendingTurn
from langgraph_episodic.graph.entities import entity_extract_node
from langgraph_episodic.graph.threads import thread_config
from langgraph_episodic.kinds.entities import EntityWriter, extract_entities_by_rules, statements
from tests.fakes import ScriptedChatModel

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
DOG = ["Mein Hund Bello ist drei Jahre alt.", "Mein Hund Bello ist jetzt vier Jahre alt."]
JOBS = ["Alice works at ACME.", "Alice works at Globex now.", "Alice works at Initech now.",
        "Alice works at Umbrella now."]

Fact = tuple[Any, ...]


def entity_facts(store: BaseStore, user: str) -> list[Fact]:
    """Every version of every fact about an entity: subject, text, current, version, period."""
    found = store.search(("entities", user), limit=10_000, filter={"kind": "fact"})
    return sorted((v["subject"], v["text"], v["current"], v["version"], v["valid_from"],
                   v["valid_to"]) for v in (i.value for i in found))


def descriptions(store: BaseStore, user: str) -> dict[str, str]:
    found = store.search(("entities", user), limit=10_000, filter={"kind": "entity"})
    return {i.value["name"]: i.value["description"] for i in found}


def shape(facts: Sequence[Fact]) -> list[Fact]:
    """The facts without their times (two runs on the wall clock differ in microseconds)."""
    return sorted(f[:4] for f in facts)


def chroma() -> ChromaStore:
    return ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})


def answer(state: dict[str, Any]) -> dict[str, Any]:
    return {"messages": [("ai", "Noted.")]}


def formed_by_graphs(texts: Sequence[str]) -> tuple[BaseStore, BaseStore, list[int]]:
    """``texts`` told to an inline graph and to a graph with the default
    ``DeferredFormation()``; returns both stores and the deferred batches' sizes."""
    inline, deferred = chroma(), chroma()
    config = thread_config("alice", "s1")
    graph = build_memory_graph(answer, store=inline, summarize=False, episodes=False)
    for text in texts:
        graph.invoke({"messages": [("user", text)]}, config)
    batches: list[int] = []
    formation = DeferredFormation(on_formed=lambda user, n, formed: batches.append(n))
    graph = build_memory_graph(answer, store=deferred, summarize=False, episodes=False,
                               defer=formation)
    for text in texts:
        graph.invoke({"messages": [("user", text)]}, config)
    assert formation.close(timeout=30)
    return inline, deferred, batches


def test_a_dogs_age_corrected_within_one_batch_is_the_correction_with_the_old_as_history(
) -> None:
    inline, deferred, batches = formed_by_graphs(DOG)
    assert batches == [2], "both turns formed in one batch"
    bello = [f for f in entity_facts(deferred, "alice") if f[0] == "bello"]
    assert [(text, current) for _, text, current, *_ in bello] == [
        ("Mein Hund Bello ist drei Jahre alt.", False),
        ("Mein Hund Bello ist jetzt vier Jahre alt.", True)]
    three, four = bello
    assert three[5] == four[4], "three years old until the turn that said four"
    assert descriptions(deferred, "alice") == {"Bello": "Mein Hund Bello ist jetzt vier Jahre alt."}
    assert shape(entity_facts(deferred, "alice")) == shape(entity_facts(inline, "alice"))


def test_four_jobs_in_one_batch_leave_the_last_current_and_the_others_as_history() -> None:
    inline, deferred, batches = formed_by_graphs(JOBS)
    assert batches == [4], "all four turns formed in one batch"
    alice = sorted((f for f in entity_facts(deferred, "alice") if f[0] == "alice"),
                   key=lambda f: f[4])
    assert [(text, current) for _, text, current, *_ in alice] == [
        (JOBS[0], False), (JOBS[1], False), (JOBS[2], False), (JOBS[3], True)]
    assert [f[5] for f in alice] == [f[4] for f in alice[1:]] + [None], (
        "each job held from its own turn until the next one's")
    assert descriptions(deferred, "alice")["Alice"] == "Alice works at Umbrella now."
    assert shape(entity_facts(deferred, "alice")) == shape(entity_facts(inline, "alice"))
    assert descriptions(deferred, "alice") == descriptions(inline, "alice")


def test_deferred_turns_are_said_when_the_inline_clock_says() -> None:
    """The middleware's ``clock`` dates inline facts; deferred ones get the same times."""
    stores: list[BaseStore] = []
    now = [START]
    for defer in (False, True):
        store = chroma()
        formation = DeferredFormation(debounce=5.0) if defer else False
        middleware = EpisodicMemoryMiddleware(
            store=store, profile=False, memories=False, episodes=False, remember_turns=False,
            clock=lambda: now[0], defer=formation)
        agent = create_agent(ScriptedChatModel(script=["Noted."] * len(JOBS)), tools=[],
                             store=store, middleware=[middleware])
        for i, text in enumerate(JOBS):
            now[0] = START + timedelta(minutes=i)
            agent.invoke({"messages": [("user", text)]}, thread_config("alice", "s1"))
        assert middleware.close(timeout=30)
        stores.append(store)
    inline, deferred = stores
    assert entity_facts(deferred, "alice") == entity_facts(inline, "alice")


def test_a_replayed_batch_of_corrections_writes_nothing_again(store: BaseStore) -> None:
    former = Former(EntityWriter(None), episodes=False)
    turns = told_turns(JOBS, "alice")
    first = former.form(store, turns)
    before = entity_facts(store, "alice"), descriptions(store, "alice")
    again = former.form(store, turns)
    assert again.entities == () and set(again.skipped) == set(first.entities)
    assert (entity_facts(store, "alice"), descriptions(store, "alice")) == before


# --- inline and deferred, side by side, on a fixed clock ---


def told_turns(texts: Sequence[str], user: str) -> list[PendingTurn]:
    """``texts`` queued as turns, turn ``i`` said at ``START + i`` minutes."""
    return [PendingTurn.of_run(thread_config(user, "s1"), user, text=text,
                               said_at=START + timedelta(minutes=i))
            for i, text in enumerate(texts)]


def rules_model() -> ScriptedChatModel:
    """A memory model that answers as the rules would: an extraction finds what the rules find
    in each numbered turn (with its number) or in the one text; a consolidation decides as the
    rules decide."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        text = str(messages[-1].content)
        if text.startswith("NEW fact:"):
            new, _, listing = text.removeprefix("NEW fact:\n").partition("\n\nCURRENT facts:\n")
            shown = [line.split(". ", 1)[1] for line in listing.splitlines()]
            decided = decide_by_rules(new, [Candidate(str(n), t, slot_of(t))
                                            for n, t in enumerate(shown, start=1)])
            args = {"action": decided.action,
                    "fact": int(decided.target) if decided.target else None}
            return AIMessage(content="", tool_calls=[
                {"name": "FactDecision", "args": args, "id": "d", "type": "tool_call"}])
        parts = re.split(r"^\[(\d+)\]$", text, flags=re.MULTILINE)
        chunks = [(int(n), chunk) for n, chunk in zip(parts[1::2], parts[2::2], strict=True)]
        found = [{"name": e.name, "description": e.description, "turn": n}
                 for n, chunk in (chunks or [(None, text)])
                 for e in extract_entities_by_rules("\n".join(statements(chunk)))]
        return AIMessage(content="", tool_calls=[{
            "name": "ExtractedEntities", "args": {"entities": found}, "id": "x",
            "type": "tool_call"}])

    return ScriptedChatModel(script=[reply] * 1000)


def form_inline(texts: Sequence[str], model: ScriptedChatModel | None) -> BaseStore:
    store = InMemoryStore()
    now = [START]
    node = entity_extract_node(model=model, store=store, clock=lambda: now[0])
    for i, text in enumerate(texts):
        now[0] = START + timedelta(minutes=i)
        node.invoke({"messages": [("user", text)]}, thread_config("alice", "s1"))
    return store


def form_deferred(texts: Sequence[str], cuts: Sequence[int],
                  model: ScriptedChatModel | None) -> tuple[BaseStore, list[Formed]]:
    store = InMemoryStore()
    former = Former(EntityWriter(model), episodes=False)
    turns = told_turns(texts, "alice")
    bounds = [0, *sorted(set(cuts)), len(turns)]
    formed = [former.form(store, turns[a:b]) for a, b in pairwise(bounds)
              if a < b]
    return store, formed


NAMES = ["Alice", "Bob"]
COMPANIES = ["ACME", "Globex", "Initech"]
CITIES = ["Berlin", "Wien", "Hamburg"]
DOGS = ["Bello", "Rex"]

Template = Callable[[str, str, str, str, int, str], str]
"""A statement from a name, a company, a city, a dog, a number and "now" (or "")."""
TEMPLATES: list[Template] = [
    lambda name, company, city, dog, n, now: f"{name} works at {company}{now and ' now'}.",
    lambda name, company, city, dog, n, now: f"{name} lives in {city}{now and ' now'}.",
    lambda name, company, city, dog, n, now: f"{name} wohnt {now and 'jetzt '}in {city}.",
    lambda name, company, city, dog, n, now: (f"Mein Hund {dog} ist {now and 'jetzt '}"
                                              f"{n} Jahre alt."),
    lambda name, company, city, dog, n, now: f"{name} arbeitet bei {company}.",
    lambda name, company, city, dog, n, now: f"{name} arbeitet nicht mehr bei {company}.",
]

statement = st.builds(lambda template, *parts: template(*parts),
                      st.sampled_from(TEMPLATES), st.sampled_from(NAMES),
                      st.sampled_from(COMPANIES), st.sampled_from(CITIES), st.sampled_from(DOGS),
                      st.integers(1, 12), st.sampled_from(["", "now"]))


@pytest.mark.parametrize("with_model", [False, True], ids=["rules", "model"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(statement, min_size=1, max_size=7),
       cuts=st.lists(st.integers(0, 7), max_size=4))
def test_any_batching_forms_what_inline_formation_forms(
        with_model: bool, texts: list[str], cuts: list[int]) -> None:
    inline = form_inline(texts, rules_model() if with_model else None)
    model = rules_model() if with_model else None
    deferred, _ = form_deferred(texts, [c for c in cuts if c < len(texts)], model)
    assert entity_facts(deferred, "alice") == entity_facts(inline, "alice")
    assert descriptions(deferred, "alice") == descriptions(inline, "alice")


def test_a_batch_costs_one_extraction_call_with_a_model() -> None:
    model = rules_model()
    deferred, formed = form_deferred(JOBS, [], model)
    extractions = [m for m in model.received if not str(m[-1].content).startswith("NEW fact:")]
    assert len(formed) == 1 and len(extractions) == 1, "four turns, one extraction"
    assert entity_facts(deferred, "alice") == entity_facts(form_inline(JOBS, rules_model()),
                                                           "alice")
