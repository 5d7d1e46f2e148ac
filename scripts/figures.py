"""Keep the measured figures in the docs true to the code they were measured on.

    python scripts/figures.py --check      # stale or broken blocks, unmarked figures; exit 1 if any
    python scripts/figures.py --list       # every marked block: page, line, command, deps
    python scripts/figures.py --stamp docs/store.md:57   # after re-running the block's command
    python scripts/figures.py --stamp docs/store.md --at-commit HEAD

A block of measured figures in README.md, docs/*.md or examples/*/README.md sits under a
marker, an HTML comment (invisible once rendered) on lines of its own:

    <!-- figures: python benchmarks/german.py | deps: benchmarks/german.py
         benchmarks/_german_variants.py langgraph_episodic/chroma/ranking | digest: 3f2a9c1d0b7e4a55 -->

``figures`` is the command that reproduces the numbers; ``deps`` the files and folders (of the
repository) whose change can move them; ``digest`` a hash of the deps' contents when the figures
were measured (a folder's files are those in it, ``__pycache__`` and hidden ones aside). The
block runs from the marker to the next marker, the next heading or a ``<!-- /figures -->``
line. ``--check`` hashes the deps as they are now and names every block whose digest differs:
re-run its command, update the figures, then ``--stamp`` the block. It also names figures that
look measured (a number with a unit of time, size, rate or ratio, a recall score, a table of
scores, in a paragraph that says it measured something) outside every block.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("README.md", "docs/*.md", "examples/*/README.md")
"""The pages whose figures are checked, as globs from the repository's root."""

MARKER = re.compile(
    r"<!--\s*figures:\s*(?P<command>.+?)\s*\|\s*deps:\s*(?P<deps>.+?)\s*"
    r"\|\s*digest:\s*(?P<digest>[^\s>]*)\s*-->",
    re.DOTALL,
)
HEADING = re.compile(r"#{1,6} ")
ENDS = re.compile(r"#{1,6} |\s*<!--\s*/figures\s*-->")
"""A block ends before the next heading or an explicit ``<!-- /figures -->``."""
ITEM = re.compile(r"\s*(?:[-*+]|\d+\.) ")
FENCE = re.compile(r"\s*(```|~~~)(\w*)")
CODE_FENCES = {"python", "bash", "sh", "console", "toml", "json", "yaml", "ini", "text"}
"""Fenced blocks of these kinds hold code or commands, not figures; an untagged fence (a
benchmark's printed table) is read like prose."""

NUMBER = r"\d[\d,]*(?:\.\d+)?"
FIGURE = re.compile(
    rf"(?<![\w.@/-]){NUMBER}(?:\s?-\s?{NUMBER})?"
    r"(?:\s?(?:ms|us|µs|min|MiB|MB|GB|KiB|%|(?:items|ops|texts|queries|questions)/s)|s|x|×"
    r"|\s(?:s|x|×))(?![\w/@])"
)
"""A number with a unit: ``12 ms``, ``0.5 s``, ``1.2x``, ``53 %``, ``392 MiB``, ``933 items/s``."""
SCORE = re.compile(
    r"\b(?:R@\d+|recall@\d+|hit@\d+|answer@\d+)\b.*?\b[01]\.\d{2}|\b[01]\.\d{2}.*?\b(?:R@\d+|recall@\d+)"
)
"""A recall score beside the name of its measure, in either order."""
ROW_SCORES = re.compile(r"\b[01]\.\d{2,3}\b(?=.*\b[01]\.\d{2,3}\b)")
"""A table row holding two scores or more (``| rules | 0.94 | 0.88 |``)."""
CUE = re.compile(
    r"measured|\btook\b|load average|\bload \d|median|\bp50\b|\bp95\b|benchmarks?\b|"
    r"R@\d|recall@|hit@|on a (?:busy|quiet|loaded)",
    re.IGNORECASE,
)
"""Words that say a paragraph reports a measurement rather than a setting."""


