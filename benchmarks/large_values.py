"""Puts at the size limits: how long they take, and what they cost the store's other writers.

    python benchmarks/large_values.py [--repeats 3] [--rounds 5]

An embedded store with the packaged all-MiniLM-L6-v2 (its keyword index loaded by a search, as
in a running agent). For each case: a put of one large value alone (the median of
``--repeats``), then ``--rounds`` such puts while another thread keeps putting small memories
into another namespace, with that thread's put latencies meanwhile (p50, p99, max) against the
same thread alone. The last row is a value far over the limits, refused before anything is
written. Timings depend on the machine and its load: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _locomo_data import format_table

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma.plans import DEFAULT_MAX_INDEXED_BYTES, DEFAULT_MAX_VALUE_BYTES

WORDS = [
    "alice", "bob", "carol", "met", "cafe", "monday", "plan", "trip", "lisbon", "likes", "green",
    "tea", "prefers", "espresso", "project", "deadline", "moved", "friday", "remember", "dentist",
    "appointment", "book", "club", "reads", "dune", "month", "budget", "review", "finance",
    "kids", "soccer", "practice",
]  # fmt: skip


def words(n_bytes: int, seed: int) -> str:
    """About ``n_bytes`` of varied text (words with numbers, so the keyword index grows)."""
    rnd = random.Random(seed)
    out: list[str] = []
    size = 0
    while True:
        word = f"{rnd.choice(WORDS)}{rnd.randint(0, 999)}"
        if size + len(word) + 1 > n_bytes:
            return " ".join(out)
        out.append(word)
        size += len(word) + 1


def cases() -> list[tuple[str, dict[str, Any], list[str]]]:
    """(name, value, index) of each large put."""
    filler = DEFAULT_MAX_VALUE_BYTES - DEFAULT_MAX_INDEXED_BYTES - 100
    return [
        ("value 1 MiB, index a short field", {"text": "a note", "body": "x" * (DEFAULT_MAX_VALUE_BYTES - 100)}, ["text"]),
        ("indexed text 64 KiB", {"text": words(DEFAULT_MAX_INDEXED_BYTES, 1)}, ["text"]),
        ("value 1 MiB with 64 KiB indexed", {"text": words(DEFAULT_MAX_INDEXED_BYTES, 2), "body": "x" * filler}, ["text"]),
        ("whole value indexed ($), 64 KiB", {"text": words(DEFAULT_MAX_INDEXED_BYTES - 100, 3)}, ["$"]),
    ]  # fmt: skip


def small_writer(store: ChromaStore, stop: threading.Event, out: list[float]) -> None:
    """Put small memories into another namespace until ``stop``; record each put's seconds."""
    n = 0
    while not stop.is_set():
        start = time.perf_counter()
        store.put(("users", "other", "memories"), f"m{n % 50}", {"text": f"Bob had lunch {n}"})
        out.append(time.perf_counter() - start)
        n += 1


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def with_writer(store: ChromaStore, work: Any, rounds: int) -> tuple[float, list[float]]:
    """Run ``work()`` ``rounds`` times while the small writer runs; return the median seconds
    of ``work`` and the writer's latencies of puts that ended during it."""
    stop = threading.Event()
    lat: list[float] = []
    thread = threading.Thread(target=small_writer, args=(store, stop, lat))
    thread.start()
    time.sleep(0.5)
    took: list[float] = []
    during: list[float] = []
    for _ in range(rounds):
        before = len(lat)
        start = time.perf_counter()
        work()
        took.append(time.perf_counter() - start)
        time.sleep(0.05)  # the put that was waiting ends
        during += lat[before:]
        time.sleep(0.3)
    stop.set()
    thread.join()
    return statistics.median(took), during


def stats(lat: list[float]) -> list[object]:
    """Count, p50, p99 and max of latencies, in ms."""
    ms = [x * 1000 for x in lat]
    p50, p99 = statistics.median(ms), percentile(ms, 0.99)
    return [len(ms), f"{p50:.0f}", f"{p99:.0f}", f"{max(ms):.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="large puts alone, per case")
    parser.add_argument("--rounds", type=int, default=5, help="large puts with the writer")
    args = parser.parse_args()
    headers = ["large put", "alone s", "with writer s", "other puts", "p50 ms", "p99 ms", "max ms"]
    with tempfile.TemporaryDirectory() as folder:
        store = ChromaStore.persistent(folder)
        for ns in (("users", "big"), ("users", "other", "memories")):
            store.put(ns, "warm", {"text": "warm up"})
            store.search(ns, query="warm")  # loads its keyword index, as in a running agent

        stop = threading.Event()
        alone: list[float] = []
        thread = threading.Thread(target=small_writer, args=(store, stop, alone))
        thread.start()
        time.sleep(3.0)
        stop.set()
        thread.join()
        rows: list[list[object]] = [["(small puts alone, 3 s)", "-", "-", *stats(alone)]]
        for i, (name, value, index) in enumerate(cases()):
            times = []
            for r in range(args.repeats):
                start = time.perf_counter()
                store.put(("users", "big"), f"k{i}.{r}", value, index=index)
                times.append(time.perf_counter() - start)
            work = partial(store.put, ("users", "big"), f"w{i}", value, index)
            took, lat = with_writer(store, work, args.rounds)
            rows.append([name, f"{statistics.median(times):.2f}", f"{took:.2f}", *stats(lat)])

        huge = {"text": words(20 * 1024 * 1024, 9)}

        def refused() -> None:
            try:
                store.put(("users", "big"), "huge", huge)
            except ValueError:
                return
            raise AssertionError("a 20 MB value was accepted")

        start = time.perf_counter()
        refused()
        alone_s = time.perf_counter() - start
        took, lat = with_writer(store, refused, args.rounds)
        rows.append(["20 MB value (refused)", f"{alone_s:.2f}", f"{took:.2f}", *stats(lat)])
        store.close()
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average: {load}")
    print(format_table(headers, rows))


if __name__ == "__main__":
    main()
