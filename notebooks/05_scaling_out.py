# %% [markdown]
# # 5 · Scaling out: a Chroma server and a Postgres checkpointer
#
# **What this notebook shows:** the same store code running embedded and against a Chroma
# server (`chroma run`) that this notebook starts on 127.0.0.1 and stops at the end;
# several clients sharing one server; async use; moving an embedded store to the server
# with the command line's `export` / `import`; and a Postgres checkpointer for the graph's
# threads **where one is available** (otherwise SQLite, and the notebook says so).
#
# The deterministic `HashEmbeddings` stand in for the model here: this notebook is about
# where the data lives, not about retrieval quality.

# %%
import atexit
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

scratch = tempfile.TemporaryDirectory(prefix="episodic-scaling-")  # removed at the end
workdir = Path(scratch.name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
port = free_port()
url = f"http://127.0.0.1:{port}"
server = subprocess.Popen(
    [chroma, "run", "--path", str(workdir / "server-data"), "--host", "127.0.0.1", "--port", str(port)],
    stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL,
)
atexit.register(server.terminate)  # stop it even if a later cell fails

deadline = time.monotonic() + 60
while True:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
            break
    except OSError as exc:
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"chroma run did not start (exit code {server.poll()})") from exc
        time.sleep(0.2)
print("Chroma server running at", url)

# %% [markdown]
# ## The same code, embedded and on the server
#
# Only the constructor changes: `ChromaStore.persistent(path)` for an embedded database,
# `ChromaStore.http(host, port)` (or `ChromaStore.from_url(url)`) for a server.

# %%
from langgraph_episodic import ChromaStore, HashEmbeddings

index = {"dims": 64, "embed": HashEmbeddings(64)}


def remember_and_recall(store) -> list[str]:
    ns = ("memories", "alice")
    store.put(ns, "lang", {"text": "Alice writes services in Go"})
    store.put(ns, "db", {"text": "Alice's team runs Postgres 16"})
    store.put(ns, "pet", {"text": "Alice has a cat named Miso"})
    return [r.key for r in store.search(ns, query="which database does the team run", limit=2)]


embedded = ChromaStore.persistent(workdir / "embedded", index=index)
on_server = ChromaStore.http("127.0.0.1", port, index=index)
print("embedded:", remember_and_recall(embedded))
print("server:  ", remember_and_recall(on_server))
assert remember_and_recall(embedded) == remember_and_recall(on_server)

# %% [markdown]
# ## Many clients, one server
#
# Every process (or machine) that opens the server sees the same items. Here a second
# client stands in for a second worker process.

# %%
worker = ChromaStore.from_url(url, index=index)
worker.put(("memories", "alice"), "editor", {"text": "Alice uses Helix as her editor"})
edited = on_server.get(("memories", "alice"), "editor")
assert edited is not None
print(edited.value)
print("namespaces on the server:", on_server.list_namespaces())

# %% [markdown]
# ## Async
#
# Every method has an `a*` twin (`aput`, `asearch`, ...), so an async graph
# (`graph.ainvoke`) does not block its event loop on the server round trips.

# %%
import asyncio


async def save_many(store, n: int) -> int:
    await asyncio.gather(*(store.aput(("memories", "bob"), f"note-{i}", {"text": f"note number {i}"}) for i in range(n)))
    return len(await store.asearch(("memories", "bob"), limit=100))


print("bob's notes on the server:", await save_many(on_server, 20))

# %% [markdown]
# ## Episodic memory on the server
#
# Everything built on the store works unchanged, e.g. `EpisodicMemory`.

# %%
from langgraph_episodic import (
    Episode,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)

memory = EpisodicMemory.for_user(on_server, "alice")
task = TaskDescription("Fix the timezone bug in the report scheduler", TaskCategory.DEBUGGING, 0.6)
memory.record(Episode("ep-1", task, "Store times in UTC, convert on display", Feedback(0.9, "all tests pass"), OutcomeStatus.SUCCESS, timestamp=time.time(), strategy_used="defensive"))
for result in memory.recall("scheduler shows the wrong hour"):
    print(f"{result.priority:.2f}", result.episode.strategy_used, "-", result.episode.task.description)

# %% [markdown]
# ## Moving an embedded store to the server
#
# The command line exports every item as JSON lines (namespace, key, value, timestamps) and
# imports them elsewhere, recomputing the vectors. In a terminal:
#
# ```
# langgraph-episodic export store.jsonl --path ./.episodic
# langgraph-episodic import store.jsonl --url http://127.0.0.1:8000
# ```
#
# Here we call the same entry point from Python.

# %%
from langgraph_episodic.cli.main import main as cli

embedded.close()
dump = workdir / "store.jsonl"
assert cli(["export", str(dump), "--path", str(workdir / "embedded")]) == 0
assert cli(["import", str(dump), "--url", url, "--collection", "migrated", "--embeddings", "hash"]) == 0
assert cli(["stats", "--url", url, "--collection", "migrated"]) == 0

# %% [markdown]
# ## A Postgres checkpointer, where one is available
#
# The graph's threads (its checkpoints) can live in Postgres instead of SQLite:
# `open_checkpointer("postgresql://...")` needs `pip install -e ".[postgres]"` (checkout)
# and a reachable database. Set `LANGGRAPH_EPISODIC_POSTGRES_URL` to use one here; without
# it this cell says why and uses SQLite, which the rest of the code does not notice.

# %%
import importlib.util
import os

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from langgraph_episodic import build_memory_graph, open_checkpointer, thread_config


def postgres_target() -> tuple[str | None, str]:
    pg_url = os.environ.get("LANGGRAPH_EPISODIC_POSTGRES_URL")
    if not pg_url:
        return None, "LANGGRAPH_EPISODIC_POSTGRES_URL is not set"
    if importlib.util.find_spec("langgraph.checkpoint.postgres") is None:
        return None, "langgraph-checkpoint-postgres is not installed"
    try:
        import psycopg

        psycopg.connect(pg_url, connect_timeout=3).close()
    except psycopg.Error as exc:
        return None, f"cannot connect to {pg_url}: {exc}"
    return pg_url, "Postgres is available"


pg_url, reason = postgres_target()
if pg_url is None:
    print(f"No Postgres checkpointer here ({reason}); using SQLite instead.")
target = pg_url or workdir / "checkpoints.sqlite"

with open_checkpointer(target) as saver:
    llm = GenericFakeChatModel(messages=iter(["Noted: UTC everywhere.", "You asked about UTC."]))
    graph = build_memory_graph(llm, store=on_server, checkpointer=saver, summarize=False)
    config = thread_config("alice", "scaling-demo")
    graph.invoke({"messages": [("user", "Always store timestamps in UTC.")]}, config)
    state = graph.invoke({"messages": [("user", "What did I ask you before?")]}, config)
    print(type(saver).__name__, "holds", len(state["messages"]), "messages of thread", config["configurable"]["thread_id"])

# %% [markdown]
# ## Stop the server

# %%
for store in (on_server, worker):
    store.close()
server.terminate()
server.wait(timeout=10)
print("server stopped with exit code", server.returncode)
scratch.cleanup()  # the server's data and the notebook's files go; nothing is left in the temp dir
