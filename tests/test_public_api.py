"""The public surface: ``__all__`` and the ``TYPE_CHECKING`` imports match the lazy export
table (the one list of names), and every name imports; importing the package stays light."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import langgraph_episodic


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
