"""The fast paths of a namespace's first load give what the plain code gave: language
detection over a text's words, and a lexical shard built in one pass instead of one ``add`` a
document (kept here as the reference)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma.ranking.lexical import LexicalIndex, _Shard
from langgraph_episodic.language import analysis
from langgraph_episodic.language.analysis import detect, words

from ._support import unpacked

WORDS = st.sampled_from(
    ["ich", "und", "the", "is", "müller", "straße", "haus", "dog", "in", "was", "an", "x", ""]
)


def reference_detect(tokens: list[str]) -> str:
    """The plain code :func:`detect` replaced."""
    german = sum(t in analysis._GERMAN_HINTS for t in tokens)
    english = sum(t in analysis._ENGLISH_HINTS for t in tokens)
    if german != english:
        return "de" if german > english else "en"
    return "de" if any(ch in analysis._GERMAN_LETTERS for t in tokens for ch in t) else "en"


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS | st.text(max_size=8), max_size=12))
def test_detect_equals_the_plain_code(tokens: list[str]) -> None:
    assert detect(tokens) == reference_detect(tokens)
    text = " ".join(tokens)
    assert detect(words(text)) == reference_detect(words(text))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.lists(WORDS, max_size=8)),
        max_size=10,
    )
)
def test_a_built_shard_equals_one_built_by_add(docs: list[tuple[str, list[str]]]) -> None:
    index = LexicalIndex()
    texts = [(doc_id, " ".join(ws)) for doc_id, ws in docs]
    built = index.build_shard(texts)
    reference = _Shard()
    for doc_id, text in texts:
        reference.add(doc_id, index.tokenizer(text))
    assert built.packed and built.frozen  # a packed shard: only its arrays
    assert built.n_docs() == reference.n_docs()
    assert built.base is not None
    assert list(built.base.ids) == list(reference.lengths)  # positions in the same order
    assert built.items() == reference.items()
    assert built.total_length == reference.total_length
    # Unpacked for a write, it holds what one built by add() holds.
    thawed = unpacked(built)
    assert thawed.postings == reference.postings
    assert [list(p) for p in thawed.postings.values()] == [
        list(reference.postings[term]) for term in thawed.postings
    ]  # each posting's documents in the same order
    assert {d: set(t) for d, t in thawed.terms.items()} == {
        d: set(t) for d, t in reference.terms.items()
    }
    assert thawed.lengths == reference.lengths and list(thawed.lengths) == list(reference.lengths)
    assert thawed.total_length == reference.total_length
    # And it scores as the reference does, term by term and for the whole vocabulary.
    packed, plain = LexicalIndex(), LexicalIndex()
    packed.put_shard(("u",), built)
    plain.put_shard(("u",), reference)
    vocabulary = {term for p in (reference.postings,) for term in p} | {"unheard"}
    for query in [{term: 1.0} for term in sorted(vocabulary)] + [dict.fromkeys(vocabulary, 1.0)]:
        assert packed.score_terms(query, [("u",)]).top(20) == plain.score_terms(
            query, [("u",)]
        ).top(20)
        assert (
            packed.score_terms(query, [("u",)]).max_score
            == plain.score_terms(query, [("u",)]).max_score
        )
