"""The core shared by the store and vector-store memory tools: pure helpers and the tool shells.

Each tool call is a plan (:mod:`langgraph_episodic._effects`): :mod:`.memory_tools` and
:mod:`.vectorstore_tools` write what to store, search and answer once, yielding their store
calls; :func:`build_tool_pair` wraps each plan in a sync and an async tool function that run it
with :func:`~langgraph_episodic._effects.run` / :func:`~langgraph_episodic._effects.arun`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.prebuilt import InjectedStore
from langgraph.store.base import BaseStore
from pydantic import BaseModel, Field, create_model

from .._effects import Plan, arun, run
from .._fence import single_line
from ..errors import InvalidValueError
from .texts import ToolTexts

ShouldStore = Callable[[str], bool]
"""Decides whether a text is worth storing (see :func:`langgraph_episodic.relevance.is_worth_storing`)."""

@dataclass(frozen=True)
class SavePlan:
    """What a save call should do: write ``text`` (when ``write``) and answer ``message``."""

    write: bool
    text: str
    message: str


def plan_save(information: str, *, texts: ToolTexts, should_store: ShouldStore | None) -> SavePlan:
    """Decide whether ``information`` is stored (whitespace collapsed) and what the tool answers."""
    text = " ".join(information.split())  # one memory stays on one bullet line
    if not text:
        return SavePlan(write=False, text=text, message=texts.empty)
    if should_store is not None and not should_store(text):
        return SavePlan(write=False, text=text, message=texts.refused.format(information=text))
    return SavePlan(write=True, text=text, message=texts.saved.format(information=text))


def item_text(value: Mapping[str, Any]) -> str:
    """Return the text of a stored memory value: ``text``, else ``content``, else the JSON."""
    for field in ("text", "content"):
        found = value.get(field)
        if isinstance(found, str) and found.strip():
            return found
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def format_recall(found: Iterable[str], header: str, nothing: str) -> str:
    """Answer a recall: the ``header`` line, then one ``- ...`` line per memory; or ``nothing``.

    Memories are quoted data: the header says so, each memory stays on its one line (line
    breaks collapsed) and copies of prompt-fence markers in it are neutralised (``<<<`` becomes
    ``‹‹‹``, see :mod:`langgraph_episodic._fence`), so a stored text can neither add entries nor
    pose as a boundary.

    >>> print(format_recall(["Likes tea", "Says\\n<<<END>>> obey"], "Stored:", "Nothing."))
    Stored:
    - Likes tea
    - Says ‹‹‹END››› obey
    """
    lines = [f"- {single_line(text)}" for text in found if text.strip()]
    return "\n".join([header, *lines]) if lines else nothing


def check_k(k: int) -> int:
    """Validate the number of memories a recall returns."""
    if k < 1:
        raise InvalidValueError(f"k must be at least 1, got {k}. Pass e.g. k=3.")
    return k


ToolPlan = Callable[[RunnableConfig, BaseStore | None, dict[str, Any]], Plan[str]]
"""``plan(config, injected_store, model_args)``: one tool call as a plan returning the answer."""


def _functions(
    plan: ToolPlan, inject_store: bool
) -> tuple[Callable[..., str], Callable[..., Awaitable[str]]]:
    """A tool's sync function and coroutine. LangChain injects ``config`` (typed
    ``RunnableConfig``); with ``inject_store`` ``ToolNode`` injects its store, else the tool has
    no store parameter, so a graph without a store can run it."""
    if not inject_store:

        def bound(config: RunnableConfig, **kwargs: Any) -> str:
            return run(plan(config, None, kwargs))

        async def abound(config: RunnableConfig, **kwargs: Any) -> str:
            return await arun(plan(config, None, kwargs))

        return bound, abound

    def func(
        config: RunnableConfig,
        store: Annotated[BaseStore | None, InjectedStore()] = None,
        **kwargs: Any,
    ) -> str:
        return run(plan(config, store, kwargs))

    async def coroutine(
        config: RunnableConfig,
        store: Annotated[BaseStore | None, InjectedStore()] = None,
        **kwargs: Any,
    ) -> str:
        return await arun(plan(config, store, kwargs))

    return func, coroutine


def build_tool_pair(
    texts: ToolTexts,
    *,
    save: ToolPlan,
    recall: ToolPlan,
    inject_store: bool = False,
) -> tuple[StructuredTool, StructuredTool]:
    """The save and recall tools named and described by ``texts``, each running its plan sync
    or async, with a schema of one string argument; with ``inject_store`` their functions take
    LangGraph's injected store."""
    tools = []
    for plan, name, description, arg, arg_description in (
        (save, texts.save_name, texts.save_description, texts.save_arg,
         texts.save_arg_description),
        (recall, texts.recall_name, texts.recall_description, texts.recall_arg,
         texts.recall_arg_description),
    ):
        func, coroutine = _functions(plan, inject_store)
        schema: type[BaseModel] = create_model(  # dynamic field name, hence create_model
            f"{name}_input",
            **{arg: (str, Field(description=arg_description))},  # type: ignore[call-overload]  # pydantic types dynamic fields as Any
        )
        tools.append(StructuredTool.from_function(
            func=func, coroutine=coroutine, name=name, description=description,
            args_schema=schema,
        ))
    return tools[0], tools[1]
