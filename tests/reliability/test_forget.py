"""forget_user: afterwards nothing of the user is reachable, and every other user keeps everything.

Each user's data is written through every path the library has (tools, episodic memory, the
graph nodes, profiles, working memory, output log, a deeper and a custom namespace, checkpoint
threads), then ``forget_user`` runs, then every read path is tried: ``get``, ``search``,
``list_namespaces``, the tools, the nodes and (for Chroma) the raw collections.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore

from langgraph_episodic._config import namespace_label
from langgraph_episodic.chroma.testing import record_namespace
from langgraph_episodic.episodic import (
    Episode,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)
from langgraph_episodic.graph import (
    CustomerHistory,
    EpisodeMemories,
    OutputLog,
    UserProfiles,
    entity_extract_node,
    open_checkpointer,
    recall_node,
    record_episode_node,
    select_strategy_node,
    thread_config,
)
from langgraph_episodic.privacy import (
    USER,
    ForgetReport,
    aforget_user,
    forget_user,
    on_forget,
)
from langgraph_episodic.tools import create_memory_tools

from .conftest import (
    all_items,
    cached_vector_rows,
    hash_index,
    lexical_doc_count,
    make_store,
    raw_records,
    strings_held,
)

# A word only this user's data contains, to look for it in raw storage.
TOKEN = {"alice": "xylophone", "alice2": "quokka", "bob": "marzipan", "*": "kumquat"}
# The library's shape plus the two shapes of their own that ``populate`` writes.
SHAPES = (("*", USER), (USER, "notes"), ("team", "*", USER))
NOTHING = "Keine relevanten Informationen im Gedächtnis gefunden."


def cfg(user_id: str, session: str = "s1") -> Any:
    return thread_config(user_id, session)


def populate(store: BaseStore, user_id: str) -> None:
    """Write data of ``user_id`` through every store path the library offers."""
    word = TOKEN[user_id]
    save, _ = create_memory_tools(store=store, should_store=None)
    save.invoke({"information": f"The user loves the {word} festival"}, cfg(user_id))
    save.invoke({"information": f"The user plays the {word} every day"}, cfg(user_id))
    memory = EpisodicMemory.for_user(store, user_id)
    task = TaskDescription(f"Fix the {word} parser", TaskCategory.DEBUGGING)
    memory.record(Episode("e1", task, f"Patched {word}", Feedback(0.9, "ok"),
                          OutcomeStatus.SUCCESS, timestamp=1000.0, strategy_used="iterative"))
    node = entity_extract_node(store=store)
    node.invoke({"messages": [HumanMessage(f"Alice uses Postgres for the {word} project.")]},
                cfg(user_id))
    UserProfiles(store).save(user_id, f"Prefers the {word} theme in every editor")
    ttl_days = 30.0 if store.supports_ttl else None
    CustomerHistory(store, ttl_days=ttl_days).add_turn(user_id, f"my {word}?", f"your {word}.")
    OutputLog(store).record(user_id, f"Your {word} licence expires on Friday.")
    store.put(("working_memory", user_id, "s1"), "scratch", {"text": f"{word} scratch"})
    store.put((user_id, "notes"), "n1", {"text": f"{word} note"})
    store.put(("team", "berlin", user_id), "role", {"text": f"{word} lead"})


def run_sessions(checkpointer: BaseCheckpointSaver[Any], user_id: str) -> None:
    """Two checkpointed sessions of ``user_id`` through a tiny graph."""
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [AIMessage("ok")]})
    builder.add_edge(START, "echo")
    graph = builder.compile(checkpointer=checkpointer)
    for session in ("s1", "s2"):
        graph.invoke({"messages": [HumanMessage(f"{TOKEN[user_id]} hello")]},
                     cfg(user_id, session))


def thread_ids(checkpointer: BaseCheckpointSaver[Any]) -> set[str]:
    return {t.config["configurable"]["thread_id"] for t in checkpointer.list(None)}


def owned(items: dict[Any, Any], user_id: str) -> dict[Any, Any]:
    return {k: v for k, v in items.items() if user_id in k[0]}


def assert_nothing_left(store: BaseStore, user_id: str, before: dict[Any, Any]) -> None:
    word = TOKEN[user_id]
    for ns, key in before:
        assert store.get(ns, key) is None, (ns, key)
    for ns in {ns for ns, _ in before}:
        assert store.search(ns, limit=100) == [], ns
        assert store.search(ns, query=word, limit=100) == [], ns
    everywhere = store.search((), query=f"{word} festival parser theme", limit=1000)
    assert [i for i in everywhere if user_id in i.namespace] == []
    listed = [ns for ns in store.list_namespaces(limit=10_000) if user_id in ns]
    if isinstance(store, InMemoryStore):
        # LangGraph's InMemoryStore keeps listing a namespace after its last item is deleted
        # (its names stay in memory); they must at least be empty.
        assert [ns for ns in listed if store.search(ns, limit=1)] == []
    else:
        assert listed == []
    # The tools and the nodes read through the store: nothing comes back.
    _, recall = create_memory_tools(store=store)
    assert recall.invoke({"frage": f"{word} festival"}, cfg(user_id)) == NOTHING
    assert UserProfiles(store).list(user_id) == []
    assert EpisodicMemory.for_user(store, user_id).episodes() == []
    recalled = recall_node(store=store).invoke({"task": f"Fix the {word} parser"}, cfg(user_id))
    assert recalled["recalled"] == []
    entities = entity_extract_node(store=store).invoke({"messages": []}, cfg(user_id))
    assert not entities.get("entities")
    if store.supports_ttl:
        assert CustomerHistory(store).recent(user_id) == []
    assert OutputLog(store).unresolved(user_id) == []
    if not isinstance(store, InMemoryStore):  # ChromaStore: raw records and in-process caches
        for ns in {ns for ns, _ in before}:
            assert lexical_doc_count(store, ns) == 0, ns
            assert cached_vector_rows(store, ns) == 0, ns
        held = strings_held(store)  # item cache, lexical terms, registry mirror ...
        assert [h for h in held if word in h.casefold()] == []
        assert [".".join(ns) for ns, _ in before if ".".join(ns) in held] == []
        for record in raw_records(store):
            assert user_id not in (record_namespace(record["meta"]) or ()), record
            assert word not in repr(record).casefold(), record


def test_forget_user_removes_everything_of_one_user_only(store: BaseStore) -> None:
    for user in ("alice", "alice2", "bob"):
        populate(store, user)
    with open_checkpointer(":memory:") as saver:
        for user in ("alice", "alice2", "bob"):
            run_sessions(saver, user)
        before = all_items(store)
        threads_before = thread_ids(saver)
        assert owned(before, "alice"), "precondition: alice has data"

        report = forget_user("alice", store=store, checkpointer=saver, shapes=SHAPES)

        after = all_items(store)
        assert_nothing_left(store, "alice", owned(before, "alice"))
        assert after == {k: v for k, v in before.items() if "alice" not in k[0]}
        assert thread_ids(saver) == {t for t in threads_before if not t.startswith("alice:")}
        assert {"alice2:s1", "alice2:s2", "bob:s1"} <= thread_ids(saver)

    expected_counts: dict[tuple[str, ...], int] = {}
    for ns, _ in owned(before, "alice"):
        expected_counts[ns] = expected_counts.get(ns, 0) + 1
    assert isinstance(report, ForgetReport)
    assert dict(report.deleted) == expected_counts
    assert report.items_deleted == len(owned(before, "alice"))
    assert report.thread_ids == ("alice:s1", "alice:s2")
    assert report.to_dict()["items_deleted"] == report.items_deleted

    again = forget_user("alice", store=store, checkpointer=InMemorySaver(), shapes=SHAPES)
    assert (again.deleted, again.thread_ids) == ((), ())


async def test_aforget_user_is_the_async_twin(kind: str) -> None:
    store = make_store(kind)
    for user in ("alice", "alice2"):
        populate(store, user)
    saver = InMemorySaver()
    for user in ("alice", "alice2"):
        run_sessions(saver, user)
    before = all_items(store)

    report = await aforget_user("alice", store=store, checkpointer=saver, shapes=SHAPES)

    assert_nothing_left(store, "alice", owned(before, "alice"))
    assert all_items(store) == owned(before, "alice2")
    assert report.items_deleted == len(owned(before, "alice"))
    assert set(report.thread_ids) == {"alice:s1", "alice:s2"}
    assert thread_ids(saver) == {"alice2:s1", "alice2:s2"}


def test_a_wildcard_user_id_only_forgets_the_literal_label(store: BaseStore) -> None:
    """User "*" must not be read as a wildcard: everybody else keeps everything. The helpers
    store it under the encoded label "%2A"; a raw "*" label written by hand is not that user."""
    for user in ("*", "alice", "bob"):
        label = namespace_label(user)
        store.put(("memories", label), "m", {"text": f"{TOKEN[user]} fact"})
        store.put(("working_memory", label, "s1"), "w", {"text": f"{TOKEN[user]} turn"})
    store.put(("memories", "*"), "raw", {"text": "written by hand under a raw star label"})
    before = all_items(store)

    report = forget_user("*", store=store)

    assert namespace_label("*") == "%2A"
    assert set(report.namespaces) == {("memories", "%2A"), ("working_memory", "%2A", "s1")}
    assert all_items(store) == {k: v for k, v in before.items() if "%2A" not in k[0]}
    assert store.get(("memories", "*"), "raw") is not None


@pytest.mark.parametrize("user_id", ["memories", "episodes", "user_profiles", "working_memory"])
def test_a_user_id_that_is_a_namespace_kind_is_refused(store: BaseStore, user_id: str) -> None:
    store.put(("memories", "bob"), "m", {"text": "bob's fact"})
    with pytest.raises(ValueError, match="namespace kind"):
        forget_user(user_id, store=store, shapes=SHAPES)
    assert store.get(("memories", "bob"), "m") is not None


@pytest.mark.parametrize("user_id", ["", None, 42])
def test_a_missing_user_id_is_refused(store: BaseStore, user_id: Any) -> None:
    with pytest.raises(ValueError, match="user_id"):
        forget_user(user_id, store=store)


def test_user_ids_with_dots_are_forgotten_under_their_encoded_label(store: BaseStore) -> None:
    """The helpers store "a.b@x.org" as the label "a%2Eb@x%2Eorg"; forget_user finds it, and a
    user literally named "a%2Eb@x%2Eorg" (label "a%252Eb@x%252Eorg") keeps everything."""
    save, _ = create_memory_tools(store=store, should_store=None)
    for uid in ("a.b@x.org", "a%2Eb@x%2Eorg"):
        save.invoke({"information": f"{uid} likes tea"}, cfg(uid))
        UserProfiles(store).save(uid, f"{uid} prefers dark mode everywhere")
    saver = InMemorySaver()
    TOKEN["a.b@x.org"] = "dotted"
    try:
        run_sessions(saver, "a.b@x.org")
    finally:
        del TOKEN["a.b@x.org"]
    before = all_items(store)

    report = forget_user("a.b@x.org", store=store, checkpointer=saver)

    assert set(report.namespaces) == {("memories", "a%2Eb@x%2Eorg"),
                                      ("user_profiles", "a%2Eb@x%2Eorg")}  # fmt: skip
    assert set(report.thread_ids) == {"a.b@x.org:s1", "a.b@x.org:s2"}
    assert all_items(store) == {k: v for k, v in before.items() if "a%2Eb@x%2Eorg" not in k[0]}
    assert UserProfiles(store).list("a%2Eb@x%2Eorg") != []


def test_protected_labels_cover_every_kind_the_library_writes() -> None:
    from langgraph_episodic.kinds.namespaces import USER_LABELS
    from langgraph_episodic.privacy import PROTECTED_LABELS
    from langgraph_episodic.tools import DEFAULT_NAMESPACE

    assert {*USER_LABELS, DEFAULT_NAMESPACE[0]} <= PROTECTED_LABELS


def test_many_items_and_deep_namespaces_are_all_deleted(chroma: Any) -> None:
    """More items than one page, namespaces deeper than one probing round."""
    deep = ("a", "b", "c", "d", "e", "f", "g", "h", "i", "alice", "k")
    ns = ("memories", "alice")
    chroma.batch([PutOp(ns, f"k{j}", {"text": f"fact {j}"}, index=False) for j in range(1200)])
    chroma.put(deep, "x", {"text": "deep"})
    chroma.put(("memories", "alice2"), "k0", {"text": "kept"})

    report = forget_user("alice", store=chroma, shapes=[("*", USER), (*deep[:9], USER)])

    assert dict(report.deleted) == {("memories", "alice"): 1200, deep: 1}
    assert all_items(chroma) == {(("memories", "alice2"), "k0"): {"text": "kept"}}


def test_expired_but_unswept_items_are_deleted_too() -> None:
    """An item past its TTL is invisible to search, yet still on disk until swept."""
    from langgraph_episodic import ChromaStore

    later = [0.0]
    chroma = ChromaStore.ephemeral(index=hash_index(), clock=lambda: time.time() + later[0])
    try:
        chroma.put(("memories", "alice"), "old", {"text": "xylophone"}, ttl=1.0)
        chroma.put(("memories", "bob"), "old", {"text": "marzipan"}, ttl=1.0)
        later[0] = 3600.0
        forget_user("alice", store=chroma)
        later[0] = 0.0
        assert "xylophone" not in repr(raw_records(chroma))
    finally:
        chroma.close()


def test_nodes_forget_what_they_cached(kind: str) -> None:
    """The episodic nodes cache each user's EpisodicMemory (its short-term window and skill
    profiles). After forget_user, the nodes must not answer from that cache."""
    store = make_store(kind)
    memories = EpisodeMemories(store)
    record = record_episode_node(memories=memories)
    select = select_strategy_node(memories=memories)
    for i in range(4):
        state = {"task": f"Fix the xylophone parser bug {i}",
                 "messages": [HumanMessage("fix it"), AIMessage(f"patched xylophone {i}")],
                 "feedback": {"reward": 1.0, "message": "great"}, "outcome": "success",
                 "strategy": "defensive"}
        record.invoke(state, cfg("alice"))
    memory = memories.for_config(cfg("alice"))
    assert memory.short_term(), "precondition: the cache holds alice's episodes"
    fresh = select_strategy_node(memories=EpisodeMemories(make_store(kind)))
    task = {"task": "Fix the xylophone parser bug 9"}

    forget_user("alice", store=store)

    assert memories.for_config(cfg("alice")).short_term() == []
    assert memories.for_config(cfg("alice")).count() == 0
    assert select.invoke(task, cfg("alice")) == fresh.invoke(task, cfg("alice"))


def test_forget_listeners_hear_about_each_forgotten_user(store: BaseStore) -> None:
    heard: list[ForgetReport] = []

    def broken(report: ForgetReport) -> None:
        raise RuntimeError("a broken cache")

    stop_broken = on_forget(broken)
    stop = on_forget(heard.append)
    try:
        store.put(("memories", "alice"), "m", {"text": "x"})
        report = forget_user("alice", store=store)  # the broken listener does not stop it
    finally:
        stop()
        stop_broken()
    assert heard == [report]
    assert store.get(("memories", "alice"), "m") is None
    forget_user("bob", store=store)
    assert heard == [report], "an unsubscribed listener was called"


def test_the_user_is_matched_at_the_users_position_only(store: BaseStore) -> None:
    """forget_user("s1") deletes user s1's namespaces, never bob's session called "s1" or a
    kind called "s1"."""
    store.put(("working_memory", "bob", "s1"), "t", {"text": "bob's turn in session s1"})
    store.put(("s1", "bob"), "k", {"text": "a kind named s1"})
    store.put(("memories", "s1"), "m", {"text": "user s1's fact"})
    store.put(("working_memory", "s1", "s9"), "t", {"text": "user s1's turn"})

    report = forget_user("s1", store=store)

    assert set(report.namespaces) == {("memories", "s1"), ("working_memory", "s1", "s9")}
    assert store.get(("working_memory", "bob", "s1"), "t") is not None
    assert store.get(("s1", "bob"), "k") is not None


def test_a_kind_named_user_is_not_refused_when_no_shape_puts_the_user_first(
    store: BaseStore,
) -> None:
    store.put(("memories", "bob"), "m", {"text": "bob's fact"})
    store.put(("memories", "episodes"), "m", {"text": "user 'episodes' fact"})
    report = forget_user("episodes", store=store)
    assert report.namespaces == (("memories", "episodes"),)
    assert store.get(("memories", "bob"), "m") is not None


@pytest.mark.parametrize("shape", [(), ("memories",), ("*", USER, USER), ("*", "")])
def test_a_malformed_shape_is_refused_before_anything_is_deleted(
    store: BaseStore, shape: tuple[str, ...]
) -> None:
    store.put(("memories", "alice"), "m", {"text": "fact"})
    with pytest.raises(ValueError, match="shape"):
        forget_user("alice", store=store, shapes=[shape])
    assert store.get(("memories", "alice"), "m") is not None
