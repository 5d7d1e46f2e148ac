"""Fixtures for the command-line tests.

``cli(*argv)`` runs the command line in process and returns ``(exit code, stdout, stderr)``.
``seeded_store`` is an embedded store (64-dim ``HashEmbeddings``, so commands take
``--embeddings hash``) holding a small, known set of items for two users.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from langgraph.store.base import BaseStore, IndexConfig

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.cli.main import main
from langgraph_episodic.episodic import (
    Episode,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)

HASH = ("--embeddings", "hash")
INDEX: IndexConfig = {"dims": 64, "embed": HashEmbeddings(64)}

CliResult = tuple[int, str, str]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run ``langgraph-episodic *argv`` in process; return (exit code, stdout, stderr)."""

    def run(*argv: str) -> CliResult:
        capsys.readouterr()
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def open_hash_store(path: Path) -> ChromaStore:
    """The embedded store at ``path`` with the test embedder."""
    return ChromaStore.persistent(path, index=INDEX)


@dataclass(frozen=True)
class Seeded:
    """What ``seeded_store`` put where."""

    path: Path
    counts: dict[tuple[str, ...], int]


def seed(store: BaseStore, *, ttl: bool = True) -> dict[tuple[str, ...], int]:
    """Put the known items; return the item count per namespace.

    ``ttl=False`` leaves out the one TTL, for stores without TTL support.
    """
    store.put(("memories", "alice"), "coffee", {"text": "Alice drinks espresso without sugar"})
    store.put(("memories", "alice"), "editor", {"text": "Alice writes code in Neovim", "n": 2})
    store.put(("memories", "alice2"), "tea", {"text": "Alice2 drinks green tea"})
    store.put(("memories", "bob"), "pet", {"text": "Bob has a cat called Miso"}, ttl=600 if ttl else None)
    store.put(
        ("memories", "bob"), "tags", {"text": "Bob's hobbies", "tags": ["chess", "rowing"]},
        index=["tags[*]"],
    )
    store.put(("notes",), "plain", {"text": "not indexed at all"}, index=False)
    memory = EpisodicMemory.for_user(store, "alice")
    outcomes = [OutcomeStatus.SUCCESS, OutcomeStatus.FAILURE, OutcomeStatus.SUCCESS]
    for i, (outcome, strategy) in enumerate(zip(outcomes, ["iterative", "defensive", "iterative"], strict=True)):
        task = TaskDescription(f"Fix the date parser bug {i}", TaskCategory.DEBUGGING, 0.5)
        reward = 1.0 if outcome is OutcomeStatus.SUCCESS else 0.0
        memory.record(
            Episode(f"ep{i}", task, "patched", Feedback(reward), outcome,
                    timestamp=1000.0 + i, strategy_used=strategy)
        )
    return {
        ("episodes", "alice"): 3,
        ("memories", "alice"): 2,
        ("memories", "alice2"): 1,
        ("memories", "bob"): 2,
        ("notes",): 1,
    }


@pytest.fixture
def seeded_store(tmp_path: Path) -> Iterator[Seeded]:
    """An embedded store at ``tmp_path / "store"`` with the items of :func:`seed`."""
    path = tmp_path / "store"
    with open_hash_store(path) as store:
        counts = seed(store)
    yield Seeded(path, counts)
