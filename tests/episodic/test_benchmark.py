"""The learning benchmark runs end to end on a short stream and says the stream is simulated."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "learning.py"


def test_learning_benchmark_prints_its_table(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("learning_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        tails = module.main(["--episodes", "60", "--seeds", "2", "--window", "20"])
    finally:
        del sys.modules[spec.name]
    out = capsys.readouterr().out
    assert "SIMULATED task stream" in out
    assert "% of oracle" in out
    for policy in ("no-memory", "greedy", "thompson", "oracle"):
        assert policy in out
        assert len(tails[policy]) == 2 and all(0.0 <= t <= 1.0 for t in tails[policy])
    assert "100.0%" in out  # the oracle is its own reference
