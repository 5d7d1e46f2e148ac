"""Tenant isolation: no read, filter, query, listing or delete crosses a namespace boundary.

Namespaces match by whole labels, always: ``("users", "alice")`` never sees
``("users", "alice2")``, a literal ``*`` label is not a wildcard in search, and labels with
characters that stores like to use as separators or patterns stay distinct.
"""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.store.base import BaseStore

from ._support import hash_index, key_set, refs

TENANTS = [
    ("users", "alice"),
    ("users", "alice2"),
    ("users", "alice", "private"),
    ("users", "al"),
    ("users", "Alice"),
    ("users", "alice "),
    ("users", "*"),
    ("users", "bob"),
]


@pytest.fixture
def tenants(store: BaseStore) -> BaseStore:
    for ns in TENANTS:
        owner = "/".join(ns)
        store.put(ns, "secret", {"text": f"the secret of {owner}", "owner": owner, "n": len(owner)})
        store.put(
            ns, f"own-{owner}", {"text": "shared words everyone uses", "owner": owner, "n": 1}
        )
    return store


def _owners(items: Any) -> set[str]:
    return {item.value["owner"] for item in items}


def test_get_and_search_stay_inside_the_namespace(tenants: BaseStore) -> None:
    for ns in TENANTS:
        owner = "/".join(ns)
        item = tenants.get(ns, "secret")
        assert item is not None and item.value["owner"] == owner
        below = {"/".join(t) for t in TENANTS if t[: len(ns)] == ns}
        assert _owners(tenants.search(ns, limit=100)) == below, ns
        assert _owners(tenants.search(ns, query="the secret of users/alice2", limit=100)) == below
        assert _owners(tenants.search(ns, query="shared words", limit=100)) == below


def test_prefix_alice_never_sees_alice2(tenants: BaseStore) -> None:
    found = tenants.search(("users", "alice"), limit=100)
    assert _owners(found) == {"users/alice", "users/alice/private"}
    assert tenants.get(("users", "alice"), "own-users/alice2") is None


def test_filters_cannot_reach_another_namespace(tenants: BaseStore) -> None:
    for filter in ({"owner": "users/alice2"}, {"owner": {"$ne": "users/alice"}},
                   {"n": {"$gt": 0}}, {"text": "the secret of users/bob"}):  # fmt: skip
        got = tenants.search(("users", "alice"), filter=filter, limit=100)
        assert _owners(got) <= {"users/alice", "users/alice/private"}, filter
        with_query = tenants.search(("users", "alice"), query="secret", filter=filter, limit=100)
        assert _owners(with_query) <= {"users/alice", "users/alice/private"}, filter


def test_literal_star_label_is_not_a_wildcard_in_search(tenants: BaseStore) -> None:
    assert _owners(tenants.search(("users", "*"), limit=100)) == {"users/*"}
    assert _owners(tenants.search(("users", "*"), query="secret", limit=100)) == {"users/*"}
    # ... but it is one in list_namespaces, where "*" means any label
    assert tenants.list_namespaces(prefix=("users", "*"), max_depth=2) == sorted(
        {t[:2] for t in TENANTS}
    )


def test_list_namespaces_respects_label_boundaries(tenants: BaseStore) -> None:
    assert tenants.list_namespaces(prefix=("users", "alice")) == [
        ("users", "alice"),
        ("users", "alice", "private"),
    ]
    assert tenants.list_namespaces(prefix=("users", "ali")) == []
    assert tenants.list_namespaces(suffix=("alice",)) == [("users", "alice")]


def test_delete_touches_one_namespace_only(tenants: BaseStore) -> None:
    tenants.delete(("users", "alice"), "secret")
    assert tenants.get(("users", "alice"), "secret") is None
    for ns in TENANTS[1:]:
        assert tenants.get(ns, "secret") is not None, ns


