"""A Chroma server that goes away and comes back: calls fail clearly instead of hanging, and
work again once the server is back on the same port and path.

Each call against a dead or frozen server runs in a worker thread that must finish within
``LIMIT_S``: a bound that tells "returns an error" from "hangs forever", not a speed check.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from .conftest import ServerProcess, hash_index

pytestmark = pytest.mark.server

LIMIT_S = 60.0
"""Generous bound for a call against an unavailable server to return or raise."""

CLIENT_TIMEOUT_S = 2.0
"""The request timeout the frozen-server test asks the store for."""


def outcome(fn: Callable[[], Any], limit: float = LIMIT_S) -> BaseException | None:
    """Run ``fn`` in a worker thread; return what it raised (None if it returned).

    Fails the test when ``fn`` is still running after ``limit`` seconds (it hangs).
    """
    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(fn)
    try:
        return future.exception(timeout=limit)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"the call did not return within {limit:.0f} s: it hangs")
    finally:
        pool.shutdown(wait=False)


def http_store(server: ServerProcess, collection: str, **options: Any) -> Any:
    from langgraph_episodic import ChromaStore

    return ChromaStore.http(
        server.host, server.port, collection=collection, index=hash_index(), **options
    )


def calls(store: Any) -> dict[str, Callable[[], Any]]:
    ns = ("outage", "alice")
    return {
        "get": lambda: store.get(ns, "k1"),
        "put": lambda: store.put(ns, "k-down", {"text": "written while down"}),
        "search": lambda: store.search(ns, query="coffee"),
        "list": lambda: store.list_namespaces(),
        "aget": lambda: asyncio.run(store.aget(ns, "k1")),
    }


def test_a_killed_server_gives_a_clear_error_and_recovers(server: ServerProcess) -> None:
    collection = f"outage-{uuid.uuid4().hex[:10]}"
    store = http_store(server, collection)
    store.put(("outage", "alice"), "k1", {"text": "likes coffee"})

    server.kill()
    problems = []
    for name, call in calls(store).items():
        exc = outcome(call)
        if exc is None:
            problems.append(f"{name}: returned although the server is down")
        elif not isinstance(exc, ConnectionError):
            problems.append(f"{name}: raised {type(exc).__module__}.{type(exc).__name__}: {exc}")
        elif f"{server.host}:{server.port}" not in str(exc) or "chroma run" not in str(exc):
            problems.append(f"{name}: the message names neither the server nor the fix: {exc}")

    server.start()  # same port, same path
    ns = ("outage", "alice")
    assert store.get(ns, "k1").value == {"text": "likes coffee"}
    assert store.get(ns, "k-down") is None, "a put that raised must not have been written"
    store.put(ns, "k2", {"text": "back again"})
    assert [i.key for i in store.search(ns, query="back again", limit=1)] == ["k2"]
    assert http_store(server, collection).get(ns, "k2").value == {"text": "back again"}
    assert not problems, (
        "calls against a dead server must raise ConnectionError naming the server and the fix "
        "(`chroma run ...`):\n" + "\n".join(problems)
    )


def test_a_frozen_server_times_out_instead_of_hanging(server: ServerProcess) -> None:
    """SIGSTOP: the kernel still accepts connections, nobody answers. Without a request timeout
    (chromadb's HTTP client has none) every call would wait forever."""
    collection = f"frozen-{uuid.uuid4().hex[:10]}"
    store = http_store(server, collection, timeout=CLIENT_TIMEOUT_S)
    store.put(("outage", "alice"), "k1", {"text": "likes coffee"})
    server.freeze()
    try:
        exc = outcome(lambda: store.get(("outage", "alice"), "k1"))
    finally:
        server.thaw()
    assert isinstance(exc, (ConnectionError, TimeoutError)), repr(exc)
    assert store.get(("outage", "alice"), "k1").value == {"text": "likes coffee"}
