"""Pruning old checkpoints: the latest state survives and resumes, other threads are untouched
(also while they write, from another connection, behind a barrier), subgraph calls go with
their root checkpoint, DeltaChannel threads are refused, bad input names the fix."""

from __future__ import annotations

import operator
import sqlite3
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import StateGraph
from langgraph.types import Command, interrupt
from typing_extensions import TypedDict

from langgraph_episodic.graph import pruning
from langgraph_episodic.graph.pruning import aprune_threads, prune_threads
from langgraph_episodic.graph.threads import (
    aopen_checkpointer,
    open_checkpointer,
    resume_config,
    thread_config,
)

from .fakes import echo_graph


def tid(user: str, session: str) -> str:
    return str(thread_config(user, session)["configurable"]["thread_id"])


def rows(path: Path, thread_id: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The thread's checkpoint and write rows, read on a connection of their own."""
    with sqlite3.connect(path) as conn:
        checkpoints = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint FROM checkpoints "
            "WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id", (thread_id,)).fetchall()
        writes = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, task_id, idx, value FROM writes "
            "WHERE thread_id = ? ORDER BY 1, 2, 3, 4", (thread_id,)).fetchall()
    return checkpoints, writes


def contents(graph: Any, config: Any) -> list[str]:
    return [str(m.content) for m in graph.get_state(config).values["messages"]]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "cp.sqlite"


@pytest.fixture
def saver(db: Path) -> Iterator[Any]:
    with open_checkpointer(db) as opened:
        yield opened


@pytest.mark.parametrize("keep", [1, 3])
def test_the_latest_state_survives_and_the_thread_resumes(saver: Any, db: Path, keep: int) -> None:
    graph = echo_graph(saver)
    config = thread_config("alice", "s1")
    for turn in range(5):
        graph.invoke({"messages": [("user", f"turn {turn}")]}, config)
    before = graph.get_state(config)
    history = list(saver.list(config))
    assert len(history) > keep

    prune_threads(saver, [tid("alice", "s1")], keep=keep)

    kept = list(saver.list(config))
    assert [c.config for c in kept] == [c.config for c in history[:keep]]
    after = graph.get_state(config)
    assert after.values == before.values and after.config == before.config
    assert resume_config(saver, "alice") == thread_config("alice", "s1")
    graph.invoke({"messages": [("user", "turn 5")]}, config)
    assert contents(graph, config)[-2:] == ["turn 5", "seen 11"]
    oldest = kept[-1].config["configurable"]["checkpoint_id"]
    assert rows(db, tid("alice", "s1"))[0][0][2] is None, "the oldest kept lost its parent"
    assert all(r[1] >= oldest for r in rows(db, tid("alice", "s1"))[1]), "old writes remain"


def test_other_threads_and_users_are_untouched(saver: Any, db: Path) -> None:
    graph = echo_graph(saver)
    for user, session in [("alice", "s1"), ("alice", "s2"), ("alice:x", "s1"), ("bob", "s1")]:
        for turn in range(3):
            graph.invoke({"messages": [("user", f"{user} {turn}")]}, thread_config(user, session))
    others = {t: rows(db, t) for t in (tid("alice", "s2"), tid("alice:x", "s1"), tid("bob", "s1"))}
    prune_threads(saver, [tid("alice", "s1")])
    assert len(rows(db, tid("alice", "s1"))[0]) == 1
    assert {t: rows(db, t) for t in others} == others


def test_pending_writes_of_the_latest_checkpoint_are_kept(saver: Any, db: Path) -> None:
    """An interrupted run resumes from its latest checkpoint's pending writes."""

    calls: list[str] = []
    failing = threading.Event()

    def first(state: LogState) -> dict[str, Any]:
        calls.append("first")
        return {"log": ["first"]}

    def second(state: LogState) -> dict[str, Any]:
        calls.append("second")
        if failing.is_set():
            raise RuntimeError("the model timed out")
        return {"log": ["second"]}

    builder = StateGraph(LogState)
    builder.add_node("first", first)
    builder.add_node("second", second)
    builder.add_edge("__start__", "first")
    builder.add_edge("__start__", "second")  # runs beside first: first's write is pending
    graph = builder.compile(checkpointer=saver)
    config = thread_config("alice", "flaky")
    graph.invoke({"log": []}, config)  # turn 1: both succeed
    failing.set()
    with pytest.raises(RuntimeError):
        graph.invoke({"log": []}, config)  # turn 2: first succeeds, second fails
    failing.clear()
    latest = saver.get_tuple(config)
    assert latest is not None and latest.pending_writes
    prune_threads(saver, [tid("alice", "flaky")])
    assert saver.get_tuple(config).pending_writes == latest.pending_writes
    graph.invoke(None, config)  # resume: second runs again, first does not
    assert sorted(calls) == ["first"] * 2 + ["second"] * 3  # the two run in parallel
    assert sorted(graph.get_state(config).values["log"]) == ["first"] * 2 + ["second"] * 2


