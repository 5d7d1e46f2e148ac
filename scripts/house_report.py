"""Print the package's size and shape: the counts a reader pays for, each with how it is counted.

    python scripts/house_report.py          # this checkout
    python scripts/house_report.py PATH     # another checkout (its langgraph_episodic/)

Each count is one line ``name = N  # how it is counted``; the lines under it, indented, list
what was counted. Imports are read with ``ast``: every ``import`` and ``from ... import``
statement, at module level, inside functions and under ``if TYPE_CHECKING:`` alike (the
package's lazy ``import_module`` tables are strings, not imports, and are not counted). A unit
is a subpackage or a top-level module of ``langgraph_episodic`` (``chroma``, ``graph``,
``_config``...); the package's own ``__init__`` is the unit ``(root)``. The script reports and
never fails on a count: ``scripts/check`` runs it as a report.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import importlib
import io
import sys
import tokenize
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "langgraph_episodic"
LONG_FUNCTION = 80
"""A function longer than this many lines (``def`` line to last line) is listed."""
STORE = "chroma"
"""The store's subpackage: the rest of the package should use its public names only."""

BUILTIN_ERRORS = {
    name for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


@dataclass(frozen=True)
class Module:
    """One source file of the package, parsed."""

    name: str
    """Dotted module name (``langgraph_episodic.chroma.store``)."""
    path: Path
    rel: str
    """Path relative to the checkout, for the listings."""
    tree: ast.Module
    is_package: bool

    @property
    def unit(self) -> str:
        parts = self.name.split(".")
        return parts[1] if len(parts) > 1 else "(root)"


@dataclass(frozen=True)
class Import:
    """One imported module (``from m import a, b`` is one per name that is itself a module)."""

    source: Module
    target: str
    names: tuple[str, ...]
    line: int
    in_function: bool


def modules(root: Path) -> list[Module]:
    out = []
    for path in sorted((root / PACKAGE).rglob("*.py")):
        rel = path.relative_to(root)
        parts = list(rel.with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        out.append(Module(".".join(parts), path, str(rel), tree, is_package))
    return out


def _walk(node: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every node with whether it sits inside a function."""
    for child in ast.iter_child_nodes(node):
        yield child, in_function
        inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef
                                          | ast.Lambda)
        yield from _walk(child, inner)


def imports(module: Module, known: set[str]) -> Iterator[Import]:
    """The package modules ``module`` imports (a ``from pkg import sub`` names ``pkg.sub``)."""
    for node, in_function in _walk(module.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    yield Import(module, alias.name, (), node.lineno, in_function)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.name.split(".")
                if not module.is_package:
                    base.pop()
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            names = tuple(alias.name for alias in node.names)
            submodules = [n for n in names if f"{target}.{n}" in known]
            for name in submodules:
                yield Import(module, f"{target}.{name}", (), node.lineno, in_function)
            rest = tuple(n for n in names if n not in submodules)
            if rest:
                yield Import(module, target, rest, node.lineno, in_function)


def _unit(target: str) -> str:
    parts = target.split(".")
    return parts[1] if len(parts) > 1 else "(root)"


def _line_counts(mods: list[Module]) -> tuple[int, int]:
    lines = nonblank = 0
    for m in mods:
        text = m.path.read_text(encoding="utf-8").splitlines()
        lines += len(text)
        nonblank += sum(1 for line in text if line.strip())
    return lines, nonblank


_NOT_CODE = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT,
             tokenize.ENDMARKER}


def _code_counts(mods: list[Module]) -> tuple[int, int, int]:
    """Code lines, code tokens and statements. Docstrings (a string standing as a statement:
    a module's, a class's, a function's, an attribute's) and comments are not code."""
    code_lines = tokens = statements = 0
    for m in mods:
        prose: set[int] = set()
        for node in ast.walk(m.tree):
            statements += isinstance(node, ast.stmt)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, str):
                prose.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        code: set[int] = set()
        text = m.path.read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in _NOT_CODE or (tok.type == tokenize.STRING and tok.start[0] in prose):
                continue
            tokens += 1
            code.update(range(tok.start[0], tok.end[0] + 1))
        code_lines += len(code)
    return code_lines, tokens, statements


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING"))


def _exception_roots(mods: list[Module]) -> tuple[list[str], list[str]]:
    """(every exception class, the roots): a class is an exception when a base is a built-in
    exception, an exception class of the package, or a name ending in Error/Exception/Warning
    (another library's); a root is one none of whose bases is the package's."""
    bases: dict[str, list[str]] = {}
    where: dict[str, str] = {}
    for m in mods:
        for node in ast.walk(m.tree):
            if isinstance(node, ast.ClassDef):
                names = [b.id if isinstance(b, ast.Name) else b.attr
                         for b in node.bases if isinstance(b, ast.Name | ast.Attribute)]
                bases[node.name] = names
                where[node.name] = f"{m.rel}:{node.lineno}"
    errors: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, names in bases.items():
            if name in errors:
                continue
            if any(b in BUILTIN_ERRORS or b in errors
                   or (b not in bases and b.endswith(("Error", "Exception", "Warning")))
                   for b in names):
                errors.add(name)
                changed = True
    listed = sorted(f"{where[n]} {n}({', '.join(bases[n])})" for n in errors)
    roots = sorted(f"{where[n]} {n}({', '.join(bases[n])})" for n in errors
                   if not any(b in errors for b in bases[n]))
    return listed, roots


def _long_functions(mods: list[Module]) -> list[tuple[int, str]]:
    found = []
    for m in mods:
        def visit(node: ast.AST, prefix: str, rel: str = m.rel) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    name = f"{prefix}{child.name}"
                    if not isinstance(child, ast.ClassDef):
                        length = (child.end_lineno or child.lineno) - child.lineno + 1
                        if length > LONG_FUNCTION:
                            found.append((length, f"{rel}:{child.lineno} {name}"))
                    visit(child, f"{name}.")
                else:
                    visit(child, prefix)

        visit(m.tree, "")
    return sorted(found, key=lambda x: (-x[0], x[1]))


def report(root: Path) -> list[str]:
    mods = modules(root)
    known = {m.name for m in mods}
    found = [imp for m in mods for imp in imports(m, known)]
    out: list[str] = []

    def count(name: str, value: int, how: str, details: list[str] | None = None) -> None:
        out.append(f"{name} = {value}  # {how}")
        out.extend(f"    {line}" for line in details or [])

    lines, nonblank = _line_counts(mods)
    count("package_lines", lines,
          f"every line of {PACKAGE}/**/*.py, as `wc -l` counts ({len(mods)} files)")
    count("package_nonblank_lines", nonblank, "the same lines without the blank ones")
    code_lines, tokens, statements = _code_counts(mods)
    count("package_code_lines", code_lines,
          "the lines holding code: not blank, not a docstring's, not only a comment")
    count("code_tokens", tokens, "Python tokens of the code (docstrings and comments left out)")
    count("statements", statements, "statements, as `ast` counts them (nested ones too)")

    edges: Counter[tuple[str, str]] = Counter()
    for imp in found:
        a, b = imp.source.unit, _unit(imp.target)
        if a != b:
            edges[(a, b)] += 1
    pairs = sorted({tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges})
    count("mutual_import_pairs", len(pairs),
          "pairs of units that import each other, every import counted (inside functions and "
          "under TYPE_CHECKING too); in brackets the imports each way",
          [f"{a} <-> {b} ({edges[(a, b)]} / {edges[(b, a)]})" for a, b in pairs])

    store = f"{PACKAGE}.{STORE}"
    public = set(importlib.import_module(store).__all__)
    reaching: dict[str, set[str]] = {}
    for imp in found:
        if imp.source.unit == STORE:
            continue
        if imp.target.startswith(store + ".") or (
                imp.target == store and not set(imp.names) <= public):
            what = imp.target if imp.target != store else f"{store} ({', '.join(imp.names)})"
            reaching.setdefault(imp.source.rel, set()).add(what.removeprefix(PACKAGE + "."))
    count("modules_reaching_into_the_store", len(reaching),
          f"modules outside {PACKAGE}/{STORE}/ importing its submodules or names outside "
          f"{store}.__all__ ({len(public)} names)",
          [f"{rel}: {', '.join(sorted(what))}" for rel, what in sorted(reaching.items())])

    errors, roots = _exception_roots(mods)
    count("exception_classes", len(errors), "classes deriving from an exception class",
          errors)
    count("exception_roots", len(roots),
          "exception classes none of whose bases is an exception class of the package", roots)

    long = _long_functions(mods)
    count("functions_over_80_lines", len(long),
          f"functions and methods longer than {LONG_FUNCTION} lines, def line to last line "
          "(docstring included); length first",
          [f"{n} {where}" for n, where in long])

    top = [n for n in importlib.import_module(PACKAGE).__all__ if not n.startswith("__")]
    count("top_level_names", len(top),
          f"names in {PACKAGE}.__all__ but __version__ (tests/test_public_api.py keeps them <= 45)")

    in_functions = [imp for imp in found if imp.in_function]
    statements = sum(1 for m in mods for node, inside in _walk(m.tree)
                     if inside and isinstance(node, ast.Import | ast.ImportFrom))
    count("imports_inside_functions", statements,
          "import statements inside a function body (of any module, package or not)")
    count("package_imports_inside_functions", len({(i.source.rel, i.line) for i in in_functions}),
          "of those, the statements that import from the package")
    per_unit = Counter((i.source.unit, _unit(i.target)) for i in in_functions
                       if i.source.unit != _unit(i.target))
    count("package_imports_inside_functions_across_units", sum(per_unit.values()),
          "imported modules of another unit, by unit (a statement can import several)",
          [f"{a} -> {b}: {n}" for (a, b), n in sorted(per_unit.items())])
    type_only = sum(1 for m in mods for node in ast.walk(m.tree) if _is_type_checking(node)
                    for stmt in ast.walk(node) if isinstance(stmt, ast.Import | ast.ImportFrom))
    count("imports_under_type_checking", type_only, "import statements under `if TYPE_CHECKING:`")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the checkout to read (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    sys.path.insert(0, str(root))
    print("\n".join(report(root)))


if __name__ == "__main__":
    main()
