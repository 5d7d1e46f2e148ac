"""Print how much disk the installed package and each of its extras take, and the biggest parts.

    python scripts/install_size.py

Reads the environment it runs in: for the package and for each extra, the installed
distributions it needs (its requirements, followed transitively, markers evaluated here) and
the size of their files. An extra's line counts only what it adds to the core install.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

PROJECT = "langgraph-episodic"
Needed = set[tuple[str, tuple[str, ...]]]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


DISTRIBUTIONS = {canonical(d.metadata["Name"]): d for d in metadata.distributions()}


def size_mb(name: str) -> float:
    """Megabytes of the files distribution ``name`` installed."""
    total = 0
    for file in DISTRIBUTIONS[name].files or []:
        path = Path(str(DISTRIBUTIONS[name].locate_file(file)))
        if path.is_file():
            total += path.stat().st_size
    return total / 1e6


def requirements(name: str, extras: tuple[str, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """What ``name`` with ``extras`` requires here: (distribution, its extras)."""
    found = []
    for raw in DISTRIBUTIONS[name].requires or []:
        req = Requirement(raw)
        environments = [{"extra": e} for e in extras] or [{"extra": ""}]
        if req.marker is None or any(req.marker.evaluate(env) for env in environments):
            found.append((canonical(req.name), tuple(sorted(req.extras))))
    return found


def needed(extras: tuple[str, ...] = ()) -> set[str]:
    """The installed distributions the project with ``extras`` needs, itself included."""
    seen: Needed = set()
    todo = [(PROJECT, extras)]
    while todo:
        item = todo.pop()
        if item[0] in DISTRIBUTIONS and item not in seen:
            seen.add(item)
            todo.extend(requirements(*item))
    return {name for name, _ in seen}


def line(label: str, names: set[str]) -> str:
    biggest = sorted(names, key=size_mb, reverse=True)[:6]
    parts = ", ".join(f"{n} {size_mb(n):.0f}" for n in biggest)
    return f"{label:<18} {sum(map(size_mb, names)):>6.0f} MB in {len(names):>3} distributions ({parts})"


def main() -> None:
    core = needed()
    print(line("core", core))
    project = DISTRIBUTIONS[PROJECT].metadata
    for extra in project.get_all("Provides-Extra") or []:
        print(line(f"[{extra}] adds", needed((extra,)) - core))


if __name__ == "__main__":
    main()
