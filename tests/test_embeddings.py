"""The embedders: the packaged model offline, thread settings, function wrapping, hashing."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import numpy as np
import pytest
import torch

from langgraph_episodic import default_embeddings
from langgraph_episodic.embeddings import (
    MODEL_DIMS,
    HashEmbeddings,
    SentenceTransformerEmbeddings,
    as_embeddings,
    simple_hash_embedding,
)


@pytest.mark.model
def test_packaged_model_gives_normalised_384_dim_vectors() -> None:
    emb = default_embeddings()
    assert emb is default_embeddings()  # loaded once per process
    vectors = emb.embed_documents(["I love pizza", "The meeting is on Tuesday", "I love pizza"])
    assert len(vectors) == 3 and all(len(v) == MODEL_DIMS for v in vectors)
    assert vectors[0] == vectors[2]
    assert math.isclose(sum(x * x for x in vectors[0]), 1.0, rel_tol=1e-4)
    query = emb.embed_query("favourite food")
    sims = [sum(a * b for a, b in zip(query, v, strict=True)) for v in vectors[:2]]
    assert sims[0] > sims[1]


class _ThreadRecorder:
    """Stands in for the loaded model: records torch's thread count inside each encode."""

    def __init__(self, barrier: threading.Barrier | None = None) -> None:
        self.seen: list[int] = []
        self.barrier = barrier

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        self.seen.append(torch.get_num_threads())
        if self.barrier is not None:
            self.barrier.wait(timeout=10)
        return np.ones((len(texts), 2))


