"""The quick walks under every put agree with the careful ones they stand in front of.

``validate_value`` first walks a value with type identities only (no paths, no abstract-class
checks) and falls back to the walk that names the problem; ``flatten_leaves`` takes built-in
scalars first. Both must decide exactly as the careful code does, for any value.
"""

from __future__ import annotations

import enum
import math
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic.chroma import plans, record_format


class Level(enum.IntEnum):
    LOW = 1


class Text(str):
    pass


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) + 1, 2**64]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(
        ["é", "a.b", "x" * (record_format.MAX_FLAT_STRING + 1), "y" * record_format.HELD_ONCE_FROM]
    ),
    st.just(Level.LOW),
    st.builds(Text, st.text(max_size=4)),
)
_keys = st.one_of(st.text(max_size=4), st.sampled_from(["a.b", "a"]))


def _nest(children: Any) -> Any:
    return st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=2).map(tuple),
        st.dictionaries(_keys, children, max_size=4),
        st.dictionaries(st.text(max_size=3), children, max_size=2).map(OrderedDict),
    )


_values = st.dictionaries(_keys, st.recursive(_scalars, _nest, max_leaves=12), max_size=5)
"""Values the store accepts, including what only the careful walk knows (tuples, other
mappings, subclasses of the scalars)."""

_bad_leaves = st.sampled_from(
    [float("nan"), float("inf"), "\ud800", "x\udfff", {1, 2}, object(), {3: 1}, {"\ud800": 1}]
)
_wrappers = st.lists(st.sampled_from([dict, list, tuple, OrderedDict]), max_size=4)


def _wrap(leaf: Any, wrappers: list[type]) -> Any:
    for wrapper in wrappers:
        leaf = {"w": leaf} if wrapper in (dict, OrderedDict) else wrapper([1, leaf])
        leaf = OrderedDict(leaf) if wrapper is OrderedDict else leaf
    return leaf


def _careful_verdict(value: Any) -> type[BaseException] | None:
    try:
        plans._check(value, "$", 0)
    except (TypeError, ValueError) as exc:
        return type(exc)
    return None


def _verdict(value: Any) -> type[BaseException] | None:
    try:
        plans.validate_value(value)
    except (TypeError, ValueError) as exc:
        return type(exc)
    return None


@settings(max_examples=300, deadline=None)
@given(_values)
def test_validation_accepts_what_the_careful_walk_accepts(value: dict[str, Any]) -> None:
    assert _careful_verdict(value) is None
    assert _verdict(value) is None


@settings(max_examples=300, deadline=None)
@given(_values, _bad_leaves, _wrappers, st.text(max_size=3))
def test_validation_refuses_what_the_careful_walk_refuses(
    value: dict[str, Any], bad: Any, wrappers: list[type], key: str
) -> None:
    value = {**value, key: _wrap(bad, wrappers)}
    assert _careful_verdict(value) is not None
    assert _verdict(value) == _careful_verdict(value)


@pytest.mark.parametrize("depth", [plans.MAX_DEPTH - 1, plans.MAX_DEPTH, plans.MAX_DEPTH + 1])
@pytest.mark.parametrize("leaf", [1, "x", None, 1.5, [], {}])
def test_the_depth_limit_is_the_careful_walks(depth: int, leaf: Any) -> None:
    value: Any = leaf
    for _ in range(depth):
        value = {"a": value}
    assert _verdict(value) == _careful_verdict(value)


def _careful_flatten(value: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """``flatten_leaves`` as written before its built-in-scalar branch."""
    out: dict[str, Any] = {}
    complete = True
    stack: list[tuple[str, Mapping[str, Any]]] = [("v", value)]
    while stack:
        base, node = stack.pop()
        for k, v in node.items():
            path = f"{base}.{k}"
            if isinstance(v, Mapping):
                stack.append((path, v))
            elif isinstance(v, bool | int | float) or (
                isinstance(v, str) and len(v) <= record_format.MAX_FLAT_STRING
            ):
                if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2**63:
                    complete = False
                    continue
                if len(out) >= record_format.MAX_FLAT_LEAVES or path in out:
                    complete = False
                    continue
                out[path] = v
            elif isinstance(v, str):
                complete = False
    return out, complete


def _careful_held(value: Mapping[str, Any], leaves: Mapping[str, Any]) -> list[list[str]]:
    """The key paths of the long strings ``leaves`` holds, as a walk of their own found them
    before ``flatten_leaves`` gave them (by identity: dotted names may clash)."""
    held: list[list[str]] = []
    stack: list[tuple[list[str], Mapping[str, Any]]] = [([], value)]
    while stack:
        keys, node = stack.pop()
        for k, v in node.items():
            if type(v) is str:
                path = "v." + ".".join([*keys, k])
                if len(v) >= record_format.HELD_ONCE_FROM and leaves.get(path) is v:
                    held.append([*keys, k])
            elif isinstance(v, Mapping):
                stack.append(([*keys, k], v))
    return held


def test_a_string_under_two_clashing_names_is_held_at_both_as_before() -> None:
    text = "z" * record_format.HELD_ONCE_FROM
    value = {"a.b": text, "a": {"b": text}, "c": "w" * record_format.HELD_ONCE_FROM}
    leaves, _, held = record_format.flatten_leaves(value)
    assert held == _careful_held(value, leaves) == [["a.b"], ["c"], ["a", "b"]]


@settings(max_examples=400, deadline=None)
@given(_values)
def test_leaves_are_the_careful_walks(value: dict[str, Any]) -> None:
    got, complete, held = record_format.flatten_leaves(value)
    want, want_complete = _careful_flatten(value)
    assert held == _careful_held(value, want)
    assert complete == want_complete
    assert list(got) == list(want)
    assert all(type(got[k]) is type(want[k]) for k in want)
    assert all(got[k] == want[k] or (math.isnan(got[k]) and math.isnan(want[k])) for k in want)


def test_many_leaves_stop_at_the_limit_as_before() -> None:
    value = {f"k{i}": i for i in range(record_format.MAX_FLAT_LEAVES + 5)}
    value["nested"] = {"a": "x", "b": 2.5}  # type: ignore[assignment]
    assert record_format.flatten_leaves(value)[:2] == _careful_flatten(value)
