"""Every ```python block of the README (and of docs/*.md) runs, offline.

The blocks of one file run in order, in one namespace, like a reader pasting them into one
session, inside a fresh temporary working folder (so ``./.episodic`` is a throwaway store).
Only blocks fenced exactly as ```python run; a block that needs what CI does not have (a Postgres
server, an API key) is fenced ```python notest, visibly, in the document itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number, source) of each fenced ```python block."""
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


def _documents() -> list[Path]:
    docs = sorted((ROOT / "docs").glob("*.md"))
    return [ROOT / "README.md", *(d for d in docs if python_blocks(d.read_text(encoding="utf-8")))]


def test_block_extraction() -> None:
    text = "intro\n```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = x + 1\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n"), (9, "y = x + 1\n")]


@pytest.mark.parametrize("document", _documents(), ids=lambda p: p.name)
def test_python_blocks_run_in_order(
    document: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = python_blocks(document.read_text(encoding="utf-8"))
    assert blocks, f"{document.name} has no ```python blocks (its quickstart should be one)"
    monkeypatch.chdir(tmp_path)
    for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                       "ANONYMIZED_TELEMETRY": "False", "MPLBACKEND": "Agg"}.items():
        monkeypatch.setenv(key, value)
    namespace: dict[str, object] = {"__name__": f"{document.stem}_blocks"}
    for line, source in blocks:
        # A failure's traceback names the block as "<file>:<first line of the block>".
        exec(compile(source, f"{document.name}:{line}", "exec"), namespace)
    for value in namespace.values():  # close stores the blocks opened
        closer = getattr(value, "close", None)
        if callable(closer) and type(value).__name__ == "ChromaStore":
            closer()
