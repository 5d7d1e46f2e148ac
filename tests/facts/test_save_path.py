"""What one save through the memory tool costs: the store batches it runs and the texts the
embedding model computes. A fact change reads once, writes once and reads its lineage once
after the write (the repair); a new fact reads once and writes once; every text is computed
once. On InMemoryStore and ChromaStore, sync and async."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
from langgraph.store.base import BaseStore, Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore
from langgraph_episodic.embeddings import LocalEmbeddings, simple_hash_embedding
from langgraph_episodic.facts import current_facts
from langgraph_episodic.tools import create_memory_tools
from tests.store._support import switching_every_microsecond
from tests.tools.conftest import DIMS, Call

from .conftest import Clock, user

NS = ("memories", "alice")


class HashModel(LocalEmbeddings):
    """The test vectors behind the packaged models' embedding path, counting every text it
    computes."""

    def __init__(self) -> None:
        self.computed: Counter[str] = Counter()

    def _vectors(self, texts: list[str]) -> Any:
        self.computed.update(texts)
        return np.asarray([simple_hash_embedding(t, DIMS) for t in texts])


def counted(backend: str, model: HashModel, batches: list[str]) -> BaseStore:
    """A store of ``backend`` that notes each batch as ``"read"`` or ``"write"`` (it puts)."""
    base: Any = InMemoryStore if backend == "memory" else ChromaStore

    def note(ops: Iterable[Op]) -> list[Op]:
        ops = list(ops)
        batches.append("write" if any(isinstance(op, PutOp) for op in ops) else "read")
        return ops

    class Counted(base):
        def batch(self, ops: Iterable[Op]) -> list[Result]:
            return list(super().batch(note(ops)))

        async def abatch(self, ops: Iterable[Op]) -> list[Result]:
            return list(await super().abatch(note(ops)))

    index = {"dims": DIMS, "embed": model}
    store: BaseStore = Counted(index=index) if backend == "memory" else Counted.ephemeral(index=index)
    return store


async def test_a_fact_change_reads_once_writes_once_and_embeds_each_text_once(
    backend: str, call: Call, clock: Clock
) -> None:
    model, batches = HashModel(), list[str]()
    store = counted(backend, model, batches)
    save, _ = create_memory_tools(store=store, clock=clock)
    await call(save, {"information": "Ich wohne in München."}, user("alice"))  # the same day
    batches.clear()
    model.computed.clear()
    answer = await call(save, {"information": "Ich bin nach Berlin gezogen."}, user("alice"))
    assert answer == "Gespeichert: Ich bin nach Berlin gezogen. (ersetzt: „Ich wohne in München.“)"
    assert batches == ["read", "write", "read"]  # candidates; both versions; the lineage
    assert model.computed["Ich bin nach Berlin gezogen."] == 1
    assert set(model.computed.values()) == {1}, model.computed
    assert [rec.text for _, rec in current_facts(store, NS, "Wo wohne ich?")] == [
        "Ich bin nach Berlin gezogen."]


async def test_a_new_fact_reads_once_and_writes_once(
    backend: str, call: Call, clock: Clock
) -> None:
    model, batches = HashModel(), list[str]()
    store = counted(backend, model, batches)
    save, _ = create_memory_tools(store=store, clock=clock)
    await call(save, {"information": "Ich wohne in München."}, user("alice"))
    batches.clear()
    model.computed.clear()
    await call(save, {"information": "Ich spiele Schach."}, user("alice"))
    assert batches == ["read", "write"]
    assert model.computed["Ich spiele Schach."] == 1
    assert set(model.computed.values()) == {1}, model.computed


def test_the_kept_question_vectors_answer_each_thread_its_own_text() -> None:
    """The vectors of the last questions are shared by every thread using the model: threads
    started together, switching every microsecond, each asking and storing texts of its own
    (and one they all share), always get their own text's vector."""
    model = HashModel()
    start = threading.Barrier(8)
    wrong: list[str] = []

    def work(n: int) -> None:
        start.wait()
        for i in range(60):
            text = f"thread {n} says {i % 12}"
            got = [model.embed_query(text), *model.embed_documents([text, "shared"])]
            want = [simple_hash_embedding(t, DIMS) for t in (text, text, "shared")]
            if not np.allclose(got, want):
                wrong.append(text)

    with switching_every_microsecond():
        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert wrong == []
