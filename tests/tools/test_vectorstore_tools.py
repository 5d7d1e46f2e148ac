"""The same tools bound to a LangChain VectorStore: Chroma (langchain-chroma and the deprecated
langchain-community one) and langchain-core's InMemoryVectorStore, with our HashEmbeddings."""

from __future__ import annotations

import logging
import uuid
import warnings
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings
from fakes import ScriptedChatModel, call_tool, last_tool_result
from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.tools import create_vectorstore_memory_tools
from langgraph_episodic.tools.vectorstore_tools import NAMESPACE_FIELD, encode_namespace

from .conftest import Call, bullets, user

NOTHING = "Keine relevanten Informationen im Gedächtnis gefunden."
ALICE_FACT = "Alice spielt Cello im Stadtorchester."
FACTS = [
    "Der Nutzer bevorzugt Python für Datenanalyse.",
    "Der Nutzer wohnt in Hamburg.",
    "Der Nutzer möchte bis Juni einen Marathon laufen.",
    "Der Nutzer trinkt keinen Kaffee.",
]


def match_metadata(match: dict[str, str]) -> Any:
    """``search_filter`` for InMemoryVectorStore, whose filter is a function of a Document."""
    return lambda doc: all(doc.metadata.get(k) == v for k, v in match.items())


def chroma_client() -> Any:
    return chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))


def make_vectorstore(kind: str) -> VectorStore:
    name = f"tools-{uuid.uuid4().hex[:12]}"
    if kind == "langchain_chroma":
        from langchain_chroma import Chroma

        return Chroma(
            client=chroma_client(), collection_name=name, embedding_function=HashEmbeddings(64)
        )
    if kind == "community_chroma":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from langchain_community.vectorstores import Chroma as CommunityChroma

            return CommunityChroma(
                client=chroma_client(),
                collection_name=name,
                embedding_function=HashEmbeddings(64),
            )
    return InMemoryVectorStore(HashEmbeddings(64))


def make_tools(vs: VectorStore, **options: Any) -> Any:
    if isinstance(vs, InMemoryVectorStore):
        options.setdefault("search_filter", match_metadata)
    return create_vectorstore_memory_tools(vs, **options)


def docs_of(vs: VectorStore, *namespace: str) -> list[Document]:
    scope = encode_namespace(namespace)
    found = vs.similarity_search("x", k=100, filter=_filter(vs, scope))
    return [d for d in found if d.metadata[NAMESPACE_FIELD] == scope]


def _filter(vs: VectorStore, scope: str) -> Any:
    match = {NAMESPACE_FIELD: scope}
    return match_metadata(match) if isinstance(vs, InMemoryVectorStore) else match


@pytest.fixture(params=["langchain_chroma", "community_chroma", "in_memory"])
def vs(request: pytest.FixtureRequest) -> VectorStore:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return make_vectorstore(str(request.param))


async def test_save_and_recall(vs: VectorStore, call: Call) -> None:
    save, recall = make_tools(vs)
    for fact in FACTS:
        assert await call(save, {"information": fact}, user("alice")) == f"Gespeichert: {fact}"
    found = await call(recall, {"frage": FACTS[1]}, user("alice"))
    texts = bullets(found)
    assert len(texts) == 3 and texts[0] == FACTS[1]
    assert all(text in FACTS for text in texts)
    assert await call(recall, {"frage": FACTS[1]}, user("bob")) == NOTHING


async def test_saving_twice_keeps_one_document_with_a_newer_time(
    vs: VectorStore, call: Call
) -> None:
    save, _ = make_tools(vs)
    await call(save, {"information": FACTS[0]}, user("alice"))
    [first] = docs_of(vs, "memories", "alice")
    await call(save, {"information": FACTS[0].upper()}, user("alice"))
    [second] = docs_of(vs, "memories", "alice")
    assert second.page_content == FACTS[0].upper()
    assert second.metadata["updated_at"] >= first.metadata["updated_at"]
    assert second.metadata["kind"] == "fact"


