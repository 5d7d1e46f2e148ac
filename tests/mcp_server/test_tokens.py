"""Bearer token configuration and checks of the HTTP transport."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from langgraph_episodic.mcp_server import TOKENS_ENV, TokenConfigError, TokenTable, load_tokens
from langgraph_episodic.mcp_server.tokens import MIN_TOKEN_CHARS, parse_tokens

from .conftest import cli

GOOD = "x" * MIN_TOKEN_CHARS


def test_env_and_file_give_the_same_table(tmp_path: Path) -> None:
    env = {TOKENS_ENV: f" {GOOD}a:alice , {GOOD}b:bob ,"}
    file = tmp_path / "tokens"
    file.write_text(f"# who may call\n{GOOD}a:alice\n\n{GOOD}b:bob  # bob's laptop\n")
    assert load_tokens(file=None, environ=env) == {f"{GOOD}a": "alice", f"{GOOD}b": "bob"}
    assert load_tokens(file=file, environ={}) == load_tokens(file=None, environ=env)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([f"{GOOD}"], "TOKEN:USER"),
        ([f"{GOOD}:"], "TOKEN:USER"),
        ([":alice"], "TOKEN:USER"),
        (["short:alice"], f"fewer than {MIN_TOKEN_CHARS}"),
        ([f"{GOOD}:alice", f"{GOOD}:bob"], "twice"),
    ],
)
def test_bad_entries_are_refused_without_showing_the_token(
    entries: list[str], message: str
) -> None:
    with pytest.raises(TokenConfigError, match=message) as caught:
        parse_tokens(entries, source="test")
    assert GOOD not in str(caught.value) and "short" not in str(caught.value)


def test_no_tokens_at_all_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TokenConfigError, match=TOKENS_ENV):
        load_tokens(file=None, environ={})
    with pytest.raises(TokenConfigError, match="Cannot read"):
        load_tokens(file=tmp_path / "missing", environ={})


async def test_only_a_whole_known_token_names_a_user() -> None:
    table = TokenTable({f"{GOOD}a": "alice", f"{GOOD}b": "bob"})
    assert (await table.verify_token(f"{GOOD}a")).client_id == "alice"  # type: ignore[union-attr]
    assert (await table.verify_token(f"{GOOD}b")).client_id == "bob"  # type: ignore[union-attr]
    for wrong in ["", GOOD, f"{GOOD}ax", f"{GOOD}A", "tökén\udcff", f"{GOOD}ä"]:
        assert await table.verify_token(wrong) is None
    granted = await table.verify_token(f"{GOOD}a")
    assert granted is not None and GOOD not in granted.model_dump_json()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--http", "--user", "alice"], "--user is for stdio"),
        (["--http", "--port", "0"], "--port"),
        (["--user", "alice", "--tokens-file", "t"], "--tokens-file is for --http"),
        (["--user", "  "], "--user"),
    ],
)
def test_option_mistakes_are_named(tmp_path: Path, argv: list[str], message: str) -> None:
    env = {**os.environ, TOKENS_ENV: f"{GOOD}:alice"}
    done = subprocess.run(cli("mcp", *argv, "--path", str(tmp_path / "s")), capture_output=True,
                          text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "s").exists(), "a refused command creates no store"
