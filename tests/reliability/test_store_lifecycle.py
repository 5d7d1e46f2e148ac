"""One embedded folder in one process, from open to close, across threads and fork.

* One folder spelled two ways (a trailing slash, a symlink, ``a/../a``) is one store: what one
  store writes the other reads at once, and finds by search.
* Readers racing the first write (which claims the folder lock) never take their own process
  for another writer.
* A child made with ``fork`` after the parent used its store gets a clear error at its first
  call (it never hangs in Chroma), and leaves the parent's lock alone.
* ``close()`` waits for calls in flight, refuses every later call with a clear error, and gives
  the folder up for good: nothing is written after it returns.
"""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma.folder_lock import LOCK_FILE, FolderInUseError
from langgraph_episodic.chroma.lifecycle import StoreClosedError, StoreForkedError

from .conftest import hash_index

NS = ("users", "alice")
RUNS = 8
FORK_TIMEOUT_S = 60.0
"""Longest the forked child may take to report (it hung for minutes before)."""


@pytest.fixture
def tiny_switch_interval() -> Iterator[None]:
    """Switch threads as often as the interpreter can, to widen every race window."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _open(path: str | Path, collection: str = "lifecycle") -> ChromaStore:
    return ChromaStore.persistent(path, index=hash_index(), collection=collection)


def _lock_is_free(folder: Path) -> bool:
    """Whether another open file (as another process would) could take the folder lock now."""
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


# --- one folder, two spellings ------------------------------------------------------------------


def _trailing_slash(folder: Path) -> str:
    return str(folder) + "/"


def _symlink(folder: Path) -> str:
    link = folder.parent / "link"
    link.symlink_to(folder, target_is_directory=True)
    return str(link)


def _dot_dot(folder: Path) -> str:
    return str(folder / ".." / folder.name)


SPELLINGS: dict[str, Callable[[Path], str]] = {
    "trailing slash": _trailing_slash,
    "symlink": _symlink,
    "a/../a": _dot_dot,
}


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_one_folder_spelled_two_ways_is_one_store(tmp_path: Path, spelling: str) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    one = _open(folder)
    other = _open(SPELLINGS[spelling](folder))
    try:
        stale = []
        for i in range(60):
            writer, reader = (one, other) if i % 2 == 0 else (other, one)
            writer.put(NS, "k", {"text": f"version {i} of the note"})
            got = reader.get(NS, "k")
            if got is None or got.value["text"] != f"version {i} of the note":
                stale.append((i, "get", got and got.value["text"]))
            hits = reader.search(NS, query=f"version {i}", limit=1)
            if [h.value["text"] for h in hits] != [f"version {i} of the note"]:
                stale.append((i, "search", [h.value["text"] for h in hits]))
        assert stale == [], f"{len(stale)} stale reads in 120 checks: {stale[:5]}"
        one.put(NS, "zebra", {"text": "a zebra crossing near the station"})
        assert [h.key for h in other.search(NS, query="zebra crossing", limit=1)] == ["zebra"]
    finally:
        one.close()
        other.close()
    assert _lock_is_free(folder), "closing both spellings must free the folder"


def test_a_second_chroma_client_of_an_open_folder_is_refused_with_the_fix(tmp_path: Path) -> None:
    # Two chromadb clients of one folder keep two in-memory indexes that disagree; a store on
    # the second one would be a second state of the same folder.
    folder = tmp_path / "db"
    store = _open(folder)
    try:
        store.put(NS, "k", {"text": "first"})
        client = chromadb.PersistentClient(
            path=str(folder) + "/", settings=Settings(anonymized_telemetry=False)
        )
        with pytest.raises(ValueError, match=r"ChromaStore\.persistent"):
            ChromaStore(client, index=None, collection="lifecycle")
        assert store.get(NS, "k") is not None
    finally:
        store.close()


# --- readers racing the first write ---------------------------------------------------------


def _first_write_among_readers(store: ChromaStore, run: int) -> list[str]:
    """Three threads read while the store makes its first write; the errors they got."""
    barrier = threading.Barrier(4)
    done = threading.Event()
    errors: list[str] = []

    def read() -> None:
        barrier.wait()
        while not done.is_set():
            try:
                store.get(NS, "k")
                store.list_namespaces()
            except FolderInUseError as exc:
                errors.append(str(exc))

    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in readers:
        t.start()
    barrier.wait()
    try:
        store.put(NS, "k", {"text": f"run {run}"})
    finally:
        done.set()
        for t in readers:
            t.join(timeout=60)
    return errors


def test_readers_racing_the_first_write_never_see_their_own_process_as_another(
    tmp_path: Path, tiny_switch_interval: None
) -> None:
    folder = tmp_path / "db"
    failed_runs: list[tuple[int, str]] = []
    for run in range(RUNS):  # every run's first write claims the folder again (after close)
        with _open(folder) as store:
            errors = _first_write_among_readers(store, run)
        if errors:
            failed_runs.append((len(errors), errors[0]))
    assert failed_runs == [], (
        f"{len(failed_runs)} of {RUNS} runs raised FolderInUseError in one process "
        f"(errors, first): {failed_runs[:3]}"
    )


# --- fork ---------------------------------------------------------------------------------------


def _in_forked_child(store: ChromaStore, folder: str, out: Any) -> None:
    report: dict[str, str] = {}
    calls: dict[str, Callable[[], object]] = {
        "get": lambda: store.get(NS, "k"),
        "search": lambda: store.search(NS, query="parent"),
        "put": lambda: store.put(NS, "child", {"text": "from the child"}),
        "open again": lambda: _open(folder).get(NS, "k"),
    }
    for name, call in calls.items():
        try:
            call()
            report[name] = "ok"
        except Exception as exc:  # noqa: BLE001 - the report says what the child got
            report[name] = f"{type(exc).__name__}: {exc}"
    store.close()  # a child's close must leave the parent's lock alone
    out.put(report)


@pytest.mark.timeout(4 * FORK_TIMEOUT_S)
@pytest.mark.parametrize("kind", ["persistent", "ephemeral"])
def test_a_forked_child_gets_a_clear_error_and_never_hangs(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "db"
    store = (
        _open(folder)
        if kind == "persistent"
        else ChromaStore.ephemeral(index=hash_index(), collection="forked")
    )
    store.put(NS, "k", {"text": "written by the parent"})  # the first write: the lock is held
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_in_forked_child, args=(store, str(folder), out), daemon=True)
    child.start()
    try:
        report = out.get(timeout=FORK_TIMEOUT_S)
    except queue.Empty:
        pytest.fail(f"the forked child did not report in {FORK_TIMEOUT_S:.0f} s (it hangs)")
    finally:
        child.join(timeout=FORK_TIMEOUT_S)
        if child.is_alive():
            child.kill()
            child.join(timeout=10)
    names = ["get", "search", "put"] + (["open again"] if kind == "persistent" else [])
    for name in names:
        assert report[name].startswith(f"{StoreForkedError.__name__}: "), (name, report[name])
        assert "spawn" in report[name] and str(os.getpid()) in report[name], report[name]
    try:
        if kind == "persistent":
            assert not _lock_is_free(folder), "the child's close() released the parent's lock"
        got = store.get(NS, "k")
        assert got is not None and got.value["text"] == "written by the parent"
        assert store.get(NS, "child") is None
    finally:
        store.close()
    if kind == "persistent":
        assert _lock_is_free(folder)


# --- close ----------------------------------------------------------------------------------


def test_close_waits_for_calls_in_flight_and_refuses_every_later_call(
    tmp_path: Path, tiny_switch_interval: None
) -> None:
    folder = tmp_path / "db"
    store = _open(folder)
    store.put(NS, "seed", {"text": "before the writers start"})
    items = store.collections["vectors"]  # (an item with one text is its own vector record)
    barrier = threading.Barrier(5)
    stop = threading.Event()
    closed = threading.Event()
    late: list[str] = []
    unexpected: list[BaseException] = []

    def write(n: int) -> None:
        barrier.wait()
        i = 0
        while not stop.is_set():
            # A call that began after close() returned must fail; one in flight when close()
            # was called may finish before it returns (the count below pins that none lands
            # after). The flag is read before the call: read after it, a put that finished
            # in time but whose thread was switched out before the check would look late.
            began_closed = closed.is_set()
            try:
                store.put(NS, f"w{n}-{i}", {"text": f"writer {n} item {i}"})
                if began_closed:
                    late.append(f"w{n}-{i}")
            except StoreClosedError:
                pass
            except BaseException as exc:  # noqa: BLE001 - any other error fails the test below
                unexpected.append(exc)
                return
            i += 1

    writers = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in writers:
        t.start()
    barrier.wait()
    time.sleep(0.3)  # writers in full swing
    store.close()
    closed.set()
    at_close = items.count()
    time.sleep(0.3)  # writers keep trying
    stop.set()
    for t in writers:
        t.join(timeout=60)
    assert unexpected == []
    assert at_close > 1, "the writers wrote nothing before close (the test proved nothing)"
    assert late == [], f"calls begun after close() returned succeeded: {late}"
    assert items.count() == at_close, f"{items.count() - at_close} writes landed after close()"
    calls: dict[str, Callable[[], object]] = {
        "get": lambda: store.get(NS, "seed"),
        "put": lambda: store.put(NS, "after", {"text": "x"}),
        "search": lambda: store.search(NS, query="seed"),
        "list_namespaces": lambda: store.list_namespaces(),
        "sweep_ttl": store.sweep_ttl,
        "verify": store.verify,
    }
    for name, call in calls.items():
        with pytest.raises(StoreClosedError, match="closed"):
            call()
        assert _lock_is_free(folder), f"{name} after close() took the folder lock again"
    store.close()  # closing twice is harmless
    with _open(folder) as again:  # a new store of the folder works
        again.put(NS, "after", {"text": "written by a new store"})
        got = again.get(NS, "after")
        assert got is not None and got.value["text"] == "written by a new store"


def test_a_store_that_fails_to_open_does_not_keep_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    with pytest.raises(ValueError, match="language"):
        ChromaStore.persistent(folder, index=hash_index(), collection="lifecycle", language="xx")
    with _open(folder) as store:
        store.put(NS, "k", {"text": "written"})
    assert _lock_is_free(folder), "the store that failed to open still counts as open"
