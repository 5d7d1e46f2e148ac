"""Rebuild ``langgraph_episodic/language/background_means.json``: per model, the mean vector of
our background sentences per language, for the packaged all-MiniLM-L6-v2 and the multilingual
model (Universal Sentence Encoder Multilingual v3, the two-language default's German half).

Embeds our own background sentences (``benchmarks/data/background_de.txt`` and
``background_en.txt``, CC0: ordinary things a user tells or asks an assistant, written for this
project) with each model and writes their mean per language, rounded to 6 decimals (see
:mod:`langgraph_episodic.language.baseline`). Run it again only if a packaged model changes:

    python scripts/baseline_vectors.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "data"
TARGET = ROOT / "langgraph_episodic" / "language" / "background_means.json"
LANGUAGES = ("de", "en")


def background(lang: str) -> list[str]:
    """The background sentences of one language."""
    text = (CORPUS / f"background_{lang}.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def means(model: Embeddings) -> dict[str, np.ndarray]:
    """The mean vector of each language's background sentences with ``model``."""
    return {
        lang: np.asarray(model.embed_documents(background(lang)), dtype=np.float64).mean(axis=0)
        for lang in LANGUAGES
    }


def entry(vectors: dict[str, np.ndarray]) -> dict[str, object]:
    """One model's entry of the file: its sentence counts and its means (6 decimals)."""
    return {
        "sentences": {lang: len(background(lang)) for lang in LANGUAGES},
        "means": {lang: [round(float(v), 6) for v in vector] for lang, vector in vectors.items()},
    }


def main() -> None:
    """Write the file."""
    from langgraph_episodic.embeddings import default_embeddings
    from langgraph_episodic.multilingual import MultilingualEmbeddings

    table = {
        "all-MiniLM-L6-v2": entry(means(default_embeddings())),
        "Universal Sentence Encoder Multilingual v3": entry(means(MultilingualEmbeddings())),
    }
    TARGET.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
