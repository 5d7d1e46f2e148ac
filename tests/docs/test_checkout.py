"""What a new user creates in a checkout (a virtual environment, the demo's store and plot)
stays out of ``git status``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "path", [".venv/bin/python", ".episodic/checkpoints.sqlite", "learning_curve.svg"]
)
def test_what_a_new_user_creates_is_ignored(path: str) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: there is no .gitignore to check")
    result = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT, check=False
    )
    assert result.returncode == 0, f"{path} is not ignored: add it to .gitignore"
