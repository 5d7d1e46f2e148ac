"""The remembered turns, through both entry points that run them: the middleware
(``EpisodicMemoryMiddleware`` in ``create_agent``) and the graph nodes (``build_memory_graph``
with ``turns=``). Both run one code (the recall of :mod:`langgraph_episodic.graph.memory_recall`,
the turn pipeline of :mod:`langgraph_episodic.formation.turn` writing the items of
:mod:`langgraph_episodic.kinds.turns`), so the same scenarios run on each (the ``agent``
fixture):

a turn said in one thread is in the next thread's first request, fenced as data, for the same
user and never for another; the stored items carry their thread and day as indexed context; a
replayed turn writes no second copy; turns off store none; replies off store only the user's
message; the deferred path stores the same items; the redaction applies; a turn still in the
thread's messages is not loaded again; a question the memory knows nothing about loads nothing.
Sync and async, ``InMemoryStore`` and ``ChromaStore``.

Below them, what only one entry point has: the nodes' ``recalled_memories`` in state and their
``turns=False`` that also switches the recall off; the middleware's small talk, the agent's
opening of a thread, a store without an index, and the recall tool on a remembered turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore, EpisodicMemoryMiddleware, create_memory_tools
from langgraph_episodic._fence import begin_marker, end_marker
from langgraph_episodic.facts import fact_history
from langgraph_episodic.formation import DeferredFormation
from langgraph_episodic.graph import TurnOptions, build_memory_graph
from langgraph_episodic.graph.wiring import ENTITIES_LABEL
from langgraph_episodic.kinds.turns import turn_key

from .conftest import cfg
from .fakes import ScriptedFakeModel
from .test_middleware import system_text

MIA = "By the way, my daughter's name is Mia and she starts school in September."
QUESTION = "What is my daughter's name?"
ANSWER = "Mia starts school in September, noted."
WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
DAY = "Monday, 8 May 2023"
TOLD = f"| {DAY}, the user said: {MIA}"
LABEL = "SAVED MEMORIES"


def turns(store: BaseStore, user: str = "alice") -> list[Any]:
    """The user's remembered turns."""
    return store.search(("memories", user, "turns"), limit=100)


def fenced(text: str, label: str = LABEL) -> str:
    """The data lines of the fenced block ``label`` in ``text`` ('' when there is none)."""
    if begin_marker(label) not in text:
        return ""
    return text.split(begin_marker(label), 1)[1].split(end_marker(label), 1)[0]


@dataclass
class Agent:
    """One entry point to the remembered turns, built around a scripted model; turns are
    said at ``WHEN``."""

    graph: Any
    model: ScriptedFakeModel
    agent_node: str
    """The node that calls the model: a checkpoint before it replays the turn."""

    async def ask(self, text: str, config: Any, mode: str = "sync",
                  message_id: str | None = None) -> dict[str, Any]:
        payload = {"messages": [HumanMessage(text, id=message_id)]}
        if mode == "sync":
            return dict(self.graph.invoke(payload, config))
        return dict(await self.graph.ainvoke(payload, config))

    def memory_lines(self, request: int) -> list[str]:
        """The data lines of the saved-memories block of the model's ``request``-th call."""
        return fenced(system_text(self.model.sent[request])).splitlines()


Build = Callable[..., Agent]
"""``build(store, reply, *, turns=True, replies=True, defer=False)``."""


def middleware_agent(store: BaseStore, reply: str, *, turns: bool = True, replies: bool = True,
                     defer: Any = False) -> Agent:
    model = ScriptedFakeModel(respond=lambda msgs: reply)
    middleware = EpisodicMemoryMiddleware(store=store, clock=lambda: WHEN, remember_turns=turns,
                                          remember_replies=replies, defer=defer)
    graph = create_agent(model, tools=[], system_prompt="You are helpful.",
                         middleware=[middleware], store=store, checkpointer=InMemorySaver())
    return Agent(graph, model, "model")


def nodes_agent(store: BaseStore, reply: str, *, turns: bool = True, replies: bool = True,
                defer: Any = False, options: TurnOptions | bool | None = None) -> Agent:
    model = ScriptedFakeModel(respond=lambda msgs: reply)
    if options is None:
        options = TurnOptions(replies=replies, clock=lambda: WHEN, remember=turns)
    graph = build_memory_graph(model, store=store, checkpointer=InMemorySaver(),
                               system_prompt="You are helpful.", turns=options, defer=defer)
    return Agent(graph, model, "agent")


