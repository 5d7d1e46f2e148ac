"""LoCoMo loading and the evidence-recall measure, shared by the LoCoMo benchmark scripts.

The data (CC BY-NC 4.0) is read from ``../shared/data/locomo/`` or a path the caller gives; it
is never copied into this repository. See that folder's README for the format.

The measure: for each question with evidence, the share of its evidence turns found in the top
k results (LoCoMo's "recall accuracy"), and hit@k (at least one evidence turn in the top k);
both averaged over questions, overall and per category.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10-dev.json"
)
"""Where the development half lives next to the checkout (``../shared/data/locomo/``)."""

KS = (1, 5, 10)
"""The cut-offs reported everywhere."""

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
"""LoCoMo question categories by number."""

_DIA_ID = re.compile(r"^D(\d+):(\d+)$")
LOCOMO_TIME = "%I:%M %p on %d %B, %Y"
"""How LoCoMo writes a session's time ("1:56 pm on 8 May, 2023")."""


def session_time(text: str) -> datetime:
    """A LoCoMo session time as an aware datetime (UTC: the data names no zone)."""
    return datetime.strptime(text, LOCOMO_TIME).replace(tzinfo=timezone.utc)


class SessionClock:
    """A writer's clock set to the session being written (``now``)."""

    def __init__(self) -> None:
        self.now = datetime(2023, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


@dataclass(frozen=True)
class Turn:
    """One dialogue turn, stored as one memory."""

    dia_id: str
    speaker: str
    text: str
    session: int
    time: str

    @property
    def document(self) -> str:
        """The indexed text: ``"speaker: text"``."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class Question:
    """One question with its cleaned evidence turn ids (never empty)."""

    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo conversation: its turns in order and its scored questions."""

    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def clean_evidence(raw: Iterable[str], known: set[str] | frozenset[str]) -> tuple[str, ...]:
    """Normalise LoCoMo evidence ids: split on ``;``, drop stray colons and leading zeros,
    and keep only ids naming a known turn (order kept, duplicates dropped).

    >>> clean_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D"], {"D8:6", "D9:17", "D11:26", "D30:5"})
    ('D8:6', 'D9:17', 'D11:26', 'D30:5')
    """
    out: list[str] = []
    for item in raw:
        for part in str(item).split(";"):
            text = part.strip().replace(" ", "")
            if text.startswith("D:"):
                text = "D" + text[2:]
            match = _DIA_ID.match(text)
            if not match:
                continue
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia_id in known and dia_id not in out:
                out.append(dia_id)
    return tuple(out)


def load_conversations(path: str | Path = DEFAULT_DATA) -> list[Conversation]:
    """Read a LoCoMo JSON file; questions without usable evidence are dropped."""
    file = Path(path)
    if not file.exists():
        raise FileNotFoundError(
            f"LoCoMo data not found at {file}. Pass its path with --data "
            "(the file is locomo10-dev.json from the shared data folder)."
        )
    raw = json.loads(file.read_text(encoding="utf-8"))
    conversations = []
    for item in raw:
        conv = item["conversation"]
        sessions = sorted(
            int(key.split("_")[1])
            for key, value in conv.items()
            if key.startswith("session_") and isinstance(value, list)
        )
        turns = [
            Turn(
                dia_id=turn["dia_id"],
                speaker=turn["speaker"],
                text=turn["text"],
                session=n,
                time=conv.get(f"session_{n}_date_time", ""),
            )
            for n in sessions
            for turn in conv[f"session_{n}"]
        ]
        known = {turn.dia_id for turn in turns}
        questions = []
        for qa in item["qa"]:
            evidence = clean_evidence(qa.get("evidence", []), known)
            if evidence:
                questions.append(Question(qa["question"], int(qa["category"]), evidence))
        conversations.append(Conversation(item["sample_id"], tuple(turns), tuple(questions)))
    return conversations


class RecallTally:
    """Accumulates evidence recall@k and hit@k per question, overall and per category."""

    def __init__(self, ks: Sequence[int] = KS) -> None:
        self.ks = tuple(ks)
        self._rows: dict[int, list[tuple[list[float], list[float]]]] = defaultdict(list)

    def add(self, question: Question, ranked_ids: Sequence[str]) -> None:
        """Score one question against its ranked result ids (best first)."""
        evidence = set(question.evidence)
        recalls, hits = [], []
        for k in self.ks:
            found = len(evidence.intersection(ranked_ids[:k]))
            recalls.append(found / len(evidence))
            hits.append(1.0 if found else 0.0)
        self._rows[question.category].append((recalls, hits))

    def add_groups(self, question: Question, ranked: Sequence[Iterable[str]]) -> None:
        """Score one question against ranked results that each stand for several turns: a
        turn counts at ``k`` when one of the top ``k`` results stands for it."""
        evidence = set(question.evidence)
        recalls, hits = [], []
        for k in self.ks:
            found = len(evidence & {d for group in ranked[:k] for d in group})
            recalls.append(found / len(evidence))
            hits.append(1.0 if found else 0.0)
        self._rows[question.category].append((recalls, hits))

    def count(self, category: int | None = None) -> int:
        """Number of scored questions (in one category, or overall)."""
        if category is None:
            return sum(len(rows) for rows in self._rows.values())
        return len(self._rows.get(category, []))

    def summary(self, category: int | None = None) -> dict[str, float]:
        """Mean ``R@k`` and ``hit@k`` (keys like ``"R@5"``, ``"hit@5"``)."""
        rows = (
            [row for rows in self._rows.values() for row in rows]
            if category is None
            else self._rows.get(category, [])
        )
        out: dict[str, float] = {}
        n = max(len(rows), 1)
        for i, k in enumerate(self.ks):
            out[f"R@{k}"] = sum(row[0][i] for row in rows) / n
        for i, k in enumerate(self.ks):
            out[f"hit@{k}"] = sum(row[1][i] for row in rows) / n
        return out

    def categories(self) -> list[int]:
        """The categories seen, in order."""
        return sorted(self._rows)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table; floats shown with three decimals."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}"
        return str(value)

    body = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(headers)]
    lines = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    lines += [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in body
    ]
    return "\n".join(lines)
