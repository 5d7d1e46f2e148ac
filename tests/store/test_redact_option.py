"""ChromaStore(redact=...) rewrites values and queries before anything is embedded or stored."""

from __future__ import annotations

from fakes import RecordingEmbeddings

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.privacy import Redactor

SECRET = "bob@example.com"


def test_redacted_before_embedding_and_storage() -> None:
    embedder = RecordingEmbeddings()
    store = ChromaStore.ephemeral(index={"dims": 64, "embed": embedder}, redact=Redactor())
    store.put(("u", "alice"), "k", {"text": f"write to {SECRET} about the invoice"})
    store.search(("u", "alice"), query=f"what did {SECRET} say")

    value = store.get(("u", "alice"), "k")
    assert value is not None and SECRET not in value.value["text"]
    assert embedder.seen and all(SECRET not in text for text in embedder.seen)
    raw = store.collections
    documents = raw["vectors"].get(include=["documents"])["documents"]
    metadatas = [  # (an item with one text is its own vector record)
        *raw["items"].get(include=["metadatas"])["metadatas"],
        *raw["vectors"].get(include=["metadatas"])["metadatas"],
    ]
    assert documents and all(SECRET not in (doc or "") for doc in documents)
    assert metadatas and all(SECRET not in str(meta) for meta in metadatas)


def test_without_redact_values_are_stored_as_given() -> None:
    store = ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})
    store.put(("u", "alice"), "k", {"text": f"write to {SECRET}"})
    item = store.get(("u", "alice"), "k")
    assert item is not None and SECRET in item.value["text"]
