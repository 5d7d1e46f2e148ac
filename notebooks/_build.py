"""Generate the walkthrough notebooks from the cell texts below.

The ``.ipynb`` files are written by this script, without outputs, so they are easy to review and
to change: edit the cells here, run ``python notebooks/_build.py``, commit both. Every notebook is
executed offline by ``tests/docs/test_notebooks.py``; ``python notebooks/_build.py --check`` fails
when a committed notebook differs from what this script writes.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str]


def md(text: str) -> Cell:
    """A markdown cell."""
    return ("markdown", textwrap.dedent(text).strip())


def code(text: str) -> Cell:
    """A code cell."""
    return ("code", textwrap.dedent(text).strip())


# --------------------------------------------------------------------------------------------
# 1. Quickstart
# --------------------------------------------------------------------------------------------

QUICKSTART = [
    md(
        """
        # 1 · Quickstart: a Chroma store for LangGraph

        **What this notebook shows:** `ChromaStore`, a LangGraph `BaseStore` on an embedded Chroma
        database, used (1) directly — put, get, semantic search, filters, namespaces — and
        (2) inside a LangGraph graph, where nodes read and write it through the runtime; then
        (3) items that expire (TTL) and (4) that everything survives a restart.

        It runs offline: the embedding model (all-MiniLM-L6-v2) ships inside a Python package.
        Loading it takes a few seconds the first time.
        """
    ),
    code(
        """
        import tempfile
        from pathlib import Path

        from langgraph_episodic import ChromaStore

        workdir = Path(tempfile.mkdtemp(prefix="episodic-quickstart-"))
        # In your app: ChromaStore.persistent() keeps everything in ./.episodic
        store = ChromaStore.persistent(workdir / "store")
        store
        """
    ),
    md(
        """
        ## Put and get

        Items live in **namespaces** (tuples of labels, e.g. one per user) under a **key**; the
        value is a JSON-like dict. The store stamps `created_at` and `updated_at`.
        """
    ),
    code(
        """
        alice = ("users", "alice")
        store.put(alice, "coffee", {"text": "Alice drinks her espresso without sugar", "kind": "preference", "priority": 2})
        store.put(alice, "editor", {"text": "Alice writes Python in Neovim", "kind": "preference", "priority": 1})
        store.put(alice, "deadline", {"text": "The billing migration is due on Friday", "kind": "task", "priority": 3})
        store.put(("users", "alice2"), "coffee", {"text": "Alice2 only drinks green tea", "kind": "preference", "priority": 1})

        item = store.get(alice, "coffee")
        print(item.value["text"], "| created", item.created_at.isoformat(timespec="seconds"))
        """
    ),
    md(
        """
        ## Semantic search

        `search(namespace_prefix, query=...)` ranks by meaning, not by shared words: the question
        below has no word in common with the answer. Scores are higher for better matches.
        """
    ),
    code(
        """
        results = store.search(alice, query="How does she take her coffee?", limit=3)
        for r in results:
            print(f"{r.score:.3f}  {r.key:<9} {r.value['text']}")
        assert results[0].key == "coffee"
        """
    ),
    md(
        """
        ## Filters

        `filter` matches value fields exactly or with `$eq $ne $gt $gte $lt $lte`; several keys
        are ANDed. It combines with a query.
        """
    ),
    code(
        """
        preferences = store.search(alice, filter={"kind": "preference"})
        urgent = store.search(alice, filter={"priority": {"$gte": 2}})
        urgent_tasks = store.search(alice, query="what is due soon?", filter={"kind": "task", "priority": {"$gt": 2}})
        print("preferences:", sorted(r.key for r in preferences))
        print("priority >= 2:", sorted(r.key for r in urgent))
        print("urgent tasks:", [r.key for r in urgent_tasks])
        assert sorted(r.key for r in preferences) == ["coffee", "editor"]
        """
    ),
    md(
        """
        ## Namespaces match whole labels

        A search under `("users", "alice")` never sees `("users", "alice2")`: namespaces are
        compared label by label, so one user cannot read another's items by a prefix trick.
        """
    ),
    code(
        """
        print(store.list_namespaces(prefix=("users",)))
        seen = {tuple(r.namespace) for r in store.search(alice, query="tea", limit=10)}
        print("namespaces seen from alice:", seen)
        assert seen == {alice}
        """
    ),
    md(
        """
        ## The store in a graph

        Compile a graph with `store=...` and every node can reach it through its `runtime`. The
        user id comes from `config["configurable"]`, never from the model or the message text.
        This node remembers every statement and answers questions from memory.
        """
    ),
    code(
        """
        import uuid

        from langchain_core.messages import AIMessage
        from langgraph.graph import START, MessagesState, StateGraph
        from langgraph.runtime import Runtime


        def remember_or_answer(state: MessagesState, config, runtime: Runtime) -> dict:
            user = config["configurable"]["user_id"]
            namespace = ("memories", user)
            text = state["messages"][-1].content
            if text.rstrip().endswith("?"):
                hits = runtime.store.search(namespace, query=text, limit=1)
                answer = hits[0].value["text"] if hits else "I don't know yet."
                return {"messages": [AIMessage(f"From memory: {answer}")]}
            runtime.store.put(namespace, str(uuid.uuid4()), {"text": text})
            return {"messages": [AIMessage("Noted.")]}


        builder = StateGraph(MessagesState)
        builder.add_node("memory", remember_or_answer)
        builder.add_edge(START, "memory")
        graph = builder.compile(store=store)

        config = {"configurable": {"user_id": "bob"}}
        for text in ["My dog is called Rex.", "I deploy on Kubernetes.", "What is the name of my pet?"]:
            reply = graph.invoke({"messages": [("user", text)]}, config)["messages"][-1].content
            print(f"{text:<30} -> {reply}")
        assert "Rex" in reply

        other = graph.invoke({"messages": [("user", "What is the name of my pet?")]}, {"configurable": {"user_id": "carol"}})
        print("carol asks the same:", other["messages"][-1].content)
        """
    ),
    md(
        """
        ## Time to live (TTL)

        With `ttl={"default_ttl": minutes}` items expire; `put(..., ttl=...)` overrides it per
        item. Expired items are never returned, even before `sweep_ttl()` deletes them (a
        background sweeper can do that with `sweep_interval_minutes`). Here an item lives for
        one second.
        """
    ),
    code(
        """
        import time

        sessions = ChromaStore.persistent(workdir / "store", collection="sessions", ttl={"default_ttl": 60})
        sessions.put(("sessions", "alice"), "cart", {"text": "2 books in the cart"})             # 60 minutes
        sessions.put(("sessions", "alice"), "otp", {"text": "one-time code 481516"}, ttl=1 / 60)  # 1 second
        print("now:", sorted(r.key for r in sessions.search(("sessions", "alice"))))
        time.sleep(1.5)
        print("after 1.5 s:", sorted(r.key for r in sessions.search(("sessions", "alice"))))
        print("swept:", sessions.sweep_ttl(), "expired item(s)")
        assert sessions.get(("sessions", "alice"), "otp") is None
        """
    ),
    md(
        """
        ## Persistence

        Close the store and open the same folder again: items and vectors are still there.
        """
    ),
    code(
        """
        store.close()
        reopened = ChromaStore.persistent(workdir / "store")
        print([r.key for r in reopened.search(alice, query="coffee", limit=1)])
        reopened.close()
        sessions.close()
        """
    ),
    md(
        """
        **Next:** notebook 2 records agent runs as *episodes* and replays the ones that matter;
        notebook 5 runs the same code against a Chroma server.
        """
    ),
]


# --------------------------------------------------------------------------------------------
# 5. Scaling out
# --------------------------------------------------------------------------------------------

SCALING = [
    md(
        """
        # 5 · Scaling out: a Chroma server and a Postgres checkpointer

        **What this notebook shows:** the same store code running embedded and against a Chroma
        server (`chroma run`) that this notebook starts on 127.0.0.1 and stops at the end;
        several clients sharing one server; async use; moving an embedded store to the server
        with the command line's `export` / `import`; and a Postgres checkpointer for the graph's
        threads **where one is available** (otherwise SQLite, and the notebook says so).

        The deterministic `HashEmbeddings` stand in for the model here: this notebook is about
        where the data lives, not about retrieval quality.
        """
    ),
    code(
        """
        import atexit
        import shutil
        import socket
        import subprocess
        import sys
        import tempfile
        import time
        import urllib.request
        from pathlib import Path

        workdir = Path(tempfile.mkdtemp(prefix="episodic-scaling-"))


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
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"chroma run did not start (exit code {server.poll()})")
                time.sleep(0.2)
        print("Chroma server running at", url)
        """
    ),
    md(
        """
        ## The same code, embedded and on the server

        Only the constructor changes: `ChromaStore.persistent(path)` for an embedded database,
        `ChromaStore.http(host, port)` (or `ChromaStore.from_url(url)`) for a server.
        """
    ),
    code(
        """
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
        """
    ),
    md(
        """
        ## Many clients, one server

        Every process (or machine) that opens the server sees the same items. Here a second
        client stands in for a second worker process.
        """
    ),
    code(
        """
        worker = ChromaStore.from_url(url, index=index)
        worker.put(("memories", "alice"), "editor", {"text": "Alice uses Helix as her editor"})
        print(on_server.get(("memories", "alice"), "editor").value)
        print("namespaces on the server:", on_server.list_namespaces())
        """
    ),
    md(
        """
        ## Async

        Every method has an `a*` twin (`aput`, `asearch`, ...), so an async graph
        (`graph.ainvoke`) does not block its event loop on the server round trips.
        """
    ),
    code(
        """
        import asyncio


        async def save_many(store, n: int) -> int:
            await asyncio.gather(*(store.aput(("memories", "bob"), f"note-{i}", {"text": f"note number {i}"}) for i in range(n)))
            return len(await store.asearch(("memories", "bob"), limit=100))


        print("bob's notes on the server:", await save_many(on_server, 20))
        """
    ),
    md(
        """
        ## Episodic memory on the server

        Everything built on the store works unchanged, e.g. `EpisodicMemory`.
        """
    ),
    code(
        """
        from langgraph_episodic import Episode, EpisodicMemory, Feedback, OutcomeStatus, TaskCategory, TaskDescription

        memory = EpisodicMemory.for_user(on_server, "alice")
        task = TaskDescription("Fix the timezone bug in the report scheduler", TaskCategory.DEBUGGING, 0.6)
        memory.record(Episode("ep-1", task, "Store times in UTC, convert on display", Feedback(0.9, "all tests pass"), OutcomeStatus.SUCCESS, timestamp=time.time(), strategy_used="defensive"))
        for result in memory.recall("scheduler shows the wrong hour"):
            print(f"{result.priority:.2f}", result.episode.strategy_used, "-", result.episode.task.description)
        """
    ),
    md(
        """
        ## Moving an embedded store to the server

        The command line exports every item as JSON lines (namespace, key, value, timestamps) and
        imports them elsewhere, recomputing the vectors. In a terminal:

        ```
        langgraph-episodic export store.jsonl --path ./.episodic
        langgraph-episodic import store.jsonl --url http://127.0.0.1:8000
        ```

        Here we call the same entry point from Python.
        """
    ),
    code(
        """
        from langgraph_episodic.cli.main import main as cli

        embedded.close()
        dump = workdir / "store.jsonl"
        assert cli(["export", str(dump), "--path", str(workdir / "embedded"), "--embeddings", "hash"]) == 0
        assert cli(["import", str(dump), "--url", url, "--collection", "migrated", "--embeddings", "hash"]) == 0
        assert cli(["stats", "--url", url, "--collection", "migrated"]) == 0
        """
    ),
    md(
        """
        ## A Postgres checkpointer, where one is available

        The graph's threads (its checkpoints) can live in Postgres instead of SQLite:
        `open_checkpointer("postgresql://...")` needs `pip install "langgraph-episodic[postgres]"`
        and a reachable database. Set `LANGGRAPH_EPISODIC_POSTGRES_URL` to use one here; without
        it this cell says why and uses SQLite, which the rest of the code does not notice.
        """
    ),
    code(
        """
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
            except Exception as exc:
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
        """
    ),
    md("## Stop the server"),
    code(
        """
        for store in (on_server, worker):
            store.close()
        server.terminate()
        server.wait(timeout=10)
        print("server stopped with exit code", server.returncode)
        """
    ),
]


NOTEBOOKS: dict[str, list[Cell]] = {
    "01_quickstart.ipynb": QUICKSTART,
    "05_scaling_out.ipynb": SCALING,
}


def build(cells: list[Cell]) -> nbformat.NotebookNode:
    """A notebook (nbformat 4, Python 3 kernel, no outputs) from cells."""
    notebook = new_notebook(
        cells=[new_markdown_cell(src) if kind == "markdown" else new_code_cell(src) for kind, src in cells],
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
    )
    for index, cell in enumerate(notebook.cells):
        cell["id"] = f"cell-{index:02d}"  # stable ids: regenerating gives identical files
    return notebook


def render(cells: list[Cell]) -> str:
    """The notebook's file text."""
    return nbformat.writes(build(cells)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a notebook is out of date")
    args = parser.parse_args(argv)
    stale = []
    for name, cells in NOTEBOOKS.items():
        path = HERE / name
        text = render(cells)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
            print("wrote", path.relative_to(HERE.parent))
    if stale:
        print("out of date (run python notebooks/_build.py):", ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
