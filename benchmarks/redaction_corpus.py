"""Print how the default redactor does on the redaction corpus (tests/reliability/redaction_corpus.py),
next to the redactor of an earlier revision, and how long each takes per text.

    python benchmarks/redaction_corpus.py [--before REV] [--repeat N]

``--before`` names a git revision whose ``langgraph_episodic/privacy/redaction.py`` is loaded as the
"before" redactor (default: the last revision with hand-written phone, IBAN and card rules);
``--before ''`` measures only the current code.

Per kind: caught (the secret is gone and the kind's placeholder is there) of its cases, false
alarms (the placeholder put into a look-alike or into another kind's case), precision and recall.
Columns: the earlier revision, the default ``Redactor()`` (phone regions Germany and the US),
and ``Redactor(phone_regions=("DE",))``. The cases are the corpus's ``POSITIVE``, ``US_NATIONAL``
and ``SPELLINGS`` (one number or address in the many ways people write it); the look-alikes its
``NEGATIVE`` and ``NUMBER_LOOK_ALIKES``. ``--before HEAD`` compares with the last commit. Then
every case the default gets wrong, and the time per text (the corpus texts, and
ten memories without personal data, one by one, and a long note, ``--repeat`` times; the best of
five rounds, the redactors taking turns).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "reliability"))

from redaction_corpus import (  # the corpus lives with the tests
    NEGATIVE,
    NUMBER_LOOK_ALIKES,
    POSITIVE,
    SPELLINGS,
    US_NATIONAL,
)

from langgraph_episodic.privacy import Redactor, redact_text

ROOT = Path(__file__).resolve().parents[1]
HAND_WRITTEN = "8f2dc76"
"""The last revision whose phone, IBAN and card rules were hand-written regexes."""

Redact = Callable[[str], str]
KINDS = ("[EMAIL]", "[PHONE]", "[IBAN]", "[CARD]")
CASES = POSITIVE + US_NATIONAL + SPELLINGS
LOOK_ALIKES = NEGATIVE + NUMBER_LOOK_ALIKES
PROSE = [
    "User prefers dark mode and short answers.",
    "Der Nutzer wohnt in Berlin und fährt lieber Rad als Auto.",
    "Alice is allergic to peanuts; order vegetarian for the team lunch.",
    "Lieblingsbuch: Der Zauberberg. Liest abends, meist zwei Kapitel.",
    "Meeting notes: migrate the billing service before the end of the quarter.",
    "Bob works on the search team and reviews pull requests on Fridays.",
    "Sie möchte Antworten auf Deutsch, höflich, ohne Emojis.",
    "Prefers Python 3.12, uses uv, deploys with Docker on 2 servers.",
    "Termin beim Zahnarzt am 12. Mai, danach Einkauf für 4 Personen.",
    "The user asked to be reminded about the 3 open invoices next week.",
]
"""Texts like the ones memory tools save: no personal data, few numbers (timed only)."""


def load_before(rev: str) -> Redact:
    """``redact_text`` of ``redaction.py`` as it was at git revision ``rev``."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:langgraph_episodic/privacy/redaction.py"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    # named inside the package, so that its relative imports (``.text_view``) resolve
    name = f"langgraph_episodic.privacy.redaction_{rev.replace('~', '_').replace('^', '_')}"
    spec = importlib.util.spec_from_file_location(name, f.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    Path(f.name).unlink()
    redact: Redact = module.redact_text
    return redact


def score(redact: Redact) -> dict[str, tuple[int, int, int]]:
    """Per kind: (caught, cases, false alarms); and "look-alikes": (kept, cases, 0)."""
    caught = dict.fromkeys(KINDS, 0)
    cases = dict.fromkeys(KINDS, 0)
    alarms = dict.fromkeys(KINDS, 0)
    for text, secret, placeholder in CASES:
        out = redact(text)
        cases[placeholder] += 1
        caught[placeholder] += secret not in out and placeholder in out
        for kind in KINDS:
            alarms[kind] += kind != placeholder and kind in out and kind not in text
    kept = 0
    for text in LOOK_ALIKES:
        out = redact(text)
        kept += out == text
        for kind in KINDS:
            alarms[kind] += kind in out
    rows = {kind: (caught[kind], cases[kind], alarms[kind]) for kind in KINDS}
    rows["look-alikes"] = (kept, len(LOOK_ALIKES), 0)
    return rows


def per_text_us(redactors: dict[str, Redact], texts: list[str], repeat: int) -> dict[str, float]:
    """Per redactor: µs per text, the best of 5 rounds; each round times every redactor in turn,
    so that a change of load on a shared machine hits them alike."""
    best = dict.fromkeys(redactors, float("inf"))
    for _ in range(5):
        for name, redact in redactors.items():
            start = time.perf_counter()
            for _ in range(repeat):
                for text in texts:
                    redact(text)
            best[name] = min(best[name], time.perf_counter() - start)
    return {name: t / (repeat * len(texts)) * 1e6 for name, t in best.items()}


def _cells(row: tuple[int, int, int], kind: str) -> str:
    ok, total, alarms = row
    if kind == "look-alikes":
        return f"{ok:>4}/{total:<4}{'':>7}{'':>6}{'':>6}"
    precision = ok / (ok + alarms) if ok + alarms else 1.0
    return f"{ok:>4}/{total:<4}{alarms:>7}{precision:>6.2f}{ok / total:>6.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=HAND_WRITTEN, help="git revision to compare with")
    parser.add_argument("--repeat", type=int, default=20, help="passes over the corpus per round")
    args = parser.parse_args()

    redactors: dict[str, Redact] = {}
    if args.before:
        redactors[f"before ({args.before})"] = load_before(args.before)
    redactors["now"] = redact_text
    redactors["now, phone_regions DE"] = Redactor(phone_regions=("DE",)).redact_text
    scores = {name: score(r) for name, r in redactors.items()}

    head = f"{'kind':<13}" + "".join(f"| {name[:34]:<34}" for name in redactors)
    sub = f"{'':<13}" + f"| {'caught':>9}{'false':>7}{'prec':>6}{'rec':>6}  " * len(redactors)
    print(head)
    print(sub)
    for kind in (*KINDS, "look-alikes"):
        print(f"{kind:<13}" + "".join(f"| {_cells(s[kind], kind)}  " for s in scores.values()))

    print("\nCases the current redactor gets wrong:")
    wrong = 0
    for text, secret, placeholder in CASES:
        out = redact_text(text)
        if secret in out or placeholder not in out:
            wrong += 1
            print(f"  missed {placeholder}: {text!r} -> {out!r}")
    for text in LOOK_ALIKES:
        out = redact_text(text)
        if out != text:
            wrong += 1
            print(f"  changed: {text!r} -> {out!r}")
    if not wrong:
        print("  none")

    corpus = [text for text, _, _ in CASES] + list(LOOK_ALIKES)
    note = [" ".join(PROSE) * 4 + " Ruf an: 030 1234567. Am 01.05.2024 um 14:30, Nr. 4711-0815."]
    print(
        f"\nTime per text, best of 5 rounds ({args.repeat} passes): the {len(corpus)} corpus texts"
        f" | {len(PROSE)} memories without personal data | one note of {len(note[0])} characters"
    )
    times = [per_text_us(redactors, texts, args.repeat) for texts in (corpus, PROSE, note)]
    for name in redactors:
        print(f"  {name:<28}" + "".join(f"{t[name]:>10.1f} µs" for t in times))


if __name__ == "__main__":
    main()
