"""Deferred formation on ``langgraph dev``: the user's run returns, the server forms afterwards.

The example app runs with ``EPISODIC_DEFER=1`` and its formation graph registered as
``memory_formation`` (as the example's README says). A user's run returns with the turn in the
store's queue; the server then runs ``memory_formation`` in the background on the user's
formation thread, and the facts appear in the user's entities, through the SDK, with the queue
empty; a later thread of the user starts with them.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from .conftest import TOKENS, LangGraphServer

pytestmark = [
    pytest.mark.server,
    pytest.mark.xdist_group("langgraph-server"),
    pytest.mark.skipif(
        sys.version_info < (3, 11), reason="langgraph dev (langgraph-api) needs Python 3.11+"
    ),
]


def register_formation(app_dir: Path) -> None:
    config = json.loads((app_dir / "langgraph.json").read_text())
    config["graphs"]["memory_formation"] = "./graph.py:formation"
    (app_dir / "langgraph.json").write_text(json.dumps(config))


async def entity_names(client: Any, user: str) -> set[str]:
    items = (await client.store.search_items(["entities", user], limit=100, filter={"kind": "entity"}))["items"]
    return {i["value"]["name"] for i in items}


def test_a_deferred_run_returns_and_the_server_forms_the_memory_afterwards(
        app_dir: Path, langgraph_server: type[LangGraphServer]) -> None:
    register_formation(app_dir)
    server = langgraph_server(app_dir, {"EPISODIC_DEFER": "1"}).start()

    async def scenario() -> dict[str, Any]:
        alice = get_client(url=server.url, headers={"Authorization": f"Bearer {TOKENS['alice']}"})
        thread = await alice.threads.create()
        out = await alice.runs.wait(thread["thread_id"], "agent", input={"messages": [
            {"role": "user", "content": "My name is Alice and I work at ACME."}]})
        queued = (await alice.store.search_items(["_pending", "alice"], limit=10))["items"]
        # The formation run writes the facts first and deletes the queued turn last (a run
        # killed between the two forms it again), so both are waited for.
        deadline = time.monotonic() + 60
        names: set[str] = set()
        left: list[Any] = queued
        while time.monotonic() < deadline:
            names = await entity_names(alice, "alice")
            left = (await alice.store.search_items(["_pending", "alice"], limit=10))["items"]
            if {"Alice", "ACME"} <= names and not left:
                break
            await asyncio.sleep(0.2)
        later = await alice.threads.create()
        after = await alice.runs.wait(later["thread_id"], "agent", input={"messages": [
            {"role": "user", "content": "What do you know about me?"}]})
        return {"out": out, "queued": queued, "names": names, "left": left, "after": after}

    result = asyncio.run(scenario())
    assert "ACME" not in (result["out"].get("entities") or {}), "formed inside the run"
    assert [i["value"]["text"] for i in result["queued"]] == [
        "My name is Alice and I work at ACME."], "the run returned with its turn queued"
    assert {"Alice", "ACME"} <= result["names"], server.log_text()[-3000:]
    assert result["left"] == [], "the formation run emptied the queue"
    assert "ACME" in result["after"]["messages"][-1]["content"]
    server.stop()  # fails the test if a process is left behind
    assert "Traceback" not in server.log_text(), server.log_text()[-5000:]
