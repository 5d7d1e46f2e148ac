"""The examples of docs/privacy.md run, offline, and the section names only real exports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import langgraph_episodic

DOC = Path(__file__).resolve().parents[2] / "docs" / "privacy.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_section_has_examples() -> None:
    assert DOC.read_text(encoding="utf-8").startswith("# Privacy and data")
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_examples_run(code: str) -> None:
    exec(compile(code, str(DOC), "exec"), {})


def test_privacy_names_are_exported() -> None:
    import langgraph_episodic.privacy as privacy

    for name in ("forget_user", "aforget_user", "on_forget", "ForgetReport", "Redactor",
                 "RedactionRule", "RedactingStore", "redact_text", "redact_value"):  # fmt: skip
        assert name in privacy.__all__
        assert getattr(privacy, name) is not None
    for name in ("forget_user", "aforget_user", "Redactor", "RedactingStore"):
        assert getattr(langgraph_episodic, name) is getattr(privacy, name)
