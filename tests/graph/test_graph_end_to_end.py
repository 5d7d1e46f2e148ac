"""Done-when: all six memory nodes in one StateGraph, on a ChromaStore and a SQLite checkpointer,
two users through several sessions each, with fake chat models; check what each node wrote."""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from langgraph_episodic.episodic import STRATEGY_POOL, EpisodicMemory, OutcomeStatus, TaskCategory
from langgraph_episodic.graph import (
    EpisodeMemories,
    EpisodicState,
    aopen_checkpointer,
    entity_extract_node,
    memory_agent_node,
    open_checkpointer,
    recall_node,
    record_episode_node,
    select_strategy_node,
    sliding_window_node,
    summarize_node,
    thread_config,
)
from langgraph_episodic.graph.threads import alist_sessions, list_sessions, resume_config
from langgraph_episodic.kinds.summaries import SUMMARY_MESSAGE_ID

from .fakes import ScriptedFakeModel, structured_reply

USERS = {
    "alice": ("Alice", "ACME", TaskCategory.CODE_GENERATION, "sort the numbers"),
    "bob": ("Bob", "Initech", TaskCategory.DEBUGGING, "fix the log parser"),
}
SESSIONS = {"s1": 5, "s2": 2, "s3": 1}  # session -> turns
WINDOW_TOKENS = 300  # short turns fit easily; the long turn below does not
LONG_TURN = ("s2", 1)  # this turn pastes a long log, so the window drops the turns before it
LOG = " Log: " + "ERROR parser failed at line 7; " * 40


def agent_reply(messages: list[BaseMessage]) -> str:
    system = str(messages[0].content) if isinstance(messages[0], SystemMessage) else ""
    strategy = re.search(r"Strategy \((\w+)\)", system)
    human = [m for m in messages if isinstance(m, HumanMessage)][-1]
    return f"Solved '{human.content}' with {strategy.group(1) if strategy else 'none'}."


def entity_reply(messages: list[BaseMessage]) -> AIMessage:
    text = str(messages[-1].content)
    name, company = re.search(r"I am (\w+) from (\w+)", text).groups()  # type: ignore[union-attr]
    return structured_reply("ExtractedEntities", entities=[
        {"name": name, "description": f"{name} works at {company}."},
        {"name": company, "description": f"{company} is {name}'s employer."},
    ])


def score(state: dict[str, Any]) -> dict[str, Any]:
    good = state.get("strategy") == "iterative"
    return {"reward": 1.0 if good else 0.5, "message": "scored by the test"}


class Models:
    def __init__(self) -> None:
        self.agent = ScriptedFakeModel(respond=agent_reply)
        self.summary = ScriptedFakeModel(
            respond=lambda msgs: f"Summary #{len(self.summary.sent)} of the conversation.")
        self.entities = ScriptedFakeModel(respond=entity_reply)


def build(models: Models, store: BaseStore, checkpointer: Any) -> tuple[Any, EpisodeMemories]:
    memories = EpisodeMemories()  # the store comes from the compiled graph
    builder = StateGraph(EpisodicState)
    builder.add_node(sliding_window_node(max_tokens=WINDOW_TOKENS))
    builder.add_node(recall_node(memories=memories))
    builder.add_node(select_strategy_node(memories=memories))
    builder.add_node(memory_agent_node(models.agent))
    builder.add_node(record_episode_node(memories=memories, score=score))
    builder.add_node(summarize_node(trigger=("messages", 6), keep=("messages", 2), model=models.summary))
    builder.add_node(entity_extract_node(model=models.entities))
    chain = [START, "sliding_window", "recall", "select_strategy", "agent", "record_episode",
             "summarize", "entity_extract", END]
    for a, b in pairwise(chain):
        builder.add_edge(a, b)
    return builder.compile(store=store, checkpointer=checkpointer), memories


def turn_input(user: str, session: str, turn: int) -> dict[str, Any]:
    name, company, category, job = USERS[user]
    text = f"I am {name} from {company}. Please {job}, case {session}-{turn}."
    return {
        "messages": [HumanMessage(text + (LOG if (session, turn) == LONG_TURN else ""))],
        "task": {"description": f"Please {job}, case {session}-{turn}", "category": category.value,
                 "complexity": 0.5},
    }


