"""Every notebook runs top to bottom, offline, in a fresh kernel and a temporary folder.

The notebooks check their own claims with ``assert`` cells, so a notebook that runs also shows
what it says it shows. Each notebook's source is a jupytext percent-format ``.py`` file beside
it (linted and type-checked with the package); the committed ``.ipynb`` must match it and carry no
outputs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb"))
CELL_TIMEOUT_S = 180
OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
}

LIBRARY_NOISE = ("IProgress not found", "TqdmWarning", "TqdmExperimentalWarning", "Loading weights")
"""What libraries print while the model loads, which must not reach a user's notebook."""


def test_there_are_five_walkthroughs() -> None:
    assert [name[:2] for name in NOTEBOOKS] == ["01", "02", "03", "04", "05"], NOTEBOOKS


def test_notebooks_match_their_sources_and_have_no_outputs() -> None:
    result = subprocess.run(
        [sys.executable, str(NOTEBOOK_DIR / "_pair.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    for name in NOTEBOOKS:
        notebook = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
        assert notebook.cells[0].cell_type == "markdown", name
        assert "What this notebook shows" in notebook.cells[0].source, name
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, name


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in OFFLINE_ENV.items():
        monkeypatch.setenv(key, value)  # the kernel inherits this process's environment
    temp = tmp_path / "temp"  # the kernel's temporary folder (tempfile reads TMPDIR)
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    # torch keeps one cache folder per user in the temp dir ("torchinductor_<user>", made on
    # import and reused by every later run): torch's, not the notebook's, so it goes elsewhere.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "torch-cache"))
    work = tmp_path / "work"
    work.mkdir()
    notebook = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(work)}},
    )
    client.execute()
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.get("output_type") == "error"
    ]
    assert not errors, errors
    curves = [cell for cell in notebook.cells
              if cell.cell_type == "code" and "\nplot_learning_curve(" in "\n" + cell.source]
    assert all(any("image/svg+xml" in output.get("data", {}) for output in cell.outputs)
               for cell in curves), "a learning curve is not shown inline as SVG"
    leaks = [
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.get("output_type") == "stream" and output.get("name") == "stderr"
        and any(noise in output.get("text", "") for noise in LIBRARY_NOISE)
    ]
    assert not leaks, f"library progress bars or warnings leaked into the notebook: {leaks}"
    assert not [p for p in work.iterdir() if p.name == ".episodic"], (
        "a notebook wrote into the working folder's .episodic"
    )
    assert sorted(p.name for p in temp.iterdir()) == [], "a notebook left files in the temp dir"
