"""What the user waits for with deferred formation, against the agent alone and inline memory.

    python benchmarks/deferred_formation.py [--turns 10] [--agent-s 0.5] [--memory-s 2.0]
                                           [--debounce 1.0]

One user sends ``--turns`` messages in a burst (the next as soon as the answer is back), each
stating one new fact, to three graphs on a persistent ``ChromaStore`` (``HashEmbeddings``, so
no embedding model runs): the agent node alone; ``build_memory_graph`` with the memory formed
inline (today's default); and the same graph with ``defer=``. The agent node sleeps
``--agent-s`` (a fast chat model); the memory model is scripted and sleeps ``--memory-s`` per
call (extraction by structured output, rewrites of known entities). Reported: the turn
latency the user sees (p50, p90, and p50 against the agent alone), the memory model's calls,
and, from the end of the last turn, the time until every fact of the burst is in the store.
Timings depend on the machine and its load: print ``uptime`` with them.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import END, START, StateGraph

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _locomo_data import format_table

from langgraph_episodic import ChromaStore, HashEmbeddings, build_memory_graph
from langgraph_episodic.formation import DeferredFormation
from langgraph_episodic.graph.state import EpisodicState
from langgraph_episodic.graph.threads import thread_config


class SlowMemoryModel(BaseChatModel):
    """A scripted memory model: every call sleeps ``delay_s``; extraction names each
    ``Fact_*`` token with its sentence, a rewrite keeps the new information."""

    delay_s: float = 2.0
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "slow-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> SlowMemoryModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        self.calls += 1
        time.sleep(self.delay_s)
        text = str(messages[-1].content)
        if text.startswith("Known description:"):
            reply = AIMessage(content=text.rpartition("New information:\n")[2])
        else:
            found = [{"name": m.group(0), "description": line.strip()}
                     for line in text.splitlines() for m in re.finditer(r"Fact_\w+", line)]
            reply = AIMessage(content="", tool_calls=[{
                "name": "ExtractedEntities", "args": {"entities": found}, "id": "x",
                "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def agent_node(delay_s: float) -> Any:
    def agent(state: dict[str, Any]) -> dict[str, Any]:
        time.sleep(delay_s)
        return {"messages": [("ai", "Noted.")]}

    return agent


def run_mode(mode: str, args: argparse.Namespace,
             folder: Path) -> tuple[str, float, float, int, object]:
    store = ChromaStore.persistent(str(folder / mode), index={"dims": 64,
                                                              "embed": HashEmbeddings(64)})
    model = SlowMemoryModel(delay_s=args.memory_s)
    formation = DeferredFormation(debounce=args.debounce, max_wait=max(30.0, args.debounce))
    if mode == "agent alone":
        builder: StateGraph[Any, Any, Any, Any] = StateGraph(EpisodicState)
        builder.add_node("agent", agent_node(args.agent_s))
        builder.add_edge(START, "agent")
        builder.add_edge("agent", END)
        graph: Any = builder.compile(store=store)
    else:
        graph = build_memory_graph(agent_node(args.agent_s), model=model, store=store,
                                   summarize=False,
                                   defer=formation if mode == "deferred" else False)
    config = thread_config("alice", "burst")
    facts = [f"Fact_{i}" for i in range(args.turns)]
    latencies: list[float] = []
    for fact in facts:
        begin = time.perf_counter()
        graph.invoke({"messages": [("user", f"Remember that {fact} is on my list.")]}, config)
        latencies.append(time.perf_counter() - begin)
    last = time.perf_counter()
    stored_after: object = "-"
    if mode != "agent alone":
        while True:
            names = {i.value["name"] for i in store.search(("entities", "alice"), limit=1000, filter={"kind": "entity"})}
            if set(facts) <= names:
                stored_after = time.perf_counter() - last
                break
            if time.perf_counter() - last > 120:
                stored_after = "not within 120 s"
                break
            time.sleep(0.01)
    formation.close(timeout=30)
    store.close()
    latencies.sort()
    p90 = latencies[min(len(latencies) - 1, round(0.9 * (len(latencies) - 1)))]
    return mode, statistics.median(latencies), p90, model.calls, stored_after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--agent-s", type=float, default=0.5)
    parser.add_argument("--memory-s", type=float, default=2.0)
    parser.add_argument("--debounce", type=float, default=1.0)
    args = parser.parse_args()
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run_mode(mode, args, Path(tmp)) for mode in ("agent alone", "deferred",
                                                            "inline")]
    alone = rows[0][1]
    table = [[mode, p50, p90, f"{p50 / alone:.2f}x", calls, stored]
             for mode, p50, p90, calls, stored in rows]
    print(f"{args.turns} turns in a burst, agent {args.agent_s} s, memory model "
          f"{args.memory_s} s per call, debounce {args.debounce} s; load: "
          f"{os.getloadavg()[0]:.1f}")
    print(format_table(["mode", "turn p50 (s)", "turn p90 (s)", "p50 vs agent alone",
                        "memory model calls", "facts stored after last turn (s)"], table))


if __name__ == "__main__":
    main()
