"""The forget preview (``forget_user(..., dry_run=True, scan="user")``) reads only what belongs
to the user.

The inspector shows it before every forget, so it must not grow with the whole store: its scan
of the raw collections for a crash's leftovers goes through a ``where`` on the user's
namespaces, page by page, and still finds the user's leftovers there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langgraph_episodic.chroma.store import ChromaStore
from langgraph_episodic.chroma.testing import plant_orphan_vector, record_namespace
from langgraph_episodic.embeddings import HashEmbeddings
from langgraph_episodic.privacy import forget_user
from langgraph_episodic.privacy.shapes import DEFAULT_SHAPES, matches


def _record_reads(store: ChromaStore) -> list[tuple[str, ...] | None]:
    """Wrap the raw collections' ``get`` so every namespace it returns is recorded."""
    seen: list[tuple[str, ...] | None] = []
    for name in ("items", "vectors"):
        collection = store.collections[name]
        original = collection.get

        def get(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            got = _original(*args, **kwargs)
            seen.extend(record_namespace(m) for m in got["metadatas"] or [] if m)
            return got

        collection.get = get  # type: ignore[method-assign]
    return seen


def test_the_preview_reads_no_other_users_records(tmp_path: Path) -> None:
    store = ChromaStore.persistent(tmp_path, index={"dims": 64, "embed": HashEmbeddings(64)})
    try:
        for user in ("alice", "bob", "carol"):
            for i in range(30):
                store.put(("memories", user), f"m{i}", {"text": f"{user} note {i}"})
        store.put(("episodes", "alice"), "e1", {"text": "alice episode"})
        plant_orphan_vector(store, ("memories", "alice"), "ghost", "orphan")
        seen = _record_reads(store)
        report = forget_user("alice", store=store, dry_run=True, scan="user")
        assert report.items_deleted == 31 and report.orphan_vectors == 1
        strangers = {ns for ns in seen if ns is None or not matches(ns, DEFAULT_SHAPES, "alice")}
        assert strangers == set(), f"the preview read other users' records: {sorted(strangers)}"
        assert store.get(("memories", "alice"), "m1") is not None  # a dry run deletes nothing
    finally:
        store.close()


def test_the_inspector_previews_with_the_bounded_scan(monkeypatch: Any) -> None:
    """The inspector's preview is the bounded one; the CLI's keeps the whole scan (a user with
    only a crash's leftovers is found: tests/cli/test_friction.py)."""
    import langgraph_episodic.privacy as privacy
    from langgraph_episodic.ui import actions

    calls: list[dict[str, Any]] = []

    def fake(user_id: str, **kwargs: Any) -> Any:
        calls.append(kwargs)
        raise RuntimeError("stop here")

    monkeypatch.setattr(privacy, "forget_user", fake)
    settings: Any = type("S", (), {"checkpoints": None, "store": object()})()
    with pytest.raises(RuntimeError, match="stop here"):
        actions._preview(settings, "alice")
    assert calls and calls[0]["dry_run"] is True and calls[0]["scan"] == "user"
