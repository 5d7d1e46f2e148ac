"""What a memory says is searchable; its bookkeeping (the thread id) is a filter, never text.

The library's writers (the remembered turns, the memory tools' facts) store the context
``{"day": ..., "thread": ...}`` and index the text and the day only. Earlier releases also
indexed the thread (``alice:session-3``): a question naming the user ("How does Alice take her
coffee?") was then close to every turn of hers, and the recall tool returned a page of unrelated
turns over its floor. ``ChromaStore`` ranks no text at ``context.thread``, so stores written
then, opened again or still open, and searched in the cache or through Chroma's index, answer
as if the thread had never been indexed. The shared-field lift still joins memories of the same
day as the best hits, and the thread still filters.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import BaseStore

from langgraph_episodic import ChromaStore, memory_context
from langgraph_episodic._effects import run
from langgraph_episodic.chroma import nearest
from langgraph_episodic.chroma.ranking.shared_fields import field_key
from langgraph_episodic.chroma.testing import field_groups, holds_unranked
from langgraph_episodic.kinds.turns import store_turns, turn_items
from langgraph_episodic.tools import create_memory_tools

from ._support import hash_index

USER_NS = ("memories", "alice")
TURNS_NS = ("memories", "alice", "turns")
START = datetime(2023, 5, 1, 9, 0, tzinfo=timezone.utc)
QUESTION = "How does Alice take her coffee?"
OLD_PATHS = ("context.day", "context.thread")
"""What the writers indexed after the text before the thread became a filter."""

SAID = (
    "We talked about the weather in Lisbon today.",
    "The train to Porto was late again this morning.",
    "I finished reading a novel about sailors.",
    "My sister visits us next month with her kids.",
    "The printer at work is broken since Tuesday.",
    "I started a pottery class on Wednesdays.",
    "Our team shipped the release on Friday evening.",
    "The cat knocked over the big plant in the hall.",
)
"""Turns of four threads (two a day), none about coffee."""


def _config(session: int) -> dict[str, Any]:
    return {"configurable": {"user_id": "alice", "thread_id": f"alice:session-{session}"}}


def _remember(store: BaseStore) -> None:
    """The turns, as the middleware and the remember-turn node store them."""
    for n, text in enumerate(SAID):
        when = START + timedelta(days=n // 2)
        messages = [HumanMessage(text, id=f"m{n}"), AIMessage("Noted.", id=f"a{n}")]
        items = turn_items(messages, _config(n // 2), when, redact=None, replies=False)
        run(store_turns(store, items))


def _recall(store: BaseStore, question: str = QUESTION) -> str:
    """What the recall tool answers, at its defaults (``k=3``, floor 0.10)."""
    _, recall = create_memory_tools(store=store, locale="en")
    return str(recall.invoke({"query": question}, _config(9)))


def _unrelated_recalled(answer: str) -> list[str]:
    return [text for text in SAID if text in answer]


def _chroma(**options: Any) -> ChromaStore:
    return ChromaStore.ephemeral(collection=f"bk-{uuid.uuid4().hex[:10]}", index=hash_index(),
                                 **options)


def test_the_writers_index_the_text_and_the_day() -> None:
    store = _chroma()
    _remember(store)
    save, _ = create_memory_tools(store=store, locale="en", clock=lambda: START)
    save.invoke({"information": "I take my coffee black."}, _config(0))
    written = [(item.namespace, item.key) for item in store.search((), limit=1000)]
    indexed = store.item_extras(written)
    assert written and set(indexed) == set(written)
    for (ns, key), extras in indexed.items():
        assert extras.index is not False and set(extras.index) == {"text", "context.day"}, (ns, key)
    turn = next(i.value for i in store.search(TURNS_NS, limit=100) if i.value["text"] == SAID[0])
    assert turn["context"] == {"day": "Monday, 1 May 2023", "thread": "alice:session-0"}


def test_a_question_naming_the_user_recalls_no_unrelated_turn() -> None:
    store = _chroma()
    _remember(store)
    assert _unrelated_recalled(_recall(store)) == []
    hits = store.search(USER_NS, query=QUESTION, limit=10)
    assert hits and max(h.score or 0.0 for h in hits) < 0.10


def test_the_thread_still_filters() -> None:
    store = _chroma()
    _remember(store)
    found = store.search(TURNS_NS, filter={"context.thread": "alice:session-1"}, limit=10)
    assert sorted(i.value["text"] for i in found) == sorted(SAID[2:4])


def test_the_recall_tool_still_finds_what_was_said() -> None:
    store = _chroma()
    _remember(store)
    assert SAID[5] in _recall(store, "When is my pottery class?")


def _written_with_the_thread(store: BaseStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The turns as the previous release wrote them: the thread indexed after the day."""
    with monkeypatch.context() as patch:
        patch.setattr(memory_context, "CONTEXT_PATHS", OLD_PATHS)
        _remember(store)


