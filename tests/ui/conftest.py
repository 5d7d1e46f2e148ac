"""Fixtures for the inspector's tests.

``inspector`` is the app over a seeded embedded store (64-dim ``HashEmbeddings``) behind a
``TestClient`` (its base URL under the app's path) that has not shown the token yet;
``login(client)`` shows it. ``served`` runs
the real command, ``langgraph-episodic ui --port 0``, in a subprocess and yields its URL.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.ui import Secrets, Settings, create_app

REPO = Path(__file__).resolve().parents[2]
INDEX = {"dims": 64, "embed": HashEmbeddings(64)}

SCRIPT = "<script>window.__xss = 'script'; alert('script')</script>"
IMG = "<img src=x onerror=\"window.__xss = 'img'; alert('img')\">"
LINK = "<a href=\"javascript:alert('link')\">click me</a> javascript:alert('bare')"
PAYLOADS = {"xss-script": SCRIPT, "xss-img": IMG, "xss-link": LINK}
"""Memories whose text tries to run script in the page that shows them."""


PENDING_TEXT = "the csv parser still fails on quoted commas"
"""What Dana's turns waiting for deferred formation say."""


def seed_dana(store: ChromaStore) -> None:
    """Dana: episodes (one with a payload as task), facts with periods (a move, a payload),
    a profile fact, entities (one a payload), and two answered turns of thread ``debug`` still
    queued for deferred formation (as ``formation.pending.enqueue`` writes them)."""
    from langgraph_episodic.episodic.memory import EpisodicMemory
    from langgraph_episodic.episodic.records import (
        Episode,
        Feedback,
        OutcomeStatus,
        TaskCategory,
        TaskDescription,
    )
    from langgraph_episodic.facts.records import FactRecord

    memory = EpisodicMemory(store, ("episodes", "dana"))
    outcomes = [OutcomeStatus.FAILURE, OutcomeStatus.SUCCESS, OutcomeStatus.SUCCESS]
    for i in range(12):
        category = TaskCategory.DEBUGGING if i % 2 else TaskCategory.CODE_GENERATION
        memory.record(Episode.new(
            TaskDescription(f"fix the csv parser bug {i}" if i % 2 else f"write a sort {i}",
                            category),
            f"solution {i}", Feedback(reward=1.0 if outcomes[i % 3] is OutcomeStatus.SUCCESS
                                      else 0.0, message="tests"),
            outcomes[i % 3], strategy_used="iterative" if i % 3 else "defensive",
            timestamp=1_700_000_000 + 3600 * i, episode_id=f"ep{i:02d}",
        ))
    memory.record(Episode.new(
        TaskDescription(SCRIPT, TaskCategory.DEBUGGING), IMG, Feedback(reward=0.5, message=LINK),
        OutcomeStatus.PARTIAL, strategy_used="iterative", timestamp=1_700_100_000,
        episode_id="ep-xss",
    ))
    berlin = FactRecord(
        text="Dana lives in Berlin", lineage="home", valid_from="2024-01-01T00:00:00+00:00",
        recorded_at="2024-01-02T00:00:00+00:00", valid_to="2025-06-01T00:00:00+00:00",
        current=False, superseded_by="home-2", slot="residence",
    )
    vienna = FactRecord(
        text="Dana lives in Vienna", lineage="home", valid_from="2025-06-01T00:00:00+00:00",
        recorded_at="2025-06-02T00:00:00+00:00", supersedes="home-1", slot="residence",
    )
    payload = FactRecord(
        text=SCRIPT, lineage="xss", valid_from="2025-01-01T00:00:00+00:00",
        recorded_at="2025-01-01T00:00:00+00:00",
    )
    store.put(("memories", "dana"), "home-1", berlin.to_value())
    store.put(("memories", "dana"), "home-2", vienna.to_value())
    store.put(("memories", "dana"), "fact-xss", payload.to_value())
    store.put(("user_profiles", "dana"), "short", {"text": "Dana prefers short answers"})
    store.put(("entities", "dana"), "acme", {
        "name": "ACME", "description": "Dana's employer.", "text": "ACME: Dana's employer.",
        "method": "rules",
    })
    store.put(("entities", "dana"), "xss", {
        "name": IMG, "description": LINK, "text": LINK, "method": "rules",
    })
    from langgraph_episodic.formation.pending import PendingTurn, pending_key

    for n in range(2):
        turn = PendingTurn("dana", "debug", pending_key(1_700_200_000_000_000_000 + n),
                           text=f"{PENDING_TEXT} ({n})", enqueued_at=1_700_200_000.0 + n)
        store.put(turn.namespace, turn.key, turn.to_value(), index=False)


