"""Differential test: random op sequences on InMemoryStore and ChromaStore side by side.

Hypothesis drives puts, deletes, gets, searches (prefix, filter, query, limit, offset) and
namespace listings against both stores and a plain dict model, comparing answers modulo the
documented differences: search without a query is compared as a set (and ChromaStore's order
is checked against the model's write order, newest first); namespace listings are checked
against the model (InMemoryStore also lists namespaces whose items were all deleted);
timestamps are not compared.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore

from ._support import hash_index

NAMESPACES = [("t", "a"), ("t", "a", "x"), ("t", "a2"), ("t", "b"), ("u",)]
PREFIXES = [(), ("t",), ("t", "a"), ("t", "a2"), ("t", "a", "x"), ("u",), ("t", "c")]
KEYS = ["k0", "k1", "k2", "k3"]
WORDS = ["apple", "banana", "cherry", "delta", "echo", "fox", "golf"]
TAGS = ["red", "green", "blue"]

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
values = st.fixed_dictionaries(
    {"text": texts, "n": st.integers(0, 5), "tag": st.sampled_from(TAGS)},
    optional={"extra": st.fixed_dictionaries({"k": st.integers(0, 2)})},
)
numbers = st.integers(-1, 6) | st.sampled_from([1.5, 2.5])
filters = st.one_of(
    st.none(),
    st.builds(lambda t: {"tag": t}, st.sampled_from(TAGS)),
    st.builds(lambda t: {"tag": {"$ne": t}}, st.sampled_from(TAGS)),
    st.builds(lambda n: {"n": n}, st.integers(0, 5)),
    st.builds(lambda op, n: {"n": {op: n}},
              st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]), numbers),
    st.builds(lambda t, n: {"tag": t, "n": {"$gte": n}}, st.sampled_from(TAGS), numbers),
    st.builds(lambda k: {"extra": {"k": k}}, st.integers(0, 2)),
    st.builds(lambda lo, hi: {"n": {"$gt": lo, "$lte": hi}}, numbers, numbers),
)  # fmt: skip
labels = st.sampled_from(["t", "a", "a2", "x", "b", "u", "*"])


def _clean(items: Any) -> set[tuple[tuple[str, ...], str, str]]:
    return {(it.namespace, it.key, repr(sorted(it.value.items()))) for it in items}


def _ns_matches(ns: tuple[str, ...], path: tuple[str, ...], suffix: bool) -> bool:
    if len(ns) < len(path):
        return False
    pairs = (
        zip(reversed(ns), reversed(path), strict=False) if suffix else zip(ns, path, strict=False)
    )
    return all(p in ("*", n) for n, p in pairs)


class StorePair(RuleBasedStateMachine):
    """InMemoryStore, ChromaStore and a dict model receiving the same ops."""

    def __init__(self) -> None:
        super().__init__()
        index = hash_index(fields=["text"])
        self.reference = InMemoryStore(index=index)
        self.chroma = ChromaStore.ephemeral(
            index=index, collection=f"diff-{uuid.uuid4().hex}", search_mode="dense"
        )
        self.model: dict[tuple[tuple[str, ...], str], dict[str, Any]] = {}
        self.written_at: dict[tuple[tuple[str, ...], str], int] = {}
        self.clock = itertools.count()

    def teardown(self) -> None:
        self.chroma.close()

    @initialize(items=st.lists(st.tuples(st.sampled_from(NAMESPACES), st.sampled_from(KEYS), values),
                               min_size=3, max_size=10))  # fmt: skip
    def seed(self, items: list[tuple[tuple[str, ...], str, dict[str, Any]]]) -> None:
        for ns, key, value in items:
            self.put(ns, key, value)

    @rule(ns=st.sampled_from(NAMESPACES), key=st.sampled_from(KEYS), value=values)
    def put(self, ns: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        self.reference.put(ns, key, value)
        self.chroma.put(ns, key, value)
        self.model[(ns, key)] = value
        self.written_at[(ns, key)] = next(self.clock)

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data())
    def delete_existing(self, data: st.DataObject) -> None:
        ns, key = data.draw(st.sampled_from(sorted(self.model)))
        self.delete(ns, key)

    @rule(ns=st.sampled_from(NAMESPACES), key=st.sampled_from(KEYS))
    def delete(self, ns: tuple[str, ...], key: str) -> None:
        self.reference.delete(ns, key)
        self.chroma.delete(ns, key)
        self.model.pop((ns, key), None)
        self.written_at.pop((ns, key), None)

    @rule(ns=st.sampled_from(NAMESPACES), key=st.sampled_from(KEYS))
    def get(self, ns: tuple[str, ...], key: str) -> None:
        want = self.model.get((ns, key))
        for store in (self.reference, self.chroma):
            item = store.get(ns, key)
            assert (item.value if item else None) == want, type(store).__name__
            if item is not None:
                assert (item.namespace, item.key) == (ns, key)

    @rule(prefix=st.sampled_from(PREFIXES), filter=filters,
          limit=st.integers(0, 6), offset=st.integers(0, 6))  # fmt: skip
    def search_without_query(
        self, prefix: tuple[str, ...], filter: Any, limit: int, offset: int
    ) -> None:
        full = self.chroma.search(prefix, filter=filter, limit=1000)
        ref_full = self.reference.search(prefix, filter=filter, limit=1000)
        assert _clean(full) == _clean(ref_full), (prefix, filter)
        # ChromaStore: newest write first, ties by (namespace, key)
        order = sorted(full, key=lambda it: (-self.written_at[(it.namespace, it.key)],
                                             it.namespace, it.key))  # fmt: skip
        assert [(i.namespace, i.key) for i in full] == [(i.namespace, i.key) for i in order]
        page = self.chroma.search(prefix, filter=filter, limit=limit, offset=offset)
        assert _clean(page) == _clean(full[offset : offset + limit])
        ref_page = self.reference.search(prefix, filter=filter, limit=limit, offset=offset)
        assert len(ref_page) == len(page)

    @rule(prefix=st.sampled_from(PREFIXES), filter=filters, query=texts,
          limit=st.integers(1, 6), offset=st.integers(0, 4))  # fmt: skip
    def search_with_query(
        self, prefix: tuple[str, ...], filter: Any, query: str, limit: int, offset: int
    ) -> None:
        full = self.chroma.search(prefix, query=query, filter=filter, limit=1000)
        ref_full = self.reference.search(prefix, query=query, filter=filter, limit=1000)
        assert _clean(full) == _clean(ref_full), (prefix, filter, query)
        want = {(it.namespace, it.key): it.score for it in ref_full}
        for it in full:
            ref_score = want[(it.namespace, it.key)]
            assert it.score is not None and ref_score is not None
            assert abs(it.score - ref_score) < 1e-5, (it.key, it.score, ref_score)
        got_scores = [it.score or 0.0 for it in full]
        assert all(a >= b - 1e-6 for a, b in itertools.pairwise(got_scores))
        page = self.chroma.search(prefix, query=query, filter=filter, limit=limit, offset=offset)
        ref_page = self.reference.search(
            prefix, query=query, filter=filter, limit=limit, offset=offset
        )
        assert len(page) == len(ref_page)
        for a, b in zip(page, ref_page, strict=True):
            assert a.score is not None and b.score is not None
            assert abs(a.score - b.score) < 1e-5

    @rule(prefix=st.none() | st.lists(labels, min_size=1, max_size=3).map(tuple),
          suffix=st.none() | st.lists(labels, min_size=1, max_size=2).map(tuple),
          max_depth=st.none() | st.integers(1, 3),
          limit=st.integers(1, 8), offset=st.integers(0, 3))  # fmt: skip
    def list_namespaces(
        self, prefix: Any, suffix: Any, max_depth: Any, limit: int, offset: int
    ) -> None:
        live = {ns for ns, _ in self.model}
        found = [ns for ns in live if (prefix is None or _ns_matches(ns, prefix, False))
                 and (suffix is None or _ns_matches(ns, suffix, True))]  # fmt: skip
        if max_depth is not None:
            found = [ns[:max_depth] for ns in found]
        expected = sorted(set(found))[offset : offset + limit]
        kwargs = {"prefix": prefix, "suffix": suffix, "max_depth": max_depth}
        got = self.chroma.list_namespaces(**kwargs, limit=limit, offset=offset)
        assert got == expected, kwargs
        everything = self.reference.list_namespaces(**kwargs, limit=1000)
        assert set(got) <= set(everything)


# No shrinking: each step is a real Chroma call and shrinking a failure took minutes; the
# failing sequence (at most 10 + 20 steps) is printed as it was found.
StorePair.TestCase.settings = settings(
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    max_examples=30,
    stateful_step_count=20,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
test_stores_agree = StorePair.TestCase
