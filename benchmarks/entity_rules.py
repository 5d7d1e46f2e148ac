"""Precision and recall of the rule-based entity extractor (no chat model), German and English.

The labelled sets ``benchmarks/data/entity_rules_{de,en}.jsonl`` were written for this project
(CC0, see ``benchmarks/data/LICENSE``): user messages that state facts about named people,
places, companies, products and pets, and look-alikes that name nothing worth storing:
imperative task descriptions of a coding agent, acronyms in task text (API, CSV, JSON),
questions, ordinary statements and, in German, sentences full of capitalised common nouns.
Each line gives the text, the names an extractor should store and its half: the rules were
adjusted on the "tune" half; the "held-out" half was written after that and not tuned on.

A name counts as found when the extractor returns it (case and spacing ignored, as the store's
keys are); precision is found gold names over all names returned, recall found gold names over
all gold names, each per language and per kind of message.

    python benchmarks/entity_rules.py             # the table
    python benchmarks/entity_rules.py --show      # and every wrong or missed name
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from langgraph_episodic._runner import run
from langgraph_episodic.kinds.entities import EntityWriter
from langgraph_episodic.kinds.entity_rules import entity_key

DATA = Path(__file__).resolve().parent / "data"
LANGUAGES = ("de", "en")
SPLITS = ("tune", "held-out")
"""The rules were adjusted while looking at the "tune" half only; the "held-out" half was
written afterwards and is reported as it came out."""


@dataclass(frozen=True)
class Labelled:
    """One message of a labelled set and the names it states something about."""

    id: str
    lang: str
    split: str
    kind: str
    text: str
    entities: tuple[str, ...]


@dataclass(frozen=True)
class Score:
    """Counts of one group of messages."""

    messages: int
    gold: int
    returned: int
    correct: int

    @property
    def precision(self) -> float:
        """Correct names over returned names (1.0 when nothing was returned)."""
        return self.correct / self.returned if self.returned else 1.0

    @property
    def recall(self) -> float:
        """Correct names over gold names (1.0 when there are none)."""
        return self.correct / self.gold if self.gold else 1.0


def load(lang: str, data: Path = DATA) -> list[Labelled]:
    """The labelled set of ``lang`` (``"de"`` or ``"en"``)."""
    rows = []
    for line in (data / f"entity_rules_{lang}.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows.append(Labelled(row["id"], lang, row["split"], row["kind"], row["text"],
                                 tuple(row["entities"])))
    return rows


def extracted_names(text: str) -> list[str]:
    """What the rule path of the entity-extract node would store for ``text``."""
    return [e.name for e in run(EntityWriter(None).extract(text))]


def score(rows: Sequence[Labelled]) -> tuple[Score, list[tuple[str, str, str]]]:
    """The counts over ``rows`` and each mistake as (id, "wrong"/"missed", name)."""
    gold = returned = correct = 0
    mistakes = []
    for row in rows:
        want = {entity_key(n) for n in row.entities}
        got = {entity_key(n): n for n in extracted_names(row.text)}
        gold += len(want)
        returned += len(got)
        correct += len(want & set(got))
        mistakes += [(row.id, "wrong", got[k]) for k in sorted(set(got) - want)]
        mistakes += [(row.id, "missed", n) for n in row.entities if entity_key(n) not in got]
    return Score(len(rows), gold, returned, correct), mistakes


def table(rows_by_lang: dict[str, list[Labelled]]) -> list[str]:
    """The table lines: per language, one row per kind of message, then the tuning half, the
    held-out half and all messages."""
    lines = [f"{'lang':<5} {'messages':<10} {'count':>6} {'gold':>5} {'returned':>8} "
             f"{'precision':>9} {'recall':>7}"]
    for lang, rows in rows_by_lang.items():
        kinds = sorted({r.kind for r in rows}, key=lambda k: (k != "fact", k))
        groups = [(kind, [r for r in rows if r.kind == kind]) for kind in kinds]
        groups += [(split, [r for r in rows if r.split == split]) for split in SPLITS]
        for label, group in [*groups, ("all", rows)]:
            s, _ = score(group)
            lines.append(f"{lang:<5} {label:<10} {s.messages:>6} {s.gold:>5} {s.returned:>8} "
                         f"{s.precision:>9.3f} {s.recall:>7.3f}")
    return lines


def main(argv: Sequence[str] | None = None) -> dict[str, Score]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="list every wrong or missed name")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows_by_lang = {lang: load(lang) for lang in LANGUAGES}
    print("Rule-based entity extraction (model=None) on the labelled sets in benchmarks/data/")
    print("\n".join(table(rows_by_lang)))
    scores = {}
    for lang, rows in rows_by_lang.items():
        scores[lang], mistakes = score(rows)
        if args.show:
            for row_id, what, name in mistakes:
                print(f"  {row_id}: {what} {name!r}")
    print(f"\n(ran in {time.perf_counter() - started:.1f} s)")
    return scores


if __name__ == "__main__":
    main()
