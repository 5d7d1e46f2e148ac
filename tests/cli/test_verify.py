"""``langgraph-episodic verify [--repair]``: reports leftovers, repairs them, exits accordingly."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from langgraph_episodic.chroma.testing import plant_orphan_vector

from .conftest import CliResult, open_hash_store


def test_verify_reports_then_repairs_leftover_vectors(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    path = tmp_path / "db"
    store = open_hash_store(path)
    store.put(("users", "alice"), "pref", {"text": "likes tea"})
    # What a put killed between its vectors and its item record leaves: vectors of no item.
    plant_orphan_vector(
        store, ("users", "alice"), "ghost", "a ghost", path="$", embedding=[0.1] * 64
    )
    store.close()

    code, out, _ = cli("verify", "--path", str(path), "--json")
    report = json.loads(out)
    assert code == 1 and report["orphan_vectors"] == 1 and not report["ok"]
    code, out, _ = cli("verify", "--repair", "--path", str(path))
    assert code == 0 and "repaired" in out
    code, out, _ = cli("verify", "--path", str(path))
    assert code == 0 and out.strip().endswith("ok")


def test_verify_lists_items_no_query_finds_without_failing(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    path = tmp_path / "db"
    with open_hash_store(path) as store:
        store.put(("users", "alice"), "pref", {"text": "likes tea"}, index=["text"])
        store.put(("users", "alice"), "untexted", {"title": "likes tea"}, index=["text"])
    code, out, _ = cli("verify", "--path", str(path))
    assert code == 0 and out.strip().endswith("ok")
    assert "items no query finds" in out and "users/alice 'untexted': index ['text']" in out
    code, out, _ = cli("verify", "--path", str(path), "--json")
    assert json.loads(out)["unsearchable_items"] == [[["users", "alice"], "untexted", ["text"]]]