@pytest.fixture(params=["middleware", "nodes"])
def agent(request: pytest.FixtureRequest) -> Build:
    """Builds the agent through one entry point: the middleware or the graph nodes."""
    return {"middleware": middleware_agent, "nodes": nodes_agent}[request.param]


# --- both entry points ---


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_turn_said_in_one_thread_is_recalled_in_another_for_that_user_only(
        agent: Build, store: BaseStore, mode: str) -> None:
    bot = agent(store, "Noted.")
    await bot.ask(MIA, cfg("alice", "s1"), mode)
    await bot.ask(QUESTION, cfg("alice", "s2"), mode)
    assert TOLD in bot.memory_lines(1)
    await bot.ask(QUESTION, cfg("bob", "s1"), mode)
    assert "Mia" not in system_text(bot.model.sent[2])
    assert all("Mia" not in i.value["text"] for i in turns(store, "bob"))


async def test_the_stored_turn_carries_its_thread_and_day(agent: Build,
                                                          store: BaseStore) -> None:
    await agent(store, ANSWER).ask(MIA, cfg("alice", "s1"), message_id="m1")
    said = store.get(("memories", "alice", "turns"), turn_key("alice:s1", "m1", "user"))
    assert said is not None and said.value["text"] == MIA
    assert said.value["kind"] == "turn" and said.value["role"] == "user"
    assert said.value["context"] == {"day": DAY, "thread": "alice:s1"}
    answer = store.get(("memories", "alice", "turns"), turn_key("alice:s1", "m1", "assistant"))
    assert answer is not None and answer.value["text"] == ANSWER
    assert answer.value["reply_to"] == "m1"


async def test_the_turns_text_and_day_are_indexed(agent: Build, chroma_store: BaseStore) -> None:
    assert isinstance(chroma_store, ChromaStore)
    await agent(chroma_store, ANSWER).ask(MIA, cfg("alice", "s1"), message_id="m1")
    turn = (("memories", "alice", "turns"), turn_key("alice:s1", "m1", "user"))
    indexed = chroma_store.item_extras([turn])[turn].index
    assert indexed and set(indexed) == {"text", "context.day"}  # the thread is a filter, not text


async def test_a_replayed_turn_writes_no_second_copy(agent: Build, store: BaseStore) -> None:
    bot = agent(store, ANSWER)
    config = cfg("alice", "s1")
    for _ in range(2):
        await bot.ask(MIA, config, message_id="m1")
    before = next(s for s in bot.graph.get_state_history(config) if s.next == (bot.agent_node,))
    replay = {"configurable": {**before.config["configurable"], "user_id": "alice"}}
    bot.graph.invoke(None, replay)  # the turn again, from its checkpoint
    assert len(bot.model.sent) == 3, "the replay ran the agent (and what follows it) again"
    assert sorted(i.value["role"] for i in turns(store)) == ["assistant", "user"]


async def test_turns_off_store_no_turn(agent: Build, store: BaseStore) -> None:
    bot = agent(store, ANSWER, turns=False)
    await bot.ask(MIA, cfg("alice", "s1"))
    await bot.ask(QUESTION, cfg("alice", "s2"))
    assert store.search(("memories", "alice"), limit=100) == []


async def test_turns_off_still_recall_what_the_user_saved(agent: Build, store: BaseStore) -> None:
    store.put(("memories", "alice"), "m1", {"text": "Alice's daughter is called Mia."})
    bot = agent(store, ANSWER, turns=False)
    await bot.ask(QUESTION, cfg("alice", "s1"))
    assert "| Alice's daughter is called Mia." in bot.memory_lines(0)
    assert turns(store) == []


async def test_an_entity_fact_is_dated_by_the_turns_clock(agent: Build, store: BaseStore) -> None:
    await agent(store, "Noted.").ask("I work at ACME.", cfg("alice", "s1"))
    facts = [rec for _, rec in fact_history(store, ("entities", "alice"))]
    assert facts
    assert {datetime.fromisoformat(rec.valid_from.replace("Z", "+00:00")) for rec in facts} == {WHEN}


