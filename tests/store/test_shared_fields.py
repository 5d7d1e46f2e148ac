"""The shared-field lift (``ChromaStore(field_lift=True)``, the default): with more than one
indexed field, candidates sharing a secondary field's exact value with the best hits are lifted.

Pinned: the lift never lowers a score and never reaches the best hit's (R@1 and a floor keep
their meaning), only acts with more than one field, ignores filtered-out and expired memories,
and the map behind it (:class:`FieldIndex`) stays equal to the stored memories after puts,
updates, deletes, TTL sweeps, restarts and ``forget_user`` (no forgotten value stays; random
sequences by hypothesis too), also while readers and writers race (threads behind a barrier,
``sys.setswitchinterval(1e-6)``, a write landing while a search loads the shards)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma import backend as backend_module
from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.ranking.shared_fields import FieldIndex, field_key, lift, shares
from langgraph_episodic.chroma.testing import field_groups, field_values_held, lexical_loaded

from ._support import (
    CHROMA_BACKENDS,
    EPHEMERAL,
    PERSISTENT,
    FakeClock,
    Orthogonal,
    backend_param,
)

INDEX: dict[str, Any] = {"dims": 2, "embed": Orthogonal(), "fields": ["text", "time"]}
NS = ("memories", "alice")

DAY_TRIP = {
    "trip": {"text": "We went on a kayak trip on the lake", "time": "8 May 2023"},
    "fish": {"text": "Afterwards we grilled fish by the water, tired from the trip",
             "time": "8 May 2023"},
    "sunset": {"text": "The sunset was orange and pink", "time": "8 May 2023"},
    "report": {"text": "The quarterly report is due soon", "time": "2 June 2023"},
    "dentist": {"text": "Dentist appointment moved again", "time": "17 July 2023"},
    "garden": {"text": "Planted tomatoes and basil in the garden", "time": "3 August 2023"},
    "paddle": {"text": "Bought a new paddle for the kayak", "time": "17 July 2023"},
}
QUERIES = ("kayak trip", "kayak", "lake water fish", "report dentist", "tomatoes")


@pytest.fixture(params=CHROMA_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _fill(make_store: Any, memories: dict[str, dict[str, str]], **options: Any) -> Any:
    store = make_store(index=options.pop("index", INDEX), search_mode=None, **options)
    for key, value in memories.items():
        store.put(NS, key, value)
    return store


def _ranked(store: Any, query: str, **kwargs: Any) -> list[tuple[str, float]]:
    return [(r.key, r.score) for r in store.search(NS, query=query, limit=10, **kwargs)]


def _groups(store: Any, ns: tuple[str, ...] = NS) -> dict[tuple[str, int], frozenset[str]]:
    """The map's values of ``ns`` as ``(field, digest) -> item keys``."""
    keys = {
        record_format.item_id(ns, item.key): item.key for item in store.search(ns, limit=1000)
    }
    out = {}
    for (path, digest), docs in field_groups(store, ns).items():
        out[(path, digest)] = frozenset(keys.get(record_format.split_entry_key(d)[0], d) for d in docs)
    return out


def _expected(memories: dict[str, dict[str, str]], fields: tuple[str, ...] = ("text", "time")):
    out: dict[tuple[str, int], set[str]] = {}
    for key, value in memories.items():
        for path in fields:
            if path in value:
                out.setdefault(field_key(path, value[path]), set()).add(key)
    return {k: frozenset(v) for k, v in out.items()}


# ------------------------------------------------------------------ search behaviour


def test_on_by_default(make_store: Any) -> None:
    assert make_store(index=INDEX, search_mode=None).field_lift is True


def test_a_memory_of_the_same_day_joins_the_best_hit(make_store: Any) -> None:
    plain = _fill(make_store, DAY_TRIP, field_lift=False)
    lifted = _fill(make_store, DAY_TRIP)
    before = dict(_ranked(plain, "kayak trip"))
    after = _ranked(lifted, "kayak trip")
    assert max(before, key=before.__getitem__) == "trip"
    assert 0.0 < before["fish"] < before["paddle"]  # one shared word, a longer text
    assert after[0] == ("trip", before["trip"])  # the best hit keeps its place and its score
    assert after[1][0] == "fish" and before["fish"] < after[1][1] < before["trip"]
    # A memory of the same day with nothing of its own for the question is not lifted.
    assert before["sunset"] == 0.0 and dict(after)["sunset"] == 0.0


