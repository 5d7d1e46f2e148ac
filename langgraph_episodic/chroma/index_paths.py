"""Field paths of ``index=`` (on put) and of the index config's ``fields``: checked up front.

LangGraph's ``tokenize_path`` and ``get_text_at_path`` never fail: a malformed path, or a
string where a list belongs, silently indexes nothing. :func:`check_index` refuses those
before anything is written and names the forms LangGraph reads:

* ``"field"``, ``"a.b"``: a field, a nested field (names without ``.``, ``[``, ``]``, ``{``, ``}``);
* ``"arr[*]"``, ``"arr[0]"``, ``"arr[-1]"``: every element of a list, or one by position;
* ``"*"``: every field of an object (or element of a list) at that level;
* ``"{a,b.c}"``: several fields of one object, as the last part of a path;
* ``"$"``: the whole value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from ..errors import InvalidTypeError, InvalidValueError
from ..memory_context import UNRANKED_PATHS as UNRANKED_PATHS

FORMS = (
    "Accepted forms: 'field', 'a.b' (nested), 'arr[*]', 'arr[0]' or 'arr[-1]' (list elements), "
    "'*' (every field), '{a,b.c}' (several fields, last in a path), '$' (the whole value)."
)

_NAME = r"[^.\[\]{}]+"
_INDEX = r"\[(?:\*|-?\d+)\]"
_SEGMENT = re.compile(rf"({_NAME})((?:{_INDEX})*)")
_BRACES = re.compile(r"\{([^{}\[\]]*)\}")
_PLAIN = re.compile(rf"{_NAME}(?:\.{_NAME})*")


def path_problem(path: str) -> str | None:
    """Why ``path`` is not a field path LangGraph reads, or None when it is one."""
    if path == "$":
        return None
    if not path:
        return "it is empty (use '$' for the whole value)"
    parts = path.split(".")
    brace = path.find("{")
    if brace >= 0:
        head, tail = path[:brace], path[brace:]
        if head and not head.endswith("."):
            return "'{...}' must follow a '.' or start the path"
        match = _BRACES.fullmatch(tail)
        if match is None:
            return "'{...}' must close with '}' and end the path"
        fields = [f.strip() for f in match.group(1).split(",")]
        if not all(_PLAIN.fullmatch(f) for f in fields):
            return "'{...}' must list field names separated by commas, e.g. '{title,meta.author}'"
        parts = head[:-1].split(".") if head else []
    for i, part in enumerate(parts):
        if not part:
            return "it has an empty part (two dots, or a dot at an end)"
        if _SEGMENT.fullmatch(part) is None:
            if part.startswith("[") and i == 0:
                return "it starts with a list index, but a value is an object: name a field first"
            return f"{part!r} is not a field name with optional [*], [0] or [-1] after it"
    return None


_FIELD = re.compile(_NAME)


def is_top_field(path: str) -> bool:
    """Whether ``path`` names one field at the top of the value: no nesting, no list index,
    no wildcard, not the whole value."""
    return path not in ("$", "*") and _FIELD.fullmatch(path) is not None


def is_ranked(path: str) -> bool:
    """Whether a search ranks the text indexed at ``path``: every path but the library's
    bookkeeping (:data:`~langgraph_episodic.memory_context.UNRANKED_PATHS`), which stays
    stored; only reads leave it out.

    >>> is_ranked("text"), is_ranked("context.day"), is_ranked("context.thread")
    (True, True, False)
    """
    return path not in UNRANKED_PATHS


def check_fields(paths: Any, what: str) -> tuple[str, ...]:
    """``paths`` as a tuple of checked field paths; raises naming the path and the forms.

    Raises:
        TypeError: ``paths`` is a string or not a list of strings.
        ValueError: a path is malformed.
    """
    if isinstance(paths, str):
        raise InvalidTypeError(
            f"{what} must be a list of field paths, got the string {paths!r}. "
            f"Write [{paths!r}] for one field. {FORMS}"
        )
    if not isinstance(paths, Sequence):
        raise InvalidTypeError(
            f"{what} must be a list of field paths, got {type(paths).__name__}: {paths!r}. {FORMS}"
        )
    for path in paths:
        if not isinstance(path, str):
            raise InvalidTypeError(
                f"{what} must hold strings (field paths), got {type(path).__name__}: {path!r}. "
                f"{FORMS}"
            )
        problem = path_problem(path)
        if problem is not None:
            raise InvalidValueError(
                f"{what} has the malformed field path {path!r}: {problem}. {FORMS}"
            )
    return tuple(paths)


check_index_fields = check_fields
"""The public name of :func:`check_fields` (``langgraph_episodic.chroma.check_index_fields``)."""


def check_index(index: Any) -> Literal[False] | tuple[str, ...] | None:
    """The ``index=`` of a put, checked: None (the store's fields), False (no vector) or paths.

    Raises ``TypeError`` / ``ValueError`` naming the accepted forms (see :func:`check_fields`).
    """
    if index is None or index is False:
        return index
    if isinstance(index, bool):
        raise InvalidTypeError(
            "index must be None (the store's fields), False (no vector) or a list of field "
            f"paths, got True. {FORMS}"
        )
    return check_fields(index, "index")