SEPARATOR_LABELS = [
    (("a", "b/c"), ("a", "b", "c")),
    (("a", "b|c"), ("a", "b", "c")),
    (("a", "b:c"), ("a", "b", "c")),
    (("a", "b\\c"), ("a", "b", "c")),
    (("a", "b c"), ("a", "b", "c")),
    (("a", "b,c"), ("a", "b", "c")),
    (("a", "b\x1fc"), ("a", "b", "c")),
    (("a", "b\tc"), ("a", "b", "c")),
    (("a", "b#c"), ("a", "b", "c")),
]


@pytest.mark.parametrize(("joined", "split"), SEPARATOR_LABELS, ids=lambda ns: repr("|".join(ns)))
def test_separator_characters_do_not_merge_labels(
    store: BaseStore, joined: tuple[str, ...], split: tuple[str, ...]
) -> None:
    store.put(joined, "k", {"who": "joined"})
    store.put(split, "k", {"who": "split"})
    got = store.get(joined, "k")
    assert got is not None and got.value == {"who": "joined"}
    got = store.get(split, "k")
    assert got is not None and got.value == {"who": "split"}
    assert refs(store.search(joined, limit=10)) == {(joined, "k")}
    assert refs(store.search(split, limit=10)) == {(split, "k")}
    assert refs(store.search(("a", "b"), limit=10)) == {(split, "k")}
    assert store.list_namespaces(prefix=("a", "b")) == [split]
    assert sorted(store.list_namespaces()) == sorted([joined, split])


def test_keys_and_namespaces_do_not_collide(store: BaseStore) -> None:
    # an id built as "<namespace>/<key>" would merge these
    store.put(("a",), "x/y", {"who": "key with slash"})
    store.put(("a", "x"), "y", {"who": "deeper namespace"})
    store.put(("a",), "x", {"who": "plain"})
    store.put(("a", "x", "y"), "z", {"who": "deepest"})
    for ns, key, who in [(("a",), "x/y", "key with slash"), (("a", "x"), "y", "deeper namespace"),
                         (("a",), "x", "plain"), (("a", "x", "y"), "z", "deepest")]:  # fmt: skip
        item = store.get(ns, key)
        assert item is not None and item.value == {"who": who}, (ns, key)
    assert key_set(store.search(("a", "x"), limit=10)) == {"y", "z"}
    assert len(store.search(("a",), limit=10)) == 4


PATTERN_LABELS = ["a%", "a_", "a*", "a?", "a[b]", "a+", "^a", "a$", "(a)", "a{1}", "a\\d"]


def test_pattern_characters_are_literal(store: BaseStore) -> None:
    for label in PATTERN_LABELS:
        store.put(("p", label), "k", {"label": label})
    store.put(("p", "ab"), "k", {"label": "ab"})
    store.put(("p", "a"), "k", {"label": "a"})
    store.put(("p", "abc"), "k", {"label": "abc"})
    for label in PATTERN_LABELS:
        found = store.search(("p", label), limit=100)
        assert [it.value["label"] for it in found] == [label], label
        assert store.list_namespaces(prefix=("p", label)) == [("p", label)]


def test_unicode_labels_are_compared_exactly(store: BaseStore) -> None:
    composed, decomposed = "caf\u00e9", "cafe\u0301"  # NFC and NFD spellings of "café"
    labels = [composed, decomposed, "CAFÉ", "用户", "пользователь", "😀", "ß", "ss", "ı", "i"]
    for label in labels:
        store.put(("u", label), "k", {"label": label})
    for label in labels:
        assert [it.value["label"] for it in store.search(("u", label), limit=100)] == [label]
        got = store.get(("u", label), "k")
        assert got is not None and got.value == {"label": label}
    assert store.list_namespaces(prefix=("u",)) == sorted(("u", label) for label in labels)


def test_ephemeral_stores_are_independent() -> None:
    from langgraph_episodic import ChromaStore

    first = ChromaStore.ephemeral(index=hash_index(), search_mode="dense")
    second = ChromaStore.ephemeral(index=hash_index(), search_mode="dense")
    try:
        first.put(("users", "alice"), "k", {"text": "only in the first store"})
        assert second.get(("users", "alice"), "k") is None
        assert second.search(("users",), query="only in the first store") == []
        assert second.list_namespaces() == []
    finally:
        first.close()
        second.close()
