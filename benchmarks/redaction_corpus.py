"""Print how the default redactor does on the redaction corpus (tests/reliability/redaction_corpus.py).

    python benchmarks/redaction_corpus.py

One row per kind of personal data (redacted / cases) and one for the look-alikes (kept / cases).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "reliability"))

from redaction_corpus import NEGATIVE, POSITIVE  # the corpus lives with the tests

from langgraph_episodic.privacy import redact_text


def main() -> None:
    rows: dict[str, list[int]] = {}
    for text, secret, placeholder in POSITIVE:
        out = redact_text(text)
        row = rows.setdefault(placeholder, [0, 0])
        row[0] += secret not in out and placeholder in out
        row[1] += 1
    kept = [text for text in NEGATIVE if redact_text(text) == text]
    print(f"{'kind':<14}{'ok':>6}{'cases':>7}")
    for kind, (ok, total) in sorted(rows.items()):
        print(f"{kind:<14}{ok:>6}{total:>7}")
    print(f"{'look-alikes':<14}{len(kept):>6}{len(NEGATIVE):>7}")
    for text in NEGATIVE:
        if text not in kept:
            print(f"  changed: {text!r} -> {redact_text(text)!r}")


if __name__ == "__main__":
    main()
