"""The public surface: ``__all__`` is static, matches the lazy export table, and every name
imports; importing the package stays light."""

from __future__ import annotations

import subprocess
import sys

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
