"""The public surface: the top-level names are the product's (pinned below), ``__all__`` and the
``TYPE_CHECKING`` imports match the lazy export table, every name imports, every subpackage lists
its names in ``__all__``, docs/api.md lists every public name; importing the package stays
light."""

from __future__ import annotations

import ast
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import langgraph_episodic

ROOT = Path(__file__).resolve().parents[1]

TOP_LEVEL = {
    # the store
    "ChromaStore",
    # embeddings
    "HashEmbeddings",
    "MultilingualEmbeddings",
    "default_embeddings",
    "multilingual_index",
    # episodic memory
    "Episode",
    "EpisodicMemory",
    "Feedback",
    "OutcomeStatus",
    "TaskCategory",
    "TaskDescription",
    "build_replay_context",
    "format_replay_prompt",
    "select_strategy",
    # graph nodes and the graph builder
    "EntityOptions",
    "EpisodeOptions",
    "EpisodicState",
    "MemoryNodeNames",
    "SummaryOptions",
    "TurnOptions",
    "WindowOptions",
    "add_memory_nodes",
    "build_memory_graph",
    "open_checkpointer",
    "thread_config",
    # middleware
    "EpisodicMemoryMiddleware",
    "explain_recall",
    # tools
    "create_memory_tools",
    "create_vectorstore_memory_tools",
    "memory_abrufen",
    "memory_speichern",
    # privacy
    "RedactingStore",
    "Redactor",
    "aforget_user",
    "forget_user",
    # errors
    "Error",
    "EpisodeConflictError",
    "EpisodeSchemaError",
    "FolderInUseError",
    "IndexReadError",
    "MemoryStoreMissingError",
    "MissingConfigError",
    "StoreClosedError",
    "StoreForkedError",
    "UserIdError",
}
"""The product's names. A change here is a change of the public surface: update docs/api.md and
say so in the changelog."""

SUBPACKAGES = (
    "langgraph_episodic.bilingual",
    "langgraph_episodic.chroma",
    "langgraph_episodic.embeddings",
    "langgraph_episodic.episodic",
    "langgraph_episodic.errors",
    "langgraph_episodic.facts",
    "langgraph_episodic.formation",
    "langgraph_episodic.graph",
    "langgraph_episodic.middleware",
    "langgraph_episodic.multilingual",
    "langgraph_episodic.privacy",
    "langgraph_episodic.relevance",
    "langgraph_episodic.server",
    "langgraph_episodic.tools",
    "langgraph_episodic.ui",
)
"""The public subpackages and modules, each with ``__all__`` (``mcp_server`` needs the ``[mcp]``
extra and is listed in docs/api.md by hand)."""


def test_the_top_level_names_are_the_products() -> None:
    assert set(langgraph_episodic._EXPORTS) == TOP_LEVEL
    assert len(TOP_LEVEL) <= 45, "a surface a user can hold in mind"


@pytest.mark.parametrize("module", SUBPACKAGES)
def test_each_subpackage_lists_its_names(module: str) -> None:
    imported = importlib.import_module(module)
    names = imported.__all__
    assert names, module
    for name in names:
        assert getattr(imported, name) is not None, f"{module}.{name}"


def test_every_top_level_name_comes_from_its_subpackage_too() -> None:
    """A name leaves the top level without leaving users: each is public in a subpackage."""
    for name, module in langgraph_episodic._EXPORTS.items():
        if module == "._config":
            continue  # the config errors live in a private module; the top level is their home
        package = "langgraph_episodic." + module.lstrip(".").split(".")[0]
        public = importlib.import_module(package)
        assert name in public.__all__, f"{name} missing from {package}.__all__"


def test_api_docs_list_every_public_name() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [
        f"{module}.{name}"
        for module in SUBPACKAGES
        for name in importlib.import_module(module).__all__
        if f"`{name}`" not in text
    ]
    missing += [name for name in TOP_LEVEL if f"`{name}`" not in text]
    assert missing == [], "add these to docs/api.md"


def test_all_matches_the_export_table() -> None:
    exported = set(langgraph_episodic._EXPORTS)
    assert set(langgraph_episodic.__all__) == exported | {"__version__"}
    assert len(langgraph_episodic.__all__) == len(set(langgraph_episodic.__all__))


def test_every_public_name_imports() -> None:
    for name in langgraph_episodic._EXPORTS:
        assert getattr(langgraph_episodic, name) is not None, name


def test_unknown_name_raises_attribute_error() -> None:
    try:
        langgraph_episodic.does_not_exist  # noqa: B018
    except AttributeError as exc:
        assert "does_not_exist" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_does_not_load_torch_chromadb_or_the_model() -> None:
    code = (
        "import sys, langgraph_episodic; "
        "print(sorted(m for m in ('torch', 'chromadb', 'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _type_checking_imports() -> dict[str, str]:
    """Name -> module of each import in the package's ``if TYPE_CHECKING:`` block, read with
    ``ast`` (the block never runs)."""
    path = Path(langgraph_episodic.__file__)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, "expected one `if TYPE_CHECKING:` block in langgraph_episodic"
    found: dict[str, str] = {}
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom), ast.dump(node)
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            # `X as X` re-exports X for strict type checkers; any other alias would rename it.
            assert alias.asname in (None, alias.name), f"{alias.name} imported as {alias.asname}"
            assert alias.name not in found, f"{alias.name} imported twice"
            found[alias.name] = module
    return found


def test_type_checking_imports_name_exactly_the_export_table() -> None:
    imported = _type_checking_imports()
    exported = langgraph_episodic._EXPORTS
    assert sorted(set(exported) - set(imported)) == [], "in _EXPORTS, not imported for checkers"
    assert sorted(set(imported) - set(exported)) == [], "imported for checkers, not in _EXPORTS"
    # Each name comes from the same module the lazy loader uses, or one re-exporting it.
    for name, module in imported.items():
        lazy = importlib.import_module(exported[name], "langgraph_episodic")
        typed = importlib.import_module(module, "langgraph_episodic")
        assert getattr(typed, name) is getattr(lazy, name), name


def test_all_is_derived_from_the_export_table() -> None:
    assert list(langgraph_episodic.__all__) == ["__version__", *sorted(langgraph_episodic._EXPORTS)]


def test_no_public_function_shows_the_plan_it_runs_as_its_return() -> None:
    """A sync/async twin (``forget_user``, ``list_sessions``, ...) returns what its plan makes;
    ``help()`` and ``inspect.signature`` say so, not ``Plan[...]``."""
    modules = ("langgraph_episodic", "langgraph_episodic.graph", "langgraph_episodic.privacy",
               "langgraph_episodic.episodic", "langgraph_episodic.facts")
    checked = 0
    for module in map(importlib.import_module, modules):
        for name in module.__all__:
            value = getattr(module, name)
            members = [value, *(v for k, v in vars(value).items() if not k.startswith("_"))
                       ] if isinstance(value, type) else [value]
            for member in members:
                if inspect.isfunction(member) and hasattr(member, "__wrapped__"):
                    returned = str(inspect.signature(member).return_annotation)
                    assert not returned.startswith("Plan["), f"{name}.{member.__name__}"
                    checked += 1
    assert checked >= 10