async def test_replies_off_store_only_the_users_message(agent: Build, store: BaseStore) -> None:
    await agent(store, ANSWER, replies=False).ask(MIA, cfg("alice", "s1"))
    assert [i.value["text"] for i in turns(store)] == [MIA]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_deferred_path_stores_the_same_turns(agent: Build, chroma_store: BaseStore,
                                                      mode: str) -> None:
    store = chroma_store  # defer= refuses InMemoryStore (not thread-safe)
    formation = DeferredFormation(debounce=0.0)
    try:
        bot = agent(store, ANSWER, defer=formation)
        await bot.ask(MIA, cfg("alice", "s1"), mode, message_id="m1")
        assert formation.flush(timeout=10)
        found = {i.value["role"]: i for i in turns(store)}
        assert sorted(found) == ["assistant", "user"]
        assert found["user"].key == turn_key("alice:s1", "m1", "user")
        assert found["user"].value["context"] == {"day": DAY, "thread": "alice:s1"}
        await bot.ask(QUESTION, cfg("alice", "s2"), mode)
        assert TOLD in bot.memory_lines(1)
    finally:
        assert formation.close(timeout=10)


async def test_entities_formed_after_a_turn_reach_the_running_thread(
        agent: Build, chroma_store: BaseStore) -> None:
    """Deferred, a thread that already holds entities loads them again each turn, so what the
    worker formed since reaches the next request."""
    chroma_store.put(("entities", "alice"), "bob", {"name": "Bob", "description": "Her brother."})
    formation = DeferredFormation(debounce=0.0)
    try:
        bot = agent(chroma_store, "Noted.", defer=formation)
        await bot.ask("I work at ACME.", cfg("alice", "s1"))
        assert "Bob: Her brother." in fenced(system_text(bot.model.sent[0]), ENTITIES_LABEL)
        assert formation.flush(timeout=10)
        await bot.ask("Where do I work?", cfg("alice", "s1"))
        assert "ACME: I work at ACME." in fenced(system_text(bot.model.sent[1]), ENTITIES_LABEL)
    finally:
        assert formation.close(timeout=10)


async def test_what_is_remembered_is_redacted(agent: Build, store: BaseStore) -> None:
    bot = agent(store, "Noted.")
    await bot.ask("Mia's school writes to me at alice@example.org.", cfg("alice", "s1"))
    (said,) = [i for i in turns(store) if i.value["role"] == "user"]
    assert "alice@example.org" not in said.value["text"]
    assert "[EMAIL]" in said.value["text"]


async def test_a_turn_still_in_the_thread_is_not_loaded_again(agent: Build,
                                                              store: BaseStore) -> None:
    bot = agent(store, "Noted.")
    await bot.ask(MIA, cfg("alice", "s1"))
    await bot.ask(QUESTION, cfg("alice", "s1"))
    assert turns(store), "the turn is stored"
    assert not any("Mia" in line for line in bot.memory_lines(1))
    assert any(MIA in str(m.content) for m in bot.model.sent[1])  # it is in the messages


async def test_a_turn_on_the_topic_still_in_the_thread_is_not_loaded_again(
        agent: Build, store: BaseStore) -> None:
    """A question on a single-valued topic reads the topic's latest turn by filter; one still
    in the thread's messages is left out, as the search's hits are."""
    bot = agent(store, "Noted.")
    await bot.ask("We moved to Manchester last month.", cfg("alice", "s1"))
    await bot.ask("Where do I live?", cfg("alice", "s1"))
    assert any(t.value.get("slot") == "residence" for t in turns(store))
    assert not any("Manchester" in line for line in bot.memory_lines(1))


async def test_a_question_never_told_loads_no_memory(agent: Build,
                                                     chroma_store: BaseStore) -> None:
    bot = agent(chroma_store, "Noted.")
    await bot.ask(MIA, cfg("alice", "s1"))
    await bot.ask("What is the capital of Peru?", cfg("alice", "s2"))
    assert turns(chroma_store), "the turn is stored"
    assert begin_marker(LABEL) not in system_text(bot.model.sent[1])


# --- the graph nodes only ---


def test_the_recall_node_puts_what_it_found_into_state(store: BaseStore) -> None:
    bot = nodes_agent(store, "Noted.")
    bot.graph.invoke({"messages": [HumanMessage(MIA)]}, cfg("alice", "s1"))
    out = bot.graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("alice", "s2"))
    assert out["recalled_memories"][0]["value"]["text"] == MIA


def test_a_question_never_told_recalls_nothing_into_state(chroma_store: BaseStore) -> None:
    bot = nodes_agent(chroma_store, "Noted.")
    bot.graph.invoke({"messages": [HumanMessage(MIA)]}, cfg("alice", "s1"))
    out = bot.graph.invoke({"messages": [HumanMessage("What is the capital of Peru?")]},
                           cfg("alice", "s2"))
    assert out["recalled_memories"] == []