async def run_scenario(graph: Any, mode: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    outputs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for session, turns in SESSIONS.items():
        for turn in range(turns):
            for user in USERS:  # interleave the users
                config = thread_config(user, session)
                payload = turn_input(user, session, turn)
                out = graph.invoke(payload, config) if mode == "sync" else await graph.ainvoke(payload, config)
                outputs.setdefault((user, session), []).append(out)
    return outputs


def check(outputs: dict[tuple[str, str], list[dict[str, Any]]], models: Models, store: BaseStore) -> None:
    total_turns = sum(SESSIONS.values())
    for user, (name, company, category, job) in USERS.items():
        other = next(u for u in USERS if u != user)
        other_name = USERS[other][0]
        final = outputs[(user, "s1")][-1]

        # summarize: s1 had 5 turns (10 messages) -> the summary is in its own key, not in
        # messages, and the kept messages start with the user's question
        assert final["summary"].startswith("Summary #")
        assert SUMMARY_MESSAGE_ID not in [m.id for m in final["messages"]]
        assert isinstance(final["messages"][0], HumanMessage)
        assert len(final["messages"]) <= 6
        # ... and the latest exchange of the user is still there
        assert f"case s1-{SESSIONS['s1'] - 1}" in str(final["messages"][-2].content)
        assert isinstance(final["messages"][-1], AIMessage)
        # short sessions were never summarised
        assert "summary" not in outputs[(user, "s3")][-1]

        # entity_extract: merged per user, persisted, loaded into new sessions
        assert final["entities"] == {name: f"{name} works at {company}.",
                                     company: f"{company} is {name}'s employer."}
        assert outputs[(user, "s3")][-1]["entities"][name] == f"{name} works at {company}."
        item = store.get(("entities", user), name.lower())
        assert item is not None and item.value["description"] == f"{name} works at {company}."
        assert store.get(("entities", user), other_name.lower()) is None

        # record_episode: one episode per turn, in the user's own namespace, scored
        memory = EpisodicMemory(store, ("episodes", user))
        episodes = memory.episodes()
        assert len(episodes) == total_turns
        assert all(e.task.category is category for e in episodes)
        assert all(e.solution.startswith("Solved 'I am " + name) for e in episodes)
        for e in episodes:
            expected = OutcomeStatus.SUCCESS if e.strategy_used == "iterative" else OutcomeStatus.PARTIAL
            assert e.outcome is expected
        assert {o["episode_id"] for outs in outputs.values() for o in outs if o is not None} >= {
            e.episode_id for e in episodes}

        for session in SESSIONS:
            for out in outputs[(user, session)]:
                # recall: only this user's episodes, and a prompt for the current task
                for rec in out["recalled"]:
                    assert rec["solution"].startswith("Solved 'I am " + name)
                assert job in out["replay_prompt"]
                # select_strategy: a strategy of the pool with its instruction
                assert out["strategy_instruction"] == STRATEGY_POOL[out["strategy"]]
                assert out["feedback"] is None and out["outcome"] is None
        # from the second turn on something is recalled
        assert outputs[(user, "s2")][0]["recalled"]

        # sliding_window: the long turn pushed the earlier turns of that session out of state
        long_out = outputs[(user, LONG_TURN[0])][LONG_TURN[1]]
        assert [m.type for m in long_out["messages"]] == ["human", "ai"]
        assert "Log: ERROR" in str(long_out["messages"][0].content)

    # sliding_window: the agent saw only the long message in that turn, and at most
    # WINDOW_TOKENS worth of conversation otherwise; its prompt carried the strategy
    # instruction and, once there were episodes, the replay
    long_calls = [sent for sent in models.agent.sent if "Log: ERROR" in str(sent[-1].content)]
    assert len(long_calls) == len(USERS)
    for sent in long_calls:
        assert [m.type for m in sent] == ["system", "human"]
    for sent in models.agent.sent:
        assert "Strategy (" in str(sent[0].content)
        if sent not in long_calls:
            assert count_tokens_approximately(sent[1:]) <= WINDOW_TOKENS
    assert any("RECALLED EPISODES" in str(sent[0].content) for sent in models.agent.sent)
    # summarize used the model with the dropped messages
    assert models.summary.sent and "case s1-0" in str(models.summary.sent[0][-1].content)


def test_two_users_several_sessions_sync(tmp_path: Path, chroma_store: BaseStore) -> None:
    import asyncio

    models = Models()
    with open_checkpointer(tmp_path / "checkpoints.sqlite") as saver:
        graph, _ = build(models, chroma_store, saver)
        outputs = asyncio.run(run_scenario(graph, "sync"))
        check(outputs, models, chroma_store)
        assert [s.session_id for s in list_sessions(saver, "alice")] == ["s3", "s2", "s1"]
        # resume alice's first session: her state, not bob's
        config = resume_config(saver, "alice", "s1")
        before = graph.get_state(config).values
        assert before["summary"].startswith("Summary #")
        out = graph.invoke({"messages": [HumanMessage("I am Alice from ACME. One more.")]}, config)
        assert "Bob" not in " ".join(str(m.content) for m in out["messages"])
        assert out["summary"] == before["summary"] or out["summary"].startswith("Summary #")


@pytest.mark.parametrize("mode", ["async"])
async def test_two_users_several_sessions_async(tmp_path: Path, chroma_store: BaseStore, mode: str) -> None:
    models = Models()
    async with aopen_checkpointer(tmp_path / "checkpoints.sqlite") as saver:
        graph, _ = build(models, chroma_store, saver)
        outputs = await run_scenario(graph, mode)
        check(outputs, models, chroma_store)
        assert sorted(s.session_id for s in await alist_sessions(saver, "bob")) == ["s1", "s2", "s3"]
