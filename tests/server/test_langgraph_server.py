"""The example app on ``langgraph dev``: ChromaStore as the deployment's long-term memory.

For each backend (the embedded folder, and a real ``chroma run`` server behind it):

1. start ``langgraph dev`` with the example, run the graph for two users on five threads each,
   all ten runs at once, then a later thread per user: each finds their own memory, never the
   other's;
2. the store API (put, get, search with a query and with a filter, list_namespaces with a
   prefix, delete) answers as the same calls on ``ChromaStore`` directly;
3. one user cannot read, search, list, write or delete the other's memories through the API,
   nor run the graph as the other user or on the other's threads (embedded backend only: the
   auth handlers do not depend on the backend);
4. stop (SIGTERM): the store is closed, no process is left; start again on the same data and
   find the memories again.
"""

from __future__ import annotations

import asyncio
import re
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from langgraph_episodic.server import StoreSettings, open_store

from .conftest import ROOT, TOKENS, LangGraphServer

pytestmark = [
    pytest.mark.server,
    pytest.mark.xdist_group("langgraph-server"),
    pytest.mark.skipif(
        sys.version_info < (3, 11), reason="langgraph dev (langgraph-api) needs Python 3.11+"
    ),
]

THREADS_PER_USER = 5
FACTS = {"alice": ("Alice", "ACME"), "bob": ("Bob", "Initech")}
TASKS = {"alice": "sort the numbers", "bob": "fix the log parser"}
NOTES = [  # (key, value) put through the API and directly
    ("n1", {"text": "likes dark roast coffee", "kind": "drink"}),
    ("n2", {"text": "drinks green tea in the afternoon", "kind": "drink"}),
    ("n3", {"text": "plays chess on sundays", "kind": "hobby"}),
    ("n4", {"text": "coffee grinder broke last week", "kind": "event"}),
]


def client(user: str | None, **headers: str) -> Any:
    auth = {"Authorization": f"Bearer {TOKENS[user]}"} if user else {}
    return get_client(url=CURRENT["url"], headers={**auth, **headers})


CURRENT: dict[str, str] = {}
"""The running server's URL (set by :func:`running`)."""


def running(server: LangGraphServer) -> LangGraphServer:
    CURRENT["url"] = server.start().url
    return server


def message(user: str, i: int) -> str:
    name, company = FACTS[user]
    return f"My name is {name} and I work at {company}. Please {TASKS[user]}, case {i}."


async def teach(user: str, thread_id: str, i: int) -> dict[str, Any]:
    out: dict[str, Any] = await client(user).runs.wait(
        thread_id, "agent",
        input={"messages": [{"role": "user", "content": message(user, i)}],
               "feedback": {"reward": 1.0}},
    )  # fmt: skip
    return out


async def later_thread(user: str, **run_options: Any) -> dict[str, Any]:
    thread = await client(user).threads.create()
    question = f"Can you {TASKS[user]} again?"
    out: dict[str, Any] = await client(user).runs.wait(
        thread["thread_id"], "agent",
        input={"messages": [{"role": "user", "content": question}]}, **run_options,
    )  # fmt: skip
    return out


def recalled_text(state: dict[str, Any]) -> str:
    return " ".join(str(e.get("task", {}).get("description", "")) for e in state["recalled"])


def assert_own_memory(user: str, state: dict[str, Any]) -> None:
    other = next(u for u in FACTS if u != user)
    assert state.get("recalled"), f"{user}'s later thread recalled nothing"
    assert TASKS[user] in recalled_text(state)
    assert TASKS[other] not in recalled_text(state)
    assert FACTS[user][1] in state.get("entities", {}), state.get("entities")
    assert FACTS[other][1] not in state.get("entities", {}), state.get("entities")
    assert FACTS[other][1] not in str(state["messages"])


async def run_users() -> dict[str, list[str]]:
    """Two users, five threads each, ten runs at once; then a later thread each."""
    threads = {
        user: [(await client(user).threads.create())["thread_id"] for _ in range(THREADS_PER_USER)]
        for user in FACTS
    }
    jobs = [teach(user, t, i) for user, ts in threads.items() for i, t in enumerate(ts)]
    results = await asyncio.gather(*jobs)
    assert all(r.get("episode_id") for r in results), "a run recorded no episode"
    for user in FACTS:
        assert_own_memory(user, await later_thread(user))
    return threads


def view(items: list[Any]) -> list[tuple[Any, ...]]:
    """What must match between the API and the direct store (not the timestamps)."""
    out = []
    for item in items:
        d = item if isinstance(item, dict) else item.dict()
        score = d.get("score")
        out.append((tuple(d["namespace"]), d["key"], d["value"],
                    None if score is None else round(score, 5)))  # fmt: skip
    return out


