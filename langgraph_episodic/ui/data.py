"""What the inspector's pages show, read through the public ``BaseStore`` API as frozen records.

A user is the label in the user's place of ``(kind, user, ...)``
(:data:`langgraph_episodic.privacy.DEFAULT_SHAPES`), so a user's page lists exactly what
``forget`` deletes. Namespaces whose kind starts with ``_`` are the library's bookkeeping (the
deferred-formation queue): they hold the user's data (forget deletes them, export includes
them), so the pages show them apart (:func:`is_internal`) and search never reads them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from langgraph.store.base import BaseStore, Item, SearchItem

from .._config import namespace_label
from .._types import Namespace
from ..admin.browse import is_internal, search_in, user_namespace_list, value_text
from ..admin.transfer import item_extras, iter_namespace, list_all_namespaces
from ..formation.pending import PENDING

PAGE_SIZE = 50
"""Items per page of a namespace."""
USERS_PER_PAGE = 100
"""Users per page of the home page."""
COUNT_CAP = 1000
"""A namespace's items are counted up to this many ("1000+" beyond)."""
INTERNAL_KINDS = {PENDING: "pending formation"}
"""What the pages call each internal namespace kind the library writes (see
:func:`~langgraph_episodic.admin.browse.is_internal`)."""


def internal_name(ns: Namespace) -> str:
    """How the pages name an internal namespace's kind (``"pending formation"``)."""
    return INTERNAL_KINDS.get(ns[0], f"internal ({ns[0]})")


@dataclass(frozen=True)
class UserSummary:
    label: str
    """The user's namespace label, as stored."""
    namespaces: int
    """Namespaces of memory (internal ones not counted)."""
    user_id: str | None
    """The user id ``forget`` takes (the label decoded), None when the label is not one that
    :func:`~langgraph_episodic._config.namespace_label` makes."""
    pending: int = 0
    """Internal namespaces (threads with turns waiting for deferred formation)."""


@dataclass(frozen=True)
class Overview:
    users: tuple[UserSummary, ...]
    other: tuple[Namespace, ...]
    """Namespaces with no user label (a single label)."""


@dataclass(frozen=True)
class UserNamespaces:
    """A user's namespaces with their item counts (each counted up to :data:`COUNT_CAP`; a
    count of ``COUNT_CAP + 1`` means more)."""

    memory: tuple[tuple[Namespace, int], ...]
    internal: tuple[tuple[Namespace, int], ...]
    """Bookkeeping of the library (:func:`is_internal`), e.g. turns waiting for formation."""


@dataclass(frozen=True)
class Row:
    """One item as a page lists it."""

    item: Item
    text: str
    expires_at: datetime | None
    ttl: float | None


SORTS = {"updated": "newest first", "oldest": "oldest first", "key": "by key"}
"""How a namespace's items can be listed (``updated``: the store's order, the default)."""
SORT_CAP = 10_000
"""The most items another order than ``updated`` reads and sorts (the newest ones)."""


@dataclass(frozen=True)
class Page:
    rows: tuple[Row, ...]
    offset: int
    more: bool
    capped: bool = False
    """True when only the newest :data:`SORT_CAP` items were sorted."""


def user_id_of(label: str) -> str | None:
    """The user id whose :func:`namespace_label` is ``label``, or None."""
    decoded = label.replace("%2E", ".").replace("%2A", "*").replace("%00", "\x00").replace(
        "%25", "%")
    try:
        return decoded if namespace_label(decoded) == label else None
    except ValueError:
        return None


def overview(store: BaseStore) -> Overview:
    """Every user (with the number of their namespaces) and the namespaces of no user."""
    users: dict[str, list[int]] = {}
    other: list[Namespace] = []
    for ns in list_all_namespaces(store):
        if len(ns) >= 2:
            counts = users.setdefault(ns[1], [0, 0])
            counts[is_internal(ns)] += 1
        else:
            other.append(ns)
    return Overview(tuple(UserSummary(label, memory, user_id_of(label), pending)
                          for label, (memory, pending) in sorted(users.items())), tuple(other))


def memory_namespace_list(store: BaseStore, label: str) -> list[Namespace]:
    """The user's namespaces of memory (what recall and search read): internal ones left out."""
    return [ns for ns in user_namespace_list(store, label) if not is_internal(ns)]


def _count(store: BaseStore, ns: Namespace) -> int:
    return sum(1 for _ in itertools.islice(iter_namespace(store, ns), COUNT_CAP + 1))


def user_namespace_counts(store: BaseStore, label: str) -> UserNamespaces:
    """The user's namespaces, memory and internal apart, with their item counts."""
    found = user_namespace_list(store, label)
    return UserNamespaces(
        memory=tuple((ns, _count(store, ns)) for ns in found if not is_internal(ns)),
        internal=tuple((ns, _count(store, ns)) for ns in found if is_internal(ns)),
    )


def _rows(store: BaseStore, items: Sequence[Item]) -> tuple[Row, ...]:
    extras = item_extras(store, items)
    rows = []
    for it in items:
        extra = extras.get((tuple(it.namespace), it.key))
        rows.append(Row(it, value_text(it.value), None if extra is None else extra.expires_at,
                        None if extra is None else extra.ttl))
    return tuple(rows)


def items_page(
    store: BaseStore, namespace: Namespace, offset: int, limit: int = PAGE_SIZE, *,
    contains: str = "", sort: str = "updated",
) -> Page:
    """Items whose namespace is exactly ``namespace``, one page: those whose key or text
    holds ``contains`` (any case), in the order ``sort`` names (:data:`SORTS`)."""
    items = iter_namespace(store, namespace)
    if contains:
        needle = contains.casefold()
        items = (it for it in items
                 if needle in it.key.casefold() or needle in value_text(it.value).casefold())
    capped = False
    if sort != "updated":
        read = list(itertools.islice(items, SORT_CAP + 1))
        capped, read = len(read) > SORT_CAP, read[:SORT_CAP]
        read.sort(key=lambda it: it.key if sort == "key" else it.updated_at.isoformat())
        items = iter(read)
    got = list(itertools.islice(items, offset, offset + limit + 1))
    return Page(rows=_rows(store, got[:limit]), offset=offset, more=len(got) > limit,
                capped=capped)


def item_row(store: BaseStore, namespace: Namespace, key: str) -> Row | None:
    item = store.get(namespace, key, refresh_ttl=False)
    return None if item is None else _rows(store, [item])[0]


def search_hits(
    store: BaseStore, query: str, *, label: str | None, limit: int, floor: float | None
) -> list[SearchItem]:
    """The best ``limit`` hits for ``query`` (in the user's namespaces of memory when ``label``
    is given), keeping those scored at least ``floor``; internal namespaces are never hits."""
    namespaces = None if label is None else user_namespace_list(store, label)
    hits = search_in(store, query, namespaces, limit)
    if floor is not None:
        hits = [h for h in hits if h.score is not None and h.score >= floor]
    return hits


def rewrite_text(store: BaseStore, row: Row, text: str) -> None:
    """Put the item again with its text replaced, keeping its index fields and TTL, so the
    store embeds the new text (``created_at`` is kept by stores that keep it)."""
    ns, key = tuple(row.item.namespace), row.item.key
    extras = item_extras(store, [row.item]).get((ns, key))
    kept: dict[str, Any] = {} if extras is None else {"index": extras.index, "ttl": extras.ttl}
    store.put(ns, key, {**row.item.value, "text": text}, **kept)
