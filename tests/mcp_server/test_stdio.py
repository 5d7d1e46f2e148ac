"""``langgraph-episodic mcp`` over stdio, spawned as the real command by the MCP SDK's client."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .conftest import cli

pytestmark = pytest.mark.timeout(120)


def params(store: Path, user: str, *extra: str) -> StdioServerParameters:
    argv = cli("mcp", "--user", user, "--path", str(store), "--embeddings", "hash", *extra)
    return StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))


@asynccontextmanager
async def session(store: Path, user: str, *extra: str) -> AsyncIterator[ClientSession]:
    async with (
        stdio_client(params(store, user, *extra)) as (read, write),
        ClientSession(read, write) as client,
    ):
        await asyncio.wait_for(client.initialize(), 60)
        yield client


async def text(client: ClientSession, name: str, arguments: dict[str, object]) -> str:
    result = await asyncio.wait_for(client.call_tool(name, arguments), 60)
    assert not result.isError, result.content
    return "".join(getattr(block, "text", "") for block in result.content)


async def test_lists_the_tools_saves_and_recalls(tmp_path: Path) -> None:
    async with session(tmp_path / "store", "alice") as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["memory_speichern", "memory_abrufen", "memory_verlauf"]
        saved = await text(
            client, "memory_speichern", {"information": "Alice trinkt Tee, Mail a@b.example"}
        )
        assert saved == "Gespeichert: Alice trinkt Tee, Mail [EMAIL]"
        recalled = await text(client, "memory_abrufen", {"frage": "Was trinkt Alice? Tee"})
        assert recalled.splitlines()[1:] == ["- Alice trinkt Tee, Mail [EMAIL]"]
        nothing = await text(client, "memory_abrufen", {"frage": "Motorrad Garage Reifen"})
        assert nothing == "Keine relevanten Informationen im Gedächtnis gefunden."


async def test_english_tools(tmp_path: Path) -> None:
    async with session(tmp_path / "store", "alice", "--locale", "en") as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["save_memory", "recall_memory", "memory_history"]
        assert listed.tools[0].description.startswith("Saves one precise piece")
        assert await text(client, "save_memory", {"information": "Alice likes tea."}) == (
            "Saved: Alice likes tea."
        )


async def test_two_users_one_after_the_other_are_apart(tmp_path: Path) -> None:
    """The embedded folder has one writer: alice's server ends before bob's starts."""
    store = tmp_path / "store"
    async with session(store, "alice") as client:
        await text(client, "memory_speichern", {"information": "Alice spielt Geige."})
    async with session(store, "bob") as client:
        answer = await text(client, "memory_abrufen", {"frage": "Wer spielt Geige?"})
        assert "Geige" not in answer
        await text(client, "memory_speichern", {"information": "Bob spielt Cello."})
    async with session(store, "alice") as client:
        answer = await text(client, "memory_abrufen", {"frage": "Geige Cello"})
        assert "Alice spielt Geige." in answer and "Cello" not in answer


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("memory_abrufen", {"frage": 42}),
        ("memory_abrufen", {}),
        ("memory_abrufen", {"frage": "Geige", "user_id": "alice"}),
        ("memory_speichern", {"information": "x" * 5000}),
        ("memory_speichern", {"information": ["a", "b"]}),
        ("memory_vergessen", {}),
    ],
)
async def test_bad_arguments_get_an_mcp_error_and_the_server_carries_on(
    tmp_path: Path, name: str, arguments: dict[str, object]
) -> None:
    async with session(tmp_path / "store", "bob") as client:
        result = await asyncio.wait_for(client.call_tool(name, arguments), 60)
        assert result.isError
        assert await text(client, "memory_speichern", {"information": "Bob spielt Cello."})
        assert "Cello" in await text(client, "memory_abrufen", {"frage": "Cello"})


async def test_forget_behind_the_flag(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with session(store, "alice", "--allow-forget") as client:
        await text(client, "memory_speichern", {"information": "Alice spielt Geige."})
        assert "Einträge: 1" in await text(client, "memory_vergessen", {})
        answer = await text(client, "memory_abrufen", {"frage": "Geige"})
        assert answer == "Keine relevanten Informationen im Gedächtnis gefunden."


def test_without_user_the_command_says_what_to_pass(tmp_path: Path) -> None:
    done = subprocess.run(cli("mcp", "--path", str(tmp_path / "s"), "--embeddings", "hash"),
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "--user" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""


CLIENT = textwrap.dedent(
    """
    import asyncio, os, sys
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main():
        argv = sys.argv[1:]
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                await client.call_tool("memory_speichern", {"information": "Alice fährt Rad."})
                pending = asyncio.create_task(  # in flight when the client is killed
                    client.call_tool("memory_speichern", {"information": "Alice mag Jazz."})
                )
                await asyncio.sleep(0)
                print("ready", flush=True)
                await asyncio.sleep(600)
                await pending

    asyncio.run(main())
    """
)


def test_a_killed_client_ends_its_server_and_frees_the_folder(tmp_path: Path) -> None:
    """SIGKILL the client with a call in flight: its server sees stdin close, exits, and
    releases the folder lock, so the next server opens the same store and finds the memory
    saved before (the one in flight may or may not have been saved)."""
    store = tmp_path / "store"
    argv = cli("mcp", "--user", "alice", "--path", str(store), "--embeddings", "hash")
    client = subprocess.Popen([sys.executable, "-c", CLIENT, *argv], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert client.stdout is not None
        assert client.stdout.readline().strip() == b"ready"
        server_pids = _children(client.pid)
        assert server_pids, "the client spawned its server"
        os.kill(client.pid, signal.SIGKILL)
        client.wait(timeout=10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_running(pid) for pid in server_pids):
            time.sleep(0.1)
        assert not any(_running(pid) for pid in server_pids), "the orphaned server lingers"
    finally:
        if client.poll() is None:
            client.kill()
        for pid in _children(client.pid):
            os.kill(pid, signal.SIGKILL)

    async def recall() -> str:
        async with session(store, "alice") as again:
            return await text(again, "memory_abrufen", {"frage": "Rad"})

    assert "Alice fährt Rad." in asyncio.run(recall())


def _children(pid: int) -> list[int]:
    import psutil

    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _running(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


MISSING_SDK = (
    "import sys; sys.modules['mcp'] = None; "  # as if the [mcp] extra were not installed
    "from langgraph_episodic.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def test_without_the_extra_the_command_names_the_install(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", MISSING_SDK, "mcp", "--user", "alice", "--path", str(tmp_path)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert 'pip install -e ".[mcp]"' in done.stderr and "Traceback" not in done.stderr


def test_a_second_server_on_the_same_folder_shares_it(tmp_path: Path) -> None:
    """The second server opens the folder through the first one's process (docs/store.md,
    "Many processes on one folder"); it ends with its client (here: no input)."""
    store = tmp_path / "store"

    async def second_while_first_runs() -> subprocess.CompletedProcess[str]:
        async with session(store, "alice"):
            argv = cli("mcp", "--user", "bob", "--path", str(store), "--embeddings", "hash")
            return await asyncio.to_thread(
                subprocess.run, argv, capture_output=True, text=True, timeout=60,
                stdin=subprocess.DEVNULL,
            )

    done = asyncio.run(second_while_first_runs())
    assert done.returncode == 0, done.stderr
    assert "serving" in done.stderr and "for user 'bob'" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


@pytest.mark.model
async def test_the_packaged_model_is_the_default(tmp_path: Path) -> None:
    argv = cli("mcp", "--user", "alice", "--path", str(tmp_path / "store"))
    server = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write) as client,
    ):
        await asyncio.wait_for(client.initialize(), 90)
        await text(client, "memory_speichern", {"information": "Alice drinks green tea."})
        answer = await text(client, "memory_abrufen", {"frage": "What does Alice drink?"})
        assert "Alice drinks green tea." in answer
