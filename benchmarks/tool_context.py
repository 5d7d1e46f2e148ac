"""The memory tools on our German and English sets with the writers' context on and off.

Each set's 50 facts are saved with ``create_memory_tools(store=store, locale=...)`` (every
other option at its default) in a default ``ChromaStore.ephemeral()``, one thread, the clock on
one day; then every question goes through the recall tool. "answer holds the fact": the share
of the 100 paraphrased questions whose answer (at most ``k=3`` memories above the floor
``min_score=0.10``) holds the fact asked about; "empty": the share of the 60 never-said
questions answered with nothing. The context (``memory_context``) must not fill empty answers
with memories that only share the day.

    python benchmarks/tool_context.py
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from _embed_cache import CachedEmbeddings
from _locomo_data import format_table
from german import SETS, load

WHEN = datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)


def measure(lang: str, embedder: Any, *, context: bool) -> tuple[float, float, int]:
    """(answer holds the fact, empty for never-said, facts stored)."""
    from langgraph_episodic import ChromaStore, create_memory_tools
    from langgraph_episodic.embeddings import MODEL_DIMS

    data = load(SETS[lang])
    store = ChromaStore.ephemeral(index={"dims": MODEL_DIMS, "embed": embedder, "fields": ["$"]})
    save, recall = create_memory_tools(store=store, locale=lang, clock=lambda: WHEN)
    config: dict[str, Any] = {"configurable": {"user_id": "u", "thread_id": "u:1"}}
    if not context:
        config["configurable"]["memory_context"] = False
    arg = "information"
    ask = "frage" if lang == "de" else "query"
    for text in data.facts.values():
        save.invoke({arg: text}, config)
    held = sum(data.facts[fact] in recall.invoke({ask: q}, config) for q, fact in data.questions)
    nothing = recall.invoke({ask: "zzzz qqqq"}, config)
    empty = sum(recall.invoke({ask: q}, config) == nothing for q in data.unrelated)
    stored = len(store.search(("memories", "u"), limit=100))
    store.close()
    return held / len(data.questions), empty / len(data.unrelated), stored


def main(argv: Sequence[str] | None = None) -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    from langgraph_episodic.embeddings import default_embeddings

    embedder = CachedEmbeddings(default_embeddings())
    rows: list[list[object]] = []
    for lang in ("de", "en"):
        for context in (False, True):
            held, empty, stored = measure(lang, embedder, context=context)
            rows.append([lang, "on (default)" if context else "off", held, empty, stored])
    embedder.save()
    print(format_table(["lang", "context", "answer holds the fact", "empty", "facts stored"],
                       rows))


if __name__ == "__main__":
    main()