def test_never_lowers_a_score_never_reaches_the_best(make_store: Any) -> None:
    plain = _fill(make_store, DAY_TRIP, field_lift=False)
    lifted = _fill(make_store, DAY_TRIP)
    for query in QUERIES:
        first = dict(_ranked(plain, query))
        after = _ranked(lifted, query)
        scores = [score for _, score in after]
        assert scores == sorted(scores, reverse=True), query  # monotone
        best = after[0][1]
        assert best == max(first.values()), query  # the best score is unchanged
        for key, score in after:
            assert score >= first[key] - 1e-12, (query, key)
            assert key == after[0][0] or score < best or score == first[key], (query, key)


@pytest.mark.parametrize("floor", [0.05, 0.2, 0.5])
def test_a_floor_keeps_its_meaning(make_store: Any, floor: float) -> None:
    plain = _fill(make_store, DAY_TRIP, field_lift=False)
    lifted = _fill(make_store, DAY_TRIP)
    for query in (*QUERIES, "zebra migration"):
        first = _ranked(plain, query)
        after = _ranked(lifted, query)
        above_before = {key for key, score in first if score >= floor}
        above_after = {key for key, score in after if score >= floor}
        assert above_before <= above_after, query  # nothing above the floor drops below it
        if not first or first[0][1] < floor:
            assert not above_after, query  # an unrelated question still finds nothing


def test_one_indexed_field_is_untouched(make_store: Any) -> None:
    index = {**INDEX, "fields": ["text"]}
    plain = _fill(make_store, DAY_TRIP, index=index, field_lift=False)
    lifted = _fill(make_store, DAY_TRIP, index=index)
    for query in QUERIES:
        assert _ranked(lifted, query) == _ranked(plain, query)


def _fill_per_put(make_store: Any, memories: dict[str, dict[str, str]], **options: Any) -> Any:
    """A store indexing one field (the whole value by default); each put names its fields
    as the library's writers do: the content first, then its context."""
    store = make_store(index={"dims": 2, "embed": Orthogonal()}, search_mode=None, **options)
    for key, value in memories.items():
        store.put(NS, key, value, index=["text", "time"])
    return store


def test_a_one_field_store_lifts_by_the_fields_a_put_indexed(make_store: Any) -> None:
    plain = _fill_per_put(make_store, DAY_TRIP, field_lift=False)
    lifted = _fill_per_put(make_store, DAY_TRIP)
    before = dict(_ranked(plain, "kayak trip"))
    after = _ranked(lifted, "kayak trip")
    assert 0.0 < before["fish"] < before["paddle"]
    assert after[0] == ("trip", before["trip"])
    assert after[1][0] == "fish" and before["fish"] < after[1][1] < before["trip"]
    assert _ranked(lifted, "kayak trip") == _ranked(_fill(make_store, DAY_TRIP), "kayak trip")


def test_whole_value_puts_in_a_one_field_store_are_untouched(make_store: Any) -> None:
    plain = _fill(make_store, DAY_TRIP, index={"dims": 2, "embed": Orthogonal()}, field_lift=False)
    lifted = _fill(make_store, DAY_TRIP, index={"dims": 2, "embed": Orthogonal()})
    for query in QUERIES:
        assert _ranked(lifted, query) == _ranked(plain, query)


@pytest.mark.parametrize("backend", [backend_param(PERSISTENT)])
def test_per_put_fields_lift_the_same_after_a_restart(make_store: Any, reopen: Any) -> None:
    store = _fill_per_put(make_store, DAY_TRIP)
    before = [_ranked(store, q) for q in QUERIES]
    store = reopen(store)
    assert [_ranked(store, q) for q in QUERIES] == before


def test_a_filtered_out_memory_lifts_nothing(make_store: Any) -> None:
    memories = {
        "trip": {**DAY_TRIP["trip"], "kind": "private"},
        "fish": {**DAY_TRIP["fish"], "kind": "public"},
        "report": {**DAY_TRIP["report"], "kind": "public"},
    }
    plain = _fill(make_store, memories, field_lift=False)
    lifted = _fill(make_store, memories)
    flt = {"kind": "public"}
    assert _ranked(lifted, "kayak trip", filter=flt) == _ranked(plain, "kayak trip", filter=flt)


