"""Pseudo-relevance feedback for hybrid search (``ChromaStore(feedback=True)``; off by default).

After the first ranking, the best live hits for the question (at most :data:`FEEDBACK_DOCS`)
say what else to look for: their terms, weighted by each hit's score and share of its text
(RM3-style, ``P(t) ~ sum_f score_f * tf(t, f) / |f|``), minus the question's own terms, give an
expansion query of the :data:`FEEDBACK_TERMS` heaviest terms. Every candidate, and every memory
the expansion query finds, is then lifted toward the best hit's score:

    score = first + w * expansion_share * (best - first)

with ``first`` the hybrid score for the question, ``best`` the first score of the best live
hit, ``expansion_share`` the lexical share of the expansion query (:func:`.ranking.fusion.lexical_share`,
in ``[0, 1]``) and ``w =`` :data:`FEEDBACK_WEIGHT` (``< 1``). So:

* no score is lowered, and none reaches ``best``: the best hit stays first with its score, and a
  floor keeps its meaning (a question nothing relates to, whose best hit is below the floor,
  still finds nothing; a memory above the floor without feedback is above it with feedback);
* the returned score is the one results are ordered by (monotone, as without feedback);
* a memory sharing context with the best hits (the same session date, a name, a place that the
  question did not mention) can join them.

Measured on LoCoMo (``docs/benchmarks.md``, "LoCoMo, second pass"): with the session date
indexed (``fields=["text", "time"]``) recall@10 0.709 -> 0.741 and recall@5 0.613 -> 0.624,
recall@1 unchanged; over the text alone no change (0.680 -> 0.677). It costs an expansion
query, a second fusion and a second read of hits (a hybrid search takes about 1.8 times as
long embedded: 0.85 against 0.48 ms on LoCoMo, model left out), which is why it is an option.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .ranking.lexical import LexicalIndex, Namespace

FEEDBACK_DOCS = 5
"""How many of the best live hits feed the expansion (chosen on LoCoMo tuning conversations)."""
FEEDBACK_TERMS = 10
"""How many expansion terms are kept."""
FEEDBACK_WEIGHT = 0.8
"""How far a memory holding all of the expansion is lifted toward the best hit (``w``; below 1
so that the best hit stays first). Chosen on LoCoMo tuning conversations among 0.5 / 0.8."""


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
    """``(doc_id, first + weight * expansion * (best - first))`` best first (ties by id), for
    every id in ``first``; ``expansion`` holds shares in ``[0, 1]`` (missing: 0). A score above
    ``best`` (only an id that is not a live hit can have one) is kept as it is.

    >>> ranked = rescore({"a": 0.6, "b": 0.1, "c": 0.0}, 0.6, {"a": 0.2, "c": 0.5})
    >>> [(doc_id, round(score, 3)) for doc_id, score in ranked]
    [('a', 0.6), ('c', 0.24), ('b', 0.1)]
    """
    if not 0.0 <= weight < 1.0:
        raise ValueError(f"weight must be in [0, 1), got {weight!r}.")
    scored = [
        (
            doc_id,
            score
            + weight * min(1.0, max(0.0, expansion.get(doc_id, 0.0))) * max(0.0, best - score),
        )
        for doc_id, score in first.items()
    ]
    scored.sort(key=lambda kv: (-kv[1], kv[0]))
    return scored


def rescore_arrays(
    ids: Sequence[str],
    first: np.ndarray,
    best: float,
    expansion: np.ndarray,
    weight: float = FEEDBACK_WEIGHT,
) -> list[tuple[str, float]]:
    """:func:`rescore` over arrays: ``ids`` distinct, ``first`` their scores and ``expansion``
    their shares (float64, ``0`` for none). The same result (order, and scores bit for bit);
    exact ties of the new scores (broken by id) are handed to :func:`rescore`.

    >>> ranked = rescore_arrays(["a", "b", "c"], np.array([0.6, 0.1, 0.0]), 0.6, np.array([0.2, 0, 0.5]))
    >>> [(doc_id, round(score, 3)) for doc_id, score in ranked]
    [('a', 0.6), ('c', 0.24), ('b', 0.1)]
    """
    if not 0.0 <= weight < 1.0:
        raise ValueError(f"weight must be in [0, 1), got {weight!r}.")
    lift = weight * np.minimum(np.maximum(expansion, 0.0), 1.0) * np.maximum(best - first, 0.0)
    scores = first + lift
    order = np.argsort(-scores)
    ordered = scores[order]
    if (ordered[1:] == ordered[:-1]).any() or np.isnan(ordered).any():
        return rescore(
            dict(zip(ids, first.tolist(), strict=True)),
            best,
            dict(zip(ids, expansion.tolist(), strict=True)),
            weight,
        )
    return list(zip([ids[n] for n in order.tolist()], ordered.tolist(), strict=True))
