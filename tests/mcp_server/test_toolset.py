"""The MCP toolset in process: the same tools, the same answers as the LangChain tools."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import create_memory_tools
from langgraph_episodic.cli.parser import MCP_TOKENS_ENV
from langgraph_episodic.mcp_server import (
    MAX_ARGUMENT_CHARS,
    TOKENS_ENV,
    MemoryToolset,
    ToolCallError,
)
from langgraph_episodic.tools import ENGLISH, GERMAN


def test_the_parser_names_the_token_variable_the_server_reads() -> None:
    assert MCP_TOKENS_ENV == TOKENS_ENV


@pytest.mark.parametrize(("locale", "texts"), [("de", GERMAN), ("en", ENGLISH)])
def test_tools_carry_the_langchain_tools_names_descriptions_and_arguments(
    locale: str, texts: Any
) -> None:
    listed = MemoryToolset.create(InMemoryStore(), locale=locale, history=False).listed()
    assert [t.name for t in listed] == [texts.save_name, texts.recall_name]
    assert [t.description for t in listed] == [texts.save_description, texts.recall_description]
    save, recall = (t.input_schema for t in listed)
    assert save["required"] == [texts.save_arg] and recall["required"] == [texts.recall_arg]
    assert save["properties"][texts.save_arg]["description"] == texts.save_arg_description
    for schema in (save, recall):
        assert schema["additionalProperties"] is False
        assert "user_id" not in schema["properties"] and "config" not in schema["properties"]
        assert [p["maxLength"] for p in schema["properties"].values()] == [MAX_ARGUMENT_CHARS]


def test_forget_is_listed_only_when_allowed() -> None:
    assert len(MemoryToolset.create(InMemoryStore()).listed()) == 3
    names = [t.name for t in MemoryToolset.create(InMemoryStore(), allow_forget=True).listed()]
    assert names == ["memory_speichern", "memory_abrufen", "memory_verlauf", "memory_vergessen"]
    names = [
        t.name
        for t in MemoryToolset.create(InMemoryStore(), locale="en", allow_forget=True).listed()
    ]
    assert names[-1] == "forget_memory"


CALLS = [
    ("memory_speichern", {"information": "Alice trinkt keinen Kaffee, Mail alice@example.org"}),
    ("memory_speichern", {"information": "ok danke"}),
    ("memory_speichern", {"information": "   "}),
    ("memory_abrufen", {"frage": "Was trinkt Alice?"}),
    ("memory_abrufen", {"frage": "Wie heißt Alices Katze?"}),
]


async def test_answers_are_the_langchain_tools_answers_call_for_call() -> None:
    """Redaction, the trivia refusal, the empty answer, the floor: side by side with the
    LangChain tools over a second store, the answers are equal."""
    toolset = MemoryToolset.create(InMemoryStore())
    save, recall = create_memory_tools(store=InMemoryStore())
    by_name = {save.name: save, recall.name: recall}
    config = {"configurable": {"user_id": "alice"}}
    for name, arguments in CALLS:
        expected = await by_name[name].ainvoke(arguments, config=config)  # type: ignore[arg-type]
        assert await toolset.call(name, arguments, user="alice") == expected
    assert "[EMAIL]" in await toolset.call("memory_abrufen", {"frage": "Kaffee"}, user="alice")


async def test_users_are_apart_and_forget_takes_only_the_callers_data() -> None:
    store = InMemoryStore()
    toolset = MemoryToolset.create(store, allow_forget=True)
    await toolset.call("memory_speichern", {"information": "Alice mag grünen Tee."}, user="alice")
    await toolset.call("memory_speichern", {"information": "Bob mag schwarzen Tee."}, user="bob")
    bob_sees = await toolset.call("memory_abrufen", {"frage": "Tee"}, user="bob")
    assert "Bob" in bob_sees and "Alice" not in bob_sees
    answer = await toolset.call("memory_vergessen", {}, user="alice")
    assert "1" in answer
    assert store.search(("memories", "alice")) == []
    assert len(store.search(("memories", "bob"))) == 1
    again = await toolset.call("memory_vergessen", {}, user="alice")
    assert again.startswith("Nichts zu vergessen")


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("memory_abrufen", {"frage": 3}),
        ("memory_abrufen", {}),
        ("memory_abrufen", {"frage": "x", "user_id": "bob"}),
        ("memory_speichern", {"information": "x" * (MAX_ARGUMENT_CHARS + 1)}),
        ("memory_speichern", {"information": None}),
        ("memory_vergessen", {"user": "bob"}),
        ("no_such_tool", {}),
    ],
)
async def test_bad_calls_are_refused_and_store_nothing(name: str, arguments: Any) -> None:
    store = InMemoryStore()
    toolset = MemoryToolset.create(store, allow_forget=True)
    await toolset.call("memory_speichern", {"information": "Bob fährt Rad."}, user="bob")
    with pytest.raises(ToolCallError):
        await toolset.call(name, arguments, user="alice")
    assert len(store.search(("memories", "bob"))) == 1
    assert store.search(("memories", "alice")) == []


async def test_a_call_without_a_user_is_refused() -> None:
    toolset = MemoryToolset.create(InMemoryStore())
    with pytest.raises(ToolCallError, match="user"):
        await toolset.call("memory_abrufen", {"frage": "x"}, user="")


def test_the_schema_follows_the_tool_it_serves() -> None:
    """A tool with other arguments (as the facts work may add) is served with them: the MCP
    schema is derived from the LangChain tool, not written down twice."""
    from langchain_core.tools import StructuredTool

    def note(text: str, valid_from: str | None = None, weight: int = 1) -> str:
        """Note something."""
        return text

    tool = StructuredTool.from_function(note)
    (listed,) = MemoryToolset(store=InMemoryStore(), tools=(tool,)).listed()
    props = listed.input_schema["properties"]
    assert sorted(props) == ["text", "valid_from", "weight"]
    assert listed.input_schema["required"] == ["text"]
    assert props["text"]["maxLength"] == MAX_ARGUMENT_CHARS
    assert props["weight"]["type"] == "integer"


async def test_arguments_of_a_served_tool_are_validated_by_its_own_schema() -> None:
    from langchain_core.tools import StructuredTool

    def note(text: str, weight: int = 1) -> str:
        """Note something."""
        return f"{text}:{weight}"

    toolset = MemoryToolset(store=InMemoryStore(), tools=(StructuredTool.from_function(note),))
    assert await toolset.call("note", {"text": "a", "weight": 2}, user="alice") == "a:2"
    with pytest.raises(ToolCallError, match="integer"):
        await toolset.call("note", {"text": "a", "weight": "2"}, user="alice")


def test_history_is_listed_read_only_and_can_be_left_out() -> None:
    listed = {t.name: t for t in MemoryToolset.create(InMemoryStore(), locale="en").listed()}
    history = listed["memory_history"]
    assert history.read_only and not history.destructive
    assert history.input_schema == {"type": "object", "properties": {},
                                    "additionalProperties": False}
    assert "memory_verlauf" not in [
        t.name for t in MemoryToolset.create(InMemoryStore(), history=False).listed()]


async def test_history_lists_the_callers_facts_with_their_periods_and_nobody_elses() -> None:
    clock = Clock()
    store = InMemoryStore()
    toolset = MemoryToolset.create(store, clock=clock)
    await toolset.call("memory_speichern", {"information": "Ich wohne in München."}, user="alice")
    await toolset.call("memory_speichern", {"information": "Ich arbeite bei Siemens."}, user="alice")
    await toolset.call("memory_speichern", {"information": "Ich wohne in Köln."}, user="bob")
    clock.now = datetime(2026, 6, 15, 12, tzinfo=timezone.utc)
    await toolset.call("memory_speichern", {"information": "Ich bin nach Berlin gezogen."},
                       user="alice")
    answer = await toolset.call("memory_verlauf", {}, user="alice")
    lines = answer.splitlines()
    assert lines[0].startswith("Verlauf der gespeicherten Informationen")
    assert "- Ich bin nach Berlin gezogen. (seit Juni 2026)" in lines
    assert "- früher: Ich wohne in München. (März 2026 bis Juni 2026)" in lines
    assert "- Ich arbeite bei Siemens. (seit März 2026)" in lines
    assert lines.index("- Ich bin nach Berlin gezogen. (seit Juni 2026)") < lines.index(
        "- früher: Ich wohne in München. (März 2026 bis Juni 2026)")
    assert "Köln" not in answer
    bob = await toolset.call("memory_verlauf", {}, user="bob")
    assert "Köln" in bob and "München" not in bob and "Berlin" not in bob
    assert await toolset.call("memory_verlauf", {}, user="carol") == (
        "Über diesen Nutzer ist nichts gespeichert.")
    with pytest.raises(ToolCallError):
        await toolset.call("memory_verlauf", {"user_id": "bob"}, user="alice")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 10, 12, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now
