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

NEVER_IMPORTS = {
    "admin": {"cli", "ui"},
    "ui": {"cli"},
    "language": {"chroma", "bilingual", "embeddings", "multilingual"},
    "bilingual": {"chroma"},
    "formation": {"graph", "middleware"},
    "kinds": {"graph", "formation", "middleware", "tools", "mcp_server", "server"},
}
"""unit -> the units above it, which it must not import."""


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


@pytest.mark.parametrize("unit", sorted(NEVER_IMPORTS))
def test_a_unit_never_imports_the_units_above_it(unit: str) -> None:
    imported = _imported_units().get(unit, {})
    assert imported, f"{unit} imports nothing of the package (was it renamed?)"
    wrong = {above: imported[above] for above in NEVER_IMPORTS[unit] if above in imported}
    assert wrong == {}, f"{unit} imports units above it: {wrong}"
