"""Layers that point down: a unit of the package never imports the units that build on it.

Every import counts (at module level, inside functions and under ``TYPE_CHECKING``), read with
``ast`` by ``scripts/house_report.py``."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]

CORE = ("_types", "errors", "_config", "_effects", "_runner", "_messages", "_fence", "_keylock",
        "_model_calls", "_user_threads", "memory_context", "memory_kinds", "relevance",
        "encode_threads", "language")
LAYERS = {
    **dict.fromkeys(CORE, 1.0),
    "embeddings": 2.0, "multilingual": 2.1, "bilingual": 2.2,
    "chroma": 3.0,
    "episodic": 4.0, "facts": 4.0,
    "privacy": 5.0,
    "kinds": 6.0,
    "formation": 7.0,
    "graph": 8.0,
    "middleware": 9.0, "tools": 9.0, "server": 9.0, "(root)": 9.0, "mcp_server": 9.1,
    "admin": 10.0, "ui": 10.1, "cli": 10.2, "__main__": 10.3,
}
"""unit -> its place in docs/architecture.md's "Layers" (a unit imports only units at its place
or below; ``(root)`` is the package's ``__init__``, which imports its names lazily)."""


def _house_report() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "house_report", ROOT / "scripts" / "house_report.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("house_report", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@cache
def _imported_units() -> dict[str, dict[str, list[str]]]:
    """unit -> imported unit -> where (``path:line``)."""
    report = _house_report()
    mods = report.modules(ROOT)
    known = {m.name for m in mods}
    found: dict[str, dict[str, list[str]]] = {}
    for m in mods:
        for imp in report.imports(m, known):
            target = imp.target.split(".")
            unit = target[1] if len(target) > 1 else "(root)"
            found.setdefault(m.unit, {}).setdefault(unit, []).append(f"{m.rel}:{imp.line}")
    return found


def test_every_unit_has_a_place_in_the_layers() -> None:
    units = {unit for unit in _imported_units()} | {
        unit for imported in _imported_units().values() for unit in imported}
    assert sorted(units - set(LAYERS)) == [], "place the new unit in LAYERS and architecture.md"


@pytest.mark.parametrize("unit", sorted(LAYERS))
def test_a_unit_never_imports_the_units_above_it(unit: str) -> None:
    imported = _imported_units().get(unit, {})
    wrong = {other: where for other, where in imported.items()
             if LAYERS.get(other, float("inf")) > LAYERS[unit]}
    assert wrong == {}, f"{unit} imports units above it: {wrong}"


def test_no_two_units_import_each_other() -> None:
    found = _imported_units()
    pairs = sorted((a, b) for a, imported in found.items() for b in imported
                   if a < b and a in found.get(b, {}))
    assert pairs == []