def test_an_expired_memory_lifts_nothing(make_store: Any) -> None:
    clock = FakeClock()
    store = _fill(make_store, {}, ttl={"default_ttl": 1.0}, clock=clock)
    plain = _fill(make_store, {}, ttl={"default_ttl": 1.0}, field_lift=False, clock=clock)
    for s in (store, plain):
        s.put(NS, "trip", DAY_TRIP["trip"], ttl=1.0)
        s.put(NS, "fish", DAY_TRIP["fish"], ttl=None)
        s.put(NS, "report", DAY_TRIP["report"], ttl=None)
    clock.now = 10_000_000_000.0  # far after the trip's expiry
    assert "trip" not in dict(_ranked(store, "kayak trip"))
    assert _ranked(store, "kayak trip") == _ranked(plain, "kayak trip")


# ------------------------------------------------------------------ the map


@pytest.mark.parametrize("backend", [backend_param(EPHEMERAL), backend_param(PERSISTENT)])
def test_the_map_follows_puts_updates_deletes_and_sweeps(make_store: Any) -> None:
    clock = FakeClock()
    store = _fill(make_store, DAY_TRIP, ttl={"default_ttl": 600.0}, clock=clock)
    store.search(NS, query="kayak")  # loads the namespace's shards
    memories = dict(DAY_TRIP)
    assert _groups(store) == _expected(memories)
    store.put(NS, "fish", {"text": "Fish again", "time": "9 May 2023"})
    memories["fish"] = {"text": "Fish again", "time": "9 May 2023"}
    assert _groups(store) == _expected(memories)
    store.delete(NS, "report")
    del memories["report"]
    assert _groups(store) == _expected(memories)
    assert field_key("time", "2 June 2023") not in field_groups(store, NS)
    store.put(NS, "short", {"text": "Short-lived note", "time": "1 Jan 2024"}, ttl=1.0)
    store.search(NS, query="note")
    assert field_key("time", "1 Jan 2024") in field_groups(store, NS)
    clock.advance(seconds=3600.0)
    assert store.sweep_ttl() == 1
    assert _groups(store) == _expected(memories)


@pytest.mark.parametrize("backend", [backend_param(PERSISTENT)])
def test_the_map_is_rebuilt_after_a_restart(make_store: Any, reopen: Any) -> None:
    store = _fill(make_store, DAY_TRIP)
    before = [_ranked(store, q) for q in QUERIES]
    store = reopen(store)
    assert [_ranked(store, q) for q in QUERIES] == before
    assert _groups(store) == _expected(DAY_TRIP)


@pytest.mark.parametrize("backend", [backend_param(EPHEMERAL), backend_param(PERSISTENT)])
def test_forget_user_leaves_no_value_in_the_map(make_store: Any) -> None:
    from langgraph_episodic.privacy import forget_user

    store = _fill(make_store, DAY_TRIP)
    bob = ("memories", "bob")
    store.put(bob, "walk", {"text": "Long walk by the river", "time": "8 May 2023"})
    store.search(NS, query="kayak")
    store.search(bob, query="walk")
    forget_user("alice", store=store, purge=False)
    assert field_groups(store, NS) == {}
    alice_values = {field_key(p, v[p]) for v in DAY_TRIP.values() for p in ("text", "time")}
    held = field_values_held(store)
    assert held == {field_key("text", "Long walk by the river"), field_key("time", "8 May 2023")}
    assert not (alice_values - {field_key("time", "8 May 2023")}) & held
    assert [r.key for r in store.search(bob, query="walk")] == ["walk"]


@pytest.mark.parametrize("backend", [backend_param(PERSISTENT)])
def test_a_write_during_a_load_is_not_lost(make_store: Any, reopen: Any) -> None:
    """A search loading the shards after a restart reads Chroma, a put lands, then the search
    offers its (older) shards back: they must be refused, and the put must be in the map."""
    store = reopen(_fill(make_store, DAY_TRIP))
    paused, resume = threading.Event(), threading.Event()

    def hook(step: str) -> None:
        if step == "load" and threading.current_thread().name == "reader":
            paused.set()
            resume.wait(10)

    backend_module.race_hook = hook
    try:
        reader = threading.Thread(target=lambda: store.search(NS, query="kayak"), name="reader")
        reader.start()
        assert paused.wait(10)
        store.put(NS, "fish", {"text": "Fish again", "time": "9 May 2023"})
        resume.set()
        reader.join(10)
    finally:
        backend_module.race_hook = None
    store.search(NS, query="kayak")
    memories = {**DAY_TRIP, "fish": {"text": "Fish again", "time": "9 May 2023"}}
    assert _groups(store) == _expected(memories)


