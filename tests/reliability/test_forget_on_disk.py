"""forget_user leaves no byte of the user in the files: the raw bytes of the embedded Chroma
folder and of the SQLite checkpoint file are scanned for unique markers before and after.

Markers: a word only the user's texts contain, the user id itself (namespace labels), and the
float32 bytes of one of the user's vectors. Another user's markers must survive, and the store
must still open and answer in a fresh process (the purged write-ahead log replays cleanly).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma import record_format
from langgraph_episodic.graph.threads import open_checkpointer, thread_config
from langgraph_episodic.privacy import forget_user

from .conftest import DIMS, run_python

ALICE_WORD = "zqxalicemarker"
BOB_WORD = "kvbobmarker"
ALICE = "alice-q7z"


def texts_of(user: str) -> list[str]:
    word = ALICE_WORD if user == ALICE else BOB_WORD
    return [f"{word}{i} likes green tea with {word} honey" for i in range(25)]


def vector_pieces(store: ChromaStore, word: str) -> tuple[bytes, ...]:
    """16-byte pieces (4 float32, none zero) of the vectors the store holds for texts with
    ``word``. Pieces, not whole vectors: SQLite may split a row over two pages. A piece has
    at least three non-zero floats, so it does not match zero padding."""
    got = store.collections["vectors"].get(include=["embeddings", "documents", "metadatas"])
    pieces = set()
    docs = got["documents"] or [None] * len(got["ids"])
    for doc, meta, vec in zip(docs, got["metadatas"], got["embeddings"], strict=True):
        if word in record_format.text_of(meta, doc, record_format.path_of(meta)):
            for i in range(0, DIMS - 4, 4):
                if sum(1 for x in vec[i : i + 4] if x) >= 3:
                    pieces.add(struct.pack("<4f", *vec[i : i + 4]))
    assert pieces, f"no vector of a text with {word!r}"
    return tuple(pieces)


def scan(folder: Path, *markers: bytes) -> dict[str, dict[bytes, int]]:
    """Occurrences of each marker in every byte of every file under ``folder`` (files with
    none omitted)."""
    found: dict[str, dict[bytes, int]] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            hits = {m: data.count(m) for m in markers if m in data}
            if hits:
                found[str(path.relative_to(folder))] = hits
    return found


def fill(store: ChromaStore, user: str) -> None:
    for i, text in enumerate(texts_of(user)):
        store.put(("memories", user), f"m{i}", {"text": text})
    store.put(("working_memory", user, "s1"), "t", {"text": texts_of(user)[0]})


def run_sessions(checkpoints: Path, user: str) -> None:
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [AIMessage("ok")]})
    builder.add_edge(START, "echo")
    with open_checkpointer(checkpoints) as saver:
        graph = builder.compile(checkpointer=saver)
        for session in ("s1", "s2"):
            graph.invoke({"messages": [HumanMessage(texts_of(user)[1])]},
                         thread_config(user, session))  # fmt: skip


def test_nothing_of_the_user_is_left_in_any_file(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    checkpoints = folder / "checkpoints.sqlite"
    store = ChromaStore.persistent(folder, index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})
    fill(store, ALICE)
    fill(store, "bob")
    run_sessions(checkpoints, ALICE)
    run_sessions(checkpoints, "bob")
    alice_vectors, bob_vectors = vector_pieces(store, ALICE_WORD), vector_pieces(store, BOB_WORD)
    alice = (ALICE_WORD.encode(), ALICE.encode(), *alice_vectors)
    before = scan(folder, *alice)
    seen = {m for hits in before.values() for m in hits}
    assert {ALICE_WORD.encode(), ALICE.encode()} <= seen and seen & set(alice_vectors), before
    assert "checkpoints.sqlite" in before

    with open_checkpointer(checkpoints) as saver:
        report = forget_user(ALICE, store=store, checkpointer=saver)

    assert report.items_deleted == 26 and len(report.thread_ids) == 2
    assert report.purged, report.purges
    assert [p.target.split()[0] for p in report.purges] == ["Chroma", "SQLite"]
    assert scan(folder, *alice) == {}
    left = {m for hits in scan(folder, BOB_WORD.encode(), *bob_vectors).values() for m in hits}
    assert BOB_WORD.encode() in left and left & set(bob_vectors), "the other user's data stays"
    with open_checkpointer(checkpoints) as saver:
        again = forget_user(ALICE, store=store, checkpointer=saver)
    assert (again.deleted, again.thread_ids) == ((), ()) and again.purged
    store.close()

    # A fresh process opens the purged folder: bob is intact and searchable, alice is gone.
    out = run_python(
        """
        import sys
        from langgraph_episodic import ChromaStore, HashEmbeddings
        s = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
        print(len(s.search(("memories", "bob"), limit=100)),
              len(s.search(("memories", sys.argv[2]), limit=100)),
              s.search(("memories", "bob"), query="kvbobmarker3 honey", limit=1)[0].key)
        """,
        str(folder),
        ALICE,
    )
    assert out.split() == ["25", "0", "m3"]


def test_async_forget_purges_the_files_too(tmp_path: Path) -> None:
    import asyncio

    from langgraph_episodic.privacy import aforget_user

    folder = tmp_path / "store"
    store = ChromaStore.persistent(folder, index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})
    fill(store, ALICE)
    report = asyncio.run(aforget_user(ALICE, store=store))
    assert report.purged and scan(folder, ALICE_WORD.encode(), ALICE.encode()) == {}
    store.close()


def test_other_stores_report_what_they_could_not_purge() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    store: Any = InMemoryStore()
    store.put(("memories", "alice"), "m", {"text": "x"})
    report = forget_user("alice", store=store, checkpointer=InMemorySaver())
    assert [p.target for p in report.purges] == ["in-memory store", "in-memory checkpoints"]
    assert report.purged
    eph = ChromaStore.ephemeral(index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})
    assert forget_user("alice", store=eph).purges[0].target == "in-memory Chroma"


def test_an_unknown_store_is_reported_as_not_purged() -> None:
    from langgraph.store.memory import InMemoryStore

    class OtherStore(InMemoryStore):
        pass

    report = forget_user("alice", store=OtherStore())
    assert not report.purged and report.purges[0].target == "OtherStore"


async def test_an_async_sqlite_checkpointer_is_vacuumed(tmp_path: Path) -> None:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from langgraph_episodic.privacy import aforget_user

    path = tmp_path / "checkpoints.sqlite"
    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda s: {"messages": [AIMessage("ok")]})
    builder.add_edge(START, "echo")
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        graph = builder.compile(checkpointer=saver)
        for user in (ALICE, "bob"):
            await graph.ainvoke({"messages": [HumanMessage(texts_of(user)[1])]},
                                thread_config(user, "s1"))  # fmt: skip
        assert ALICE_WORD.encode() in b"".join(p.read_bytes() for p in tmp_path.iterdir())
        report = await aforget_user(ALICE, store=None, checkpointer=saver)
    assert report.thread_ids == (f"{ALICE}:s1",) and report.purged
    assert scan(tmp_path, ALICE_WORD.encode(), ALICE.encode()) == {}
    assert scan(tmp_path, BOB_WORD.encode()) != {}


def test_leftovers_of_a_crash_are_forgotten_too(tmp_path: Path) -> None:
    """A crash can leave a vector record whose item is gone, and a namespace the registry lost
    (see ``ChromaStore.verify``). Neither is reachable through the namespace listing; forget
    finds them in the raw collections, and no byte of them is left."""
    from langgraph_episodic.chroma.testing import lose_namespace_record, plant_orphan_vector

    folder = tmp_path / "store"
    store = ChromaStore.persistent(folder, index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})
    fill(store, ALICE)
    fill(store, "bob")
    store.put(("notes", ALICE), "n1", {"text": "zqxlostmarker lives in the lost namespace"})
    plant_orphan_vector(  # a vector of an item with several texts
        store, ("memories", ALICE), "ghost", "zqxorphanmarker from a write that never finished"
    )
    lose_namespace_record(store, ("notes", ALICE))
    store.close()
    markers = (b"zqxorphanmarker", b"zqxlostmarker", ALICE_WORD.encode())
    assert {m for hits in scan(folder, *markers).values() for m in hits} == set(markers)

    out = run_python(
        """
        import sys
        from langgraph_episodic import ChromaStore, HashEmbeddings
        from langgraph_episodic.privacy import forget_user
        s = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
        assert ("notes", sys.argv[2]) not in s.list_namespaces(), "the registry lost it"
        report = forget_user(sys.argv[2], store=s)
        print(report.items_deleted, report.purged, s.verify().ok)
        """,
        str(folder),
        ALICE,
    )
    assert out.split() == ["27", "True", "True"]
    assert scan(folder, *markers, ALICE.encode()) == {}
    assert BOB_WORD.encode() in {m for hits in scan(folder, BOB_WORD.encode()).values() for m in hits}


def middleware_agent(store: ChromaStore, answer: str) -> Any:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from langgraph_episodic import EpisodicMemoryMiddleware

    return create_agent(GenericFakeChatModel(messages=iter([answer])), tools=[], store=store,
                        middleware=[EpisodicMemoryMiddleware(store=store)])  # fmt: skip


def memory_nodes_graph(store: ChromaStore, answer: str) -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from langgraph_episodic import build_memory_graph

    return build_memory_graph(GenericFakeChatModel(messages=iter([answer])), store=store)


@pytest.mark.parametrize("agent_for", [middleware_agent, memory_nodes_graph],
                         ids=["middleware", "graph-nodes"])
def test_forget_leaves_no_byte_of_the_remembered_turns(tmp_path: Path, agent_for: Any) -> None:
    """The middleware and the graph nodes store each turn (the user's message and the answer)
    under the user's ``("memories", user, "turns")``; forget_user must take them off the disk
    too."""
    folder = tmp_path / "store"
    store = ChromaStore.persistent(folder, index={"dims": DIMS, "embed": HashEmbeddings(DIMS)})
    for user, word in ((ALICE, ALICE_WORD), ("bob", BOB_WORD)):
        agent = agent_for(store, f"Noted, the {word} answer.")
        agent.invoke(
            {"messages": [("user", f"My {word} project moved to the Lisbon office on Friday.")]},
            {"configurable": {"user_id": user, "thread_id": f"{user}:s1"}},
        )
    held = {u: store.search(("memories", u, "turns"), limit=10) for u in (ALICE, "bob")}
    assert all(len(items) == 2 for items in held.values()), held  # message and answer each
    assert ALICE_WORD.encode() in {m for hits in scan(folder, ALICE_WORD.encode()).values()
                                   for m in hits}  # fmt: skip

    report = forget_user(ALICE, store=store)

    assert report.purged, report.purges
    assert store.search(("memories", ALICE), limit=10) == []
    assert scan(folder, ALICE_WORD.encode(), ALICE.encode()) == {}
    assert scan(folder, BOB_WORD.encode()), "the other user's turns stay"
    assert len(store.search(("memories", "bob", "turns"), limit=10)) == 2
    store.close()
