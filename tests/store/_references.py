"""Reference implementations kept to pin the store's fast paths, loaded from ``benchmarks/``
(the fusion study uses them too)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


fusion = _load("_fusion_reference")
"""``fuse`` (calibrated, min-max, DBSF, RRF), ``fuse_calibrated``, ``missing_ids``,
``lexical_share``: the reference the array fusion is pinned against."""