@pytest.fixture
def caller_threads() -> Iterator[int]:
    """torch runs with 3 threads in the caller (not our default), restored afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(before)


def test_threads_apply_to_our_calls_only(caller_threads: int) -> None:
    emb = SentenceTransformerEmbeddings(num_threads=2, query_threads=1, small_call=4)
    emb._model = recorder = _ThreadRecorder()
    emb.embed_query("one query")
    assert torch.get_num_threads() == caller_threads
    emb.embed_documents([f"text number {i}" for i in range(10)])
    assert torch.get_num_threads() == caller_threads
    assert recorder.seen == [1, 2]


def test_zero_threads_leaves_torch_alone(caller_threads: int) -> None:
    emb = SentenceTransformerEmbeddings(num_threads=0)
    emb._model = recorder = _ThreadRecorder()
    emb.embed_documents(["a", "b"])
    assert recorder.seen == [caller_threads]
    with pytest.raises(ValueError, match="num_threads"):
        SentenceTransformerEmbeddings(num_threads=-1)


def test_by_default_each_call_takes_its_threads_from_the_machine(
    caller_threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unpinned, a large call gets the caller's count on a quiet 16-CPU machine, one thread when
    every core is busy, and the free cores in between; a query gets one thread."""
    from langgraph_episodic import encode_threads

    monkeypatch.delenv("LANGGRAPH_EPISODIC_TORCH_THREADS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    load = [0.0]
    monkeypatch.setattr(os, "getloadavg", lambda: (load[0], 0.0, 0.0))
    monkeypatch.setattr(encode_threads._OWN_LOAD, "sample", lambda: 0.0)
    monkeypatch.setattr(encode_threads._OTHERS, "sample", lambda: load[0])  # others' CPU use
    emb = SentenceTransformerEmbeddings()
    emb._model = recorder = _ThreadRecorder()
    batch = [f"text number {i}" for i in range(50)]
    for load[0] in (0.2, 16.0, 14.0):
        emb.embed_documents(batch)
    emb.embed_query("one query")
    assert recorder.seen == [caller_threads, 1, 2, 1]
    assert torch.get_num_threads() == caller_threads


def test_a_pinned_count_wins_over_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_episodic import encode_threads

    monkeypatch.setattr(os, "getloadavg", lambda: (100.0, 0.0, 0.0))
    monkeypatch.setattr(encode_threads._OTHERS, "sample", lambda: 100.0)
    monkeypatch.setenv("LANGGRAPH_EPISODIC_TORCH_THREADS", "2")
    from_env = SentenceTransformerEmbeddings()
    assert (from_env.threads_for(50), from_env.threads_for(1)) == (2, 2)
    assert SentenceTransformerEmbeddings(num_threads=3).threads_for(50) == 3
    monkeypatch.setenv("LANGGRAPH_EPISODIC_TORCH_THREADS", "auto")
    assert SentenceTransformerEmbeddings().threads_for(50) == 1  # others use 100 cores: busy
    monkeypatch.setenv("LANGGRAPH_EPISODIC_TORCH_THREADS", "many")
    with pytest.raises(ValueError, match=r"LANGGRAPH_EPISODIC_TORCH_THREADS='many'.*auto"):
        SentenceTransformerEmbeddings()


def test_overlapping_encodes_restore_the_callers_setting(caller_threads: int) -> None:
    """Two encodes in two threads, both inside torch at once: the caller's count comes back."""
    sys.setswitchinterval(1e-6)
    try:
        emb = SentenceTransformerEmbeddings(num_threads=1)
        emb._model = recorder = _ThreadRecorder(threading.Barrier(2))
        workers = [threading.Thread(target=emb.embed_query, args=(f"q{i}",)) for i in range(2)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=20)
    finally:
        sys.setswitchinterval(0.005)
    assert recorder.seen == [1, 1]
    assert torch.get_num_threads() == caller_threads


def test_the_device_is_the_users_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    import sentence_transformers

    calls: list[dict[str, object]] = []

    class FakeModel:
        def __init__(self, path: str, **kwargs: object) -> None:
            calls.append({"path": path, **kwargs})

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", FakeModel)
    for device in ("cpu", "cuda:1", None):
        SentenceTransformerEmbeddings(device=device).load()
    assert [c["device"] for c in calls] == ["cpu", "cuda:1", None]
    assert all(c["local_files_only"] is True for c in calls)


@pytest.mark.model
def test_loading_changes_nothing_in_the_process() -> None:
    """No environment variable, warnings filter, logging level, progress-bar switch or torch
    setting of the host process is changed by loading the model and embedding."""
    import logging
    import warnings

    from transformers.utils import logging as hf_logging

    env = dict(os.environ)
    filters = list(warnings.filters)
    levels = {n: logging.getLogger(n).level for n in ("transformers", "sentence_transformers")}
    bars = hf_logging.is_progress_bar_enabled()
    threads = torch.get_num_threads()
    hook = hf_logging.set_tqdm_hook(None)
    hf_logging.set_tqdm_hook(hook)

    emb = SentenceTransformerEmbeddings(device="cpu").load()
    assert emb.loaded and emb.model.device.type == "cpu"
    assert len(emb.embed_query("hello")) == MODEL_DIMS

    assert dict(os.environ) == env
    assert list(warnings.filters) == filters
    assert {n: logging.getLogger(n).level for n in levels} == levels
    assert hf_logging.is_progress_bar_enabled() == bars
    assert torch.get_num_threads() == threads
    assert hf_logging.set_tqdm_hook(hook) is hook


OFFLINE_PROBE = """
import os, socket, sys
for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ.pop(key, None)
attempts = []
def refuse(self, address):
    attempts.append(address)
    raise OSError("no network in this test")
socket.socket.connect = refuse
from langgraph_episodic.embeddings import SentenceTransformerEmbeddings
emb = SentenceTransformerEmbeddings()
vector = emb.embed_query("hello")
print(len(vector), attempts, sorted(k for k in os.environ if "OFFLINE" in k))
"""


@pytest.mark.model
def test_the_packaged_model_loads_offline_quietly_without_env_vars() -> None:
    env = {k: v for k, v in os.environ.items() if "OFFLINE" not in k}
    done = subprocess.run(
        [sys.executable, "-c", OFFLINE_PROBE], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(MODEL_DIMS), "[]", "[]"]
    assert "Loading weights" not in done.stderr and "Warning" not in done.stderr, done.stderr


def test_hash_embedding_is_deterministic_across_processes() -> None:
    code = "from langgraph_episodic.embeddings import simple_hash_embedding as h; print(h('fix the bug', 16))"
    runs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    assert len(runs) == 1
    assert runs.pop().strip() == str(simple_hash_embedding("fix the bug", 16))


def test_hash_embedding_relates_texts_that_share_words() -> None:
    def cos(a: str, b: str) -> float:
        x, y = simple_hash_embedding(a), simple_hash_embedding(b)
        return sum(p * q for p, q in zip(x, y, strict=True))

    assert cos("fix the login bug", "login bug fixed") > cos("fix the login bug", "weather is sunny")
    assert simple_hash_embedding("???") == [0.0] * 64
    with pytest.raises(ValueError, match="dim"):
        simple_hash_embedding("x", 0)


def test_as_embeddings_accepts_single_and_batch_functions() -> None:
    single = as_embeddings(lambda text: [float(len(text)), 1.0])
    batch = as_embeddings(lambda texts: [[float(len(t)), 1.0] for t in texts])
    for emb in (single, batch):
        assert emb.embed_documents(["ab", "abc"]) == [[2.0, 1.0], [3.0, 1.0]]
        assert emb.embed_query("abcd") == [4.0, 1.0]
    same = HashEmbeddings(8)
    assert as_embeddings(same) is same
    with pytest.raises(TypeError, match="Embeddings or a function"):
        as_embeddings(42)


def test_overlapping_loads_hide_their_own_bars_and_leave_no_hook(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two models loading at once in two threads: each one's transformers bar is hidden, a bar
    made outside a load is not, and afterwards transformers has the hook it had before."""
    import time

    import sentence_transformers
    from transformers.utils import logging as hf_logging

    hidden: list[bool] = []

    class FakeModel:
        def __init__(self, path: str, **kwargs: object) -> None:
            bar = hf_logging.tqdm(range(3), desc="Loading weights")
            hidden.append(bool(getattr(bar, "disable", True)))
            time.sleep(0.05)

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", FakeModel)
    before = hf_logging.set_tqdm_hook(None)
    hf_logging.set_tqdm_hook(before)
    sys.setswitchinterval(1e-6)
    try:
        loaders = [threading.Thread(target=SentenceTransformerEmbeddings().load) for _ in range(2)]
        for t in loaders:
            t.start()
        for t in loaders:
            t.join(timeout=20)
    finally:
        sys.setswitchinterval(0.005)
    assert hidden == [True, True]
    assert hf_logging.set_tqdm_hook(before) is before
    if hf_logging.is_progress_bar_enabled():  # the user's own bars still show
        outside = hf_logging.tqdm(range(3), desc="user's own bar", disable=False)
        assert getattr(outside, "disable", None) is False
        outside.close()
