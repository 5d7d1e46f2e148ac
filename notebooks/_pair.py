"""Write each walkthrough's ``.ipynb`` from its jupytext percent-format ``.py`` file.

The ``.py`` files are the source: ruff and mypy read them like any other code. Edit one, run
``python notebooks/_pair.py``, and commit both files. The ``.ipynb`` files carry no outputs and
stable cell ids, so regenerating gives identical files; ``--check`` fails when a committed
notebook differs from its ``.py``. Every notebook is executed offline by
``tests/docs/test_notebooks.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import jupytext
import nbformat

HERE = Path(__file__).resolve().parent
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def sources() -> list[Path]:
    """The percent-format sources, one per notebook (``01_quickstart.py``, ...)."""
    return sorted(p for p in HERE.glob("[0-9][0-9]_*.py"))


def render(source: Path) -> str:
    """The ``.ipynb`` text for one source file."""
    notebook = jupytext.read(source, fmt="py:percent")
    notebook.metadata = dict(METADATA)
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index:02d}"
        cell["metadata"] = {}
        if cell.cell_type == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return nbformat.writes(notebook) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a notebook is out of date")
    args = parser.parse_args(argv)
    stale = []
    for source in sources():
        target = source.with_suffix(".ipynb")
        text = render(source)
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(target.name)
        else:
            target.write_text(text, encoding="utf-8")
            print("wrote", target.relative_to(HERE.parent))
    orphans = sorted(
        p.name for p in HERE.glob("*.ipynb") if not p.with_suffix(".py").exists()
    )
    if orphans:
        print("notebooks without a .py source:", ", ".join(orphans), file=sys.stderr)
        return 1
    if stale:
        print("out of date (run python notebooks/_pair.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