def test_pruning_while_other_connections_write(db: Path) -> None:
    """A pruner and two writers on connections of their own start together: one writer adds
    to the thread being pruned, the other to another user's thread; nothing they wrote is lost."""
    turns = 12
    with open_checkpointer(db) as setup:
        echo_graph(setup).invoke({"messages": [("user", "start")]}, thread_config("alice", "s1"))
    barrier = threading.Barrier(3)

    def write(user: str) -> None:
        with open_checkpointer(db) as own:
            graph = echo_graph(own)
            barrier.wait()
            for turn in range(turns):
                graph.invoke({"messages": [("user", f"{user} {turn}")]}, thread_config(user, "s1"))

    def prune() -> None:
        with open_checkpointer(db) as own:
            barrier.wait()
            for _ in range(3 * turns):
                prune_threads(own, [tid("alice", "s1")])

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(3) as pool:
            futures = [pool.submit(write, "alice"), pool.submit(write, "bob"), pool.submit(prune)]
            for future in futures:
                future.result(timeout=120)  # re-raises what a worker raised
    finally:
        sys.setswitchinterval(interval)
    with open_checkpointer(db) as saver:
        graph = echo_graph(saver)
        alice = contents(graph, thread_config("alice", "s1"))
        assert alice == ["start", "seen 1"] + [
            text for turn in range(turns) for text in (f"alice {turn}", f"seen {2 * turn + 3}")]
        bob = contents(graph, thread_config("bob", "s1"))
        assert bob[-2:] == [f"bob {turns - 1}", f"seen {2 * turns - 1}"]
        assert len(list(saver.list(thread_config("bob", "s1")))) == 3 * turns  # input, loop... all
        prune_threads(saver, [tid("alice", "s1")])
        assert len(list(saver.list(thread_config("alice", "s1")))) == 1


