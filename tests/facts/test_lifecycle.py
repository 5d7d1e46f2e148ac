"""Facts outside the tools: forget removes the history too, export/import keep the periods,
``langgraph-episodic history --user U`` lists them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from langgraph.store.base import BaseStore

from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.admin.transfer import collect_records, import_records
from langgraph_episodic.facts import fact_history
from langgraph_episodic.privacy import forget_user
from langgraph_episodic.tools import create_memory_tools
from tests.cli.conftest import CliResult, cli
from tests.reliability.test_forget_on_disk import scan

from .conftest import Clock, user

__all__ = ["cli"]

INDEX = {"dims": 64, "embed": HashEmbeddings(64)}
MARK_OLD, MARK_NEW = "Zqxmünchenmark", "Kvberlinmark"


def moved(store: BaseStore, user_id: str = "alice") -> None:
    """alice lived in one city (marked), then moved to another; a dog she no longer has."""
    clock = Clock(datetime(2026, 3, 10, 12, tzinfo=timezone.utc))
    save, _ = create_memory_tools(store=store, clock=clock)
    save.invoke({"information": f"Ich wohne in {MARK_OLD}."}, user(user_id))
    save.invoke({"information": "Ich habe einen Hund namens Bello."}, user(user_id))
    clock.set(2026, 6, 15)
    save.invoke({"information": f"Ich bin nach {MARK_NEW} gezogen."}, user(user_id))
    save.invoke({"information": "Ich habe keinen Hund mehr."}, user(user_id))


def test_forget_user_removes_every_version_from_the_store_and_the_files(tmp_path: Path) -> None:
    store = ChromaStore.persistent(tmp_path / "store", index=INDEX)
    moved(store)
    moved(store, "bob")
    assert sorted((rec.text, rec.current) for _, rec in fact_history(store, ("memories", "alice"))) == [
        (f"Ich bin nach {MARK_NEW} gezogen.", True), ("Ich habe einen Hund namens Bello.", False),
        (f"Ich wohne in {MARK_OLD}.", False)]
    assert any(b"alice" in hits for hits in scan(tmp_path / "store", b"alice").values())
    forget_user("alice", store=store)
    assert fact_history(store, ("memories", "alice")) == []
    assert len(fact_history(store, ("memories", "bob"))) == 3
    store.close()
    on_disk = scan(tmp_path / "store", MARK_OLD.encode(), b"alice")
    # bob's copies of the markers remain; none of alice's (her label is gone everywhere)
    assert not any(b"alice" in hits for hits in on_disk.values()), on_disk


def test_export_and_import_keep_the_periods_and_the_history() -> None:
    source = ChromaStore.ephemeral(index=INDEX)
    moved(source)
    copy = ChromaStore.ephemeral(index=INDEX)
    assert import_records(copy, collect_records(source)) == 3
    assert fact_history(copy, ("memories", "alice")) == fact_history(source, ("memories", "alice"))
    _, recall = create_memory_tools(store=copy, min_score=None)
    answer = recall.invoke({"frage": "Wo wohne ich?"}, user("alice"))
    assert MARK_NEW in answer and MARK_OLD not in answer


def test_history_command_lists_the_periods(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    store = ChromaStore.persistent(tmp_path / "store", index=INDEX)
    moved(store)
    store.close()
    code, out, err = cli("history", "--user", "alice", "--path", str(tmp_path / "store"))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "memories/alice"
    assert any(MARK_OLD in ln and "2026-03-10 .. 2026-06-15" in ln and "replaced" in ln
               for ln in lines), out
    assert any(MARK_NEW in ln and "2026-06-15 .. now" in ln and "current" in ln for ln in lines)
    assert any("ended by: Ich habe keinen Hund mehr." in ln for ln in lines), out
    code, out, _ = cli("history", "--user", "nobody", "--path", str(tmp_path / "store"))
    assert (code, out.strip()) == (0, "No facts stored for this user.")
