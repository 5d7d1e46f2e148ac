"""The pure core shared by ``ChromaStore.batch`` and ``abatch``: validate ops, plan the work.

Nothing here talks to Chroma or to an embedder: :func:`prepare` turns a list of LangGraph ops
into a :class:`Plan` (or raises before anything is written). The sync and async shells only
embed and execute.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from ..errors import Error
from .filters import validate_filter
from .index_paths import check_index
from .limits import Limits
from .values import check_text, validate_value

MAX_TTL_MINUTES = 100 * 365.25 * 24 * 60
"""Longest TTL accepted: 100 years, in minutes. Use ``ttl=None`` for an item that never expires."""

NO_LIMITS = Limits(max_value_bytes=None, max_indexed_bytes=None)
"""No size limits (the store passes its own)."""

Fields = list[tuple[str, Any]]
"""Index fields as (path, tokenized path) pairs, ``("$", "$")`` for the whole value."""


@dataclass(frozen=True)
class PutPlan:
    """One put or delete, after last-write-wins deduplication."""

    op: PutOp
    texts: tuple[tuple[str, str], ...]
    """(field path, text) pairs to embed, in order; empty for deletes and unindexed puts."""
    asked: tuple[str, ...] = ()
    """The field paths the put asked to index (its own or the store's); empty for deletes,
    ``index=False`` and stores without an index. Asked but no ``texts``: no vector."""


@dataclass
class Plan:
    """What one batch must do, in input order for reads and last-write-wins order for puts."""

    n_ops: int
    gets: list[tuple[int, GetOp]] = field(default_factory=list)
    searches: list[tuple[int, SearchOp]] = field(default_factory=list)
    listings: list[tuple[int, ListNamespacesOp]] = field(default_factory=list)
    puts: dict[tuple[tuple[str, ...], str], PutPlan] = field(default_factory=dict)

    def texts_to_embed(self) -> list[str]:
        """Every distinct text of the batch's puts, in first-seen order (one embedding call)."""
        return list(dict.fromkeys(t for p in self.puts.values() for _, t in p.texts))

    def queries_to_embed(self) -> list[str]:
        """Every distinct search query of the batch."""
        return list(dict.fromkeys(op.query for _, op in self.searches if op.query))


def tokenized_fields(paths: Sequence[str] | None) -> Fields:
    """Pre-tokenise index field paths as LangGraph defines them (``a.b``, ``arr[*]``, ``$``)."""
    return [(p, p) if p == "$" else (p, tokenize_path(p)) for p in (paths or ["$"])]


def asked_fields(op: PutOp, default_fields: Fields | None) -> Fields:
    """The fields a put asks to index: its ``index`` paths, else the store's (an empty list
    asks for none, as in ``InMemoryStore``)."""
    if op.value is None or op.index is False or default_fields is None:
        return []
    if op.index is None:
        return default_fields
    return tokenized_fields(op.index) if op.index else []


def extract_texts(op: PutOp, default_fields: Fields | None) -> tuple[tuple[str, str], ...]:
    """The (path, text) pairs a put indexes, following ``InMemoryStore``'s rules."""
    fields = asked_fields(op, default_fields)
    out: list[tuple[str, str]] = []
    for path, tokens in fields:
        texts = get_text_at_path(op.value, tokens)
        if len(texts) > 1:
            out.extend((f"{path}.{i}", t) for i, t in enumerate(texts))
        elif texts:
            out.append((path, texts[0]))
    return tuple(out)


def prepare(
    ops: Iterable[Op],
    default_fields: Fields | None,
    redact: Callable[[Any], Any] | None = None,
    limits: Limits = NO_LIMITS,
) -> Plan:
    """Validate every op and plan the batch. Raises before anything is written.

    ``redact``, when given, rewrites every put value and search query after validation and
    before anything is embedded or stored. ``limits`` bounds each put's value and indexed text
    (after redaction: what would be stored and embedded).

    Raises:
        InvalidNamespaceError: a bad namespace (as ``BaseStore`` itself checks).
        TypeError / ValueError: a bad value, filter, limit, offset or TTL, naming the fix.
    """
    ops = list(ops)
    plan = Plan(n_ops=len(ops))
    for i, op in enumerate(ops):
        op = normalize_namespaces(op)
        validate_op_namespace(op)
        labels: tuple[str, ...] = ()
        if isinstance(op, (GetOp, PutOp)):
            labels = op.namespace
        elif isinstance(op, SearchOp):
            labels = op.namespace_prefix
        for label in labels:
            check_text(label, "a namespace label")
        if isinstance(op, GetOp):
            _check_key(op.key)
            plan.gets.append((i, op))
        elif isinstance(op, SearchOp):
            _check_page(op.limit, op.offset)
            validate_filter(op.filter)
            if op.query is not None and not isinstance(op.query, str):
                raise TypeError(f"search query must be a string, got {type(op.query).__name__}.")
            if op.query:
                check_text(op.query, "the search query")
                if redact is not None:
                    op = op._replace(query=redact(op.query))
            plan.searches.append((i, op))
        elif isinstance(op, ListNamespacesOp):
            _check_page(op.limit, op.offset)
            if op.max_depth is not None and op.max_depth < 1:
                raise ValueError(f"max_depth must be a positive integer, got {op.max_depth}.")
            plan.listings.append((i, op))
        elif isinstance(op, PutOp):
            _check_key(op.key)
            if not op.namespace:
                raise InvalidNamespaceError("Namespace cannot be empty.")
            if op.value is not None:
                validate_value(op.value, where=f"{op.namespace}/{op.key}")
                check_index(op.index)
                _check_ttl(op.ttl)
                if redact is not None:
                    op = op._replace(value=validate_value(redact(op.value), where="redacted"))
                limits.check_value(op.value, _where(op))
            plan.puts.pop((op.namespace, op.key), None)  # last write wins, keeps its own order
            plan.puts[(op.namespace, op.key)] = PutPlan(op, ())
        else:
            raise TypeError(f"Unknown operation type: {type(op).__name__}.")
    for k, p in plan.puts.items():
        asked = tuple(path for path, _ in asked_fields(p.op, default_fields))
        texts = extract_texts(p.op, default_fields)
        limits.check_texts(texts, _where(p.op))
        plan.puts[k] = PutPlan(p.op, texts, asked)
    return plan


def _where(op: PutOp) -> str:
    return f"namespace {op.namespace} key {op.key!r}"


class NamespaceTypeError(Error, InvalidNamespaceError, TypeError):
    """A namespace that is not a tuple of labels (e.g. the string ``"alice"``). It is both an
    ``InvalidNamespaceError`` (what LangGraph stores raise for bad namespaces) and a
    ``TypeError`` (what it is)."""


def _as_namespace(namespace: Any, what: str) -> tuple[str, ...]:
    """``namespace`` as a tuple: lists are accepted (as SQLite, Postgres and Redis stores do);
    a string is refused, since it would silently become one label per character."""
    if isinstance(namespace, tuple):
        return namespace
    if isinstance(namespace, list):
        return tuple(namespace)
    if isinstance(namespace, str):
        raise NamespaceTypeError(
            f"{what} must be a tuple of strings, got the string {namespace!r}. "
            f"Write ({namespace!r},) for a one-label namespace."
        )
    raise NamespaceTypeError(
        f"{what} must be a tuple of strings, got {type(namespace).__name__}: {namespace!r}."
    )


def normalize_namespaces(op: Op) -> Op:
    """``op`` with every namespace (and match-condition path) as a tuple; raises
    :class:`NamespaceTypeError` for a string or another non-sequence."""
    if isinstance(op, (GetOp, PutOp)):
        ns = _as_namespace(op.namespace, "A namespace")
        return op if ns is op.namespace else op._replace(namespace=ns)
    if isinstance(op, SearchOp):
        ns = _as_namespace(op.namespace_prefix, "A search namespace prefix")
        return op if ns is op.namespace_prefix else op._replace(namespace_prefix=ns)
    if isinstance(op, ListNamespacesOp) and op.match_conditions:
        conditions = tuple(
            MatchCondition(c.match_type, _as_namespace(c.path, f"A {c.match_type}"))
            for c in op.match_conditions
        )
        return op._replace(match_conditions=conditions)
    return op


def _check_key(key: Any) -> None:
    if not isinstance(key, str):
        raise TypeError(f"Item keys must be strings, got {type(key).__name__}: {key!r}.")
    check_text(key, "the key")


def _check_page(limit: int, offset: int) -> None:
    if not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be a non-negative integer, got {limit!r}.")
    if not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be a non-negative integer, got {offset!r}.")


def _check_ttl(ttl: Any) -> None:
    if ttl is None:
        return
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl):
        raise TypeError(f"ttl must be a number of minutes or None, got {ttl!r}.")
    if ttl <= 0:
        raise ValueError(f"ttl must be positive (minutes), got {ttl!r}. Use None for no expiry.")
    if ttl > MAX_TTL_MINUTES:
        raise ValueError(
            f"ttl must be at most 100 years ({MAX_TTL_MINUTES:,.0f} minutes), got {ttl!r} "
            "(ttl is in minutes). Use ttl=None for an item that never expires."
        )


