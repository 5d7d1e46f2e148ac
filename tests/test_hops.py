"""``scripts/hops.py`` counts what it says: calls of package code (a generator once, however
often it is resumed), their modules, the calls from one module into another, and the longest
chain of modules on one stack. Checked on two small modules standing in for the package."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.script_modules import script_module

ROOT = Path(__file__).resolve().parents[1]

OUTER = """\
import inner


def outer():
    for _ in inner.plan():
        pass
    return inner.helper() + inner.helper() + own()


def own():
    return 1
"""

INNER = """\
def helper():
    return 1


def plan():
    yield 1
    yield helper()
    yield 3
"""


def test_the_counts_of_a_flow_through_two_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "outer.py").write_text(OUTER, encoding="utf-8")
    (tmp_path / "inner.py").write_text(INNER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import outer

    try:
        with script_module("hops_under_test", ROOT / "scripts" / "hops.py") as hops:
            monkeypatch.setattr(hops, "ROOT", str(tmp_path) + os.sep)
            count = hops.measure(outer.outer)
    finally:
        sys.modules.pop("outer", None)
        sys.modules.pop("inner", None)
    # outer, plan (resumed four times, counted once), helper three times, own
    assert count.calls == 6
    assert count.modules == {"outer.py", "inner.py"}
    assert count.hops == 3  # outer -> plan, outer -> helper twice (plan -> helper: same module)
    assert count.depth == 2
    assert count.by_entry == {"outer": 6}
