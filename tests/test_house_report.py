"""``scripts/house_report.py`` runs and prints one ``name = N  # how`` line per count, each
followed by its indented listing (the numbers themselves are a report, not a test)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COUNT = re.compile(r"(\w+) = (\d+)  # \S.*")


def test_the_report_prints_every_count_with_how_it_is_counted() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "house_report.py")],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    lines = done.stdout.splitlines()
    assert lines and all(COUNT.fullmatch(line) or line.startswith("    ") for line in lines), \
        done.stdout
    counts = {m[1]: int(m[2]) for line in lines if (m := COUNT.fullmatch(line))}
    assert set(counts) >= {
        "package_lines", "package_nonblank_lines", "package_code_lines", "code_tokens",
        "statements", "mutual_import_pairs",
        "modules_reaching_into_the_store", "exception_roots", "functions_over_80_lines",
        "top_level_names", "imports_inside_functions",
    }
