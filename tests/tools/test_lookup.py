"""Structured lookup first: entities and profile facts named in the question answer first."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore
from langgraph_episodic.graph import UserProfiles
from langgraph_episodic.tools import create_memory_tools
from langgraph_episodic.tools.lookup import candidate_keys, plan_lookup

from .conftest import Call, bullets, user

DIMS = 8


class AxisEmbeddings(Embeddings):
    """Texts mentioning "coffee" point along axis 0, everything else along axis 1: the vector
    side ranks any coffee text above the entity record, whatever the question says."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0] + [0.0] * (DIMS - 1)  # every question "is about coffee"

    @staticmethod
    def _vec(text: str) -> list[float]:
        axis = 0 if "coffee" in text.lower() else 1
        return [1.0 if i == axis else 0.0 for i in range(DIMS)]


@pytest.fixture(params=["memory", "chroma"])
def store(request: pytest.FixtureRequest) -> BaseStore:
    index: Any = {"dims": DIMS, "embed": AxisEmbeddings(), "fields": ["text"]}
    if request.param == "memory":
        return InMemoryStore(index=index)
    return ChromaStore.ephemeral(index=index, search_mode="dense")


COFFEE = [
    "Coffee is brewed at 93 degrees.",
    "The user drinks coffee black.",
    "A coffee grinder needs cleaning weekly.",
]


def _fill(store: BaseStore) -> None:
    for n, text in enumerate(COFFEE):
        store.put(("memories", "alice"), f"c{n}", {"text": text, "kind": "fact"})
    # As the entity-extract node stores it: key = lowercased name.
    store.put(
        ("entities", "alice"),
        "bruno",
        {"name": "Bruno", "description": "Alice's Labrador.", "text": "Bruno: Alice's Labrador."},
    )


async def test_the_named_entity_comes_first_though_the_vector_side_ranks_it_last(
    store: BaseStore, call: Call
) -> None:
    # Everything of Alice's under ("alice", ...), so one search sees the entity record too.
    for n, text in enumerate(COFFEE):
        store.put(("alice", "memories"), f"c{n}", {"text": text})
    store.put(("alice", "entities"), "bruno", {"name": "Bruno", "text": "Bruno: Alice's Labrador."})
    hits = store.search(("alice",), query="What does Bruno eat?", limit=4)
    assert [h.key for h in hits][-1] == "bruno"  # the vector side alone: below unrelated hits
    _, recall = create_memory_tools(
        store=store,
        namespace=("{user_id}",),
        entities=("{user_id}", "entities"),
        locale="en",
        k=3,
        min_score=None,
    )
    found = bullets(await call(recall, {"query": "What does Bruno eat?"}, user("alice")), _en())
    assert found[0] == "Bruno: Alice's Labrador."
    assert len(found) == 3 and found.count("Bruno: Alice's Labrador.") == 1  # hits fill the rest


async def test_structured_lookup_can_be_turned_off_and_is_per_user(
    store: BaseStore, call: Call
) -> None:
    _fill(store)
    _, plain = create_memory_tools(store=store, locale="en", k=3, min_score=None, structured=False)
    found = bullets(await call(plain, {"query": "What does Bruno eat?"}, user("alice")), _en())
    assert "Bruno: Alice's Labrador." not in found
    _, recall = create_memory_tools(store=store, locale="en", k=3, min_score=None)
    answer = await call(recall, {"query": "What does Bruno eat?"}, user("bob"))
    assert "Bruno" not in answer  # Bob has no such entity; Alice's is not his


async def test_profile_facts_naming_the_entity_follow_it(store: BaseStore, call: Call) -> None:
    _fill(store)
    UserProfiles(store).save("alice", "Bruno is allergic to chicken", force=True)
    UserProfiles(store).save("alice", "Works at ACME", force=True)
    _, recall = create_memory_tools(store=store, locale="en", k=3, min_score=None)
    found = bullets(await call(recall, {"query": "What can Bruno not eat?"}, user("alice")), _en())
    assert found[:2] == ["Bruno: Alice's Labrador.", "Bruno is allergic to chicken"]
    assert "Works at ACME" not in found


async def test_named_records_pass_even_when_the_floor_drops_every_search_hit(
    store: BaseStore, call: Call
) -> None:
    _fill(store)
    _, recall = create_memory_tools(store=store, locale="en", k=3, min_score=1.1)
    found = bullets(await call(recall, {"query": "Tell me about Bruno"}, user("alice")), _en())
    assert found == ["Bruno: Alice's Labrador."]
    nothing = await call(recall, {"query": "Tell me about the weather"}, user("alice"))
    assert nothing == "No relevant information found in memory."


def test_candidate_keys_cover_multi_word_names() -> None:
    assert "anna weber" in candidate_keys("Was macht Anna Weber beruflich?")
    assert "was" not in candidate_keys("Was macht Anna?")  # a stop word alone is no name


def test_without_a_user_id_the_lookup_is_skipped() -> None:
    plan = plan_lookup("Who is Bruno?", {"configurable": {"org_id": "x"}})
    assert plan.ops == []


def _en() -> Any:
    from langgraph_episodic.tools import ENGLISH

    return ENGLISH
