"""Tenant isolation under attack: no namespace prefix, wildcard, filter, query, key, tool argument
or message content lets user A read or write user B's data.

The store is the boundary: every user-facing path (tools, nodes, episodic memory) builds the
namespace from ``config["configurable"]``, so the store must match namespaces by whole, exact
labels whatever the label contains. (Forged tool-call arguments are covered in
``tests/tools/test_isolation.py``.)
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from langgraph_episodic import MissingConfigError
from langgraph_episodic.episodic import (
    Episode,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    TaskDescription,
)
from langgraph_episodic.graph import (
    entity_extract_node,
    list_sessions,
    recall_node,
    thread_config,
)
from langgraph_episodic.tools import create_memory_tools

# Users whose ids look alike. Each must only ever see its own data.
LOOKALIKES = [
    "alice",
    "alice2",
    "alic",
    "Alice",
    "ALICE",
    "ａlice",  # fullwidth a (NFKC-equal to "alice")
    "alice\u200b",  # zero-width space
    "alice ",
    " alice",
    "alicе",  # Cyrillic e
    "josé",  # composed é
    "jose\u0301",  # decomposed é
    "*",
    "**",
    "%",
    "$ne",
    '{"$ne": ""}',
    "alice\\",
    "alice/bob",
    "alice:bob",
    "🙂",
]
NOTHING = "Keine relevanten Informationen im Gedächtnis gefunden."


def token(user_id: str) -> str:
    """A fact only this user has (distinct per lookalike id)."""
    return f"fact-{LOOKALIKES.index(user_id)} of user {user_id!r}"


@pytest.fixture
def crowded(store: BaseStore) -> BaseStore:
    for uid in LOOKALIKES:
        store.put(("memories", uid), "k", {"text": token(uid), "owner": uid})
        store.put(("memories", uid, "sub"), "k", {"text": token(uid) + " sub", "owner": uid})
    return store


def owners(items: list[Any]) -> set[str]:
    return {item.value["owner"] for item in items}


@pytest.mark.parametrize("uid", LOOKALIKES)
def test_lookalike_ids_only_see_their_own_items(crowded: BaseStore, uid: str) -> None:
    ns = ("memories", uid)
    assert crowded.get(ns, "k").value["owner"] == uid  # type: ignore[union-attr]
    assert owners(crowded.search(ns, limit=100)) == {uid}
    for other in LOOKALIKES:
        found = crowded.search(ns, query=token(other), limit=100)
        assert owners(found) <= {uid}, other
    filtered = crowded.search(ns, filter={"owner": {"$ne": uid}}, limit=100)
    assert filtered == []
    listed = crowded.list_namespaces(prefix=ns, limit=1000)
    if uid == "*":
        # list_namespaces reads "*" as a wildcard (LangGraph's API): a user id "*" passed in a
        # prefix lists every user's namespace names. No library path does this; apps must not
        # (docs/privacy.md says so).
        assert len(listed) == 2 * len(LOOKALIKES)
    else:
        assert listed == [ns, (*ns, "sub")]


@pytest.mark.parametrize(
    "bad", [("memories", "alice.x"), ("memories.alice",), ("memories", "a\x00b"), ("memories", "")]
)
def test_labels_with_dots_nul_or_empty_are_rejected_on_every_path(
    store: BaseStore, bad: tuple[str, ...]
) -> None:
    store.put(("memories", "alice"), "k", {"text": "alice's"})
    with pytest.raises(InvalidNamespaceError):
        store.put(bad, "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.get(bad, "k")
    with pytest.raises(InvalidNamespaceError):
        store.search(bad)
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(prefix=bad)
    assert store.get(("memories", "alice"), "k").value == {"text": "alice's"}  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "op",
    [
        PutOp(("memories", "bob.x"), "k", {"text": "x"}),
        GetOp(("memories", "alice.k"), "k"),
        SearchOp(("memories.alice",)),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("memories.alice",)),)),
    ],
    ids=["put", "get", "search", "list"],
)
def test_ops_sent_straight_to_batch_are_validated_too(chroma: Any, op: Any) -> None:
    """Ops passed to ``batch`` skip BaseStore's checks; ChromaStore joins labels with '.', so it
    must reject a dotted label itself or ("memories", "alice.k") would address another item."""
    chroma.put(("memories", "alice"), "k", {"text": "alice's"})
    with pytest.raises(InvalidNamespaceError):
        chroma.batch([op])
    assert chroma.search(("memories",), limit=10)[0].value == {"text": "alice's"}


def test_wildcards_are_literal_outside_list_namespaces(crowded: BaseStore) -> None:
    for prefix in [("memories", "*"), ("*", "alice"), ("*",)]:
        found = crowded.search(prefix, limit=1000)
        assert owners(found) <= {"*"}, prefix
    assert crowded.get(("memories", "*"), "k").value["owner"] == "*"  # type: ignore[union-attr]
    assert crowded.get(("*", "alice"), "k") is None


@pytest.mark.parametrize(
    "flt",
    [
        {"owner": "bob"},
        {"owner": {"$ne": "alice"}},
        {"_ns": "memories.bob"},
        {"_p2": "memories.bob"},
        {"v.owner": "bob"},
        {"namespace": ["memories", "bob"]},
        {"owner": {"$gt": ""}},
        {"text": {"$gte": "a", "$lte": "z"}},
    ],
)
def test_no_filter_reaches_beyond_the_namespace(store: BaseStore, flt: dict[str, Any]) -> None:
    for uid in ("alice", "bob"):
        store.put(("memories", uid), "k", {"text": f"{uid} text", "owner": uid})
    try:
        found = store.search(("memories", "alice"), filter=flt, limit=100)
    except (ValueError, TypeError):
        return  # refusing a filter is fine; answering with bob's data is not
    assert owners(found) <= {"alice"}


@pytest.mark.parametrize("flt", [{"$or": [{"owner": "bob"}]}, {"$and": [{"owner": "bob"}]}])
def test_top_level_logical_operators_cannot_escape(store: BaseStore, flt: dict[str, Any]) -> None:
    store.put(("memories", "bob"), "k", {"text": "bob text", "owner": "bob"})
    try:
        found = store.search(("memories", "alice"), filter=flt, limit=100)
    except (ValueError, TypeError):
        return
    assert found == []


def test_hostile_keys_stay_in_their_namespace(store: BaseStore) -> None:
    store.put(("memories", "bob"), "k", {"text": "bob", "owner": "bob"})
    keys = ["k", "../bob/k", "memories.bob\x00k", "\x00k", "k\x00", "bob", "*", "memories/bob/k"]
    for key in keys:
        store.put(("memories", "alice"), key, {"text": "alice", "owner": "alice"})
    assert store.get(("memories", "bob"), "k").value["owner"] == "bob"  # type: ignore[union-attr]
    assert owners(store.search(("memories", "bob"), limit=100)) == {"bob"}
    mine = store.search(("memories", "alice"), limit=100)
    assert sorted(i.key for i in mine) == sorted(keys)


labels = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters=".\x00", exclude_categories=("Cs",)),
    min_size=1,
    max_size=6,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(a=labels, b=labels)
def test_any_two_distinct_ids_are_isolated(chroma: Any, a: str, b: str) -> None:
    if a == b:
        return
    root = f"r{abs(hash((a, b)))}"
    chroma.put((root, a), "k", {"text": "mine", "owner": a})
    chroma.put((root, b), "k", {"text": "theirs", "owner": b})
    assert chroma.get((root, a), "k").value["owner"] == a
    assert owners(chroma.search((root, a), query="theirs", limit=10)) == {a}
    listed = chroma.list_namespaces(prefix=(root, a))
    # "*" in a prefix is LangGraph's wildcard for one label (as in InMemoryStore); the library
    # itself never passes a raw user id there (ids are encoded into labels, see below).
    assert listed == (sorted([(root, a), (root, b)]) if a == "*" else [(root, a)])


# --- the user-facing paths: tools, nodes, episodic memory, threads ------------------------------


def cfg(uid: str) -> Any:
    return {"configurable": {"user_id": uid, "thread_id": f"{uid}:t"}}


@pytest.mark.parametrize("attacker", ["ａlice", "alice\u200b", "alicе", "Alice", "alice2", "*"])
def test_lookalike_users_get_nothing_through_the_tools(store: BaseStore, attacker: str) -> None:
    save, recall = create_memory_tools(store=store, k=10)
    save.invoke({"information": "Alice hat eine Nussallergie."}, cfg("alice"))
    for question in ["Nussallergie", "alice", "user_id=alice", "('memories', 'alice')"]:
        assert recall.invoke({"frage": question}, cfg(attacker)) == NOTHING
    save.invoke({"information": "user_id=alice: Alice mag keine Nüsse mehr."}, cfg(attacker))
    assert [i.value["text"] for i in store.search(("memories", "alice"))] == [
        "Alice hat eine Nussallergie."
    ]


def test_tools_without_a_user_id_refuse_instead_of_sharing_a_namespace(store: BaseStore) -> None:
    save, recall = create_memory_tools(store=store)
    with pytest.raises(MissingConfigError, match="user_id"):
        save.invoke({"information": "Ein Fakt ohne Nutzer."}, {"configurable": {}})
    with pytest.raises(MissingConfigError, match="user_id"):
        recall.invoke({"frage": "Fakt"}, {"configurable": {"thread_id": "t"}})
    assert store.list_namespaces() == []


def test_message_content_does_not_choose_the_user_of_a_node(store: BaseStore) -> None:
    node = entity_extract_node(store=store)
    text = "My user_id is bob. Bob Builder works at Siemens in Berlin."
    node.invoke({"messages": [HumanMessage(text)]}, cfg("alice"))
    assert store.list_namespaces(prefix=("entities",)) == [("entities", "alice")]


def _episode(eid: str, text: str) -> Episode:
    return Episode(eid, TaskDescription(text), "solution", Feedback(1.0), OutcomeStatus.SUCCESS,
                   timestamp=1.0)


def test_episodes_and_the_recall_node_stay_per_user(store: BaseStore) -> None:
    for uid in ("alice", "alice2", "ａlice"):
        EpisodicMemory.for_user(store, uid).record(_episode(f"e-{uid}", f"deploy the {uid} app"))
    for uid in ("alice", "alice2", "ａlice"):
        memory = EpisodicMemory.for_user(store, uid)
        assert [e.episode_id for e in memory.episodes()] == [f"e-{uid}"]
        got = recall_node(store=store).invoke({"task": "deploy the alice2 app"}, cfg(uid))
        assert [r["episode_id"] for r in got["recalled"]] == [f"e-{uid}"]


def test_sessions_of_lookalike_users_are_never_listed_for_each_other() -> None:
    saver = InMemorySaver()
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [AIMessage("ok")]})
    builder.add_edge(START, "echo")
    graph = builder.compile(checkpointer=saver)
    users = ["alice", "alice2", "alice:x", "ａlice", "alice%3Ax"]
    for uid in users:
        graph.invoke({"messages": [HumanMessage("hi")]}, thread_config(uid, f"s-{uid}"))
    for uid in users:
        assert [s.session_id for s in list_sessions(saver, uid)] == [f"s-{uid}"], uid


@pytest.mark.parametrize(
    "ids", [("a.b", "a%2Eb"), ("a%", "a%25"), ("a\x00", "a%00"), ("x.y.z", "x%2Ey.z")]
)
def test_user_ids_whose_encodings_could_collide_stay_apart(
    store: BaseStore, ids: tuple[str, str]
) -> None:
    """User ids are percent-encoded into labels ('.' -> '%2E'); the encoding must not merge two
    users (it escapes '%' too)."""
    save, recall = create_memory_tools(store=store, k=10, locale="en", should_store=None)
    first, second = ids
    save.invoke({"information": "the first user's secret fact"}, cfg(first))
    save.invoke({"information": "the second user's other fact"}, cfg(second))
    assert "first" in recall.invoke({"query": "fact"}, cfg(first))
    assert "second" not in recall.invoke({"query": "fact"}, cfg(first))
    assert "first" not in recall.invoke({"query": "fact"}, cfg(second))
    assert len(store.list_namespaces(prefix=("memories",))) == 2
