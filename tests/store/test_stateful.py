"""Hypothesis stateful tests: ChromaStore against a plain dict model, one op at a time and with
threads racing behind a barrier.

The model is what a user may rely on (InMemoryStore's semantics with our documented
differences): the value of each (namespace, key); search without a query returns exactly the
live items under a prefix; ``list_namespaces`` lists exactly the namespaces that hold a live
item; an item put with a TTL is gone once the (fake) clock passes its expiry, a read with
``refresh_ttl`` extends it, ``sweep_ttl`` changes nothing visible.

The concurrent machine runs each step's ops from threads released together by a barrier, with
a tiny thread switch interval. Afterwards each key's value must be one the step could have left
(its value before, or one written in the step; ``None`` if deleted), every read made during the
step must have returned such a value, and listings and searches must agree with the items that
exist. The model then takes the observed values (a linearizable outcome) and goes on.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma.record_format import item_id
from langgraph_episodic.chroma.testing import forget_process_state, known_item_ids

from ._support import FakeClock, hash_index

pytestmark = pytest.mark.timeout(900)  # shrinking a failure on a loaded machine takes minutes

NAMESPACES = [("a",), ("a", "b"), ("b",), ("a", "c", "d")]
PREFIXES = [(), ("a",), ("a", "b"), ("b",), ("a", "c"), ("c",)]
KEYS = ["k0", "k1", "k2", "k3"]
WORDS = ["coffee", "tea", "dark roast", "green", "espresso"]
TTL_MINUTES = [None, None, 1.0, 5.0]

Ref = tuple[tuple[str, ...], str]

namespaces = st.sampled_from(NAMESPACES)
keys = st.sampled_from(KEYS)
values = st.builds(
    lambda n, w, extra: {"n": n, "text": f"{w} {n}"} | ({"extra": extra} if extra else {}),
    st.integers(0, 3),
    st.sampled_from(WORDS),
    st.sampled_from([0, 0, 1]),
)
"""An ``extra`` key on some values: a put over one without it must clear it from the record."""
SETTINGS = settings(
    max_examples=int(os.environ.get("STATEFUL_EXAMPLES", "15")),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _under(ns: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return ns[: len(prefix)] == prefix


class StoreModel(RuleBasedStateMachine):
    """One op at a time against a dict model: (namespace, key) -> (value, ttl, expiry)."""

    index: Any = None
    item_cache_size: int | None = None

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.store = ChromaStore.ephemeral(
            index=self.index,
            search_mode="dense",
            clock=self.clock,
            item_cache_size=self.item_cache_size,
        )
        self.model: dict[Ref, tuple[dict[str, Any], float | None, float | None]] = {}
        self.created: dict[Ref, float] = {}
        """When each live item was created: kept by a put over a live item, not over an
        expired one (the store's documented difference from InMemoryStore)."""

    def teardown(self) -> None:
        self.store.close()

    def live(self) -> dict[Ref, dict[str, Any]]:
        now = self.clock.now
        return {r: v for r, (v, _, exp) in self.model.items() if exp is None or exp >= now}

    def _set(self, ref: Ref, value: dict[str, Any], ttl: float | None) -> None:
        expiry = None if ttl is None else self.clock.now + ttl * 60.0
        if ref not in self.live():
            self.created[ref] = self.clock.now
        self.model[ref] = (value, ttl, expiry)

    def _put_values(self, batch: list[tuple[tuple[str, ...], str, Any]]) -> None:
        """The model after a batch (last write wins; a batch has one time)."""
        final = {(ns, k): v for ns, k, v in batch}
        was_live = set(self.live())
        for ref, v in final.items():
            if v is None:
                self.model.pop(ref, None)
            else:
                if ref not in was_live:
                    self.created[ref] = self.clock.now
                self.model[ref] = (v, None, None)

    # --- writes --------------------------------------------------------------------------------

    @rule(ns=namespaces, key=keys, value=values, ttl=st.sampled_from(TTL_MINUTES))
    def put(self, ns: tuple[str, ...], key: str, value: dict[str, Any], ttl: Any) -> None:
        self.store.put(ns, key, value, ttl=ttl)
        self._set((ns, key), value, ttl)

    @rule(ns=namespaces, key=keys)
    def delete(self, ns: tuple[str, ...], key: str) -> None:
        self.store.delete(ns, key)
        self.model.pop((ns, key), None)

    @rule(
        batch=st.lists(
            st.tuples(namespaces, keys, st.one_of(st.none(), values)), min_size=1, max_size=6
        )
    )
    def put_batch(self, batch: list[tuple[tuple[str, ...], str, Any]]) -> None:
        self.store.batch([PutOp(ns, k, v) for ns, k, v in batch])
        self._put_values(batch)

    @rule()
    def as_a_new_process(self) -> None:
        """Forget everything held in process (what a new process knows: nothing until read)."""
        forget_process_state(self.store)

    # --- time ----------------------------------------------------------------------------------

    @rule(minutes=st.sampled_from([0.5, 1.0, 2.0, 6.0]))
    def advance(self, minutes: float) -> None:
        self.clock.advance(minutes=minutes)

    @rule()
    def sweep(self) -> None:
        self.store.sweep_ttl()
        live = self.live()
        self.model = {r: e for r, e in self.model.items() if r in live}

    # --- reads ---------------------------------------------------------------------------------

    @rule(ns=namespaces, key=keys, refresh=st.booleans())
    def get(self, ns: tuple[str, ...], key: str, refresh: bool) -> None:
        item = self.store.get(ns, key, refresh_ttl=refresh)
        want = self.live().get((ns, key))
        got = None if item is None else item.value
        assert got == want, f"get{(ns, key)}: {got} != {want}"
        if item is not None:
            assert tuple(item.namespace) == ns and item.key == key
            assert abs(item.created_at.timestamp() - self.created[(ns, key)]) < 1e-3
            value, ttl, _ = self.model[(ns, key)]
            if refresh and ttl is not None:  # a read restarts the item's own TTL
                self._set((ns, key), value, ttl)

    @rule(
        prefix=st.sampled_from(PREFIXES),
        flt=st.one_of(
            st.none(), st.builds(lambda n: {"n": n}, st.integers(0, 3)), st.just({"extra": 1})
        ),
    )
    def search(self, prefix: tuple[str, ...], flt: dict[str, Any] | None) -> None:
        got = self.store.search(prefix, filter=flt, limit=100, refresh_ttl=False)
        want = {
            r: v
            for r, v in self.live().items()
            if _under(r[0], prefix) and all(v.get(f) == x for f, x in (flt or {}).items())
        }
        seen = {(tuple(it.namespace), it.key): it.value for it in got}
        assert len(seen) == len(got), "a search returned an item twice"
        assert seen == want

    @precondition(lambda self: self.index is not None)
    @rule(prefix=st.sampled_from(PREFIXES), word=st.sampled_from(WORDS))
    def search_query(self, prefix: tuple[str, ...], word: str) -> None:
        got = self.store.search(prefix, query=word, limit=100, refresh_ttl=False)
        want = {r: v for r, v in self.live().items() if _under(r[0], prefix)}
        assert {(tuple(it.namespace), it.key): it.value for it in got} == want

    @rule(prefix=st.sampled_from(PREFIXES), offset=st.integers(0, 3))
    def search_pages(self, prefix: tuple[str, ...], offset: int) -> None:
        full = self.store.search(prefix, limit=100, refresh_ttl=False)
        page = self.store.search(prefix, limit=2, offset=offset, refresh_ttl=False)
        assert [(it.namespace, it.key) for it in page] == [
            (it.namespace, it.key) for it in full[offset : offset + 2]
        ]

    @rule(prefix=st.sampled_from(PREFIXES), depth=st.one_of(st.none(), st.integers(1, 3)))
    def list_namespaces(self, prefix: tuple[str, ...], depth: int | None) -> None:
        got = self.store.list_namespaces(prefix=prefix or None, max_depth=depth, limit=100)
        nss = {r[0] for r in self.live() if _under(r[0], prefix)}
        want = sorted({ns[:depth] for ns in nss} if depth else nss)
        assert got == want

    @invariant()
    def namespaces_match_items(self) -> None:
        assert self.store.list_namespaces(limit=100) == sorted({r[0] for r in self.live()})

    @invariant()
    def what_the_store_knows_it_holds_is_what_it_holds(self) -> None:
        """Every namespace's :class:`.id_sets.IdSet` holds exactly the items not yet deleted
        or swept (expired ones too: they are in Chroma until the sweep)."""
        for ns in NAMESPACES:
            held = known_item_ids(self.store, ns)
            if held is not None:
                for key in KEYS:
                    assert (item_id(ns, key) in held) == ((ns, key) in self.model), (ns, key)


class UnindexedModel(StoreModel):
    index = None


class IndexedModel(StoreModel):
    index = hash_index()


class NoItemCacheModel(StoreModel):
    """One item record held: a put finds the record it replaces in Chroma, or knows it has
    none (:mod:`langgraph_episodic.chroma.id_sets`), not in the item cache."""

    index = hash_index()
    item_cache_size = 1


TestUnindexed = UnindexedModel.TestCase
TestUnindexed.settings = SETTINGS
TestIndexed = IndexedModel.TestCase
TestIndexed.settings = SETTINGS
TestNoItemCache = NoItemCacheModel.TestCase
TestNoItemCache.settings = SETTINGS


# --- concurrent steps ---------------------------------------------------------------------------

Op = tuple[str, tuple[str, ...], str, Any]
"""(kind, namespace or prefix, key, value): kind is put, delete, get, search or list."""

RACE_NAMESPACES = [*NAMESPACES, *(("a", f"u{i}") for i in range(8))]
"""More namespaces under one prefix: puts and deletes keep adding and removing them while
listings and searches walk them."""
racing_namespaces = st.sampled_from(RACE_NAMESPACES)
racing_ops = st.one_of(
    st.tuples(st.just("put"), racing_namespaces, keys, values),
    st.tuples(st.just("delete"), racing_namespaces, keys, st.none()),
    st.tuples(st.just("get"), racing_namespaces, keys, st.none()),
    st.tuples(st.just("search"), st.sampled_from(PREFIXES), st.just(""), st.none()),
    st.tuples(st.just("list"), st.sampled_from(PREFIXES), st.just(""), st.none()),
)


class ConcurrentModel(RuleBasedStateMachine):
    """Each step: 2-6 ops from threads released together; outcomes must be linearizable."""

    index: Any = None

    def __init__(self) -> None:
        super().__init__()
        self.store = ChromaStore.ephemeral(index=self.index, search_mode="dense")
        self.model: dict[Ref, dict[str, Any]] = {}

    def teardown(self) -> None:
        self.store.close()

    def _call(self, op: Op) -> Any:
        kind, ns, key, value = op
        if kind == "put":
            return self.store.put(ns, key, value)
        if kind == "delete":
            return self.store.delete(ns, key)
        if kind == "get":
            return self.store.get(ns, key)
        if kind == "search":
            return self.store.search(ns, limit=100)
        return self.store.list_namespaces(prefix=ns or None, limit=100)

    def _race(self, ops: list[Op]) -> list[Any]:
        barrier = threading.Barrier(len(ops))
        results: list[Any] = [None] * len(ops)
        errors: list[BaseException] = []

        def run(i: int) -> None:
            barrier.wait()
            try:
                results[i] = self._call(ops[i])
            except BaseException as exc:  # reported below with the op that raised
                errors.append(exc)
                raise

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(ops))]
        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
        finally:
            sys.setswitchinterval(interval)
        assert not any(t.is_alive() for t in threads), "a racing op hung"
        assert not errors, f"racing ops {ops} raised {errors!r}"
        return results

    @rule(ops=st.lists(racing_ops, min_size=2, max_size=6))
    def race(self, ops: list[Op]) -> None:
        before = dict(self.model)
        written: dict[Ref, list[dict[str, Any] | None]] = {}
        for kind, ns, key, value in ops:
            if kind in ("put", "delete"):
                written.setdefault((ns, key), []).append(value)

        def allowed(ref: Ref) -> list[dict[str, Any] | None]:
            return [before.get(ref), *written.get(ref, [])]

        for op, result in zip(ops, self._race(ops), strict=True):
            kind, ns, key, _ = op
            if kind == "get":
                got = None if result is None else result.value
                assert got in allowed((ns, key)), f"{op}: read {got}, allowed {allowed((ns, key))}"
            elif kind == "search":
                for item in result:
                    ref = (tuple(item.namespace), item.key)
                    assert item.value in allowed(ref), f"{op}: {ref} = {item.value}"
            elif kind == "list":
                possible = {r[0] for r in before} | {r[0] for r in written}
                assert set(result) <= possible, f"{op}: listed {result}"
        for ref, values_written in written.items():
            item = self.store.get(*ref)
            got = None if item is None else item.value
            assert got in values_written, f"{ref}: ended as {got}, written {values_written}"
            if got is None:
                self.model.pop(ref, None)
            else:
                self.model[ref] = got

    @invariant()
    def listings_match_items(self) -> None:
        items = self.store.search((), limit=100)
        assert {(tuple(it.namespace), it.key): it.value for it in items} == self.model
        assert self.store.list_namespaces(limit=100) == sorted({r[0] for r in self.model})
        for ns in RACE_NAMESPACES:
            assert {it.key for it in self.store.search(ns, limit=100) if it.namespace == ns} == {
                k for (n, k) in self.model if n == ns
            }


class ConcurrentUnindexed(ConcurrentModel):
    index = None


class ConcurrentIndexed(ConcurrentModel):
    index = hash_index()


TestConcurrentUnindexed = ConcurrentUnindexed.TestCase
TestConcurrentUnindexed.settings = SETTINGS
TestConcurrentIndexed = ConcurrentIndexed.TestCase
TestConcurrentIndexed.settings = SETTINGS
