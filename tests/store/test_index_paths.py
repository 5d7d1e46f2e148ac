"""``index=`` on put and ``fields`` of the index config: malformed paths are refused before
anything is written, with an error naming the accepted forms; verify lists the items whose
index fields hold no text (no vector, so no query finds them)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore, HashEmbeddings

from ._support import DIMS, ONE_CHROMA

NS = ("docs",)
FORMS = "'$'"
"""A piece of the accepted forms every message lists."""

MALFORMED: list[tuple[str, Any, type[Exception]]] = [
    ("unclosed-bracket", ["a[[["], ValueError),
    ("stray-bracket", ["a]"], ValueError),
    ("bad-index", ["a[x]"], ValueError),
    ("empty-index", ["a[]"], ValueError),
    ("text-after-index", ["a[0]b"], ValueError),
    ("unclosed-brace", ["{a,b"], ValueError),
    ("empty-brace-field", ["{a,}"], ValueError),
    ("brace-not-last", ["{a,b}.c"], ValueError),
    ("double-dot", ["a..b"], ValueError),
    ("leading-dot", [".a"], ValueError),
    ("trailing-dot", ["a."], ValueError),
    ("empty-path", [""], ValueError),
    ("leading-index", ["[0]"], ValueError),
    ("string", "text", TypeError),
    ("string-in-tuple", [["text"]], TypeError),
    ("number", [3], TypeError),
    ("true", True, TypeError),
    ("dict", {"text": True}, TypeError),
]


@pytest.mark.parametrize("backend", ONE_CHROMA)
@pytest.mark.parametrize(("index", "exc_type"),
                         [pytest.param(*case[1:], id=case[0]) for case in MALFORMED])  # fmt: skip
def test_a_malformed_index_is_refused_and_nothing_is_written(
    store: BaseStore, index: Any, exc_type: type[Exception]
) -> None:
    store.put(NS, "k", {"text": "original", "a": "x"})
    with pytest.raises(exc_type) as caught:
        store.put(NS, "k", {"text": "replaced", "a": "y"}, index=index)
    message = str(caught.value)
    assert "index" in message and FORMS in message and "a.b" in message, message
    with pytest.raises(exc_type):
        store.batch([PutOp(NS, "other", {"text": "new"}), PutOp(NS, "k2", {"a": "1"}, index=index)])
    item = store.get(NS, "k")
    assert item is not None and item.value == {"text": "original", "a": "x"}
    assert store.get(NS, "other") is None and store.get(NS, "k2") is None
    assert store.verify().ok


VALID = [
    ["text"], ["a.b"], ["arr[*]"], ["arr[0]"], ["arr[-1]"], ["arr[*].name"], ["{text,a.b}"],
    ["*"], ["$"], ["text", "a.b"], [], ("text",), ["a b"], ["ünïcode"],
]


@pytest.mark.parametrize("backend", ONE_CHROMA)
@pytest.mark.parametrize("index", VALID, ids=repr)
def test_every_documented_form_is_accepted(store: BaseStore, index: Any) -> None:
    value = {"text": "tea", "a": {"b": "coffee"}, "arr": [{"name": "x"}], "a b": "y", "ünïcode": "z"}
    store.put(NS, "k", value, index=index)
    item = store.get(NS, "k")
    assert item is not None and item.value == value


def test_malformed_fields_in_the_index_config_are_refused() -> None:
    for fields, exc_type in ((["a[[["], ValueError), ("text", TypeError)):
        with pytest.raises(exc_type) as caught:
            ChromaStore.ephemeral(index={"dims": DIMS, "embed": HashEmbeddings(DIMS), "fields": fields})
        assert "fields" in str(caught.value) and FORMS in str(caught.value)


@pytest.mark.parametrize("backend", ONE_CHROMA)
def test_verify_lists_items_whose_index_fields_hold_no_text(store: ChromaStore) -> None:
    store.put(NS, "found", {"text": "green tea"}, index=["text"])
    store.put(NS, "absent", {"title": "green tea"}, index=["text"])
    store.put(NS, "unindexed", {"title": "green tea"}, index=False)
    store.put(NS, "empty-list", {"title": "green tea"}, index=[])
    scored = {r.key for r in store.search(NS, query="green tea") if r.score is not None}
    assert scored == {"found"}  # the others have no vector
    report = store.verify()
    assert report.unsearchable_items == ((NS, "absent", ("text",)),)
    assert report.ok, "a legal item with no text at its paths needs no repair"
    store.put(NS, "absent", {"text": "black tea"}, index=["text"])
    assert store.verify().unsearchable_items == ()
    store.put(NS, "found", {"title": "none"}, index=["text"])
    store.delete(NS, "found")
    assert store.verify().unsearchable_items == ()


def test_in_memory_store_accepts_a_malformed_path_silently_the_documented_difference() -> None:
    reference = InMemoryStore(index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})
    reference.put(NS, "k", {"a": "green tea"}, index=["a[[["])
    hits = reference.search(NS, query="green tea")
    assert [(h.key, h.score) for h in hits] == [("k", None)]  # stored, no vector
