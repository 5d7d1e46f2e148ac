"""What a namespace's first search builds at once (its keyword shard, with the texts analyzed
together by :func:`.analysis.analyze_many`, and its field shard) equals what puts build one
document at a time: the same terms, shards and rankings."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.ranking.lexical import LexicalIndex
from langgraph_episodic.chroma.ranking.shared_fields import FieldIndex, field_key
from langgraph_episodic.chroma.testing import backend_of
from langgraph_episodic.language import analysis
from langgraph_episodic.language.analysis import analyze, analyze_many, analyzer

from ._support import hash_index

_SAMPLE = """
    I you the and is not ich und nicht der die war bin hat man Caroline's dog's dogs chasing
    Häuser Haus Käse Kaese Straße Strasse Füße Lieblingseditor Fahrradschlauchventil
    Donaudampfschifffahrt Neovim ECONNREFUSED snake_case don't isn't ΣΊΣΥΦΟΣ ﬁle Ｆｕｌｌ 5432
    x's 's running runs donaudampfschifffahrtsgesellschaftskapitänsmütze
"""
WORDS = [*_SAMPLE.split(), "a" * 70]
texts = st.lists(
    st.lists(st.sampled_from(WORDS) | st.text(min_size=1, max_size=12), max_size=14).map(" ".join),
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(texts=texts, language=st.sampled_from(["auto", "en", "de"]), compounds=st.booleans())
def test_many_texts_get_the_terms_of_each_text(
    texts: list[str], language: analysis.Language, compounds: bool
) -> None:
    expected = [analyze(t, language=language, compounds=compounds) for t in texts]
    assert list(analyze_many(texts, language=language, compounds=compounds)) == expected
    assert list(analyzer(language, compounds=compounds).many(texts)) == expected


def test_many_texts_across_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Words first met in one batch are known in the next; order is kept across batches.
    monkeypatch.setattr(analysis, "_BATCH", 3)
    texts = [" ".join(WORDS[i : i + 5]) for i in range(len(WORDS))] * 2
    assert list(analyze_many(texts)) == [analyze(t) for t in texts]


def test_unknown_language_is_refused() -> None:
    french: Any = "fr"
    with pytest.raises(ValueError, match="language must be one of"):
        list(analyze_many(["x"], language=french))


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(
        st.tuples(st.sampled_from([f"d{i}" for i in range(12)]), texts.map(" ".join)),
        max_size=30,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
)
def test_a_shard_built_at_once_ranks_as_one_built_by_puts(
    docs: list[tuple[str, str]], query: str
) -> None:
    ns = ("users", "u1")
    by_puts = LexicalIndex()
    for doc_id, text in docs:
        by_puts.upsert(ns, doc_id, text)
    at_once = LexicalIndex()
    at_once.load(ns, docs)
    plain = LexicalIndex(tokenizer=lambda text: analyze(text))  # no batch form: text by text
    plain.load(ns, docs)
    k = len(docs) + 1
    expected = by_puts.search(query, [ns], k=k)
    assert at_once.search(query, [ns], k=k) == expected
    assert plain.search(query, [ns], k=k) == expected
    assert at_once.doc_count([ns]) == by_puts.doc_count([ns])


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.tuples(
            st.sampled_from([f"d{i}" for i in range(8)]),
            st.lists(
                st.tuples(
                    st.sampled_from(["text", "context.day", "tags[*].0", "tags[*].1"]),
                    st.sampled_from(["8 May", " 8  may", "Rome", "rome ", ""]),
                ),
                max_size=4,
            ),
        ),
        max_size=20,
    )
)
def test_a_field_shard_built_at_once_is_one_built_by_adds(
    docs: list[tuple[str, list[tuple[str, str]]]],
) -> None:
    built = FieldIndex.build_shard(docs)
    added = FieldIndex.build_shard([])
    for doc_id, rows in docs:
        added.add(doc_id, [field_key(path, text) for path, text in rows])
    assert built.keys == added.keys
    assert built.groups == added.groups
    assert list(built.groups) == list(added.groups)
    assert built.several == added.several


def _shapes(lexical: Any, fields: Any) -> tuple[Any, ...]:
    """Everything a built (lexical, field) shard holds, orders included."""
    return (
        [(term, list(p.items())) for term, p in lexical.postings.items()],
        list(lexical.terms.items()),
        list(lexical.lengths.items()),
        lexical.total_length,
        list(fields.groups.items()),
        list(fields.keys.items()),
        fields.several,
    )


def _all_at_once(store: ChromaStore, ns: tuple[str, ...]) -> tuple[Any, ...]:
    """The shards as built from every record of ``ns`` at once (one namespace of many)."""
    backend = backend_of(store)
    texts: dict[str, list[tuple[int, str, str]]] = {}
    for row in backend.gateway.namespace_vectors(ns, embeddings=False):
        key, _, index = record_format.split_vector_id(row.vid)
        texts.setdefault(key, []).append((index, row.text, row.path))
    every = [(key, sorted(parts)) for key, parts in texts.items()]
    lexical = backend.state.lexical.build_shard(
        (key, "\n".join(t for _, t, _ in parts)) for key, parts in every
    )
    fields = FieldIndex.build_shard(
        (key, [(path, t) for _, t, path in parts]) for key, parts in every
    )
    return _shapes(lexical, fields)


@pytest.mark.parametrize("page", [1, 2, 3, 5, 1_000])
@pytest.mark.parametrize("n_fields", [1, 3])
def test_a_first_load_page_by_page_builds_the_shards_of_all_at_once(
    page: int, n_fields: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pages of 1-5 records split items of 3 indexed texts across pages (built again from
    # every record), or end on item boundaries (built page by page).
    fields = ["text", "topic", "tags[*]"][:n_fields]
    store = ChromaStore.ephemeral(
        collection=f"first-build-{uuid.uuid4().hex[:12]}", index=hash_index(fields=fields)
    )
    ns = ("users", "u1")
    words = WORDS[:12]
    for i in range(17):
        value = {
            "text": " ".join(words[(i * k) % len(words)] for k in range(1, 5)),
            "topic": words[i % len(words)],
            "tags": [words[(i + 3) % len(words)], "Lieblingseditor"],
        }
        store.put(ns, f"k{i}", value)
    store.put(ns, "k3", {"text": "rewritten deploy", "topic": "Käse", "tags": []})
    store.delete(ns, "k5")
    backend = backend_of(store)
    monkeypatch.setattr(backend, "gateway", dataclasses.replace(backend.gateway, max_batch=page))
    expected = _all_at_once(store, ns)
    rows, lexical, field_shard = backend._stream(ns, embeddings=True, fit=10_000)
    assert _shapes(lexical, field_shard) == expected
    assert rows is not None and sorted(row.vid for row in rows) == sorted(
        row.vid for row in backend.gateway.namespace_vectors(ns, embeddings=True)
    )
    # More records than the vector cache holds: none is kept, the shards are the same.
    over, lexical, field_shard = backend._stream(ns, embeddings=True, fit=len(rows) - 1)
    assert over is None and _shapes(lexical, field_shard) == expected
    # and the store's search answers from them as from a fresh load
    found = [item.key for item in store.search(ns, query="deploy Käse editor", limit=20)]
    assert found and "k5" not in found
    store.close()
