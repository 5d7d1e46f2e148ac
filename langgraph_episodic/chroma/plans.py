"""The pure core shared by ``ChromaStore.batch`` and ``abatch``: check ops once, plan the work.

Nothing here talks to Chroma or to an embedder: :func:`prepare` checks each op once (its
namespace, key, value, index, TTL and sizes) and turns the batch into a :class:`BatchPlan`, or
raises before anything is written. The sync and async shells only embed and execute; the
writes take the plan's values as checked.

A value is a plain JSON object: string keys, finite numbers, valid text, at most
:data:`MAX_DEPTH` deep. Its size limits (:class:`Limits`) bound the value as stored and the
text its index fields embed; a put over one is refused (in a batch: the whole batch) with an
error naming the limit and the fix. The defaults leave room for a whole transcript and a few
pages to embed while a put at the limit stays well under a second, so one oversized put cannot
hold the store's other writers for long.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
    get_text_at_path,
    tokenize_path,
    validate_op_namespace,
)

from .._types import MAX_TTL_MINUTES
from ..errors import Error, InvalidTypeError, InvalidValueError, NamespaceError
from .filters import validate_filter
from .index_paths import check_index

MAX_DEPTH = 64
"""Deepest nesting of dicts and lists accepted in a value."""

DEFAULT_MAX_VALUE_BYTES = 1024 * 1024
"""1 MiB: the largest value (compact JSON, UTF-8) a put accepts by default."""

DEFAULT_MAX_INDEXED_BYTES = 64 * 1024
"""64 KiB: the most text (UTF-8, all index fields of one item) a put embeds by default."""


@dataclass(frozen=True)
class Limits:
    """The size limits a store enforces on every put (``None``: no limit). Sizes are UTF-8
    bytes of the value as compact JSON, and of every text the index fields yield, summed."""

    max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES
    max_indexed_bytes: int | None = DEFAULT_MAX_INDEXED_BYTES

    def __post_init__(self) -> None:
        for name in ("max_value_bytes", "max_indexed_bytes"):
            limit = getattr(self, name)
            if limit is not None and (
                isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0
            ):
                raise InvalidValueError(
                    f"{name} must be a positive number of bytes or None (no limit), got {limit!r}."
                )

    def check_value(self, op: PutOp) -> None:
        """Raise ``ValueError`` if the put's value (already checked) is over ``max_value_bytes``."""
        limit = self.max_value_bytes
        if limit is None:
            return
        size = json_size(op.value)
        if size > limit:
            raise InvalidValueError(
                f"The value of {_where(op)} is {_size(size)} as JSON, over the store's limit of "
                f"{_size(limit)} (max_value_bytes={limit}); nothing was written. Keep large "
                "documents elsewhere (a file, a blob store) and store a reference, split them "
                "into several items, or raise the limit: ChromaStore.persistent(..., "
                "max_value_bytes=...)."
            )

    def check_texts(self, texts: Sequence[tuple[str, str]], op: PutOp) -> None:
        """Raise ``ValueError`` if the put's (path, text) pairs exceed ``max_indexed_bytes``."""
        limit = self.max_indexed_bytes
        if limit is None:
            return
        size = sum(len(text.encode("utf-8")) for _, text in texts)
        if size > limit:
            paths = sorted({path for path, _ in texts})
            raise InvalidValueError(
                f"The indexed text of {_where(op)} is {_size(size)} (fields {paths}), over the "
                f"store's limit of {_size(limit)} (max_indexed_bytes={limit}); nothing was "
                "written. Index a shorter field (index=['summary']), split the text into several "
                "items, put it with index=False, or raise the limit: ChromaStore.persistent(..., "
                "max_indexed_bytes=...)."
            )


def json_size(value: Any) -> int:
    """UTF-8 bytes of ``value`` as compact JSON (orjson: a 20 MB value is measured in
    milliseconds; integers beyond 64 bits take the standard library)."""
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n / 1024:.1f} KiB"


def _where(op: PutOp) -> str:
    return f"namespace {op.namespace} key {op.key!r}"


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
class BatchPlan:
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


