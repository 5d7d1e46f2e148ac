"""The memory tools' answers on the German and English memory sets, as a new user gets them.

Each set's 50 facts are saved with the save tool (``memory_speichern``; English: the English
tools) into a fresh ``ChromaStore.ephemeral`` with no option set, then every question goes to
the recall tool (``memory_abrufen``, its default ``k=3`` and floor). Columns: the share of the
100 paraphrased questions whose fact is in the answer (its first line: first), and the share of
the 60 never-said questions answered "nothing found". Rows: the store's default embedder and the
packaged MiniLM alone (``index=packaged_index()``, the default before the two-language one).
The tune / held-out halves are ``german.py``'s.

    python benchmarks/german_tools.py
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from _embed_cache import CachedEmbeddings
from _locomo_data import format_table
from german import SETS, EvalSet, load, tune_half

from langgraph_episodic import ChromaStore
from langgraph_episodic.bilingual import BILINGUAL_DIMS, BilingualEmbeddings
from langgraph_episodic.embeddings import MODEL_DIMS, default_embeddings
from langgraph_episodic.multilingual import MultilingualEmbeddings
from langgraph_episodic.tools import create_memory_tools

NOTHING = {
    "de": "Keine relevanten Informationen im Gedächtnis gefunden.",
    "en": "No relevant information found in memory.",
}


def answers(data: EvalSet, index: Any, locale: str) -> tuple[list[bool], list[bool], list[bool]]:
    """(fact in the answer, fact first, never-said answered with nothing) per question."""
    store = ChromaStore.ephemeral(index=index)
    save, recall = create_memory_tools(store=store, locale=locale)
    arg = "frage" if locale == "de" else "query"
    config = {"configurable": {"user_id": "user"}}
    for text in data.facts.values():
        save.invoke({"information": text}, config)
    held, first = [], []
    for question, fid in data.questions:
        lines = str(recall.invoke({arg: question}, config)).splitlines()[1:]
        fact = data.facts[fid]
        held.append(any(fact in line for line in lines))
        first.append(bool(lines) and fact in lines[0])
    nothing = []
    for question in data.unrelated:
        nothing.append(str(recall.invoke({arg: question}, config)) == NOTHING[locale])
    store.close()
    return held, first, nothing


def main() -> None:
    """Print the table."""
    minilm = CachedEmbeddings(default_embeddings())
    usem = CachedEmbeddings(MultilingualEmbeddings(), name="use-m3")
    both = BilingualEmbeddings(minilm, usem)
    embedders = {
        "default (two-language)": {"dims": BILINGUAL_DIMS, "embed": both, "fields": ["$"]},
        "packaged MiniLM alone": {"dims": MODEL_DIMS, "embed": minilm, "fields": ["$"]},
    }
    body: list[list[object]] = []
    for lang, path in SETS.items():
        data = load(path)
        tune_q, tune_u = (np.asarray(t) for t in tune_half(data))
        for name, index in embedders.items():
            print(f"  {lang} {name} ...", file=sys.stderr)
            held, first, nothing = (np.asarray(x) for x in answers(data, index, lang))
            body.append([
                lang, name, f"{held.mean():.2f}", f"{first.mean():.2f}", f"{nothing.mean():.2f}",
                f"{held[tune_q].mean():.2f} / {held[~tune_q].mean():.2f}",
                f"{nothing[tune_u].mean():.2f} / {nothing[~tune_u].mean():.2f}",
            ])  # fmt: skip
    minilm.save()
    usem.save()
    headers = ["lang", "embedder", "fact in the answer", "fact first", "never-said: nothing",
               "in the answer tune / held", "nothing tune / held"]  # fmt: skip
    print("\nThe memory tools' answers (save tool, then recall tool; defaults)\n")
    print(format_table(headers, body))


if __name__ == "__main__":
    main()
