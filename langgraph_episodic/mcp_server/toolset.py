"""The memory tools as MCP sees them: names, descriptions, JSON schemas, and one call per user.

The save and recall tools are the very ``StructuredTool`` objects :func:`create_memory_tools`
returns, bound to the server's store: an MCP call runs ``tool.ainvoke(arguments, config)`` with
``config["configurable"]["user_id"]`` set to the caller, so redaction on save, the relevance
floor, the "nothing relevant" answer and the structured lookup are the LangChain tools' own.
The user is never a tool argument: the schemas refuse any key but the tool's own argument.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import jsonschema
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.store.base import BaseStore
from pydantic import BaseModel

from .._config import fill_namespace
from ..errors import Error
from ..facts.recall import afact_history, describe_history, wording
from ..privacy import aforget_user
from ..tools import create_memory_tools, texts_for
from ..tools._core import format_recall
from ..tools.memory_tools import DEFAULT_NAMESPACE
from .texts import FORGET, HISTORY, ExtraTexts

logger = logging.getLogger(__name__)

MAX_ARGUMENT_CHARS = 4000
"""The longest string a client may pass as a tool argument (a fact is one sentence; a longer
text is refused with an error instead of being embedded)."""


EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
"""The schema of a tool without arguments (history, forget)."""


class ToolCallError(Error, ValueError):
    """A call the server refuses: an unknown tool or arguments that do not fit its schema."""


@dataclass(frozen=True)
class McpTool:
    """One tool as listed to MCP clients."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    destructive: bool


REPEATED_KEYS = frozenset({"title", "description"})
"""Keys of a LangChain tool's schema that only repeat what a client lists anyway: the schema's
``description`` is the tool's description and its ``title`` the tool's name; a property's
``title`` is its name. A model reads every listed word, so each is said once."""


def input_schema(tool: BaseTool) -> dict[str, Any]:
    """The JSON schema MCP clients see for ``tool``: its model-visible arguments (the LangChain
    tool's own schema, without ``config`` and the injected store), every string at most
    :data:`MAX_ARGUMENT_CHARS` long, no other keys allowed; without the :data:`REPEATED_KEYS`
    (a property keeps its ``description``)."""
    call_schema = tool.tool_call_schema
    if isinstance(call_schema, dict):
        schema = dict(call_schema)
    elif issubclass(call_schema, BaseModel):
        schema = call_schema.model_json_schema()
    else:  # a pydantic v1 model
        schema = call_schema.schema()
    properties = {}
    for name, prop in schema.get("properties", {}).items():
        properties[name] = {key: value for key, value in prop.items() if key != "title"}
        if prop.get("type") == "string":
            properties[name]["maxLength"] = MAX_ARGUMENT_CHARS
    kept = {key: value for key, value in schema.items() if key not in REPEATED_KEYS}
    return {**kept, "type": "object", "properties": properties, "additionalProperties": False}


def config_for(user: str) -> RunnableConfig:
    """The run config a tool call of ``user`` gets: only the user id, from the server."""
    return RunnableConfig(configurable={"user_id": user})


@dataclass(frozen=True)
class MemoryToolset:
    """The tools one MCP server offers over one store: save and recall, optionally forget."""

    store: BaseStore
    tools: tuple[BaseTool, ...]
    """The LangChain tools served as they are, in the order clients see them."""
    read_only: frozenset[str] = frozenset()
    """Names of the tools that only read (MCP's ``readOnlyHint``)."""
    forget: ExtraTexts | None = None
    """The forget tool's texts when it is offered, else None."""
    history: ExtraTexts | None = None
    """The history tool's texts when it is offered, else None."""
    namespace: tuple[str, ...] = DEFAULT_NAMESPACE
    """The tools' namespace template; the history lists the facts saved there."""
    locale: str = "de"

    @classmethod
    def create(
        cls, store: BaseStore, *, locale: str = "de", allow_forget: bool = False,
        history: bool = True, **options: Any,
    ) -> MemoryToolset:
        """Bind :func:`create_memory_tools` (``options`` are its keyword arguments) to ``store``.

        ``history``: offer the read-only history tool (the caller's facts with their periods).
        """
        save, recall = create_memory_tools(store=store, locale=locale, **options)
        key = texts_for(locale).locale
        return cls(store, (save, recall), frozenset({recall.name}),
                   forget=FORGET[key] if allow_forget else None,
                   history=HISTORY[key] if history else None,
                   namespace=tuple(options.get("namespace", DEFAULT_NAMESPACE)), locale=locale)

    def listed(self) -> list[McpTool]:
        """The tools in the order clients see them: save, recall, history, then forget (if
        allowed)."""
        found = [
            McpTool(t.name, t.description, input_schema(t), t.name in self.read_only, False)
            for t in self.tools
        ]
        for texts, reads in ((self.history, True), (self.forget, False)):
            if texts is not None:
                found.append(McpTool(texts.name, texts.description, EMPTY_SCHEMA, reads, not reads))
        return found

    async def call(self, name: str, arguments: dict[str, Any], *, user: str) -> str:
        """Run tool ``name`` for ``user``; return its answer. ``arguments`` were validated
        against the listed schema by the MCP server; they are checked again here, so a caller
        that skips that validation cannot reach the tools with other keys or types."""
        if not user:
            raise ToolCallError("No user for this call; the server must name one.")
        listed = {tool.name: tool for tool in self.listed()}
        if name not in listed:
            raise ToolCallError(f"Unknown tool {name!r}; this server has: {', '.join(listed)}.")
        try:
            jsonschema.validate(instance=arguments, schema=listed[name].input_schema)
        except jsonschema.ValidationError as exc:
            raise ToolCallError(f"Invalid arguments: {exc.message}") from None
        if self.forget is not None and name == self.forget.name:
            return await self._forget(user, self.forget)
        if self.history is not None and name == self.history.name:
            return await self._history(user, self.history)
        tool = next(tool for tool in self.tools if tool.name == name)
        return str(await tool.ainvoke(dict(arguments), config=config_for(user)))

    async def _history(self, user: str, texts: ExtraTexts) -> str:
        """The caller's facts in the tools' namespace (filled for ``user`` as the tools fill
        it), each with its period, as quoted data."""
        ns = fill_namespace(self.namespace, config_for(user))
        lines = describe_history(await afact_history(self.store, ns), wording(self.locale))
        return format_recall(lines, texts.answer, texts.nothing)

    async def _forget(self, user: str, texts: ExtraTexts) -> str:
        report = await aforget_user(user, store=self.store)
        items, namespaces = report.items_deleted, len(report.namespaces)
        logger.info("forgot %d items in %d namespaces", items, namespaces)
        if not report.items_deleted:
            return texts.nothing
        return texts.answer.format(items=items, namespaces=namespaces)
