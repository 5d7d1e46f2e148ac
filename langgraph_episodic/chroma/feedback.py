"""Pseudo-relevance feedback for hybrid search (``ChromaStore(feedback=True)``; off by default).

After the first ranking, the best live hits for the question (at most :data:`FEEDBACK_DOCS`)
say what else to look for: their terms, weighted by each hit's score and share of its text
(RM3-style, ``P(t) ~ sum_f score_f * tf(t, f) / |f|``), minus the question's own terms, give an
expansion query of the :data:`FEEDBACK_TERMS` heaviest terms. Every candidate, and every memory
the expansion query finds, then scores

    (1 - w) * first(d) + w * best * expansion_share(d)

with ``first`` the hybrid score for the question, ``best`` the first score of the best live
hit, ``expansion_share`` the lexical share of the expansion query (:func:`.fusion.lexical_share`)
and ``w =`` :data:`FEEDBACK_WEIGHT`. So:

* the returned score is the one results are ordered by (monotone, as without feedback);
* no memory scores above ``best``: a question nothing relates to stays below a floor that its
  own best hit is below (feedback only spreads the relevance the question itself found);
* a memory sharing context with the best hits (the same session date, a name, a place that the
  question did not mention) can join them.

Measured on LoCoMo (``docs/benchmarks.md``, "Retrieval quality, issue 16"): with the session
date indexed (``fields=["text", "time"]``) it lifts R@10 from 0.709 to about 0.75 and R@5 from
0.613 to about 0.64, and costs about 0.04 of R@1; on the text alone it does not help. That is
why it is an option and not the default.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .lexical import LexicalIndex, Namespace

FEEDBACK_DOCS = 5
"""How many of the best live hits feed the expansion (chosen on LoCoMo tuning conversations)."""
FEEDBACK_TERMS = 10
"""How many expansion terms are kept."""
FEEDBACK_WEIGHT = 0.5
"""The expansion's share ``w`` of the final score."""


def expansion_terms(
    view: LexicalIndex,
    namespaces: Sequence[Namespace],
    feedback: Sequence[tuple[str, float]],
    exclude: Iterable[str],
    k: int = FEEDBACK_TERMS,
) -> dict[str, float]:
    """The ``k`` heaviest terms of the ``(doc_id, score)`` feedback documents, weights summing
    to 1, without the ``exclude`` terms (the question's own). Empty when no document scores.

    >>> index = LexicalIndex()
    >>> index.upsert_many([(("u",), "a", "kayak trip on the lake"), (("u",), "b", "lake house")])
    >>> sorted(expansion_terms(index, [("u",)], [("a", 0.6), ("b", 0.2)], exclude={"lake"}))
    ['hous', 'kayak', 'trip']
    """
    total = sum(max(score, 0.0) for _, score in feedback)
    if total <= 0.0:
        return {}
    skip = set(exclude)
    weights: dict[str, float] = {}
    for doc_id, score in feedback:
        counts, length = view.term_frequencies(namespaces, doc_id)
        if not length or score <= 0.0:
            continue
        for term, tf in counts.items():
            if term not in skip:
                weights[term] = weights.get(term, 0.0) + (score / total) * tf / length
    kept = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    mass = sum(w for _, w in kept)
    return {term: w / mass for term, w in kept} if mass > 0 else {}


def rescore(
    first: dict[str, float],
    best: float,
    expansion: dict[str, float],
    weight: float = FEEDBACK_WEIGHT,
) -> list[tuple[str, float]]:
    """``(doc_id, (1 - weight) * first + weight * best * expansion)`` best first (ties by id),
    for every id in ``first``; ``expansion`` holds shares in ``[0, 1]`` (missing: 0).

    >>> ranked = rescore({"a": 0.6, "b": 0.1, "c": 0.0}, 0.6, {"a": 0.2, "c": 0.9})
    >>> [(doc_id, round(score, 3)) for doc_id, score in ranked]
    [('a', 0.36), ('c', 0.27), ('b', 0.05)]
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be in [0, 1], got {weight!r}.")
    scored = [
        (doc_id, (1.0 - weight) * score + weight * best * min(1.0, expansion.get(doc_id, 0.0)))
        for doc_id, score in first.items()
    ]
    scored.sort(key=lambda kv: (-kv[1], kv[0]))
    return scored
