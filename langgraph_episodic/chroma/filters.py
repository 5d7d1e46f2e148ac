"""Search filters: validation, exact evaluation, and the part Chroma can evaluate (push-down).

Semantics (a superset of ``InMemoryStore``'s, documented in the README):

* ``{"field": value}`` or ``{"field": {"$eq": value}}``: equality (nested dicts and lists
  compare exactly, as in ``InMemoryStore``).
* ``$ne``: not equal; an item missing the field matches (as in ``InMemoryStore``).
* ``$gt $gte $lt $lte``: numbers compare as numbers and strings as strings; booleans are not
  numbers; a missing field or mixed types never match (``InMemoryStore`` raises instead).
* Several keys are ANDed. A dotted key (``"a.b"``) reaches nested values when the value has no
  literal ``"a.b"`` key (``InMemoryStore`` only looks up the literal key).

Push-down (string equality, numeric ranges in Chroma's ``where``) is a superset of the exact
result, which Python then checks.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidTypeError, InvalidValueError

_COMPARE = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}
OPERATORS = frozenset({"$eq", "$ne", *_COMPARE})
_MISSING = object()


def validate_filter(filter: Mapping[str, Any] | None) -> None:
    """Raise ``ValueError`` naming the operator if a filter uses one we do not support."""
    if filter is None:
        return
    if not isinstance(filter, Mapping):
        raise InvalidTypeError(
            f"filter must be a dict like {{'status': 'done'}}, got {type(filter).__name__}."
        )
    for key, cond in filter.items():
        if not isinstance(key, str):
            raise InvalidTypeError(f"Filter keys must be strings, got {key!r}.")
        if _is_operator(key):
            raise InvalidValueError(
                f"Unsupported filter operator {key!r} at the top level. Filters map field "
                f"names to values or to {{operator: value}} with operators {sorted(OPERATORS)}."
            )
        _validate_condition(cond, key)


def _validate_condition(cond: Any, path: str) -> None:
    if isinstance(cond, Mapping):
        operators = [k for k in cond if _is_operator(k)]
        others = [k for k in cond if not _is_operator(k)]
        if operators and others:
            raise InvalidValueError(
                f"Filter on {path!r} mixes operators {operators} with other keys {others}. "
                f"Use only operators ({sorted(OPERATORS)}) in one condition, e.g. "
                f"{{{path!r}: {{'$gte': 1, '$lt': 5}}}}, or only keys for an exact nested match."
            )
        for op, operand in cond.items():
            if _is_operator(op):
                if op not in OPERATORS:
                    raise InvalidValueError(
                        f"Unsupported filter operator {op!r} for {path!r}. "
                        f"Use one of {sorted(OPERATORS)}."
                    )
                if op in _COMPARE and not _orderable(operand):
                    raise InvalidTypeError(
                        f"Filter {op} on {path!r} needs a number or a string, got "
                        f"{type(operand).__name__}."
                    )
            else:
                _validate_condition(operand, f"{path}.{op}")


def _is_operator(key: Any) -> bool:
    return isinstance(key, str) and key.startswith("$")


def _orderable(x: Any) -> bool:
    return isinstance(x, (int, float, str)) and not isinstance(x, bool)


def resolve(value: Mapping[str, Any], key: str) -> Any:
    """The value at ``key``: a literal key first, else the dotted path through nested dicts."""
    if key in value:
        return value[key]
    if "." not in key:
        return _MISSING
    node: Any = value
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether an item's value satisfies every condition of ``filter`` (exact evaluation)."""
    if not filter:
        return True
    return all(_match(resolve(value, key), cond) for key, cond in filter.items())


def _match(actual: Any, cond: Any) -> bool:
    if isinstance(cond, Mapping):
        if any(isinstance(k, str) and k.startswith("$") for k in cond):
            return all(_apply(actual, op, operand) for op, operand in cond.items())
        if not isinstance(actual, Mapping):
            return False
        return all(_match(actual.get(k, _MISSING), v) for k, v in cond.items())
    if isinstance(cond, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(cond)
            and all(_match(a, c) for a, c in zip(actual, cond, strict=True))
        )
    return _eq(actual, cond)


def _eq(actual: Any, expected: Any) -> bool:
    if actual is _MISSING:
        actual = None
    return bool(actual == expected)


def _apply(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return _eq(actual, operand)
    if op == "$ne":
        return not _eq(actual, operand)
    if actual is _MISSING or not _orderable(actual) or not _orderable(operand):
        return False
    if isinstance(actual, str) != isinstance(operand, str):
        return False
    return bool(_COMPARE[op](actual, operand))


def pushdown(filter: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Chroma ``where`` conditions implied by ``filter`` (a superset of its exact matches):
    string equality and numeric ranges, which mean the same in Chroma as in :func:`matches`."""
    conditions: list[dict[str, Any]] = []
    for key, cond in (filter or {}).items():
        field = f"v.{key}"
        if isinstance(cond, str):
            conditions.append({field: {"$eq": cond}})
        elif isinstance(cond, Mapping):
            for op, operand in cond.items():
                if op == "$eq" and isinstance(operand, str):
                    conditions.append({field: {"$eq": operand}})
                elif op in _COMPARE and _chroma_number(operand):
                    conditions.append({field: {op: operand}})
    return conditions


def _chroma_number(x: Any) -> bool:
    """A number Chroma stores and compares as we do (int64 range, finite floats)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    if isinstance(x, int):
        return -(2**63) <= x < 2**63
    return math.isfinite(x)


def combine(*clauses: dict[str, Any] | None) -> dict[str, Any] | None:
    """AND together Chroma ``where`` clauses, dropping empty ones."""
    kept = [c for c in clauses if c]
    return None if not kept else kept[0] if len(kept) == 1 else {"$and": kept}


def value_where(filter: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The push-down clause for ``filter``, safe for items with incomplete leaves."""
    pushed = combine(*pushdown(filter))  # (items whose leaves were not all copied: _flat)
    return None if pushed is None else {"$or": [{"_flat": False}, pushed]}