async def store_api_matches_direct(settings: StoreSettings, tmp: Path) -> None:
    """The same calls through the server's API (as alice) and on a ChromaStore directly."""
    api = client("alice").store
    direct_settings = StoreSettings(
        path=str(tmp / "direct"), embeddings=settings.embeddings,
        search_mode=settings.search_mode, collection=f"direct-{uuid.uuid4().hex[:8]}",
    )  # fmt: skip
    direct = open_store(direct_settings)
    try:
        ns = ("notes", "alice")
        for key, value in NOTES:
            await api.put_item(list(ns), key, value)
            direct.put(ns, key, value)
            direct.put(("notes", "bob"), key, value)  # another user's data, as on the server
            await client("bob").store.put_item(["notes", "bob"], key, value)
        calls: list[tuple[str, Any, Callable[[], Any]]] = [
            ("get", lambda: api.get_item(list(ns), "n1"), lambda: direct.get(ns, "n1")),
            ("search query", lambda: api.search_items(["notes", "alice"], query="coffee", limit=3),
             lambda: direct.search(ns, query="coffee", limit=3)),
            ("search filter", lambda: api.search_items(["notes"], filter={"kind": "drink"}),
             lambda: direct.search(ns, filter={"kind": "drink"})),
            ("search filter+query", lambda: api.search_items(
                ["notes"], filter={"kind": {"$ne": "hobby"}}, query="coffee"),
             lambda: direct.search(ns, filter={"kind": {"$ne": "hobby"}}, query="coffee")),
            ("list prefix", lambda: api.list_namespaces(prefix=["notes"]),
             lambda: direct.list_namespaces(prefix=ns)),
        ]  # fmt: skip
        for name, over_api, on_store in calls:
            got, expected = await over_api(), on_store()
            if name == "get":
                assert view([got]) == view([expected]), name
            elif name.startswith("search"):
                assert view(got["items"]) == view(expected), name
                assert got["items"], f"{name} found nothing"
            else:
                assert [tuple(n) for n in got["namespaces"]] == expected, name
        await api.delete_item(list(ns), "n1")
        direct.delete(ns, "n1")
        assert await api.get_item(list(ns), "n1") is None
        after = await api.search_items(["notes"], query="coffee")
        assert view(after["items"]) == view(direct.search(ns, query="coffee"))
    finally:
        direct.close()


BURST = 20
"""Items each user puts at once through the API (with searches and reads in between)."""


async def concurrent_api_burst() -> None:
    """Both users put, read and search at once; every write lands, in the writer's namespace."""

    async def put(user: str, i: int) -> None:
        await client(user).store.put_item(["burst", user], f"k{i}", {"text": f"{user} item {i}"})

    async def read(user: str, i: int) -> None:
        await client(user).store.search_items(["burst"], query=f"item {i}")
        await client(user).store.get_item(["burst", user], f"k{i}")

    jobs = [put(u, i) for u in FACTS for i in range(BURST)]
    jobs += [read(u, i) for u in FACTS for i in range(BURST)]
    await asyncio.gather(*jobs)
    for user in FACTS:
        items = (await client(user).store.search_items(["burst"], limit=100))["items"]
        assert sorted(i["key"] for i in items) == sorted(f"k{i}" for i in range(BURST))
        assert all(i["value"]["text"].startswith(user) for i in items)


async def expect_status(status: int, call: Any) -> None:
    with pytest.raises(httpx.HTTPStatusError) as caught:
        await call
    assert caught.value.response.status_code == status, caught.value.response.text


async def users_are_isolated(threads: dict[str, list[str]]) -> None:
    """bob attacks alice's memories through every door of the API."""
    bob = client("bob")
    alice_ns = ["entities", "alice"]
    alice_entities = (await client("alice").store.search_items(["entities"]))["items"]
    assert alice_entities, "alice has no stored entities to attack"
    key = alice_entities[0]["key"]
    await expect_status(403, bob.store.get_item(alice_ns, key))
    await expect_status(403, bob.store.search_items(alice_ns))
    await expect_status(403, bob.store.search_items([]))
    await expect_status(403, bob.store.list_namespaces(prefix=alice_ns))
    await expect_status(403, bob.store.list_namespaces(prefix=["*", "alice"]))
    await expect_status(403, bob.store.put_item(alice_ns, key, {"text": "overwritten"}))
    await expect_status(403, bob.store.delete_item(alice_ns, key))
    for prefix in (["entities"], ["episodes"], ["notes"]):
        items = (await bob.store.search_items(prefix, limit=100))["items"]
        assert items and all(i["namespace"][1] == "bob" for i in items), prefix
    listed = (await bob.store.list_namespaces())["namespaces"]
    assert listed and all(ns[1] == "bob" for ns in listed), listed
    assert (await bob.store.list_namespaces(suffix=["alice"]))["namespaces"] == []
    # alice's item is untouched
    item = await client("alice").store.get_item(alice_ns, key)
    assert item is not None and item["value"] == alice_entities[0]["value"]
    # a run as alice (configurable or context) still runs as bob
    for options in ({"config": {"configurable": {"user_id": "alice"}}},
                    {"context": {"user_id": "alice"}}):  # fmt: skip
        state = await later_thread("bob", **options)
        assert_own_memory("bob", state)
    # alice's threads are invisible to bob, and he cannot run on them
    alice_thread = threads["alice"][0]
    await expect_status(404, bob.threads.get(alice_thread))
    for door in (bob.threads.get_state(alice_thread), bob.threads.get_history(alice_thread),
                 bob.runs.list(alice_thread),
                 bob.threads.update_state(alice_thread, {"messages": []}),
                 bob.threads.delete(alice_thread)):  # fmt: skip
        with pytest.raises(httpx.HTTPStatusError) as caught:
            await door
        assert caught.value.response.status_code in (403, 404), caught.value.response.text
    assert (await client("alice").threads.get_state(alice_thread))["values"]["messages"]
    with pytest.raises(httpx.HTTPStatusError):
        await bob.runs.wait(threads["alice"][0], "agent", input={"messages": []})
    found = await bob.threads.search(limit=100)
    assert {t["thread_id"] for t in found}.isdisjoint(threads["alice"])
    # no token, a wrong token, or the Studio header without a token: 401
    await expect_status(401, client(None).store.list_namespaces())
    await expect_status(401, client(None, Authorization="Bearer nope").store.list_namespaces())
    await expect_status(401, client(None, **{"x-auth-scheme": "langsmith"}).store.list_namespaces())