def make_summarised_thread(checkpoints: Path, user: str, session: str) -> None:
    """A thread whose state holds a summary of messages that left the window, and a payload."""
    from langgraph.graph import START, StateGraph

    from langgraph_episodic.graph.state import EpisodicState
    from langgraph_episodic.graph.threads import open_checkpointer, thread_config

    def answer(state: EpisodicState) -> dict[str, object]:
        return {
            "messages": [("ai", f"Here is the fix. {SCRIPT}")],
            "summary": "The user asked about the csv parser; the agent suggested a test.",
            "summary_info": {"summarized_messages": 4, "method": "extractive"},
        }

    builder = StateGraph(EpisodicState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    with open_checkpointer(checkpoints) as saver:
        builder.compile(checkpointer=saver).invoke(
            {"messages": [("user", f"why does it fail? {IMG}")]}, thread_config(user, session)
        )


def seed(store: ChromaStore) -> None:
    store.put(("memories", "alice"), "coffee", {"text": "Alice drinks espresso without sugar"})
    store.put(("memories", "alice"), "editor", {"text": "Alice writes code in Neovim"}, ttl=600)
    for key, text in PAYLOADS.items():
        store.put(("memories", "alice"), key, {"text": text})
    store.put(("episodes", "alice"), "ep1", {"task": "fix the parser", "reward": 1.0})
    store.put(("memories", "alice2"), "tea", {"text": "Alice2 drinks green tea"})
    store.put(("memories", "bob"), "pet", {"text": "Bob has a cat called Miso"})
    store.put(("notes",), "plain", {"text": "a note of nobody"})


@dataclass
class Inspector:
    client: TestClient
    secrets: Secrets
    store: ChromaStore
    path: Path

    def login(self) -> None:
        response = self.client.get(f"/?token={self.secrets.token}")
        assert response.status_code == 200


def make_inspector(path: Path, *, read_only: bool = False) -> tuple[Starlette, Secrets, ChromaStore]:
    store = ChromaStore.persistent(path, index=INDEX)
    secrets = Secrets()
    settings = Settings(
        store=store, where=f"embedded store {path}", read_only=read_only,
        checkpoints=path / "checkpoints.sqlite",
    )
    return create_app(settings, secrets=secrets), secrets, store


def make_thread(checkpoints: Path, user: str, session: str) -> None:
    """A checkpointed conversation thread ``"<user>:<session>"``."""
    from langgraph.graph import START, MessagesState, StateGraph

    from langgraph_episodic.graph.threads import open_checkpointer, thread_config

    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda state: {"messages": [("ai", "ok")]})
    builder.add_edge(START, "echo")
    with open_checkpointer(checkpoints) as saver:
        builder.compile(checkpointer=saver).invoke(
            {"messages": [("user", "hi")]}, thread_config(user, session)
        )


@pytest.fixture(scope="module")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeded store, built once per test module (seeding takes over a second), closed, with
    threads ``alice:s1``, ``bob:s1`` and ``dana:debug`` (summarised) in its
    ``checkpoints.sqlite``. Tests get copies (:func:`seeded`), never this folder."""
    path = tmp_path_factory.mktemp("ui-seed") / "store"
    with ChromaStore.persistent(path, index=INDEX) as store:
        seed(store)
        seed_dana(store)
    make_thread(path / "checkpoints.sqlite", "alice", "s1")
    make_thread(path / "checkpoints.sqlite", "bob", "s1")
    make_summarised_thread(path / "checkpoints.sqlite", "dana", "debug")
    return path


@pytest.fixture
def seeded(seeded_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the seeded store at ``tmp_path / "store"``: each test changes its own."""
    path = tmp_path / "store"
    shutil.copytree(seeded_template, path)
    return path


@pytest.fixture
def inspector(seeded: Path) -> Iterator[Inspector]:
    app, secrets, store = make_inspector(seeded)
    with TestClient(app, base_url=f"http://127.0.0.1{secrets.path}/") as client:
        yield Inspector(client, secrets, store, seeded)
    store.close()


@pytest.fixture
def read_only_inspector(seeded: Path) -> Iterator[Inspector]:
    app, secrets, store = make_inspector(seeded, read_only=True)
    with TestClient(app, base_url=f"http://127.0.0.1{secrets.path}/") as client:
        yield Inspector(client, secrets, store, seeded)
    store.close()


def python_env() -> dict[str, str]:
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return env


URL = re.compile(r"(http://127\.0\.0\.1:\d+/[\w-]+/)\?token=([\w-]+)")


@dataclass
class Served:
    base: str
    token: str
    proc: subprocess.Popen[str]


def serve(*args: str, timeout: float = 120.0) -> Served:
    """Start ``langgraph-episodic ui *args --port 0``; return once it printed its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "langgraph_episodic", "ui", "--port", "0", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=python_env(), cwd=REPO,
    )
    found: list[re.Match[str]] = []
    done = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            match = URL.search(line)
            if match:
                found.append(match)
                done.set()
        done.set()

    threading.Thread(target=read, daemon=True).start()
    done.wait(timeout)
    if not found:
        stop(proc)
        raise AssertionError(f"ui did not print its URL: {proc.stderr.read() if proc.stderr else ''}")
    return Served(found[0].group(1), found[0].group(2), proc)


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def served(seeded: Path) -> Iterator[Served]:
    running = serve("--path", str(seeded), "--embeddings", "hash")
    try:
        yield running
    finally:
        stop(running.proc)
