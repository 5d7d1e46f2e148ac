"""``stats`` and ``search``: what a store holds, and what it finds for a query.

Both compute plain data first (:func:`store_stats`, :func:`search_in`) and render it as text
or JSON second, so tests and scripts can use the data directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from langgraph.store.base import BaseStore, SearchItem

from .._config import EPISODES
from .._types import Namespace
from ..privacy.shapes import DEFAULT_SHAPES, matches
from .transfer import iter_namespace, list_all_namespaces
from .wording import count


class _Scored(Protocol):
    @property
    def score(self) -> float | None: ...


T = TypeVar("T", bound=_Scored)


@dataclass(frozen=True)
class Stats:
    """Item counts per namespace and skill profiles per user (from their episodes)."""

    counts: dict[tuple[str, ...], int]
    skills: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """user -> category -> {"attempts", "success_rate", "average_reward", "strategies"}."""

    @property
    def total(self) -> int:
        """Items in the whole store."""
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe view."""
        return {
            "items": self.total,
            "namespaces": [{"namespace": list(ns), "items": n} for ns, n in self.counts.items()],
            "skills": self.skills,
        }


def store_stats(store: BaseStore) -> Stats:
    """Count every namespace's items and profile each user's episodes."""
    counts: dict[tuple[str, ...], int] = {}
    skills: dict[str, dict[str, dict[str, Any]]] = {}
    for namespace in list_all_namespaces(store):
        items = list(iter_namespace(store, namespace))
        counts[namespace] = len(items)
        if len(namespace) != 2 or namespace[0] != EPISODES:
            continue
        # imported here: a store without episodes never loads the episodic package
        from ..episodic.records import Episode, EpisodeSchemaError
        from ..episodic.skills import compute_skill_profiles

        episodes = []
        for item in items:
            try:
                episodes.append(Episode.from_dict(item.value))
            except (EpisodeSchemaError, ValueError, TypeError, KeyError):
                continue  # not an episode: counted above, not profiled
        profiles = compute_skill_profiles(episodes)
        skills[namespace[1]] = {
            category.value: {
                "attempts": p.attempts,
                "success_rate": round(p.success_rate, 4),
                "average_reward": round(p.total_reward / p.attempts, 4) if p.attempts else 0.0,
                "strategies": {
                    name: {"attempts": s.attempts, "success_rate": round(s.success_rate, 4)}
                    for name, s in sorted(p.strategies.items())
                },
            }
            for category, p in sorted(profiles.items(), key=lambda kv: kv[0].value)
        }
    return Stats(counts=counts, skills=skills)


def render_stats(stats: Stats, where: str) -> str:
    """Stats as text for a terminal."""
    lines = [f"{where}: {count(stats.total, 'item')} in {count(len(stats.counts), 'namespace')}"]
    width = max((len("/".join(ns)) for ns in stats.counts), default=0)
    for ns, n in stats.counts.items():
        lines.append(f"  {'/'.join(ns):<{width}}  {n:>6}")
    for user, categories in stats.skills.items():
        lines.append(f"skills of {user!r} (from {EPISODES}/{user}):")
        for category, p in categories.items():
            best = max(p["strategies"].items(), default=None,
                       key=lambda kv: (kv[1]["success_rate"], kv[1]["attempts"]))
            best_text = f"; best strategy {best[0]} ({best[1]['success_rate']:.0%})" if best else ""
            lines.append(f"  {category:<16} {p['attempts']:>4} attempts, "
                         f"{p['success_rate']:.0%} success{best_text}")
    return "\n".join(lines)


def user_namespace_list(store: BaseStore, label: str) -> list[Namespace]:
    """The namespaces of the user whose namespace label is ``label``
    (:func:`~langgraph_episodic._config.namespace_label` of the user id): those
    :func:`langgraph_episodic.privacy.forget_user` deletes, the library's bookkeeping
    included."""
    return [ns for ns in list_all_namespaces(store) if matches(ns, DEFAULT_SHAPES, label)]


def fact_state(record: Any) -> str:
    """A fact version's state as the pages and ``history`` word it (``FactRecord``)."""
    if record.current:
        return "current"
    return "ended" if record.ended_by is not None else "replaced"


def is_internal(ns: tuple[str, ...]) -> bool:
    """Whether ``ns`` is the library's bookkeeping (its kind starts with ``_``: the deferred
    formation's queue, its leases), not memory."""
    return bool(ns) and ns[0].startswith("_")


def search_in(
    store: BaseStore, query: str, namespaces: Sequence[Namespace] | None, limit: int
) -> list[SearchItem]:
    """The best ``limit`` items for ``query``, in the whole store (``namespaces`` None) or in
    each of ``namespaces``; never the library's bookkeeping (:func:`is_internal`), which a
    store may add to a short page as items without a score."""
    if namespaces is None:
        found = store.search((), query=query, limit=limit, refresh_ttl=False)
        return [it for it in found if not is_internal(tuple(it.namespace))]
    return best_hits(lambda ns: store.search(ns, query=query, limit=limit, refresh_ttl=False),
                     namespaces, limit)


def best_hits(search: Callable[[Namespace], Iterable[T]], namespaces: Iterable[Namespace],
              limit: int, item: Callable[[T], Any] = lambda hit: hit) -> list[T]:
    """The best ``limit`` hits (by ``score``) of ``search`` in each of ``namespaces`` but the
    internal ones, each namespace's own items only (a search also reads deeper ones)."""
    found = [hit for ns in namespaces if not is_internal(ns)
             for hit in search(ns) if tuple(item(hit).namespace) == ns]
    found.sort(key=lambda hit: -(hit.score if hit.score is not None else float("-inf")))
    return found[:limit]


def value_text(value: Any) -> str:
    """The text a person would read in a stored value: its ``text`` field if that is a string,
    else its first non-empty string field (depth first, in stored order), else compact JSON."""
    if isinstance(value, dict) and isinstance(value.get("text"), str) and value["text"].strip():
        return str(value["text"])
    found = _first_string(value)
    if found is not None:
        return found
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _first_string(value: Any) -> str | None:
    if isinstance(value, str):
        return value if value.strip() else None
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    )
    for child in children:
        found = _first_string(child)
        if found is not None:
            return found
    return None


def render_results(results: list[SearchItem], *, width: int = 100) -> str:
    """Search results as text: rank, namespace/key, score, and the value's text on one line
    (whole if it fits in ``width`` characters, else cut with an ellipsis)."""
    if not results:
        return "no results"
    lines = []
    for rank, it in enumerate(results, start=1):
        score = "no score" if it.score is None else f"score {it.score:.3f}"
        text = " ".join(value_text(it.value).split())
        if len(text) > width:
            text = text[: width - 1] + "…"
        lines.append(f"{rank:>2}. {'/'.join(it.namespace)}/{it.key}  ({score})\n    {text}")
    return "\n".join(lines)
