"""Every ```python block of the README (and of docs/*.md) runs, offline.

The blocks of one file run in order, in one namespace, like a reader pasting them into one
session, inside a fresh temporary working folder (so ``./.episodic`` is a throwaway store).
Only blocks fenced exactly as ```python run; a block that needs what CI does not have (a Postgres
server, an API key) is fenced ```python notest, visibly, in the document itself.
"""

from __future__ import annotations

import logging
import re
import warnings
from pathlib import Path

import pytest

from langgraph_episodic import EpisodicMemory, TaskCategory

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


def _run_blocks(
    name: str, blocks: list[tuple[int, str]], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> dict[str, object]:
    """Run ``blocks`` in order in one namespace; each must log no warning and raise none.

    The stores the blocks open are kept under ``"_stores"`` (a later block may reuse a name)."""
    monkeypatch.chdir(tmp_path)
    for key, value in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                       "ANONYMIZED_TELEMETRY": "False", "MPLBACKEND": "Agg"}.items():
        monkeypatch.setenv(key, value)
    namespace: dict[str, object] = {"__name__": f"{Path(name).stem}_blocks"}
    stores: list[object] = []
    caplog.set_level(logging.WARNING)
    for line, source in blocks:
        caplog.clear()
        with warnings.catch_warnings(record=True) as raised:
            warnings.simplefilter("always")
            # A failure's traceback names the block as "<file>:<first line of the block>".
            exec(compile(source, f"{name}:{line}", "exec"), namespace)
        stores.extend(v for v in namespace.values()
                      if type(v).__name__ == "ChromaStore" and v not in stores)
        logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert not logged, f"the block at {name}:{line} logged a warning: {logged}"
        shown = [f"{w.category.__name__}: {w.message}" for w in raised
                 if not issubclass(w.category, ResourceWarning)]
        assert not shown, f"the block at {name}:{line} raised a warning: {shown}"
    namespace["_stores"] = stores
    return namespace


def _close_stores(namespace: dict[str, object]) -> None:
    for store in namespace.get("_stores") or []:
        store.close()


@pytest.mark.parametrize("document", _documents(), ids=lambda p: p.name)
def test_python_blocks_run_in_order_and_clean(
    document: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    blocks = python_blocks(document.read_text(encoding="utf-8"))
    assert blocks, f"{document.name} has no ```python blocks (its quickstart should be one)"
    namespace = _run_blocks(document.name, blocks, monkeypatch, tmp_path, caplog)
    _close_stores(namespace)


@pytest.mark.model  # the first block embeds with the packaged models
def test_the_first_example_remembers_and_recalls_a_users_fact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's first code is the simplest use: a user's fact saved and recalled with the
    memory tools, and what it prints is that fact; episodes and strategies come after it."""
    line, first = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))[0]
    assert "create_memory_tools(" in first and "recall.invoke(" in first, first
    assert len(first.strip().splitlines()) <= 10, "the first example stays a few lines"
    for later in ("EpisodicState", "TaskCategory", "add_memory_nodes", "Feedback"):
        assert later not in first, later
    source = first.replace('"./.episodic"', repr(str(tmp_path / "first")))
    namespace = _run_blocks("README.md", [(line, source)], monkeypatch, tmp_path, caplog)
    _close_stores(namespace)
    saved = re.search(r'"information": "([^"]+)"', first)
    assert saved and f"- {saved.group(1)}" in capsys.readouterr().out


def test_the_quickstart_shows_how_a_task_category_reaches_the_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The quickstart's episodes carry the category its tasks were given (a plain-string task
    is "unknown"), and what it prints shows that category whole."""
    (line, source), = [(line, source) for line, source
                       in python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
                       if "add_memory_nodes(" in source]
    # Its own folder by absolute path: Chroma keeps one client per path string in a process,
    # and the test above opened "./.episodic" in another working folder.
    assert '"./.episodic"' in source
    source = source.replace('"./.episodic"', repr(str(tmp_path / ".episodic")))
    namespace = _run_blocks("README.md", [(line, source)], monkeypatch, tmp_path, caplog)
    try:
        store = namespace["store"]
        episodes = EpisodicMemory.for_user(store, "alice").episodes()
        categories = {e.task.category for e in episodes}
        assert episodes and TaskCategory.UNKNOWN not in categories, categories
        out = capsys.readouterr().out
        for category in categories:
            assert f"Category: {category.value}\n" in out, out
    finally:
        _close_stores(namespace)
