"""The example app on ``langgraph dev``: the server's own assistant is found by every user.

``langgraph dev`` creates one assistant per graph of ``langgraph.json`` (metadata
``created_by: system``, no owner). With ``isolate_users(auth)`` every logged-in user finds it
(search, get, its graph and schemas) and runs it, and nobody can change or delete it; the
assistants a user creates stay that user's; no client can make an assistant pass for the
server's, hand one to another user, or, through an assistant's context, run as another user.
Everything goes through ``langgraph-sdk``, as Studio and clients do.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
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


def client(url: str, user: str) -> Any:
    return get_client(url=url, headers={"Authorization": f"Bearer {TOKENS[user]}"})


async def status_of(call: Any) -> int:
    with pytest.raises(httpx.HTTPStatusError) as caught:
        await call
    code: int = caught.value.response.status_code
    return code


async def system_assistant_for_everyone(url: str) -> dict[str, Any]:
    """Both users find the one system assistant, read it and its graph, and run it."""
    found = {}
    for user in TOKENS:
        listed = await client(url, user).assistants.search(limit=100)
        system = [a for a in listed if a["metadata"].get("created_by") == "system"]
        assert [a["graph_id"] for a in system] == ["agent"], (user, listed)
        found[user] = system[0]
        assistant_id = system[0]["assistant_id"]
        api = client(url, user).assistants
        assert (await api.get(assistant_id))["graph_id"] == "agent"
        assert (await api.get_graph(assistant_id))["nodes"]
        assert "input_schema" in await api.get_schemas(assistant_id)
        assert await client(url, user).assistants.count() >= 1
        by_graph = await api.search(graph_id="agent", limit=100)
        assert assistant_id in {a["assistant_id"] for a in by_graph}
    assert found["alice"]["assistant_id"] == found["bob"]["assistant_id"]
    return found["alice"]


async def nobody_changes_it(url: str, system: dict[str, Any]) -> None:
    assistant_id = system["assistant_id"]
    for user in TOKENS:
        api = client(url, user).assistants
        for door in (api.update(assistant_id, metadata={"hacked": True}),
                     api.update(assistant_id, name="mine now"),
                     api.update(assistant_id, metadata={"owner": user}),
                     api.set_latest(assistant_id, 1),
                     api.delete(assistant_id)):  # fmt: skip
            assert await status_of(door) == 404
        # the same id, created again, is not handed over
        assert await status_of(
            api.create("agent", assistant_id=assistant_id, if_exists="do_nothing")
        ) in (403, 409)
    after = await client(url, "bob").assistants.get(assistant_id)
    assert (after["name"], after["metadata"], after["version"]) == (
        system["name"], system["metadata"], system["version"])  # fmt: skip


async def own_assistants_stay_private(url: str, system: dict[str, Any]) -> str:
    """alice's assistant: hers to read, change and run; bob neither sees nor touches it."""
    alice, bob = client(url, "alice").assistants, client(url, "bob").assistants
    mine = await alice.create("agent", name="alice's helper", metadata={"topic": "sorting"})
    mine_id = mine["assistant_id"]
    assert mine["metadata"]["owner"] == "alice"
    assert {a["assistant_id"] for a in await alice.search(limit=100)} == {
        mine_id, system["assistant_id"]}  # fmt: skip
    assert {a["assistant_id"] for a in await bob.search(limit=100)} == {system["assistant_id"]}
    assert await status_of(bob.get(mine_id)) == 404
    for door in (bob.update(mine_id, name="bob's"), bob.delete(mine_id)):
        assert await status_of(door) in (403, 404)
    # handing it to bob by metadata does not work: the owner stays alice
    given = await alice.update(mine_id, metadata={"owner": "bob"})
    assert given["metadata"]["owner"] == "alice"
    assert await status_of(bob.get(mine_id)) == 404
    assert (await alice.get(mine_id))["name"] == "alice's helper"
    return str(mine_id)


async def nobody_passes_for_the_server(url: str, mine_id: str) -> None:
    alice, bob = client(url, "alice").assistants, client(url, "bob").assistants
    before = {a["assistant_id"] for a in await bob.search(limit=100)}
    assert await status_of(
        alice.create("agent", name="fake", metadata={"created_by": "system"})) == 403
    assert await status_of(alice.update(mine_id, metadata={"created_by": "system"})) == 403
    assert {a["assistant_id"] for a in await bob.search(limit=100)} == before
    assert await status_of(bob.get(mine_id)) == 404


async def runs_are_the_callers(url: str, system: dict[str, Any]) -> None:
    """A run on the system assistant works; a run on alice's assistant made with bob's user id
    in its context runs as alice (and does not fail on the two ids)."""
    alice = client(url, "alice")
    thread = await alice.threads.create()
    text = "My name is Alice and I work at ACME."
    out = await alice.runs.wait(thread["thread_id"], system["assistant_id"],
                                input={"messages": [{"role": "user", "content": text}]})  # fmt: skip
    assert "ACME" in out["entities"], out
    spoof = await alice.assistants.create("agent", context={"user_id": "bob"})
    thread = await alice.threads.create()
    text = "I also work at Initech."
    out = await alice.runs.wait(thread["thread_id"], spoof["assistant_id"],
                                input={"messages": [{"role": "user", "content": text}]})  # fmt: skip
    assert "ACME" in out["entities"] and "Initech" in out["entities"], out
    bob_entities = await client(url, "bob").store.search_items(["entities"], limit=100)
    assert bob_entities["items"] == [], bob_entities


async def test_the_servers_assistant_is_shared_and_user_assistants_are_private(
    langgraph_server: type[LangGraphServer], app_dir: Path
) -> None:
    env = {"EPISODIC_STORE_PATH": str(app_dir / "memory"), "EPISODIC_EMBEDDINGS": "hash"}
    server = langgraph_server(app_dir, env).start()
    try:
        system = await system_assistant_for_everyone(server.url)
        await nobody_changes_it(server.url, system)
        mine_id = await own_assistants_stay_private(server.url, system)
        await nobody_passes_for_the_server(server.url, mine_id)
        await runs_are_the_callers(server.url, system)
    finally:
        code = server.stop()
    assert "Traceback" not in server.log_text(), server.log_text()[-5000:]
    assert code in (0, -15), code
