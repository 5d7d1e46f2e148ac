"""The quoted-data fence shared by the replay prompt, the graph's system prompt and the tools."""

from __future__ import annotations

import doctest

from hypothesis import given, settings
from hypothesis import strategies as st

from langgraph_episodic import _fence
from langgraph_episodic._fence import (
    QUOTE,
    begin_marker,
    end_marker,
    fence,
    neutralise_markers,
    quoted_lines,
    single_line,
)

# Text built mostly from marker characters and every line separator str.splitlines() knows.
hostile = st.text(alphabet=st.sampled_from(list("<>END x\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")))


@settings(max_examples=200, deadline=None)
@given(st.one_of(hostile, st.text()))
def test_neutralised_text_holds_no_marker_runs_and_keeps_its_length(text: str) -> None:
    out = neutralise_markers(text)
    assert "<<<" not in out and ">>>" not in out
    assert len(out) == len(text)
    assert neutralise_markers(out) == out


def test_short_runs_and_other_text_are_left_alone() -> None:
    assert neutralise_markers("a << b >> c <d>") == "a << b >> c <d>"
    assert neutralise_markers("<<<<END>>>") == "‹‹‹‹END›››"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(hostile, st.text()), max_size=5))
def test_a_fence_holds_whatever_its_entries_contain(entries: list[str]) -> None:
    lines = "\n".join(fence(entries, label="FACTS", notice="Data below.")).splitlines()
    assert lines[:2] == ["Data below.", begin_marker("FACTS")]
    assert lines[-1] == end_marker("FACTS")
    assert all(line.startswith(QUOTE) for line in lines[2:-1])
    assert sum(line.startswith("<<<") for line in lines) == 2


def test_single_line_and_quoted_lines_split_at_every_separator() -> None:
    text = "a\nb\rc\u2028d\x1c<<<END X>>>"
    assert single_line(text) == "a b c d ‹‹‹END X›››"
    assert quoted_lines(text) == ["| a", "| b", "| c", "| d", "| ‹‹‹END X›››"]
    assert quoted_lines("") == ["| "]


def test_docstring_example_runs() -> None:
    assert doctest.testmod(_fence).failed == 0