def extract_texts(value: Any, fields: Fields) -> tuple[tuple[str, str], ...]:
    """The (path, text) pairs ``fields`` index in ``value``, following ``InMemoryStore``'s
    rules: a field holding several texts yields ``<path>.0``, ``<path>.1``, ..."""
    out: list[tuple[str, str]] = []
    for path, tokens in fields:
        texts = get_text_at_path(value, tokens)
        if len(texts) > 1:
            out.extend((f"{path}.{i}", t) for i, t in enumerate(texts))
        elif texts:
            out.append((path, texts[0]))
    return tuple(out)


def prepare(
    ops: Iterable[Op],
    default_fields: Fields | None,
    redact: Callable[[Any], Any] | None,
    limits: Limits,
) -> BatchPlan:
    """Check every op once and plan the batch. Raises before anything is written.

    ``redact``, when given, rewrites every put value and search query after its check and
    before anything is embedded or stored (a redacted value is checked in turn). ``limits``
    bounds each put's value and indexed text (after redaction: what would be stored and
    embedded); the texts are extracted, and their size checked, only for the puts that win.

    Raises:
        NamespaceError: a bad namespace (as ``BaseStore`` itself checks).
        InvalidTypeError / InvalidValueError: a bad value, filter, limit, offset or TTL,
            naming the fix.
    """
    ops = list(ops)
    plan = BatchPlan(n_ops=len(ops))
    puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
    for i, op in enumerate(ops):
        op = normalize_namespaces(op)
        try:
            validate_op_namespace(op)
        except InvalidNamespaceError as exc:  # LangGraph's plain one: ours, with its message
            if isinstance(exc, Error):
                raise
            raise NamespaceError(*exc.args) from None
        if isinstance(op, PutOp):
            _check_labels(op.namespace)
            _check_key(op.key)
            if not op.namespace:
                raise NamespaceError("Namespace cannot be empty.")
            if op.value is not None:
                validate_value(op.value, where=f"{op.namespace}/{op.key}")
                check_index(op.index)
                _check_ttl(op.ttl)
                if redact is not None:
                    redacted = redact(op.value)
                    validate_value(redacted, where="redacted")
                    op = op._replace(value=dict(redacted))
                limits.check_value(op)
            puts.pop((op.namespace, op.key), None)  # last write wins, keeps its own order
            puts[(op.namespace, op.key)] = op
        elif isinstance(op, GetOp):
            _check_labels(op.namespace)
            _check_key(op.key)
            plan.gets.append((i, op))
        elif isinstance(op, SearchOp):
            _check_labels(op.namespace_prefix)
            _check_page(op.limit, op.offset)
            validate_filter(op.filter)
            if op.query is not None and not isinstance(op.query, str):
                raise InvalidTypeError(
                    f"search query must be a string, got {type(op.query).__name__}."
                )
            if op.query:
                check_text(op.query, "the search query")
                if redact is not None:
                    op = op._replace(query=redact(op.query))
            plan.searches.append((i, op))
        elif isinstance(op, ListNamespacesOp):
            _check_page(op.limit, op.offset)
            if op.max_depth is not None and op.max_depth < 1:
                raise InvalidValueError(
                    f"max_depth must be a positive integer, got {op.max_depth}."
                )
            plan.listings.append((i, op))
        else:
            raise InvalidTypeError(f"Unknown operation type: {type(op).__name__}.")
    for k, op in puts.items():
        fields = asked_fields(op, default_fields)
        texts = extract_texts(op.value, fields)
        limits.check_texts(texts, op)
        plan.puts[k] = PutPlan(op, texts, tuple(path for path, _ in fields))
    return plan


class NamespaceTypeError(NamespaceError, TypeError):
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


def _check_labels(labels: tuple[str, ...]) -> None:
    """Labels LangGraph accepted (:func:`validate_op_namespace`) that are also valid text."""
    for label in labels:
        check_text(label, "a namespace label")


def _check_key(key: Any) -> None:
    if not isinstance(key, str):
        raise InvalidTypeError(f"Item keys must be strings, got {type(key).__name__}: {key!r}.")
    check_text(key, "the key")


def _check_page(limit: int, offset: int) -> None:
    if not isinstance(limit, int) or limit < 0:
        raise InvalidValueError(f"limit must be a non-negative integer, got {limit!r}.")
    if not isinstance(offset, int) or offset < 0:
        raise InvalidValueError(f"offset must be a non-negative integer, got {offset!r}.")


