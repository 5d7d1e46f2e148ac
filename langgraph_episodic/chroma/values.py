"""Validate and (de)serialise item values: plain JSON objects, finite numbers, string keys."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

import orjson

MAX_DEPTH = 64
"""Deepest nesting of dicts and lists accepted in a value."""


def validate_value(value: Any, *, where: str = "value") -> dict[str, Any]:
    """Return ``value`` as a dict if it can be stored exactly as JSON, else raise.

    Raises:
        TypeError: not a dict, a non-string key, or something JSON cannot hold (a set, an object).
        ValueError: NaN or infinity, or nesting deeper than ``MAX_DEPTH``.
    """
    if not isinstance(value, Mapping):
        raise TypeError(
            f"Store values must be dicts, got {type(value).__name__} for {where}. "
            "Wrap it, e.g. put(namespace, key, {'value': ...})."
        )
    if not _plain(value, 0):
        _check(value, "$", 0)
    return dict(value)


def _plain(node: Any, depth: int) -> bool:
    """Whether ``node`` is plain, storable JSON: built-in dicts with string keys, lists, valid
    text, finite numbers, bools and None, nested at most ``MAX_DEPTH`` deep.

    The quick walk under every put: no paths are built and no abstract-class checks run. Where
    it says no, :func:`_check` walks again and names the problem's path, or accepts what it
    does not know to be plain (tuples, other mappings, subclasses of the scalars)."""
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
        raise ValueError(
            f"Value nested deeper than {MAX_DEPTH} levels at {path}. Flatten the structure."
        )
    if isinstance(node, Mapping):
        for k, v in node.items():
            if not isinstance(k, str):
                raise TypeError(
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
            raise ValueError(
                f"Store values must be finite JSON numbers; got {node!r} at {path}. "
                "Replace NaN/inf with None or a finite number."
            )
    elif isinstance(node, str):
        check_text(node, path)
    elif node is None or isinstance(node, (int, bool)):
        return
    else:
        raise TypeError(
            f"Store values must be JSON-serialisable; got {type(node).__name__} at {path}. "
            "Convert it to a str, number, bool, None, list or dict first."
        )


def dumps(value: Mapping[str, Any]) -> str:
    """Serialise a validated value to compact JSON (exact round trip with :func:`loads`).

    Text with a run of 19 or more digits (it may hold an integer beyond 64 bits) is prefixed
    with :data:`EXACT`, so :func:`loads` parses it with the standard library.
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return EXACT + text if _LONG_DIGITS.search(text) else text


def loads(text: str) -> dict[str, Any]:
    """Parse a value stored by :func:`dumps`.

    orjson parses JSON several times faster than the standard library (a parse sits under
    every search result), but it turns integers beyond 64 bits into floats: such values carry the
    :data:`EXACT` prefix and take the standard library.
    """
    if text.startswith(EXACT):
        exact: dict[str, Any] = json.loads(text[len(EXACT) :])
        return exact
    value: dict[str, Any] = orjson.loads(text)
    return value


EXACT = "B"
"""Prefix of a stored value to parse with the standard library (never the start of JSON)."""
_LONG_DIGITS = re.compile(r"\d{19}")


def check_text(text: str, where: str) -> None:
    """Raise ``ValueError`` if ``text`` cannot be stored as UTF-8 (lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"Text at {where} is not valid Unicode ({exc.reason} at position {exc.start}). "
            "Decode it properly, e.g. bytes.decode('utf-8', errors='replace')."
        ) from None
