"""Does episode recall tell related tasks from unrelated ones? A small English/German set.

20 past episodes across the demo's task categories (code generation, debugging, refactoring,
testing, architecture; English and German), then 20 new tasks that redo one of them in other
words (related: each names the episode it redoes) and 20 that none of them covers (unrelated:
everyday requests, other domains, English and German). Each new task is recalled with
``EpisodicMemory.recall(task, top_k=3, min_score=floor)`` on several stores:

* ``chroma``: a default ``ChromaStore.ephemeral()`` (hybrid ranking, the packaged two-language
  embedder): what the library's nodes and the middleware use;
* ``memory``: LangGraph's ``InMemoryStore`` with the packaged model (cosine);
* ``chroma-hash`` / ``memory-hash``: the same with 64-d ``HashEmbeddings``, as the learning
  benchmark and the tests run.

``min_score="auto"`` is the recall's default: the floor for the store's kind of score
(``HYBRID_FLOOR`` on ``chroma*``, ``COSINE_FLOOR`` on ``memory*``); ``none`` keeps every
candidate. Rows per store and floor: "related: recalls its episode" (the share of related tasks whose
episode is among the recalled), "related: recalls any", "unrelated: recalls any" (the share
of unrelated tasks that recall at least one past task: should be 0), and the highest score of
an unrelated task and the lowest best score of a related one.

    python benchmarks/episode_relevance.py
    python benchmarks/episode_relevance.py --stores chroma-hash,memory-hash --floors 0,0.1
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from _locomo_data import format_table

PAST: tuple[tuple[str, str, str], ...] = (
    ("p1", "code_generation", "Write a CSV export module for the billing reports"),
    ("p2", "code_generation", "Implement a rate limiter for the public API"),
    ("p3", "code_generation", "Schreibe einen Parser für Datumsangaben im ISO-Format"),
    ("p4", "code_generation", "Implementiere einen Job-Scheduler mit Cron-Ausdrücken"),
    ("p5", "debugging", "Fix the crash in the login flow when the password is empty"),
    ("p6", "debugging", "The payment webhook processes events twice; find the bug"),
    ("p7", "debugging", "Behebe den Speicherfehler im Session-Cache"),
    ("p8", "debugging", "Der Upload-Handler bricht bei großen Dateien ab; finde den Fehler"),
    ("p9", "refactoring", "Refactor the email renderer into smaller functions"),
    ("p10", "refactoring", "Remove the duplicated code in the config loader"),
    ("p11", "refactoring", "Zerlege die Suchindex-Klasse in kleinere Module"),
    ("p12", "refactoring", "Entferne den doppelten Code im Rechnungsjob"),
    ("p13", "testing", "Add unit tests for the edge cases of the date parser"),
    ("p14", "testing", "Raise the test coverage of the upload handler to 90 percent"),
    ("p15", "testing", "Schreibe Integrationstests für den Zahlungs-Webhook"),
    ("p16", "testing", "Teste den Rate-Limiter unter hoher Last"),
    ("p17", "architecture", "Design how the search index should be split into services"),
    ("p18", "architecture", "Propose a plugin interface for the email renderer"),
    ("p19", "architecture", "Entwirf eine Architektur für den Job-Scheduler mit mehreren Workern"),
    ("p20", "architecture", "Plane die Aufteilung des Login-Dienstes in Microservices"),
)
"""(episode id, category, task)."""

RELATED: tuple[tuple[str, str], ...] = (
    ("Create a module that exports billing reports as CSV files", "p1"),
    ("Build a request rate limiter for our API", "p2"),
    ("Implementiere das Parsen von ISO-Datumsangaben", "p3"),
    ("Write a scheduler that runs jobs from cron expressions", "p4"),
    ("The login flow crashes with an empty password, please fix it", "p5"),
    ("Warum verarbeitet der Payment-Webhook Ereignisse doppelt?", "p6"),
    ("Find the memory leak in the session cache", "p7"),
    ("Large file uploads fail in the upload handler; debug it", "p8"),
    ("Split the email renderer into smaller functions", "p9"),
    ("Der Config-Loader enthält doppelten Code; bitte aufräumen", "p10"),
    ("Break the search index class into smaller modules", "p11"),
    ("Clean up the duplicated code in the billing job", "p12"),
    ("Teste die Randfälle des Datumsparsers", "p13"),
    ("Increase test coverage for the upload handler", "p14"),
    ("Write integration tests for the payment webhook", "p15"),
    ("Load-test the rate limiter", "p16"),
    ("Wie teilen wir den Suchindex in mehrere Dienste auf?", "p17"),
    ("Design a plugin API for the email renderer", "p18"),
    ("Plan a multi-worker architecture for the job scheduler", "p19"),
    ("Split the login service into microservices", "p20"),
)
"""(new task, the past episode it redoes)."""

UNRELATED: tuple[str, ...] = (
    "How does Alice take her coffee?",
    "Plan a birthday party for my daughter",
    "What's the weather in Berlin tomorrow?",
    "Recommend a good science fiction novel",
    "Translate this letter into French",
    "How long should I boil an egg?",
    "Book a table for two on Friday evening",
    "Summarise the plot of Hamlet",
    "What are the opening hours of the museum?",
    "Suggest a name for my new puppy",
    "Wie backe ich einen Apfelkuchen?",
    "Wann fährt der nächste Zug nach Hamburg?",
    "Empfiehl mir ein Restaurant in München",
    "Wie trinkt Alice ihren Kaffee?",
    "Schreibe ein Gedicht über den Herbst",
    "Was soll ich meiner Mutter zum Geburtstag schenken?",
    "Wie pflege ich eine Orchidee?",
    "Erkläre mir die Regeln von Schach",
    "Welche Wanderwege gibt es im Schwarzwald?",
    "Wie viel Urlaub habe ich noch?",
)
"""New tasks none of the past episodes covers."""


def make_store(kind: str) -> Any:
    """A fresh store of ``kind`` (see the module docstring)."""
    from langgraph.store.memory import InMemoryStore

    from langgraph_episodic import ChromaStore, HashEmbeddings
    from langgraph_episodic.embeddings import packaged_index

    if kind == "chroma":
        return ChromaStore.ephemeral()
    if kind == "memory":
        return InMemoryStore(index=packaged_index())
    hashed: Any = {"dims": 64, "embed": HashEmbeddings(64)}
    if kind == "chroma-hash":
        return ChromaStore.ephemeral(index=hashed)
    if kind == "memory-hash":
        return InMemoryStore(index=hashed)
    raise ValueError(f"Unknown store {kind!r}; use chroma, memory, chroma-hash or memory-hash.")


def recorded(kind: str) -> Any:
    """An ``EpisodicMemory`` on a fresh store of ``kind`` holding the past episodes."""
    from langgraph_episodic import EpisodicMemory
    from langgraph_episodic.episodic.records import (
        Episode,
        Feedback,
        OutcomeStatus,
        TaskCategory,
        TaskDescription,
    )

    memory = EpisodicMemory.for_user(make_store(kind), "bench")
    for n, (episode_id, category, text) in enumerate(PAST):
        task = TaskDescription(text, TaskCategory(category))
        memory.record(Episode(episode_id, task, "done", Feedback(1.0), OutcomeStatus.SUCCESS,
                              timestamp=1000.0 + n, strategy_used="iterative"))
    return memory


def measure(memory: Any, floor: float | str | None) -> list[object]:
    """The row cells for one store and floor (``"auto"``: the recall's default)."""
    own = anything = false = 0
    lowest_best, highest = 1.0, 0.0
    for text, episode_id in RELATED:
        every = memory.recall(text, top_k=3, current_time=2000.0, min_score=None)
        lowest_best = min(lowest_best, max((r.similarity for r in every), default=0.0))
        kept = memory.recall(text, top_k=3, current_time=2000.0, min_score=floor)
        own += any(r.episode.episode_id == episode_id for r in kept)
        anything += bool(kept)
    for text in UNRELATED:
        every = memory.recall(text, top_k=3, current_time=2000.0, min_score=None)
        highest = max(highest, max((r.similarity for r in every), default=0.0))
        false += bool(memory.recall(text, top_k=3, current_time=2000.0, min_score=floor))
    n, m = len(RELATED), len(UNRELATED)
    return [own / n, anything / n, false / m, highest, lowest_best]


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", default="chroma,memory,chroma-hash,memory-hash")
    parser.add_argument("--floors", default="none,auto,0.1,0.15,0.2,0.3,0.4,0.5",
                        help="comma-separated min_score values ('none': no floor, the recall's "
                        "default before; 'auto': its default now)")
    args = parser.parse_args(argv)
    floors = [f if f == "auto" else None if f == "none" else float(f)
              for f in args.floors.split(",")]
    rows: list[list[object]] = []
    for kind in args.stores.split(","):
        memory = recorded(kind)
        for floor in floors:
            rows.append([kind, "none" if floor is None else floor, *measure(memory, floor)])
    print(format_table(
        ["store", "min_score", "related: its episode", "related: any", "unrelated: any",
         "max unrelated score", "min related best"],
        rows,
    ))


if __name__ == "__main__":
    main()
