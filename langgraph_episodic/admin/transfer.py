r"""Export a store to JSON lines and import it back, exactly.

One line per item::

    {"namespace": ["episodes", "alice"], "key": "e1", "value": {...},
     "created_at": "2025-01-02T03:04:05.678901+00:00", "updated_at": "...",
     "index": ["text"], "ttl": null, "expires_at": null}

Only ``namespace``, ``key`` and ``value`` are required: export writes ``index``, ``ttl`` and
``expires_at`` when the store can tell (``ChromaStore``), and import stamps missing times with
its own. Lines end at ``\n`` (``\r\n`` is read too) only: U+2028, U+2029 and U+0085 are
written as ``\u`` escapes and read either way, so an export always imports back byte for byte.
Import validates the whole file before one batch writes it, embeds with the target store's
embedder and restores the original times where the store allows it (``ChromaStore``).
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from .._config import RESERVED_LABEL
from .._types import MAX_TTL_MINUTES
from ..chroma import ChromaStore, check_index_fields
from ..errors import Error, InvalidValueError

if TYPE_CHECKING:
    from ..chroma import ItemExtras

ItemKey = tuple[tuple[str, ...], str]

PAGE_SIZE = 500
"""Items (and namespaces) fetched per call while enumerating a store."""

MAX_REPORTED_ERRORS = 20
"""At most this many problems are listed when a file is rejected."""

MAX_DEPTH = 64
"""Deepest nesting of a JSON line (objects and lists) an import accepts."""

OnConflict = Literal["error", "skip", "overwrite"]
ON_CONFLICT: tuple[str, ...] = ("error", "skip", "overwrite")

REQUIRED_FIELDS = ("namespace", "key", "value")
OPTIONAL_FIELDS = ("created_at", "updated_at", "index", "ttl", "expires_at")
"""``created_at`` and ``updated_at`` default to each other, or both to the time of the import."""


class ImportFileError(Error, ValueError):
    """The import file is malformed; the message lists the problems by line. Nothing was written.
    (Each line's problem is one too, raised by :meth:`ItemRecord.from_dict`.)"""


@dataclass(frozen=True)
class ItemRecord:
    """One exported item: the public fields plus what the store could tell about it."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    index: list[str] | Literal[False] | None = None
    """Embedded field paths, False for none, None for "the store's default"."""
    ttl: float | None = None
    expires_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of one line."""
        out: dict[str, Any] = {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }
        if self.index is not None:
            out["index"] = self.index
            out["ttl"] = self.ttl
            out["expires_at"] = None if self.expires_at is None else self.expires_at.isoformat()
        return out

    @classmethod
    def from_dict(cls, data: Any) -> ItemRecord:
        """Parse and validate one line's object; raises :class:`ImportFileError` naming the
        problem."""
        if not isinstance(data, dict):
            raise ImportFileError(f"expected a JSON object, got {type(data).__name__}")
        missing = [f for f in REQUIRED_FIELDS if f not in data]
        if missing:
            raise ImportFileError(f"missing field(s) {missing}")
        unknown = sorted(set(data) - set(REQUIRED_FIELDS) - set(OPTIONAL_FIELDS))
        if unknown:
            raise ImportFileError(
                f"unknown field(s) {unknown}; known: {[*REQUIRED_FIELDS, *OPTIONAL_FIELDS]}"
            )
        key = data["key"]
        if not isinstance(key, str) or not key:
            raise ImportFileError(f"'key' must be a non-empty string, got {key!r}")
        value = data["value"]
        if not isinstance(value, dict):
            raise ImportFileError(f"'value' must be a JSON object, got {type(value).__name__}")
        created = _optional_timestamp(data.get("created_at"), "created_at")
        updated = _optional_timestamp(data.get("updated_at"), "updated_at")
        created = created or updated or datetime.now(timezone.utc)
        return cls(
            namespace=_namespace(data["namespace"]),
            key=key,
            value=value,
            created_at=created,
            updated_at=updated or created,
            index=_index(data.get("index")),
            ttl=_ttl(data.get("ttl")),
            expires_at=_optional_timestamp(data.get("expires_at"), "expires_at"),
        )


def _namespace(raw: Any) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw:
        raise ImportFileError(f"'namespace' must be a non-empty list of strings, got {raw!r}")
    for label in raw:
        if not isinstance(label, str) or not label or "." in label:
            raise ImportFileError(
                f"namespace labels must be non-empty strings without '.', got {label!r}"
            )
    if raw[0] == RESERVED_LABEL:
        raise ImportFileError("namespaces may not start with the reserved label 'langgraph'")
    return tuple(raw)


def _optional_timestamp(raw: Any, name: str) -> datetime | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ImportFileError(f"{name!r} must be an ISO 8601 string, got {raw!r}")
    try:
        stamp = datetime.fromisoformat(raw)
    except ValueError:
        raise ImportFileError(f"{name!r} is not an ISO 8601 timestamp: {raw!r}") from None
    if stamp.tzinfo is None:
        raise ImportFileError(f"{name!r} needs a UTC offset (e.g. +00:00): {raw!r}")
    return stamp


def _index(raw: Any) -> list[str] | Literal[False] | None:
    if raw is None or raw is False:
        return raw
    if isinstance(raw, list):
        try:
            return list(check_index_fields(raw, "'index'"))
        except TypeError as exc:
            raise ImportFileError(str(exc)) from None
    raise ImportFileError(f"'index' must be a list of field paths, false or null, got {raw!r}")


def _ttl(raw: Any) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not raw > 0:
        raise ImportFileError(f"'ttl' must be a positive number of minutes or null, got {raw!r}")
    if raw > MAX_TTL_MINUTES:
        raise ImportFileError(
            f"'ttl' of {raw!r} minutes is more than 100 years; use null for no expiry"
        )
    return float(raw)


def _depth_ok(data: Any) -> bool:
    """Whether ``data`` nests at most :data:`MAX_DEPTH` levels (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > MAX_DEPTH:
                return False
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
    return True


def _load_line(line: str) -> Any:
    """One line's JSON; a clear :class:`ImportFileError` for nesting too deep (no
    ``RecursionError``)."""
    too_deep = ImportFileError(f"nested more than {MAX_DEPTH} levels deep")
    try:
        data = json.loads(line, parse_constant=_reject_constant)
    except RecursionError:
        raise too_deep from None
    if not _depth_ok(data):
        raise too_deep
    return data


def _reject_constant(name: str) -> float:
    raise ImportFileError(f"{name} is not valid JSON (numbers must be finite)")


# --- enumeration and export ----------------------------------------------------------------


def list_all_namespaces(store: BaseStore) -> list[tuple[str, ...]]:
    """Every namespace that holds an item, sorted."""
    found: list[tuple[str, ...]] = []
    offset = 0
    while True:
        page = store.list_namespaces(limit=PAGE_SIZE, offset=offset)
        found.extend(tuple(ns) for ns in page)
        if len(page) < PAGE_SIZE:
            return sorted(set(found))
        offset += PAGE_SIZE


def iter_namespace(store: BaseStore, namespace: tuple[str, ...]) -> Iterator[Item]:
    """Every item whose namespace is exactly ``namespace`` (deeper namespaces are skipped)."""
    seen: set[str] = set()
    offset = 0
    while True:
        page = store.search(namespace, limit=PAGE_SIZE, offset=offset, refresh_ttl=False)
        for item in page:
            if tuple(item.namespace) == namespace and item.key not in seen:
                seen.add(item.key)
                yield item
        if len(page) < PAGE_SIZE:
            return
        offset += PAGE_SIZE


def namespace_page(
    store: BaseStore, namespace: tuple[str, ...], offset: int, size: int
) -> tuple[list[Item], bool]:
    """One page of :func:`iter_namespace` (``size`` items from ``offset``), and whether more
    follow."""
    got = list(itertools.islice(iter_namespace(store, namespace), offset, offset + size + 1))
    return got[:size], len(got) > size


def collect_records(
    store: BaseStore, namespaces: Iterable[tuple[str, ...]] | None = None
) -> list[ItemRecord]:
    """Every item of ``namespaces`` (default: the whole store), namespace by namespace, as an
    :class:`ItemRecord` with the store's extras where known."""
    if namespaces is None:
        namespaces = list_all_namespaces(store)
    return records_of(store, [item for ns in namespaces for item in iter_namespace(store, ns)])


