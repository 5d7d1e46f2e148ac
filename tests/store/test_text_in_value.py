"""An item that is its own vector record holds no Chroma document: its text is read back from
its value.

Chroma indexes every document for full-text search, which the store never queries, and the
value already holds the text. So a put gives no document for such a record, and a read takes
the text from the value at the record's field path (:func:`.record_format.indexed_text`), as
the put extracted it. Records written before (header :data:`.record_format.HEADED`, or none)
hold the text as their document: they read it from there, and a put over one clears it.
These tests hold the read to the put's extraction over any value and path, and a real store
over records of both kinds, raw bytes included.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.gateway import Gateway
from langgraph_episodic.chroma.plans import extract_texts, tokenized_fields
from langgraph_episodic.chroma.testing import forget_cached_items, namespace_texts

from ._support import CHROMA_BACKENDS, hash_index

NS = ("users", "alice")

_keys = st.sampled_from(["text", "kind", "a", "tags", "n", "we ird", "é"])
_strings = st.one_of(
    st.text(max_size=40),
    st.text(min_size=record_format.HELD_ONCE_FROM, max_size=80),  # held once, in its leaf
    st.just("x" * (record_format.MAX_FLAT_STRING + 1)),  # too long for a leaf
)
_scalars = st.one_of(
    _strings, st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(), st.none(),
)  # fmt: skip
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)
    ),
    max_leaves=8,
)
_paths = st.sampled_from([
    "$", "*", "text", "kind", "we ird", "é", "a.text", "a.*", "tags[*]", "tags[0]", "tags[-1]",
    "tags[*].text", "{text,kind}", "a.{text,n}", "a.tags[0]",
])  # fmt: skip


def stored_record(value: dict[str, Any], path: str) -> dict[str, Any]:
    """What Chroma holds for an item that is its own vector record with text path ``path``."""
    view = record_format.item_metadata(
        NS, "k", value, created_us=1, updated_us=1, expires_at=record_format.NO_EXPIRY,
        ttl=None, n_vectors=1, tag=record_format.ITEM_TAG, path=path,
    )  # fmt: skip
    return record_format.stored_metadata(view, None)


@settings(max_examples=500, deadline=None)
@given(value=st.dictionaries(_keys, _values, max_size=4), path=_paths)
def test_the_text_read_back_is_the_text_the_put_indexed(value: dict[str, Any], path: str) -> None:
    texts = extract_texts(value, tokenized_fields([path]))
    if len(texts) != 1:  # (an item with no text or several is not its own vector record)
        return
    ((indexed_path, text),) = texts
    stored = stored_record(value, indexed_path)
    assert stored["_value"].startswith(record_format.TEXT_IN_VALUE)
    read_path = record_format.path_of(stored)
    assert read_path == indexed_path
    assert record_format.text_of(stored, None, read_path) == text
    # A document Chroma still held (written by another version at the same time) is ignored.
    assert record_format.text_of(stored, "stale text", read_path) == text


def test_records_written_before_read_their_document() -> None:
    stored = stored_record({"text": "port 5432"}, "text")
    before = {**stored, "_value": record_format.HEADED + stored["_value"][1:]}
    assert record_format.text_of(before, "the document", "text") == "the document"
    assert record_format.holds_document(record_format.unfold(before))
    assert not record_format.holds_document(record_format.unfold(stored))
    legacy = {**record_format.unfold(before), "_value": '{"text":"port 5432"}'}
    assert record_format.text_of(legacy, "the document", "text") == "the document"
    assert record_format.holds_document(legacy)


def _raw_vectors(store: Any) -> dict[str, tuple[dict[str, Any], str | None]]:
    got = store.collections["vectors"].get(include=["metadatas", "documents"])
    docs = got["documents"] or [None] * len(got["ids"])
    return {
        vid: (meta, doc) for vid, meta, doc in zip(got["ids"], got["metadatas"], docs, strict=True)
    }


def _read_texts(store: Any) -> dict[str, str]:
    """The texts a namespace's first search indexes, as the store reads them from Chroma."""
    return namespace_texts(store, NS)


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_a_store_writes_no_document_for_an_item_of_one_text(make_store: Any) -> None:
    store = make_store(index=hash_index(fields=["text"]), search_mode=None)  # (hybrid)
    store.put(NS, "one", {"text": "zqxalpha drinks espresso", "kind": "fact"})
    store.put(NS, "long", {"text": "zqxbeta " + "long text " * 10})
    store.put(NS, "whole", {"n": 3, "note": "zqxgamma"}, index=["$"])
    store.put(NS, "two", {"text": "zqxdelta first", "kind": "zqxdelta second"},
              index=["text", "kind"])  # fmt: skip
    raw = _raw_vectors(store)
    own = {record_format.item_id(NS, k) for k in ("one", "long", "whole")}
    assert own <= set(raw)
    assert all(raw[vid][1] is None for vid in own)  # no document
    tagged = [doc for vid, (_, doc) in raw.items() if vid not in own]
    assert sorted(tagged) == ["zqxdelta first", "zqxdelta second"]  # several: documents

    texts = _read_texts(store)
    assert texts[record_format.item_id(NS, "one")] == "zqxalpha drinks espresso"
    assert texts[record_format.item_id(NS, "long")] == "zqxbeta " + "long text " * 10
    assert texts[record_format.item_id(NS, "whole")] == '{"n": 3, "note": "zqxgamma"}'
    forget_cached_items(store)
    for word, key in [("zqxalpha", "one"), ("zqxbeta", "long"), ("zqxgamma", "whole")]:
        assert store.search(NS, query=word, limit=1)[0].key == key


@pytest.mark.parametrize("backend", CHROMA_BACKENDS)
def test_a_put_over_a_record_with_a_document_clears_it(
    make_store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record written when the text was also the document (planted: the header of then,
    the document): it reads its text from the document, and a put over it, read from Chroma
    or from the cache, leaves no document behind."""
    store = make_store(index=hash_index(fields=["text"]))
    rid = record_format.item_id(NS, "k")
    vectors = store.collections["vectors"]
    given: list[Any] = []  # the documents the upserts of vector records are given
    upsert = Gateway.upsert_vectors
    monkeypatch.setattr(Gateway, "upsert_vectors", lambda *a: (given.extend(a[4]), upsert(*a)))
    for cached in (False, True):
        store.put(NS, "k", {"text": "zqxsecret 4711 was the old pin"})
        got = vectors.get(ids=[rid], include=["metadatas", "embeddings"])
        then = {"_value": record_format.HEADED + got["metadatas"][0]["_value"][1:]}
        vectors.update(ids=[rid], metadatas=[then], embeddings=got["embeddings"],
                       documents=["zqxsecret 4711 was the old pin"])  # fmt: skip
        forget_cached_items(store)
        assert _read_texts(store)[rid] == "zqxsecret 4711 was the old pin"
        if cached:
            assert store.get(NS, "k") is not None  # the record of then is now in the cache
        store.put(NS, "k", {"text": "the new pin is elsewhere"})
        ((meta, doc),) = _raw_vectors(store).values()
        assert not doc and "zqxsecret" not in str(meta)
        assert meta["_value"].startswith(record_format.TEXT_IN_VALUE)
        assert _read_texts(store)[rid] == "the new pin is elsewhere"
        # Over a record of now there is nothing to clear, and a document costs Chroma an entry
        # in its full-text index: none is given.
        given.clear()
        store.put(NS, "k", {"text": "a third text"})
        assert given == [None]
        store.delete(NS, "k")