async def test_relevance_filter_refuses_trivia(vs: VectorStore, call: Call) -> None:
    save, _ = make_tools(vs)
    assert (await call(save, {"information": "Danke, alles klar!"}, user("alice"))).startswith(
        "Nicht gespeichert"
    )
    assert docs_of(vs, "memories", "alice") == []


async def test_no_argument_crosses_users(vs: VectorStore, call: Call) -> None:
    save, recall = make_tools(vs, k=10, should_store=None)
    await call(save, {"information": ALICE_FACT}, user("alice"))
    probes = ["alice", "alice2", '["memories", "alice"]', "memories/alice", ALICE_FACT]
    for probe in probes:
        for other in ("bob", "alice2"):
            assert await call(recall, {"frage": probe}, user(other)) == NOTHING
    for probe in probes:
        await call(save, {"information": f"{probe} hört gern Jazz"}, user("bob"))
    bob_sees = bullets(await call(recall, {"frage": ALICE_FACT}, user("bob")))
    assert len(bob_sees) == len(probes) and ALICE_FACT not in bob_sees
    assert [d.page_content for d in docs_of(vs, "memories", "alice")] == [ALICE_FACT]
    assert len(docs_of(vs, "memories", "bob")) == len(probes)


async def test_missing_user_id_lists_the_keys_present(vs: VectorStore, call: Call) -> None:
    save, _ = make_tools(vs)
    with pytest.raises(KeyError, match=r"user_id.*thread_id"):
        await call(save, {"information": FACTS[0]}, {"configurable": {"thread_id": "t"}})


async def test_results_outside_the_namespace_are_dropped_when_the_filter_is_ignored(
    call: Call, caplog: pytest.LogCaptureFixture
) -> None:
    vs = InMemoryVectorStore(HashEmbeddings(64))
    save, _ = create_vectorstore_memory_tools(vs, search_filter=match_metadata)
    await call(save, {"information": ALICE_FACT}, user("alice"))
    _, unfiltered_recall = create_vectorstore_memory_tools(vs, search_filter=None)
    with caplog.at_level(logging.WARNING, logger="langgraph_episodic.tools.vectorstore_tools"):
        assert await call(unfiltered_recall, {"frage": ALICE_FACT}, user("bob")) == NOTHING
    assert "search_filter" in caplog.text


def test_schema_and_english_names() -> None:
    save, recall = create_vectorstore_memory_tools(
        InMemoryVectorStore(HashEmbeddings(8)), locale="en"
    )
    assert (save.name, recall.name) == ("save_memory", "recall_memory")
    assert list(convert_to_openai_tool(save)["function"]["parameters"]["properties"]) == [
        "information"
    ]
    assert list(convert_to_openai_tool(recall)["function"]["parameters"]["properties"]) == ["query"]


async def test_vectorstore_tools_in_an_agent_across_sessions(vs: VectorStore, mode: str) -> None:
    save, recall = make_tools(vs)
    model = ScriptedChatModel(
        script=[
            call_tool("memory_speichern", information=FACTS[2]),
            "Notiert.",
            call_tool("memory_abrufen", frage="Was ist mein Ziel?"),
            last_tool_result,
        ]
    )
    agent = create_agent(model, [save, recall], checkpointer=InMemorySaver())
    for text, thread in (("Ich will Marathon laufen", "t1"), ("Was ist mein Ziel?", "t2")):
        inputs = {"messages": [HumanMessage(text)]}
        config = user("alice", thread)
        if mode == "sync":
            result = agent.invoke(inputs, config)
        else:
            result = await agent.ainvoke(inputs, config)
    tool_answers = [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]
    assert [bullets(answer) for answer in tool_answers] == [[FACTS[2]]]
    assert FACTS[2] in str(result["messages"][-1].content)
    assert model.exhausted