# ------------------------------------------------------------------ concurrency



def test_readers_never_see_a_half_applied_write(fast_switching: None) -> None:
    """Writers move pairs of memories to a new day under the lock (as a store's commit does);
    readers' snapshots always hold both of a pair on the same day, and groups and keys agree."""
    lock = threading.RLock()
    index = FieldIndex(lock=lock)
    ns = ("u",)
    pairs = [(f"a{n}", f"b{n}") for n in range(6)]
    for a, b in pairs:
        for doc in (a, b):
            index.upsert(ns, doc, [("text", doc), ("time", "day 0")])
    barrier = threading.Barrier(4)
    errors: list[str] = []
    stop = threading.Event()

    def writer(offset: int) -> None:
        barrier.wait()
        for step in range(150):
            a, b = pairs[(step + offset) % len(pairs)]
            day = f"day {step % 7}"
            with lock:  # one commit: both of the pair move together
                index.upsert(ns, a, [("text", a), ("time", day)])
                index.remove(ns, b)
                index.upsert(ns, b, [("text", b), ("time", day)])
        stop.set()

    def reader() -> None:
        barrier.wait()
        while True:
            view = index.snapshot([ns])
            shard = view._shards[0]
            for doc, keys in shard.keys.items():
                for key in keys:
                    if doc not in shard.groups.get(key, {}):
                        errors.append(f"{doc} missing from its group {key}")
            for key, group in shard.groups.items():
                for doc in group:
                    if key not in shard.keys.get(doc, ()):
                        errors.append(f"{doc} in a group it does not hold")
            day_of = {
                doc: next(k for k in keys if k[0] == "time") for doc, keys in shard.keys.items()
            }
            for a, b in pairs:
                if day_of.get(a) != day_of.get(b):
                    errors.append(f"pair {a}/{b} split across days")
            if stop.is_set():
                break

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:5]


@pytest.mark.parametrize("backend", [backend_param(EPHEMERAL), backend_param(PERSISTENT)])
def test_searches_racing_writes_keep_the_score_rules(fast_switching: None, make_store: Any) -> None:
    store = _fill(make_store, DAY_TRIP)
    barrier = threading.Barrier(3)
    errors: list[str] = []

    def writer() -> None:
        barrier.wait()
        for step in range(40):
            store.put(NS, "fish", {"text": "Afterwards we grilled fish", "time": f"{step} May"})
            store.put(NS, "trip", {"text": "kayak trip on the lake", "time": f"{step} May"})

    def reader() -> None:
        barrier.wait()
        for _ in range(60):
            scores = [score for _, score in _ranked(store, "kayak trip")]
            if scores != sorted(scores, reverse=True):
                errors.append(f"not monotone: {scores}")
            if not scores or scores[0] == 0.0:  # only "trip" holds both words
                errors.append(f"the memory being updated was missed: {scores}")
            if len(scores) > 1 and scores[1] >= scores[0]:
                errors.append(f"a lifted memory reached the best hit: {scores}")

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[:5]
    store.search(NS, query="kayak")
    final = {**DAY_TRIP}
    final["fish"] = {"text": "Afterwards we grilled fish", "time": "39 May"}
    final["trip"] = {"text": "kayak trip on the lake", "time": "39 May"}
    assert _groups(store) == _expected(final)


# ------------------------------------------------------------------ the pure parts


def test_field_keys_fold_case_and_spacing_and_list_positions() -> None:
    assert field_key("time", "8 May  2023") == field_key("time", " 8 may 2023 ")
    assert field_key("time", "8 May 2023") != field_key("place", "8 May 2023")
    assert field_key("tags[*].0", "x") == field_key("tags[*].3", "x")
    assert field_key("a.0", "x")[0] == "a.0"  # not a list's element: kept as written


def test_a_snapshot_never_changes(fast_switching: None) -> None:
    index = FieldIndex()
    index.upsert(("u",), "a", [("text", "a"), ("time", "day 1")])
    index.upsert(("u",), "b", [("text", "b"), ("time", "day 1")])
    view = index.snapshot([("u",)])
    before = {k: dict(g) for k, g in view._shards[0].groups.items()}
    index.upsert(("u",), "b", [("text", "b"), ("time", "day 2")])
    index.remove(("u",), "a")
    assert {k: dict(g) for k, g in view._shards[0].groups.items()} == before
    assert index.groups_of(("u",)) == {
        field_key("text", "b"): frozenset({"b"}),
        field_key("time", "day 2"): frozenset({"b"}),
    }