class FigureError(Exception):
    """A marker names a dependency that does not exist, or a page has no such block."""


@dataclass(frozen=True)
class Block:
    """One marked block of figures."""

    page: str
    """The page, relative to the repository's root."""
    line: int
    """The marker's first line (1-based)."""
    end: int
    """The line before which the block ends (the next marker, heading, ``<!-- /figures -->``
    or the page's end)."""
    command: str
    deps: tuple[str, ...]
    digest: str


def pages(root: Path) -> list[Path]:
    return sorted({p for pattern in PAGES for p in root.glob(pattern)})


def blocks(root: Path, page: Path) -> list[Block]:
    """The marked blocks of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    fences = _fences(lines)
    starts = [(text.count("\n", 0, m.start()) + 1, m) for m in MARKER.finditer(text)]
    starts = [(line, m) for line, m in starts if fences[line - 1] is None]
    found = []
    for i, (line, match) in enumerate(starts):
        stop = starts[i + 1][0] if i + 1 < len(starts) else len(lines) + 1
        after = line + match.group(0).count("\n") + 1
        end = next(
            (n for n in range(after, stop) if fences[n - 1] is None and ENDS.match(lines[n - 1])),
            stop,
        )
        found.append(
            Block(
                page=page.relative_to(root).as_posix(),
                line=line,
                end=end,
                command=" ".join(match["command"].split()),
                deps=tuple(match["deps"].split()),
                digest=match["digest"],
            )
        )
    return found


def all_blocks(root: Path) -> list[Block]:
    return [block for page in pages(root) for block in blocks(root, page)]


@cache
def _git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True).stdout


def dep_files(root: Path, dep: str, commit: str | None = None) -> dict[str, bytes]:
    """The files of dependency ``dep`` (a file or a folder), by path, with their contents: in
    the working tree, or at ``commit`` (git's tracked files)."""
    if commit is not None:
        listed = _git(root, "ls-tree", "-r", "-z", "--name-only", commit, "--", dep)
        names = [n for n in listed.decode().split("\0") if n]
        files = {name: _git(root, "show", f"{commit}:{name}") for name in names}
    else:
        path = root / dep
        found = sorted(path.rglob("*")) if path.is_dir() else [path] if path.is_file() else []
        files = {
            p.relative_to(root).as_posix(): p.read_bytes()
            for p in found
            if p.is_file()
            and p.suffix != ".pyc"
            and not any(
                part.startswith(".") or part == "__pycache__" for part in p.relative_to(path).parts
            )
        }
    if not files:
        where = f"at {commit}" if commit else "in the working tree"
        raise FigureError(f"dependency {dep!r} names no file {where}")
    return files


def digest(root: Path, deps: tuple[str, ...], commit: str | None = None) -> str:
    """A hash of the contents of every file of ``deps`` (16 hex digits)."""
    files: dict[str, bytes] = {}
    for dep in deps:
        files.update(dep_files(root, dep, commit))
    total = hashlib.sha256()
    for name in sorted(files):
        total.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return total.hexdigest()[:16]


def problems(root: Path, block: Block, commit: str | None = None) -> str | None:
    """Why ``block``'s figures may be out of date (against the working tree, or ``commit``), or
    None when they are not."""
    try:
        now = digest(root, block.deps, commit)
    except FigureError as error:
        return str(error)
    if now != block.digest:
        return "not stamped" if not block.digest else "its deps changed since it was measured"
    return None


def _fences(lines: list[str]) -> list[str | None]:
    """For each line, the kind of the fenced block it belongs to (``""`` untagged), or None."""
    kinds: list[str | None] = []
    fence: tuple[str, str] | None = None
    for line in lines:
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = (opening.group(1), opening.group(2))
            kinds.append(fence[1])
        elif fence is not None:
            kinds.append(fence[1])
            if opening and opening.group(1) == fence[0] and not opening.group(2):
                fence = None
        else:
            kinds.append(None)
    return kinds


def _paragraphs(lines: list[str]) -> Iterator[list[int]]:
    """The line numbers (0-based) of each paragraph, list item or table of prose; fenced code
    left out, a fenced block of output (untagged) read as one paragraph."""
    current: list[int] = []
    for n, (line, kind) in enumerate(zip(lines, _fences(lines), strict=True)):
        if kind is not None and (kind in CODE_FENCES or FENCE.match(line)):
            continue
        if kind is None and (not line.strip() or HEADING.match(line) or ITEM.match(line)):
            yield current
            current = []
        if line.strip() and not (kind is None and HEADING.match(line)):
            current.append(n)
    yield current


def unmarked(root: Path, page: Path) -> list[tuple[int, str]]:
    """Figures of ``page`` that look measured and lie outside every block: (line, figure)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    covered = {n - 1 for b in blocks(root, page) for n in range(b.line, b.end)}
    found = []
    before: list[int] = []
    for paragraph in _paragraphs(lines):
        rest = [n for n in paragraph if n not in covered]
        table = bool(paragraph) and lines[paragraph[0]].lstrip().startswith("|")
        context = " ".join(lines[n] for n in (before if table else []) + paragraph)
        if paragraph:
            before = paragraph
        if not rest or not CUE.search(context):
            continue
        for n in rest:
            hit = SCORE.search(lines[n]) or FIGURE.search(lines[n])
            if hit is None and lines[n].lstrip().startswith("|"):
                hit = ROW_SCORES.search(lines[n])
            if hit:
                found.append((n + 1, hit.group(0)))
                break
    return found


def stamp(root: Path, target: str, commit: str | None = None) -> list[Block]:
    """Write the current digest into the marker of the block at ``PAGE:LINE`` (or of every
    block of ``PAGE``); return the blocks stamped."""
    name, _, line = target.partition(":")
    page = root / name
    chosen = [
        b for b in blocks(root, page) if not line or b.line <= int(line) < max(b.end, b.line + 1)
    ]
    if line and not chosen:
        raise FigureError(f"{target}: no marked block there")
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    for block in reversed(chosen):  # from the end, so the earlier markers' offsets hold
        match = MARKER.search(text, sum(len(s) for s in lines[: block.line - 1]))
        assert match is not None
        new = digest(root, block.deps, commit) + ("" if match["digest"] else " ")
        text = text[: match.start("digest")] + new + text[match.end("digest") :]
    page.write_text(text, encoding="utf-8")
    return chosen


def check(root: Path, commit: str | None = None) -> list[str]:
    """Every stale or broken block and every unmarked figure, one line each."""
    report = []
    for block in all_blocks(root):
        problem = problems(root, block, commit)
        if problem:
            report.append(f"{block.page}:{block.line}: {problem}; re-run: {block.command}")
    for page in pages(root):
        for line, figure in unmarked(root, page):
            name = page.relative_to(root).as_posix()
            report.append(f"{name}:{line}: {figure!r} looks measured but has no figures marker")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", action="store_true", help="report stale blocks; exit 1 if any")
    action.add_argument("--list", action="store_true", help="print every marked block")
    action.add_argument("--stamp", nargs="+", metavar="PAGE[:LINE]", help="record the digest")
    parser.add_argument(
        "--at-commit", metavar="REV", help="hash the deps as git's REV holds them, not as they are"
    )
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except FigureError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.list:
        for block in all_blocks(ROOT):
            print(f"{block.page}:{block.line}: {block.command}\n    deps: {' '.join(block.deps)}")
        return 0
    if args.stamp:
        for target in args.stamp:
            for block in stamp(ROOT, target, args.at_commit):
                print(f"stamped {block.page}:{block.line}: {block.command}")
        return 0
    report = check(ROOT, args.at_commit)
    print("\n".join(report) or "every marked figure is current, and none is unmarked")
    return 1 if report else 0


if __name__ == "__main__":
    sys.exit(main())