def test_an_open_store_written_with_the_thread_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _chroma()
    _written_with_the_thread(store, monkeypatch)
    assert _unrelated_recalled(_recall(store)) == []


@pytest.mark.parametrize("cache", [None, 2], ids=["cached", "beyond-the-cache"])
def test_a_store_folder_written_with_the_thread_indexed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: int | None
) -> None:
    """Opened again, the folder's vectors are read from Chroma: into the caches, or (a vector
    cache of two) ranked through Chroma's index, which the store first asks whether any
    vector holds an unranked path."""
    def opened() -> ChromaStore:
        options: dict[str, Any] = {} if cache is None else {"vector_cache_size": cache}
        return ChromaStore.persistent(tmp_path / "store", index=hash_index(), **options)

    first = opened()
    _written_with_the_thread(first, monkeypatch)
    first.close()
    store = opened()
    try:
        # The folder holds the thread as an indexed text, as the previous release wrote it
        # (checked last: listing the turns loads them), and a search ranks, lexes and lifts
        # without it.
        assert _unrelated_recalled(_recall(store)) == []
        store.search(USER_NS, query="pottery")  # (a search loads the field map)
        fields = {f for f, _ in field_groups(store, TURNS_NS)}
        assert fields == {"text", "context.day"}
        assert holds_unranked(store)
        assert SAID[5] in _recall(store, "When is my pottery class?")
        turns = [(TURNS_NS, item.key) for item in store.search(TURNS_NS, limit=100)]
        indexed = store.item_extras(turns).values()
        assert turns and all(e.index and "context.thread" in e.index for e in indexed)
    finally:
        store.close()


@pytest.mark.parametrize("exact_up_to", [0, nearest.EXACT_UP_TO])
def test_beyond_the_vector_cache_the_thread_is_not_ranked(
    monkeypatch: pytest.MonkeyPatch, exact_up_to: int
) -> None:
    """A scope larger than the vector cache is ranked by Chroma's index (or exactly from the
    vectors read by id): the thread's vectors are left out there too."""
    monkeypatch.setattr(nearest, "EXACT_UP_TO", exact_up_to)
    store = _chroma(vector_cache_size=2, search_mode="dense")
    _written_with_the_thread(store, monkeypatch)
    hits = store.search(USER_NS, query="alice session", limit=10)
    assert hits and max(h.score or 0.0 for h in hits) < 0.5  # (0.87 for every turn, ranked)
    (best, *_) = store.search(USER_NS, query=SAID[5], limit=1)
    assert best.value["text"] == SAID[5]


def test_the_lift_still_joins_memories_of_the_same_day() -> None:
    store = _chroma()
    _remember(store)
    hits = {h.item.value["text"]: h for h in store.explain(USER_NS, query="pottery class").hits}
    assert hits[SAID[5]].rank == 1
    assert hits[SAID[4]].lift > 0.0  # said the same day as the best hit
    # Four threads, two turns a day: no turn of a day none of the best hits has is lifted.
    assert all(hits[t].lift == 0.0 for t in SAID[:4] if t in hits)
    store.search(USER_NS, query="pottery")
    assert field_key("context.thread", "alice:session-2") not in field_groups(store, TURNS_NS)