def _check_ttl(ttl: Any) -> None:
    if ttl is None:
        return
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl):
        raise InvalidTypeError(f"ttl must be a number of minutes or None, got {ttl!r}.")
    if ttl <= 0:
        raise InvalidValueError(
            f"ttl must be positive (minutes), got {ttl!r}. Use None for no expiry."
        )
    if ttl > MAX_TTL_MINUTES:
        raise InvalidValueError(
            f"ttl must be at most 100 years ({MAX_TTL_MINUTES:,.0f} minutes), got {ttl!r} "
            "(ttl is in minutes). Use ttl=None for an item that never expires."
        )


def validate_value(value: Any, *, where: str = "value") -> None:
    """Raise unless ``value`` is a mapping that can be stored exactly as JSON.

    Raises:
        TypeError: not a dict, a non-string key, or something JSON cannot hold (a set, an object).
        ValueError: NaN or infinity, or nesting deeper than ``MAX_DEPTH``.
    """
    if isinstance(value, Mapping) and not isinstance(value, dict):
        raise InvalidTypeError(
            f"Store values must be dicts, got a {type(value).__name__} for {where}. "
            "Convert it with dict() first."
        )
    if not isinstance(value, dict):
        raise InvalidTypeError(
            f"Store values must be dicts, got {type(value).__name__} for {where}. "
            "Wrap it, e.g. put(namespace, key, {'value': ...})."
        )
    if not _plain(value, 0):
        _check(value, "$", 0)


def _plain(node: Any, depth: int) -> bool:
    """Whether ``node`` is plain, storable JSON: built-in dicts with string keys, lists, valid
    text, finite numbers, bools and None, nested at most ``MAX_DEPTH`` deep.

    The quick walk under every put: no paths are built and no abstract-class checks run. Where
    it says no, :func:`_check` walks again and names the problem's path, or accepts what it
    does not know to be plain (tuples, dict subclasses, subclasses of the scalars)."""
    if depth > MAX_DEPTH:
        return False
    kind = type(node)
    if kind is str:
        return node.isascii() or _utf8(node)
    if kind is int or kind is bool or node is None:
        return True
    if kind is float:
        return math.isfinite(node)
    if kind is dict:
        for k, v in node.items():
            if type(k) is not str or not (k.isascii() or _utf8(k)) or not _plain(v, depth + 1):
                return False
        return True
    if kind is list:
        return all(_plain(v, depth + 1) for v in node)
    return False


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check(node: Any, path: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise InvalidValueError(
            f"Value nested deeper than {MAX_DEPTH} levels at {path}. Flatten the structure."
        )
    if isinstance(node, Mapping) and not isinstance(node, dict):
        raise InvalidTypeError(
            f"Store values must be JSON: dicts, lists, text, numbers, bools and None; got a "
            f"{type(node).__name__} at {path}. Convert it with dict() first."
        )
    if isinstance(node, dict):
        for k, v in node.items():
            if not isinstance(k, str):
                raise InvalidTypeError(
                    f"Dict keys in store values must be strings; got {type(k).__name__} key "
                    f"{k!r} at {path}. Convert it with str()."
                )
            check_text(k, f"{path} (a key)")
            _check(v, f"{path}.{k}", depth + 1)
    elif isinstance(node, (list, tuple)):
        for i, v in enumerate(node):
            _check(v, f"{path}[{i}]", depth + 1)
    elif isinstance(node, float):
        if not math.isfinite(node):
            raise InvalidValueError(
                f"Store values must be finite JSON numbers; got {node!r} at {path}. "
                "Replace NaN/inf with None or a finite number."
            )
    elif isinstance(node, str):
        check_text(node, path)
    elif node is None or isinstance(node, (int, bool)):
        return
    else:
        raise InvalidTypeError(
            f"Store values must be JSON-serialisable; got {type(node).__name__} at {path}. "
            "Convert it to a str, number, bool, None, list or dict first."
        )


def check_text(text: str, where: str) -> None:
    """Raise ``ValueError`` if ``text`` cannot be stored as UTF-8 (lone surrogates)."""
    if text.isascii():  # (a flag of the string: no walk)
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidValueError(
            f"Text at {where} is not valid Unicode ({exc.reason} at position {exc.start}). "
            "Decode it properly, e.g. bytes.decode('utf-8', errors='replace')."
        ) from None
