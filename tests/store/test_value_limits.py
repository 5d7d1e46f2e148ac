"""Size limits: a value or indexed text over the store's limit is refused before anything is
written (the whole batch), with an error naming the limit and the fix; limits are options of
every constructor, and ``None`` turns one off."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.plans import DEFAULT_MAX_INDEXED_BYTES, DEFAULT_MAX_VALUE_BYTES

from ._support import DIMS

NS = ("docs",)
INDEX = {"dims": DIMS, "embed": HashEmbeddings(DIMS), "fields": ["text"]}
MiB = 1024 * 1024


def _store(**kwargs: Any) -> ChromaStore:
    return ChromaStore.ephemeral(index=INDEX, **kwargs)


def _keep_what_is_stored(store: ChromaStore) -> None:
    item = store.get(NS, "kept")
    assert item is not None and item.value == {"text": "original"}
    assert store.get(NS, "new") is None and store.get(NS, "big") is None
    assert store.verify().ok


def test_a_value_over_the_default_limit_is_refused_and_nothing_is_written() -> None:
    store = _store()
    store.put(NS, "kept", {"text": "original"})
    big = {"text": "short", "body": "x" * DEFAULT_MAX_VALUE_BYTES}
    with pytest.raises(ValueError) as caught:
        store.put(NS, "kept", big)
    message = str(caught.value)
    assert "max_value_bytes" in message and "1.0 MiB" in message and "nothing was written" in message
    with pytest.raises(ValueError, match="max_value_bytes"):
        store.batch([PutOp(NS, "new", {"text": "fine"}), PutOp(NS, "big", big)])
    _keep_what_is_stored(store)


def test_indexed_text_over_the_default_limit_is_refused_unless_unindexed() -> None:
    store = _store()
    store.put(NS, "kept", {"text": "original"})
    long_text = {"text": "word " * (DEFAULT_MAX_INDEXED_BYTES // 5 + 1)}
    with pytest.raises(ValueError) as caught:
        store.batch([PutOp(NS, "new", {"text": "fine"}), PutOp(NS, "big", long_text)])
    message = str(caught.value)
    assert "max_indexed_bytes" in message and "index=False" in message and "['text']" in message
    _keep_what_is_stored(store)
    store.put(NS, "big", long_text, index=False)  # kept, just not embedded
    got = store.get(NS, "big")
    assert got is not None and got.value == long_text


def test_exactly_at_the_limits_is_accepted() -> None:
    store = _store(max_value_bytes=1000, max_indexed_bytes=100)
    text = "é" * 50  # 100 bytes of UTF-8
    value = {"text": text, "pad": ""}
    value["pad"] = "p" * (1000 - len('{"text":"","pad":""}') - 100)
    store.put(NS, "at", value)
    assert store.get(NS, "at") is not None
    with pytest.raises(ValueError, match="max_indexed_bytes=100"):
        store.put(NS, "over", {"text": text + "a"})
    with pytest.raises(ValueError, match="max_value_bytes=1000"):
        store.put(NS, "over", {**value, "pad": value["pad"] + "p"})


def test_limits_are_options_of_the_constructors_and_none_turns_them_off(tmp_path: Path) -> None:
    small = ChromaStore.persistent(tmp_path / "s", index=INDEX, max_value_bytes=2000)
    with small, pytest.raises(ValueError, match="max_value_bytes=2000"):
        small.put(NS, "k", {"text": "x", "body": "y" * 2000})
    with ChromaStore.persistent(tmp_path / "s", index=INDEX, max_value_bytes=None,
                                max_indexed_bytes=None) as unlimited:  # fmt: skip
        unlimited.put(NS, "k", {"text": "w " * DEFAULT_MAX_INDEXED_BYTES, "body": "y" * 2 * MiB})
        assert unlimited.get(NS, "k") is not None


@pytest.mark.parametrize("bad", [0, -1, 1.5, "1MB", True])
def test_a_bad_limit_is_a_clear_error(bad: object) -> None:
    with pytest.raises(ValueError, match="positive number of bytes or None"):
        _store(max_value_bytes=bad)
    with pytest.raises(ValueError, match="max_indexed_bytes"):
        _store(max_indexed_bytes=bad)


async def test_async_puts_are_refused_the_same_way() -> None:
    store = _store(max_value_bytes=100)
    await store.aput(NS, "kept", {"text": "original"})
    with pytest.raises(ValueError, match="max_value_bytes=100"):
        await store.abatch([PutOp(NS, "new", {"text": "ok"}), PutOp(NS, "big", {"text": "x" * 100})])
    _keep_what_is_stored(store)


class _HoldLongTexts(HashEmbeddings):
    """Embeds like ``HashEmbeddings``, but a text longer than 1,000 characters waits for
    ``release`` (a large put held in its embedding, the longest part of its work)."""

    def __init__(self) -> None:
        super().__init__(DIMS)
        self.holding = threading.Event()
        self.release = threading.Event()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if any(len(t) > 1000 for t in texts):
            self.holding.set()
            assert self.release.wait(30)
        return super().embed_documents(texts)


def test_other_writers_and_readers_go_on_while_a_large_value_is_embedded() -> None:
    embed = _HoldLongTexts()
    store = ChromaStore.ephemeral(index={"dims": DIMS, "embed": embed, "fields": ["text"]})
    store.put(NS, "kept", {"text": "original"})
    large = threading.Thread(
        target=store.put, args=(NS, "large", {"text": "word " * (DEFAULT_MAX_INDEXED_BYTES // 5 - 1)})
    )
    large.start()
    try:
        assert embed.holding.wait(30)
        for i in range(20):  # none of these waits for the large put
            store.put(("other",), f"m{i}", {"text": f"small memory {i}"})
        assert len(store.search(("other",), query="small memory", limit=50)) == 20
        assert store.get(NS, "large") is None
    finally:
        embed.release.set()
        large.join(30)
    assert store.get(NS, "large") is not None