async def memory_survives(user: str) -> None:
    episodes = (await client(user).store.search_items(["episodes"], limit=100))["items"]
    assert len(episodes) == THREADS_PER_USER, [e["key"] for e in episodes]
    assert_own_memory(user, await later_thread(user))


def readme_client_block() -> str:
    """The client example of docs/server.md."""
    page = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")
    match = re.search(r"```python notest\n(.*?)```", page, re.DOTALL)
    assert match, "docs/server.md has no client example"
    return match.group(1)


def readme_example_runs() -> None:
    """The client example of docs/server.md, pointed at this server, does what its comments
    say."""
    source = readme_client_block()
    assert "http://127.0.0.1:2024" in source
    namespace: dict[str, Any] = {}
    exec(compile(source.replace("http://127.0.0.1:2024", CURRENT["url"]), "docs/server.md", "exec"),
         namespace)  # fmt: skip
    alice = namespace["alice"]
    listed = alice.store.list_namespaces()["namespaces"]
    assert ["entities", "alice"] in listed and ["episodes", "alice"] in listed, listed
    assert all(ns[1] == "alice" for ns in listed), listed
    found = alice.store.search_items(["entities"], query="employer")["items"]
    assert found and all(i["namespace"] == ["entities", "alice"] for i in found)


def stop_cleanly(server: LangGraphServer) -> None:
    assert server.remote_hosts() <= {"127.0.0.1"}, "the server talks to another host"
    server.stop()
    log = server.log_text()
    assert log.count("langgraph-episodic: opened ChromaStore") == log.count(
        "langgraph-episodic: closed ChromaStore"
    ), "the store was not closed at shutdown"
    assert "TTL sweeper every 5 min" in log
    assert "Traceback" not in log, log[-5000:]


async def scenario(
    langgraph_server: type[LangGraphServer], app_dir: Path, env: dict[str, str],
    embedded: bool = False,
) -> None:
    """The whole story on one backend; the auth attacks and the README example (which do not
    depend on where the store keeps its data) run on the embedded one only."""
    settings = StoreSettings.from_env(env)
    server = running(langgraph_server(app_dir, env))
    try:
        threads = await run_users()
        await store_api_matches_direct(settings, app_dir)
        await concurrent_api_burst()
        if embedded:
            await users_are_isolated(threads)
    finally:
        stop_cleanly(server)
    assert server.log_text().count("langgraph-episodic: closed ChromaStore") == 1
    running(server)
    try:
        for user in FACTS:
            await memory_survives(user)
        if embedded:
            await asyncio.to_thread(readme_example_runs)
    finally:
        stop_cleanly(server)


async def test_embedded_folder(
    langgraph_server: type[LangGraphServer], app_dir: Path
) -> None:
    env = {"EPISODIC_STORE_PATH": str(app_dir / "memory"), "EPISODIC_EMBEDDINGS": "hash"}
    await scenario(langgraph_server, app_dir, env, embedded=True)


async def test_chroma_server_behind(
    langgraph_server: type[LangGraphServer], app_dir: Path, chroma_server: Any
) -> None:
    env = {"EPISODIC_CHROMA_URL": chroma_server.url, "EPISODIC_EMBEDDINGS": "hash",
           "EPISODIC_COLLECTION": f"lg-{uuid.uuid4().hex[:12]}",
           "EPISODIC_CHROMA_HEADERS": '{"X-Request-Source": "langgraph-episodic-tests"}'}  # fmt: skip
    await scenario(langgraph_server, app_dir, env)
