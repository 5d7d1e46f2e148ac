"""Write docs/api.md from the package's ``__all__`` lists and each name's first docstring line.

Run ``python scripts/api_docs.py > docs/api.md`` after changing a public name;
``tests/test_public_api.py`` fails while the page misses one.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_public_api import SUBPACKAGES, TOP_LEVEL  # noqa: E402

INTRO = """\
# API reference

Every public name, by the module you import it from, one line each. The names most code needs
are also importable from `langgraph_episodic` itself (the first section); everything else lives
in its subpackage. `tests/test_public_api.py` checks that this page lists every name in each
module's `__all__`; `python scripts/api_docs.py > docs/api.md` writes it.

Importing `langgraph_episodic` (or `langgraph_episodic.chroma`) loads nothing heavy: each name is
imported when first used.
"""

GROUPS: list[tuple[str, list[str]]] = [
    ("The store", ["ChromaStore"]),
    ("Embeddings", ["default_embeddings", "HashEmbeddings", "MultilingualEmbeddings",
                    "multilingual_index"]),
    ("Episodic memory", ["EpisodicMemory", "Episode", "TaskDescription", "TaskCategory",
                         "OutcomeStatus", "Feedback", "build_replay_context",
                         "format_replay_prompt", "select_strategy"]),
    ("Graph nodes and the graph builder", ["add_memory_nodes", "build_memory_graph",
                                           "MemoryNodeNames", "EpisodicState", "thread_config",
                                           "open_checkpointer", "WindowOptions",
                                           "SummaryOptions", "EntityOptions", "EpisodeOptions",
                                           "TurnOptions"]),
    ("Middleware", ["EpisodicMemoryMiddleware", "explain_recall"]),
    ("Tools", ["create_memory_tools", "create_vectorstore_memory_tools", "memory_speichern",
               "memory_abrufen"]),
    ("Privacy", ["forget_user", "aforget_user", "RedactingStore", "Redactor"]),
    ("Errors", ["Error", "MissingConfigError", "UserIdError", "FolderInUseError", "IndexReadError",
                "StoreClosedError", "StoreForkedError", "EpisodeConflictError",
                "EpisodeSchemaError", "MemoryStoreMissingError"]),
]
"""The top-level names, by what they are."""

NOTES: dict[str, str] = {
    "memory_speichern": "ready-made LangChain tool: save a memory for the user in the graph's store (German texts; `create_memory_tools(locale=\"en\")` for English).",
    "memory_abrufen": "ready-made LangChain tool: look up the user's memories in the graph's store.",
    "MODEL_DIMS": "dimensions of the packaged embedding model (384).",
    "EARLY_WEIGHTS": "replay weights for a small memory (similarity counts most).",
    "NORMAL_WEIGHTS": "replay weights for a medium memory.",
    "LATE_WEIGHTS": "replay weights for a large memory (reward and recency count more).",
    "SCHEMA_VERSION": "version of the stored episode format.",
    "STRATEGY_POOL": "the strategies the policies choose from, name -> instruction.",
    "CURRENT_FILTER": "store filter that keeps only current facts.",
    "Clock": "type of a clock: a callable returning the current `datetime`.",
    "SUMMARY_MESSAGE_ID": "id of the summary message earlier versions kept in `messages`.",
    "USER_LABELS": "first labels of the per-user namespaces the graph helpers write by default.",
    "MEMORIES_NAMESPACE": "namespace template of the middleware's saved memories.",
    "TURN_NAMESPACE": "namespace template of the turns the middleware remembers (`(\"memories\", \"{user_id}\", \"turns\")`).",
    "FORMATION_ASSISTANT": "the graph id `ServerFormation` runs by default (its key in `langgraph.json`).",
    "FORMED_THROUGH": "key in a formed entity's value: the newest pending turn it includes.",
    "PENDING": "first label of the deferred formation's queue namespaces, `(PENDING, user_id, thread_id)`.",
    "MULTILINGUAL_DIMS": "dimensions of the multilingual model (512).",
    "BILINGUAL_DIMS": "dimensions of the default two-language vectors (384 + 512 = 896).",
    "DEFAULT_REDACTOR": "the redactor the memory tools and nodes apply by default (`DEFAULT_RULES`).",
    "DEFAULT_RULES": "the redaction rules of the default redactor.",
    "DEFAULT_SHAPES": "namespace shapes `forget_user` searches by default.",
    "PROTECTED_LABELS": "first labels of the library's namespaces: a user whose label is one of them is never forgotten by label match.",
    "USER": "the `{user_id}` placeholder of a namespace shape.",
    "ForgetListener": "type of a callback registered with `on_forget`.",
    "SaveRedactor": "type of a redactor applied to what is saved.",
    "TRIVIAL_WORDS": "words that alone do not make a text worth storing.",
    "DEFAULT_NAMESPACE": "namespace template of the memory tools.",
    "ENGLISH": "the English tool texts.",
    "GERMAN": "the German tool texts.",
    "INSTALL_HINT": "how to install the `[mcp]` extra.",
    "MAX_ARGUMENT_CHARS": "longest tool argument the server accepts.",
    "MCP_PATH": "URL path of the streamable HTTP endpoint.",
    "TOKENS_ENV": "environment variable naming the bearer-token table.",
}
"""Descriptions of the names whose docstring is not their own (constants, tool objects)."""


def tidy(text: str) -> str:
    """Sphinx roles and double backticks as Markdown code."""
    text = re.sub(r":\w+:`~?\.?([\w.]+)`", lambda m: f"`{m.group(1).split('.')[-1]}`", text)
    return text.replace("``", "`")


def describe(module: str, name: str) -> str:
    """One line: the name and the first paragraph of its docstring."""
    obj = getattr(importlib.import_module(module), name)
    if name in NOTES:
        return f"- `{name}` — {NOTES[name]}"
    if not (inspect.isclass(obj) or inspect.isroutine(obj) or hasattr(obj, "__wrapped__")):
        raise SystemExit(f"{module}.{name} needs a line in NOTES")
    doc = inspect.getdoc(obj) or ""
    return f"- `{name}` — {tidy(' '.join(doc.split(chr(10) * 2)[0].split()))}"


def section(module: str, title: str) -> list[str]:
    imported = importlib.import_module(module)
    about = tidy(" ".join((inspect.getdoc(imported) or "").split("\n\n")[0].split()))
    lines = [f"## {title}", "", about, "", f"`from {module} import ...`", ""]
    return [*lines, *(describe(module, n) for n in imported.__all__), ""]


def page() -> str:
    grouped = {n for _, names in GROUPS for n in names}
    if grouped != TOP_LEVEL:
        raise SystemExit(f"GROUPS and TOP_LEVEL differ: {sorted(grouped ^ TOP_LEVEL)}")
    lines = [INTRO, "## `from langgraph_episodic import ...`", ""]
    for title, names in GROUPS:
        lines += [f"### {title}", "", *(describe("langgraph_episodic", n) for n in names), ""]
    for module in SUBPACKAGES:
        lines += section(module, f"`{module}`")
    try:
        lines += section("langgraph_episodic.mcp_server",
                         "`langgraph_episodic.mcp_server` (needs the `[mcp]` extra)")
    except ImportError as exc:
        raise SystemExit(f"install the [mcp] extra to list the MCP server: {exc}") from exc
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(page())