def item_extras(store: BaseStore, items: Sequence[Item]) -> dict[ItemKey, ItemExtras]:
    """The index fields, TTL and expiry of ``items`` that the ``BaseStore`` API cannot tell:
    a ``ChromaStore`` keeps them; any other store's export carries the five public fields."""
    if not items or not isinstance(store, ChromaStore):
        return {}
    return store.item_extras([(tuple(it.namespace), it.key) for it in items])


def records_of(store: BaseStore, items: Sequence[Item]) -> list[ItemRecord]:
    """``items`` as :class:`ItemRecord` s, with the store's extras (:func:`item_extras`)."""
    extras = item_extras(store, items)
    records = []
    for item in items:
        namespace = tuple(item.namespace)
        extra = extras.get((namespace, item.key))
        known = () if extra is None else (extra.index, extra.ttl, extra.expires_at)
        records.append(ItemRecord(namespace, item.key, item.value, item.created_at,
                                  item.updated_at, *known))
    return records


_LINE_BREAKS_IN_STRINGS = str.maketrans(
    {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
)
"""Characters JSON leaves raw inside strings that other tools take for line ends (Python's
``str.splitlines()``, JavaScript); export writes them as escapes, which parse back the same."""


def write_records(records: Sequence[ItemRecord], out: TextIO) -> None:
    """Write records as JSON lines: non-ASCII text stays readable, except the characters other
    tools end lines at, which are escaped."""
    for record in records:
        text = json.dumps(record.to_dict(), ensure_ascii=False, allow_nan=False)
        out.write(text.translate(_LINE_BREAKS_IN_STRINGS) + "\n")


def export_file(store: BaseStore, path: Path) -> int:
    """Export every item of ``store`` to the JSON-lines file ``path``; return the count.

    The file is written to a new temporary file next to ``path`` first and renamed, so a failed
    export never leaves a truncated file behind. The temporary file is created exclusively
    (``O_CREAT | O_EXCL``, a random name, mode 0600): a file or symlink planted in advance is
    never followed or overwritten, and other users of the machine cannot read the export.
    The rename replaces ``path`` itself, never the target of a symlink at ``path``.
    """
    records = collect_records(store)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    partial = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            write_records(records, out)
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return len(records)


# --- import ---------------------------------------------------------------------------------


def split_lines(text: str) -> list[str]:
    """The lines of a JSON-lines text: split at ``\n`` only (``\r\n`` too), never at the
    other characters ``str.splitlines()`` ends lines at (U+2028, U+2029, U+0085, ...), which
    JSON allows raw inside strings."""
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def parse_lines(lines: Sequence[str]) -> list[ItemRecord]:
    """Parse and validate every line (see :func:`split_lines` to split a text); raise
    :class:`ImportFileError` listing all problems.

    Blank lines are skipped. The same (namespace, key) twice is an error.
    """
    records: list[ItemRecord] = []
    problems: list[str] = []
    first_seen: dict[tuple[tuple[str, ...], str], int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = _load_line(line)
            record = ItemRecord.from_dict(data)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            problems.append(f"line {number}: {exc}")
            continue
        ident = (record.namespace, record.key)
        if ident in first_seen:
            problems.append(
                f"line {number}: namespace {list(record.namespace)} key {record.key!r} "
                f"repeats line {first_seen[ident]}"
            )
            continue
        first_seen[ident] = number
        records.append(record)
    if problems:
        raise ImportFileError(
            f"{len(problems)} problem(s); nothing was imported:{_listed(problems)}"
        )
    return records


def _listed(lines: Sequence[str]) -> str:
    """The first :data:`MAX_REPORTED_ERRORS` of ``lines``, indented, and how many more."""
    more = len(lines) - MAX_REPORTED_ERRORS
    shown = "".join(f"\n  {line}" for line in lines[:MAX_REPORTED_ERRORS])
    return shown + (f"\n  ... and {more} more" if more > 0 else "")


def read_file(path: Path) -> list[ItemRecord]:
    """Read and validate a JSON-lines export (see :func:`parse_lines`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{path} is not UTF-8 text ({exc}); nothing was imported.") from exc
    return parse_lines(split_lines(text))


def check_expiry(records: Sequence[ItemRecord], *, keep_expired: bool) -> None:
    """Refuse records that have expired already, or expire more than 100 years from now."""
    now = datetime.now(timezone.utc)
    problems = []
    for r in records:
        if r.expires_at is None:
            continue
        if r.expires_at <= now and not keep_expired:
            problems.append(f"{list(r.namespace)} {r.key!r} expired at {r.expires_at.isoformat()}")
        elif (r.expires_at - now).total_seconds() / 60.0 > MAX_TTL_MINUTES:
            problems.append(
                f"{list(r.namespace)} {r.key!r} expires more than 100 years from now "
                f"({r.expires_at.isoformat()})"
            )
    if problems:
        raise ImportFileError(
            f"{len(problems)} item(s) with an expiry that cannot be imported; nothing was "
            "imported (pass --keep-expired to import expired items as they are):\n  "
            + "\n  ".join(problems[:MAX_REPORTED_ERRORS])
        )


def existing_keys(
    store: BaseStore, records: Sequence[ItemRecord]
) -> list[tuple[tuple[str, ...], str]]:
    """The (namespace, key) pairs of ``records`` the store already holds."""
    found = []
    for start in range(0, len(records), PAGE_SIZE):
        chunk = records[start : start + PAGE_SIZE]
        got = store.batch([GetOp(r.namespace, r.key, refresh_ttl=False) for r in chunk])
        found += [(r.namespace, r.key) for r, item in zip(chunk, got, strict=True) if item]
    return found


def resolve_conflicts(
    store: BaseStore, records: Sequence[ItemRecord], on_conflict: OnConflict
) -> list[ItemRecord]:
    """The records to write: ``error`` refuses existing keys (listing them), ``skip`` leaves
    existing items as they are, ``overwrite`` replaces them."""
    if on_conflict not in ON_CONFLICT:
        raise InvalidValueError(f"on_conflict must be one of {ON_CONFLICT}, got {on_conflict!r}")
    if on_conflict == "overwrite":
        return list(records)
    existing = existing_keys(store, records)
    if not existing:
        return list(records)
    if on_conflict == "skip":
        taken = set(existing)
        return [r for r in records if (r.namespace, r.key) not in taken]
    exist = "1 item exists" if len(existing) == 1 else f"{len(existing)} items exist"
    raise ImportFileError(
        f"{exist} already; nothing was imported. Pass --on-conflict skip (keep them) or "
        "--on-conflict overwrite (replace them):"
        + _listed([f"{'/'.join(ns)} {key!r}" for ns, key in existing])
    )


def import_records(store: BaseStore, records: Sequence[ItemRecord]) -> int:
    """Put every record in one batch, then restore their timestamps where the store allows.

    Vectors are recomputed by ``store``'s embedder, over each record's ``index`` fields (the
    store's defaults when it has none). Returns the number of items written.
    """
    ops = [PutOp(r.namespace, r.key, r.value, r.index, r.ttl if store.supports_ttl else None)
           for r in records]
    if ops:
        store.batch(ops)
    if records and isinstance(store, ChromaStore):  # put stamps "now": restore the file's times
        store.restore_times(
            {(r.namespace, r.key): (r.created_at, r.updated_at, r.expires_at) for r in records}
        )
    return len(ops)