def newest_first(items: Iterable[Item]) -> list[Item]:
    """Order for search without a query: ``updated_at`` descending, then namespace and key."""
    ordered = sorted(items, key=lambda it: (it.namespace, it.key))
    return sorted(ordered, key=lambda it: it.updated_at, reverse=True)


def namespace_matches(ns: tuple[str, ...], conditions: Sequence[MatchCondition] | None) -> bool:
    """Whether ``ns`` satisfies every prefix/suffix condition (``*`` matches any one label)."""
    for cond in conditions or ():
        path = tuple(cond.path)
        if len(ns) < len(path):
            return False
        pairs = (
            zip(ns, path, strict=False)
            if cond.match_type == "prefix"
            else zip(reversed(ns), reversed(path), strict=False)
        )
        if cond.match_type not in ("prefix", "suffix"):
            raise ValueError(f"Unsupported match type {cond.match_type!r}: use prefix or suffix.")
        if any(p != "*" and n != p for n, p in pairs):
            return False
    return True


def list_namespaces(namespaces: Iterable[tuple[str, ...]], op: ListNamespacesOp) -> list[Any]:
    """Filter, truncate to ``max_depth``, sort and page namespaces as ``InMemoryStore`` does."""
    conditions = op.match_conditions
    found = sorted({ns[: op.max_depth] for ns in namespaces if namespace_matches(ns, conditions)})
    return found[op.offset : op.offset + op.limit]


def fixed_prefix(conditions: Sequence[MatchCondition] | None) -> tuple[str, ...]:
    """The longest wildcard-free leading labels of a prefix condition (for push-down)."""
    for cond in conditions or ():
        if cond.match_type == "prefix":
            return tuple(itertools.takewhile(lambda label: label != "*", cond.path))
    return ()