_SCORES = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(_SCORES, min_size=1, max_size=12),
    days=st.lists(st.integers(0, 3), min_size=12, max_size=12),
    m=st.integers(1, 5),
    weight=st.floats(min_value=0.0, max_value=0.99),
)
def test_lift_properties(scores: list[float], days: list[int], m: int, weight: float) -> None:
    index = FieldIndex()
    docs = [f"d{n:02d}" for n in range(len(scores))]
    for doc, day in zip(docs, days, strict=False):
        index.upsert(("u",), doc, [("text", doc), ("time", f"day {day}")])
    fused = sorted(zip(docs, scores, strict=True), key=lambda kv: -kv[1])
    sources = fused[:m]
    view = index.snapshot([("u",)])
    out = lift(fused, sources, view, "text", weight)
    first, after = dict(fused), dict(out)
    best = sources[0][1]
    assert set(after) == set(first)
    assert [s for _, s in out] == sorted(after.values(), reverse=True)
    for doc, score in after.items():
        assert score >= first[doc]  # never lowered
        assert score == first[doc] or score < best  # never reaches the best
        if first[doc] <= 0.0:
            assert score == first[doc]  # no evidence of its own for the question: not lifted
    assert out[0][1] == fused[0][1]  # the best score stays the best
    assert all(0.0 <= s <= 1.0 for s in shares(sources, view, "text").values())


def test_a_memory_with_no_evidence_of_its_own_is_not_lifted() -> None:
    """In a lived-in memory every turn of a day shares the day: a turn that has nothing in
    common with the question (score 0) stays at 0 however good the day's best hit is."""
    index = FieldIndex()
    for doc in ("best", "related", "unrelated"):
        index.upsert(("u",), doc, [("text", doc), ("time", "Monday, 8 May 2023")])
    index.upsert(("u",), "other", [("text", "other"), ("time", "Tuesday, 9 May 2023")])
    fused = [("best", 0.6), ("related", 0.1), ("other", 0.05), ("unrelated", 0.0)]
    out = dict(lift(fused, fused[:1], index.snapshot([("u",)]), "text"))
    assert out["related"] > 0.1 and out["unrelated"] == 0.0


def test_lift_rejects_a_weight_of_one() -> None:
    index = FieldIndex()
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        lift([("a", 0.5)], [("a", 0.5)], index.snapshot([("u",)]), "text", 1.0)


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "put", "delete", "sweep"]),
        st.sampled_from(["k1", "k2", "k3", "k4"]),
        st.sampled_from(["Mon", "Tue", "mon ", None]),
        st.booleans(),  # short-lived (a put) / a search first (loads the shards)
    ),
    max_size=12,
)


@settings(max_examples=25, deadline=None)
@given(ops=_OPS)
def test_the_map_equals_the_stored_memories_after_any_writes(ops: list[Any]) -> None:
    """Random puts (with and without the secondary field, some short-lived), deletes, sweeps
    and searches: the map of a loaded namespace always equals one built from what is stored."""
    from langgraph_episodic.chroma.store import ChromaStore

    clock = [1_000_000.0]
    store = ChromaStore.ephemeral(index=INDEX, ttl={"default_ttl": 600.0}, clock=lambda: clock[0])
    memories: dict[str, dict[str, str]] = {}
    expires: dict[str, float] = {}
    try:
        for action, key, day, flag in ops:
            if action == "put":
                value = {"text": f"note {key}"}
                if day is not None:
                    value["time"] = day
                store.put(NS, key, value, ttl=1.0 if flag else None)
                memories[key] = value
                expires[key] = clock[0] + 60.0 if flag else float("inf")
            elif action == "delete":
                store.delete(NS, key)
                memories.pop(key, None)
            else:
                clock[0] += 120.0
                store.sweep_ttl()
                memories = {k: v for k, v in memories.items() if expires[k] > clock[0]}
            if flag or action == "sweep":
                store.search(NS, query="note")
            if lexical_loaded(store, NS):
                assert _groups(store) == _expected(memories)
    finally:
        store.close()
