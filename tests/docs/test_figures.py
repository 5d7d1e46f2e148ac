"""The measured figures in the docs are marked with the command that reproduces them, and are
current: no dependency of a block changed since its figures were measured
(``scripts/figures.py``, docs/development.md "Figures in the docs")."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from script_modules import script_module

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def figures() -> Iterator[ModuleType]:
    with script_module("figures_script", ROOT / "scripts" / "figures.py") as module:
        yield module


def test_every_figure_is_marked_and_current(figures: ModuleType) -> None:
    report = figures.check(ROOT)
    assert not report, (
        "figures in the docs are stale or unmarked; re-run each command, update the figures, "
        "then `python scripts/figures.py --stamp PAGE:LINE`:\n" + "\n".join(report)
    )


def test_the_docs_hold_marked_blocks(figures: ModuleType) -> None:
    pages = {block.page for block in figures.all_blocks(ROOT)}
    assert "docs/benchmarks.md" in pages


# --- the parser, the digest and the detector, on a repository of their own ----------------

PAGE = """# Page

Intro without figures.

<!-- figures: python bench.py --fast | deps: bench.py lib | digest: -->
`python bench.py` measured, load average 1:

| case | ms |
|---|---|
| put | 2.5 ms |

## Next

A setting, not a measurement: the debounce is 1 s by default.
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "bench.py").write_text("print('hi')\n")
    (tmp_path / "lib" / "core.py").write_text("X = 1\n")
    (tmp_path / "docs" / "page.md").write_text(PAGE)
    return tmp_path


def test_a_block_runs_from_its_marker_to_the_next_heading(figures: ModuleType, repo: Path) -> None:
    [block] = figures.blocks(repo, repo / "docs" / "page.md")
    assert (block.page, block.line, block.end) == ("docs/page.md", 5, 12)
    assert block.command == "python bench.py --fast"
    assert block.deps == ("bench.py", "lib")
    assert block.digest == ""


def test_a_block_is_current_once_stamped_and_stale_when_a_dep_changes(
    figures: ModuleType, repo: Path
) -> None:
    assert figures.check(repo) == ["docs/page.md:5: not stamped; re-run: python bench.py --fast"]
    figures.stamp(repo, "docs/page.md:9")  # any line of the block names it
    assert figures.check(repo) == []
    (repo / "lib" / "core.py").write_text("X = 2\n")
    assert figures.check(repo) == [
        "docs/page.md:5: its deps changed since it was measured; re-run: python bench.py --fast"
    ]
    (repo / "lib" / "core.py").write_text("X = 1\n")
    (repo / "lib" / "new.py").write_text("")  # a new file in a folder it depends on
    assert len(figures.check(repo)) == 1


def test_a_missing_dep_is_an_error(figures: ModuleType, repo: Path) -> None:
    (repo / "bench.py").unlink()
    [line] = figures.check(repo)
    assert "dependency 'bench.py' names no file" in line
    with pytest.raises(figures.FigureError, match=r"bench\.py"):
        figures.stamp(repo, "docs/page.md")


def test_a_figure_outside_every_block_is_reported(figures: ModuleType, repo: Path) -> None:
    page = repo / "docs" / "page.md"
    figures.stamp(repo, "docs/page.md")
    page.write_text(
        page.read_text()
        + "\nOn a busy machine a search took 4.5 ms (load average 8).\n"
        + "\n<!-- /figures -->\nThe model measured R@1 0.67 on our set.\n"
    )
    assert figures.unmarked(repo, page) == [(16, "4.5 ms"), (19, "R@1 0.67")]
    assert (
        figures.check(repo)[0]
        == "docs/page.md:16: '4.5 ms' looks measured but has no figures marker"
    )


def test_a_table_of_scores_under_a_measured_paragraph_is_reported(
    figures: ModuleType, repo: Path
) -> None:
    page = repo / "docs" / "page.md"
    page.write_text(
        "# Page\n\nOur benchmark, measured:\n\n| row | a | b |\n|---|---|---|\n| x | 0.24 | 0.55 |\n"
    )
    assert figures.unmarked(repo, page) == [(7, "0.24")]


def test_an_explicit_end_closes_a_block(figures: ModuleType, repo: Path) -> None:
    page = repo / "docs" / "page.md"
    page.write_text(
        "# Page\n\n<!-- figures: python bench.py | deps: bench.py | digest: -->\n"
        "It took 3 s, measured.\n<!-- /figures -->\n\nThen 5 s, measured too.\n"
    )
    [block] = figures.blocks(repo, page)
    assert (block.line, block.end) == (3, 5)
    assert figures.unmarked(repo, page) == [(7, "5 s")]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_stamping_at_a_commit_hashes_the_committed_files(figures: ModuleType, repo: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "measured")
    (repo / "bench.py").write_text("print('changed, not measured')\n")
    figures.stamp(repo, "docs/page.md", commit="HEAD")
    assert figures.check(repo, commit="HEAD") == []
    assert "changed since" in figures.check(repo)[0]


def test_fenced_code_neither_marks_nor_ends_a_block(figures: ModuleType, repo: Path) -> None:
    page = repo / "docs" / "page.md"
    page.write_text(
        "# Page\n\n```text\n<!-- figures: an example | deps: nothing | digest: -->\n```\n\n"
        "<!-- figures: python bench.py | deps: bench.py | digest: -->\n"
        "```bash\n# a comment, no heading\npython bench.py\n```\n\nIt took 3 s, measured.\n"
    )
    [block] = figures.blocks(repo, page)
    assert (block.line, block.end) == (7, 14)
    assert figures.unmarked(repo, page) == []
