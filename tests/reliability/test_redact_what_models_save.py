"""What a model decides to save (memory tools, user profiles, extracted entities) is redacted by
default, before the store or the entity model sees it; ``redact=None`` turns that off. A store's
own ``redact=`` stays opt-in."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.graph import UserProfiles, entity_extract_node
from langgraph_episodic.privacy import Redactor
from langgraph_episodic.tools import create_memory_tools

CFG: Any = {"configurable": {"user_id": "alice"}}
SECRET = "Alice erreicht man unter alice@example.com oder +49 30 1234567, IBAN DE89 3704 0044 0532 0130 00"


def stored_text(store: InMemoryStore) -> str:
    return repr([i.value for ns in store.list_namespaces() for i in store.search(ns, limit=100)])


def test_memory_tools_redact_by_default_and_say_so() -> None:
    store = InMemoryStore()
    save, recall = create_memory_tools(store=store)
    answer = save.invoke({"information": SECRET}, CFG)
    assert "[EMAIL]" in answer and "alice@example.com" not in answer
    held = stored_text(store)
    assert "alice@example.com" not in held and "1234567" not in held and "0532" not in held
    assert "[EMAIL]" in held and "[PHONE]" in held and "[IBAN]" in held
    assert "[EMAIL]" in recall.invoke({"frage": "Wie erreicht man Alice?"}, CFG)


def test_the_switch_keeps_data_verbatim() -> None:
    store = InMemoryStore()
    save, _ = create_memory_tools(store=store, redact=None)
    save.invoke({"information": SECRET}, CFG)
    UserProfiles(store, redact=None).save("alice", SECRET)
    node = entity_extract_node(store=store, redact=None)
    node.invoke({"messages": [HumanMessage("Alice works at ACME, call +49 30 7654321 now")]}, CFG)
    assert stored_text(store).count("alice@example.com") == 2  # the tool's fact and the profile
    assert "7654321" in repr([i.value for i in store.search(("entities", "alice"))])


def test_profiles_and_entities_redact_by_default() -> None:
    store = InMemoryStore()
    UserProfiles(store).save("alice", SECRET)
    node = entity_extract_node(store=store)
    out = node.invoke({"messages": [HumanMessage("Alice works at ACME, call +49 30 7654321 now")]},
                      CFG)  # fmt: skip
    held = stored_text(store) + repr(out)
    assert "alice@example.com" not in held and "1234567" not in held and "7654321" not in held
    assert "ACME" in held


def test_a_custom_redactor_is_used_as_given() -> None:
    store = InMemoryStore()
    redactor = Redactor().with_rule("customer", r"\bKD-\d{6}\b")
    save, _ = create_memory_tools(store=store, redact=redactor)
    save.invoke({"information": "Kunde KD-123456 mailt an bob@example.com"}, CFG)
    assert "[CUSTOMER]" in stored_text(store) and "[EMAIL]" in stored_text(store)


def test_the_stores_own_redact_stays_opt_in() -> None:
    store = ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})
    store.put(("notes",), "n", {"text": "write to alice@example.com"})
    item = store.get(("notes",), "n")
    assert item is not None and item.value == {"text": "write to alice@example.com"}