def test_turns_false_loads_no_saved_memory_either(store: BaseStore) -> None:
    store.put(("memories", "alice"), "m1", {"text": "Alice's daughter is called Mia."})
    bot = nodes_agent(store, "Noted.", options=False)
    bot.graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("alice", "s1"))
    assert bot.memory_lines(0) == []


# --- the middleware only ---

TEA = "My favourite tea is smoky lapsang souchong from the corner shop."


def test_the_recall_tool_finds_a_remembered_turn_from_another_thread(store: BaseStore) -> None:
    middleware_agent(store, "Noted.").graph.invoke({"messages": [HumanMessage(TEA)]},
                                                   cfg("alice", "s1"))
    _, recall = create_memory_tools(store=store, locale="en")
    assert TEA in recall.invoke({"query": "Which tea do I like?"}, cfg("alice", "s2"))
    assert TEA not in recall.invoke({"query": "Which tea do I like?"}, cfg("bob", "s1"))


def test_small_talk_is_not_remembered(store: BaseStore) -> None:
    middleware_agent(store, "Hi!").graph.invoke({"messages": [HumanMessage("Hallo, danke!")]},
                                                cfg("alice", "s1"))
    assert turns(store) == []


def test_the_agents_opening_of_a_thread_is_remembered_once(store: BaseStore) -> None:
    opening = "Last time you told me about your trip to Porto; how was the flight back?"
    graph = middleware_agent(store, "Glad to hear it.").graph
    graph.invoke({"messages": [AIMessage(opening, id="a0"), HumanMessage(TEA, id="m1")]},
                 cfg("alice", "s1"))
    graph.invoke({"messages": [HumanMessage("And I drink it without sugar.", id="m2")]},
                 cfg("alice", "s1"))
    texts = sorted(i.value["text"] for i in turns(store))
    assert texts.count(opening) == 1
    said = store.get(("memories", "alice", "turns"), turn_key("alice:s1", "a0", "assistant"))
    assert said is not None and said.value["role"] == "assistant"
    assert "reply_to" not in said.value


def test_a_store_without_an_index_recalls_nothing_before_the_model() -> None:
    """Such a store cannot rank: its search answers with its first items whatever is asked,
    so they are no answer to the question and stay out of the prompt."""
    store = InMemoryStore()
    bot = middleware_agent(store, "Noted.")
    bot.graph.invoke({"messages": [HumanMessage(TEA)]}, cfg("alice", "s1"))
    assert turns(store)  # remembered all the same
    bot.graph.invoke({"messages": [HumanMessage("Where is my car parked?")]}, cfg("alice", "s2"))
    assert "lapsang" not in system_text(bot.model.sent[1])


@pytest.mark.parametrize("entry", ["middleware", "nodes"])
def test_the_latest_turn_on_a_topic_answers_a_question_on_it(entry: str, store: BaseStore) -> None:
    """With turns alone (no saved facts), a user's turn that sets a single-valued topic keeps
    its slot, and a question on the topic is answered by the latest such turn, whatever its
    score."""
    now = [WHEN]
    model = ScriptedFakeModel(respond=lambda msgs: "Noted.")
    if entry == "middleware":
        graph = create_agent(model, tools=[], store=store, checkpointer=InMemorySaver(),
                             middleware=[EpisodicMemoryMiddleware(store=store,
                                                                  clock=lambda: now[0])])
    else:
        graph = build_memory_graph(model, store=store, checkpointer=InMemorySaver(),
                                   turns=TurnOptions(clock=lambda: now[0]))
    graph.invoke({"messages": [HumanMessage("I live in Leeds, in a flat near the station.")]},
                 cfg("alice", "s1"))
    now[0] = WHEN + timedelta(days=60)
    graph.invoke({"messages": [HumanMessage("We moved to Manchester last month, new job and all.")]},
                 cfg("alice", "s2"))
    said = [i.value for i in turns(store) if i.value["role"] == "user"]
    assert sorted(v.get("slot") for v in said) == ["residence", "residence"]
    _, recall = create_memory_tools(store=store, min_score=10.0)
    answer = recall.invoke({"frage": "Wo wohne ich?"}, cfg("alice", "s3"))
    assert answer.splitlines()[1] == "- We moved to Manchester last month, new job and all."