def test_a_prune_paused_between_reading_and_deleting_holds_other_writers_back(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The prune reads the thread's checkpoints, then deletes in the same transaction: a writer
    arriving in between waits for it, and its checkpoint survives."""
    with open_checkpointer(db) as saver:
        graph = echo_graph(saver)
        for turn in range(3):
            graph.invoke({"messages": [("user", f"turn {turn}")]}, thread_config("alice", "s1"))
    paused, resume = threading.Event(), threading.Event()
    plan = pruning._thread_plan

    def pausing_plan(thread_id: str, keep: int, execute: Any) -> Any:
        def slow(sql: str, params: Sequence[Any]) -> Any:
            if sql.startswith("DELETE") and not paused.is_set():
                paused.set()
                assert resume.wait(30)
            return execute(sql, params)

        return plan(thread_id, keep, slow)

    monkeypatch.setattr(pruning, "_thread_plan", pausing_plan)

    def prune() -> None:
        with open_checkpointer(db) as own:
            prune_threads(own, [tid("alice", "s1")])

    pruner = threading.Thread(target=prune)
    pruner.start()
    assert paused.wait(30)
    written = threading.Event()

    def write() -> None:
        with open_checkpointer(db) as own:
            echo_graph(own).invoke({"messages": [("user", "turn 3")]}, thread_config("alice", "s1"))
        written.set()

    writer = threading.Thread(target=write)
    writer.start()
    assert not written.wait(0.5), "the writer did not wait for the prune's transaction"
    resume.set()
    pruner.join(30)
    writer.join(30)
    assert written.is_set()
    with open_checkpointer(db) as saver:
        assert contents(echo_graph(saver), thread_config("alice", "s1"))[-2:] == ["turn 3", "seen 7"]


def subgraph_caller(saver: Any, *, ask: bool = False) -> Any:
    """A graph whose node calls a subgraph (its checkpoints get a namespace per call); with
    ``ask`` the subgraph stops for a human answer (``interrupt``)."""

    def step(state: LogState) -> dict[str, Any]:
        answer = interrupt("continue?") if ask else "inner"
        return {"log": [str(answer)]}

    inner = StateGraph(LogState)
    inner.add_node("step", step)
    inner.set_entry_point("step")
    sub = inner.compile()
    outer = StateGraph(LogState)
    outer.add_node("call", lambda state, config: sub.invoke({"log": []}, config))
    outer.set_entry_point("call")
    return outer.compile(checkpointer=saver)


def test_old_subgraph_calls_go_with_their_root_checkpoint(saver: Any, db: Path) -> None:
    graph = subgraph_caller(saver)
    config = thread_config("alice", "sub")
    for _ in range(3):
        graph.invoke({"log": ["outer"]}, config)
    namespaces = {r[0] for r in rows(db, tid("alice", "sub"))[0]}
    assert len([ns for ns in namespaces if ns.startswith("call:")]) == 3, namespaces
    before = graph.get_state(config).values
    prune_threads(saver, [tid("alice", "sub")])
    assert {r[0] for r in rows(db, tid("alice", "sub"))[0]} == {""}  # every call had finished
    assert graph.get_state(config).values == before


def test_a_subgraph_waiting_for_a_human_resumes_after_pruning(saver: Any, db: Path) -> None:
    graph = subgraph_caller(saver, ask=True)
    config = thread_config("alice", "ask")
    graph.invoke({"log": ["first"]}, config)
    graph.invoke(Command(resume="yes"), config)
    graph.invoke({"log": ["second"]}, config)  # waits inside the subgraph
    assert graph.get_state(config).next == ("call",)
    prune_threads(saver, [tid("alice", "ask")])
    namespaces = {r[0] for r in rows(db, tid("alice", "ask"))[0]}
    assert len(namespaces) == 2, namespaces  # the root and the waiting call
    graph.invoke(Command(resume="sure"), config)
    assert graph.get_state(config).values["log"] == ["first", "yes", "second", "sure"]


def extend(state: list[str], writes: Sequence[list[str]]) -> list[str]:
    return [*state, *(item for write in writes for item in write)]


class DeltaState(TypedDict):
    log: Annotated[list[str], DeltaChannel(extend)]


class LogState(TypedDict):
    log: Annotated[list[str], operator.add]


def test_a_thread_with_a_delta_channel_is_refused_and_left_whole(saver: Any, db: Path) -> None:
    builder = StateGraph(DeltaState)
    builder.add_node("step", lambda state: {"log": ["step"]})
    builder.set_entry_point("step")
    graph = builder.compile(checkpointer=saver)
    for _ in range(3):
        graph.invoke({"log": ["input"]}, thread_config("alice", "delta"))
    echo_graph(saver).invoke({"messages": [("user", "hi")]}, thread_config("alice", "plain"))
    echo_graph(saver).invoke({"messages": [("user", "hi")]}, thread_config("alice", "plain"))
    before = rows(db, tid("alice", "delta"))
    plain = rows(db, tid("alice", "plain"))
    with pytest.raises(NotImplementedError, match="DeltaChannel"):
        prune_threads(saver, [tid("alice", "delta")])
    assert rows(db, tid("alice", "delta")) == before
    assert graph.get_state(thread_config("alice", "delta")).values["log"] == ["input", "step"] * 3
    assert rows(db, tid("alice", "plain")) == plain


async def test_async_sqlite_prunes_the_same_way(tmp_path: Path) -> None:
    async with aopen_checkpointer(tmp_path / "cp.sqlite") as saver:
        graph = echo_graph(saver)
        for user in ("alice", "bob"):
            for turn in range(3):
                await graph.ainvoke({"messages": [("user", f"{turn}")]}, thread_config(user, "s"))
        config = thread_config("alice", "s")
        before = await graph.aget_state(config)
        bob = [c.config async for c in saver.alist(thread_config("bob", "s"))]
        await aprune_threads(saver, [tid("alice", "s")])
        assert [c async for c in saver.alist(config)].__len__() == 1
        assert (await graph.aget_state(config)).values == before.values
        assert [c.config async for c in saver.alist(thread_config("bob", "s"))] == bob
        await graph.ainvoke({"messages": [("user", "3")]}, config)
        assert str((await graph.aget_state(config)).values["messages"][-1].content) == "seen 7"


async def test_async_prune_of_a_sync_saver_runs_in_a_worker_thread(saver: Any, db: Path) -> None:
    graph = echo_graph(saver)
    for turn in range(2):
        graph.invoke({"messages": [("user", f"{turn}")]}, thread_config("alice", "s"))
    await aprune_threads(saver, [tid("alice", "s")])
    assert len(rows(db, tid("alice", "s"))[0]) == 1


def test_bad_input_names_the_fix(saver: Any) -> None:
    with pytest.raises(TypeError, match=r"\['alice:s1'\]"):
        prune_threads(saver, "alice:s1")
    for keep in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="delete_thread"):
            prune_threads(saver, ["alice:s1"], keep=keep)
    memory = InMemorySaver()
    echo_graph(memory).invoke({"messages": [("user", "hi")]}, thread_config("alice", "s1"))
    with pytest.raises(NotImplementedError, match="open_checkpointer"):
        prune_threads(memory, ["alice:s1"])
    assert len(list(memory.list(thread_config("alice", "s1")))) > 1
    prune_threads(saver, [])  # nothing to do
    prune_threads(saver, ["nobody:never"])  # a thread that does not exist


class PruningSaver(InMemorySaver):
    """A saver with its own ``prune``/``aprune``, as ``PostgresSaver`` has: it records calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[list[str], str]] = []

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.calls.append((list(thread_ids), strategy))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.calls.append((list(thread_ids), strategy))


async def test_a_saver_with_its_own_prune_is_handed_keep_1() -> None:
    saver = PruningSaver()
    prune_threads(saver, ["alice:s1"])
    await aprune_threads(saver, ["bob:s1"])
    assert saver.calls == [(["alice:s1"], "keep_latest"), (["bob:s1"], "keep_latest")]
    with pytest.raises(NotImplementedError, match="keep=1"):
        prune_threads(saver, ["alice:s1"], keep=2)
    assert len(saver.calls) == 2
