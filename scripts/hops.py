"""Count the package's code one put, one search and one turn pass through.

    python scripts/hops.py            # this checkout (the installed package)
    PYTHONPATH=../other python scripts/hops.py   # another checkout, to compare

Each flow runs once to warm up (the namespace loaded, the caches filled, the models built),
then once under ``sys.setprofile`` and ``threading.setprofile`` (threads started during it).
Counted on the second run, package code only (files under ``langgraph_episodic/``; LangGraph,
LangChain, Chroma and numpy are walked through, not counted):

- ``calls``: calls of the package's functions; a generator or coroutine counts once, however
  often it is resumed (the plans of :mod:`langgraph_episodic._effects` are resumed once per
  effect);
- ``modules``: the package's modules those calls are in;
- ``hops``: calls from one package module into another (the nearest package caller's module is
  not the callee's);
- ``depth``: the most package modules one after the other on one stack (a module entered
  again further down counts again), from the flow's entry to its deepest package call.

The store is ``ChromaStore.ephemeral`` with ``HashEmbeddings(64)`` (no model, offline). The put
writes a new key into a namespace a search has loaded (so the caches are updated too); the
search is a hybrid search of a loaded namespace of 20 items. The turn
is one ``invoke`` of ``create_agent(..., middleware=[EpisodicMemoryMiddleware(...)])`` and of
``build_memory_graph(...)`` on a fake chat model, every option at its default (formation
inline), the thread's second turn; and of the middleware with ``defer=``, the turn only (what
the worker forms later is not counted). The counts are the same on every run of the same code.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import langgraph_episodic

ROOT = str(Path(langgraph_episodic.__file__).resolve().parent) + os.sep
RESUMABLE = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR


def _module(frame: FrameType | None) -> str | None:
    """The package module of ``frame`` (``chroma/store.py``), None outside the package."""
    if frame is None:
        return None
    path = frame.f_code.co_filename
    return path[len(ROOT) :] if path.startswith(ROOT) else None


def _entry(frame: FrameType) -> str:
    """The outermost package call on ``frame``'s stack: a graph node by its name, or a
    middleware's hook."""
    outer = frame
    up: FrameType | None = frame
    while up is not None:
        if _module(up) is not None:
            outer = up
        up = up.f_back
    node = outer.f_locals.get("self")
    name = getattr(node, "name", None)
    hook = outer.f_code.co_name
    return (name if hook == "invoke" else f"{name}.{hook}") if isinstance(name, str) else hook


@dataclass
class Count:
    calls: int = 0
    hops: int = 0
    depth: int = 0
    modules: set[str] = field(default_factory=set)
    by_entry: Counter[str] = field(default_factory=Counter)
    """Calls by the package function the flow entered them through (a hook, a node)."""
    _started: set[Any] = field(default_factory=set)

    def on_call(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        module = _module(frame)
        if module is None:
            return
        if frame.f_code.co_flags & RESUMABLE:
            if frame in self._started:
                return  # a plan resumed, not called again
            self._started.add(frame)
        self.calls += 1
        self.modules.add(module)
        self.by_entry[_entry(frame)] += 1
        caller = frame.f_back
        while caller is not None and _module(caller) is None:
            caller = caller.f_back
        if caller is not None and _module(caller) != module:
            self.hops += 1
        chain, last, up = 1, module, caller
        while up is not None:
            above = _module(up)
            if above is not None and above != last:
                chain, last = chain + 1, above
            up = up.f_back
        self.depth = max(self.depth, chain)


def measure(flow: Callable[[], Any]) -> Count:
    flow()  # warm up
    count = Count()
    threading.setprofile(count.on_call)
    sys.setprofile(count.on_call)
    try:
        flow()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return count


def flows() -> dict[str, Callable[[], Any]]:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langgraph.checkpoint.memory import InMemorySaver

    from langgraph_episodic import ChromaStore, EpisodicMemoryMiddleware
    from langgraph_episodic.embeddings import HashEmbeddings
    from langgraph_episodic.formation import DeferredFormation
    from langgraph_episodic.graph import build_memory_graph

    def store() -> Any:
        return ChromaStore.ephemeral(index={"dims": 64, "embed": HashEmbeddings(64)})

    put_store, keys = store(), iter(range(10))
    put_store.put(("memories", "alice"), "first", {"text": "Alice went kayaking"})
    put_store.search(("memories", "alice"), query="tea")  # the namespace loaded, as in an app
    search_store = store()
    for i in range(20):
        search_store.put(("memories", "alice"), f"m{i}", {"text": f"Alice went kayaking {i}"})

    def put() -> None:
        put_store.put(("memories", "alice"), f"k{next(keys)}", {"text": "Alice drinks tea"})

    def search() -> None:
        search_store.search(("memories", "alice"), query="where did I go kayaking?", limit=5)

    def turn(app: Any) -> Callable[[], Any]:
        said = iter(
            [
                "I am Alice and I work at ACME in Berlin.",
                "My daughter Mia likes chess. What should I get her?",
            ]
        )
        config = {"configurable": {"user_id": "alice", "thread_id": "alice:s1"}}
        return lambda: app.invoke({"messages": [("user", next(said))]}, config)

    def model() -> GenericFakeChatModel:
        return GenericFakeChatModel(messages=iter(["Noted.", "A chess clock."]))

    def agent(**options: Any) -> Any:
        own = store()
        return create_agent(
            model(),
            tools=[],
            store=own,
            checkpointer=InMemorySaver(),
            middleware=[EpisodicMemoryMiddleware(store=own, **options)],
        )

    later = DeferredFormation(debounce=600, max_wait=600)  # formed after the count
    atexit.register(later.close, 0)
    graph = build_memory_graph(model(), store=store(), checkpointer=InMemorySaver())
    return {
        "put": put,
        "search": search,
        "turn (middleware)": turn(agent()),
        "turn (graph nodes)": turn(graph),
        "turn (middleware, defer=)": turn(agent(defer=later)),
    }


def main() -> None:
    print(f"package: {ROOT}")
    print("| flow | calls | modules | hops | depth |")
    print("|---|---|---|---|---|")
    counted = {name: measure(flow) for name, flow in flows().items()}
    for name, c in counted.items():
        print(f"| {name} | {c.calls} | {len(c.modules)} | {c.hops} | {c.depth} |")
    print("\nCalls of each turn by where they entered the package:\n")
    for name, c in counted.items():
        if name.startswith("turn"):
            print(f"{name}: " + ", ".join(f"{e} {n}" for e, n in c.by_entry.most_common()))


if __name__ == "__main__":
    main()
