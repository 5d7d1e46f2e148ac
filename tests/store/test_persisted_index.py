"""A namespace's first search after a restart loads what an earlier process kept beside the
store (:mod:`langgraph_episodic.chroma.persisted`): the same results, scores included, as a
rebuild from Chroma; a stale, damaged or foreign file is detected and rebuilt; a write, a
forgotten user and records deleted directly leave none of their words in a kept file; stores
without a folder keep nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings
from langgraph.store.base import PutOp

from langgraph_episodic import ChromaStore
from langgraph_episodic.chroma import persisted, record_format
from langgraph_episodic.chroma.testing import backend_of
from langgraph_episodic.privacy import forget_user

from ._support import hash_index

NS = ("memories", "alice")
OTHER = ("memories", "bob")
WORDS = [
    "deploy",
    "port",
    "pasta",
    "garden",
    "violin",
    "harbor",
    "ticket",
    "kettle",
    "meadow",
    "lantern",
]
SECRET = "zorblaxian"
"""A word only Alice's memories hold (its stem is itself)."""
QUERIES = ("deploy pasta", "violin harbor lantern", f"{SECRET} kettle", "nothing matches")


_RAM = "/dev/shm" if Path("/dev/shm").is_dir() else None


@pytest.fixture(autouse=True)
def _keep_small_namespaces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(persisted, "MIN_DOCS", 1)


def _open(path: Path, **options: Any) -> ChromaStore:
    index = hash_index(fields=["text", "day"])
    return ChromaStore.persistent(path, collection="kept", index=index, **options)


def _text(i: int, secret: bool = True) -> str:
    words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(3 + i % 4)]
    if secret and i % 5 == 0:
        words.append(SECRET)
    return " ".join(words)


@pytest.fixture(scope="module")
def filled() -> Iterator[Path]:
    """A store's folder with 60 memories in each of two namespaces, written once."""
    path = Path(tempfile.mkdtemp(prefix="lge-kept-", dir=_RAM)) / "db"
    store = _open(path)
    ops = []
    for i in range(60):
        ops.append(PutOp(NS, f"k{i}", {"text": _text(i), "day": f"day {i % 4}"}))
        ops.append(PutOp(OTHER, f"k{i}", {"text": _text(i + 1, False), "day": f"day {i % 3}"}))
    store.batch(ops)
    store.close()
    yield path
    shutil.rmtree(path.parent, ignore_errors=True)


def _fill(path: Path, filled: Path) -> None:
    shutil.copytree(filled, path)


def _results(path: Path, mode: str, **options: Any) -> list[list[tuple[str, float | None]]]:
    store = _open(path, search_mode=mode, **options)
    try:
        return [
            [(item.key, item.score) for item in store.search(NS, query=query, limit=8)]
            for query in QUERIES
        ]
    finally:
        store.close()


def _kept_files(path: Path) -> list[Path]:
    return sorted(path.glob(f"{persisted.PREFIX}.*.npz"))


def _rebuilt(path: Path, mode: str, **options: Any) -> list[list[tuple[str, float | None]]]:
    """The results of a store that keeps nothing: a copy of the folder without kept files."""
    copy = path.with_name(path.name + "-rebuilt")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(path, copy, ignore=shutil.ignore_patterns(f"{persisted.PREFIX}.*"))
    try:
        return _results(copy, mode, **options)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Whether each load of a kept file found a usable one."""
    found: list[bool] = []
    load = persisted.PersistedIndex.load

    def spy(self: persisted.PersistedIndex, *args: Any) -> Any:
        kept = load(self, *args)
        found.append(kept is not None)
        return kept

    monkeypatch.setattr(persisted.PersistedIndex, "load", spy)
    yield found


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "dense"])
@pytest.mark.parametrize("cache", [None, 10])
def test_a_kept_index_gives_the_results_of_a_rebuild(
    fast_tmp_path: Path, filled: Path, loads: list[bool], mode: str, cache: int | None
) -> None:
    # cache=10: the namespace's vectors do not fit the cache; Chroma's index answers.
    options = {} if cache is None else {"vector_cache_size": cache}
    path = fast_tmp_path / "db"
    _fill(path, filled)
    built = _results(path, mode, **options)  # the first search builds and keeps the namespace
    assert _kept_files(path), "the first search kept nothing"
    assert loads == [False]
    again = _results(path, mode, **options)
    assert loads == [False, True]
    assert again == built == _rebuilt(path, mode, **options)
    assert any(score is not None for page in again for _, score in page)


@pytest.mark.parametrize("mode", ["hybrid", "dense"])
def test_a_namespace_beyond_the_cache_is_not_read_again_after_a_restart(
    fast_tmp_path: Path, filled: Path, loads: list[bool], monkeypatch: pytest.MonkeyPatch,
    mode: str,
) -> None:
    """A kept file without vectors holds more documents than the cache holds vectors: the next
    process knows the namespace does not fit, so its first search reads none of its records
    from Chroma (Chroma's index answers) and does not write the file again."""
    from langgraph_episodic.chroma.gateway import Gateway

    path = fast_tmp_path / "db"
    _fill(path, filled)
    built = _results(path, mode, vector_cache_size=10)
    assert loads == [False]
    reads: list[tuple[str, ...]] = []
    saves: list[tuple[str, ...]] = []
    pages, save = Gateway.namespace_vector_pages, persisted.PersistedIndex.save

    def read_spy(self: Gateway, ns: tuple[str, ...], **kwargs: Any) -> Any:
        reads.append(ns)
        return pages(self, ns, **kwargs)

    def save_spy(self: persisted.PersistedIndex, ns: tuple[str, ...], *args: Any) -> bool:
        saves.append(ns)
        return save(self, ns, *args)

    monkeypatch.setattr(Gateway, "namespace_vector_pages", read_spy)
    monkeypatch.setattr(persisted.PersistedIndex, "save", save_spy)
    again = _results(path, mode, vector_cache_size=10)
    assert loads == [False, True]
    assert NS not in reads and NS not in saves
    assert again == built
    # A cache the namespace fits: its vectors are read from Chroma as before.
    assert _results(path, mode) == _rebuilt(path, mode)
    assert NS in reads


def test_every_search_kind_reads_the_same_file(
    fast_tmp_path: Path, filled: Path, loads: list[bool]
) -> None:
    path = fast_tmp_path / "db"
    _fill(path, filled)
    lexical = _results(path, "lexical")  # kept without vectors: a hybrid search adds them
    hybrid = _results(path, "hybrid")
    assert loads == [False, True]
    with np.load(_kept_files(path)[0], allow_pickle=False) as files:
        assert files["vector_matrix"].shape[0] > 0
    for mode, expected in (("hybrid", hybrid), ("dense", None), ("lexical", lexical)):
        got = _results(path, mode)
        assert loads[-1] is True
        assert got == (expected or got) == _rebuilt(path, mode)


def _child(code: str, path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(path)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


WRITER = """
    import sys
    from langgraph_episodic import ChromaStore
    from langgraph_episodic.embeddings import HashEmbeddings
    index = {"dims": 64, "embed": HashEmbeddings(64), "fields": ["text", "day"]}
    store = ChromaStore.persistent(sys.argv[1], collection="kept", index=index)
    store.put(("memories", "alice"), "new", {"text": "deploy pasta pasta", "day": "day 9"})
    store.put(("memories", "alice"), "k3", {"text": "violin violin", "day": "day 1"})
    store.delete(("memories", "alice"), "k4")
    store.close()
"""


def test_another_process_writing_meanwhile(fast_tmp_path: Path, filled: Path) -> None:
    """A second process writes the namespace while the first holds it with its kept file
    loaded (it sends its writes to the first, :mod:`.sharing`); after both close, the next
    process's results are a rebuild's."""
    path = fast_tmp_path / "db"
    _fill(path, filled)
    _results(path, "hybrid")  # kept
    store = _open(path, search_mode="hybrid")
    before = [(i.key, i.score) for i in store.search(NS, query=QUERIES[0], limit=8)]
    _child(WRITER, path)
    after = [(i.key, i.score) for i in store.search(NS, query=QUERIES[0], limit=8)]
    assert before != after  # (the first process saw the writes)
    store.close()
    assert _results(path, "hybrid") == _rebuilt(path, "hybrid")


RAW_WRITER = """
    import sys
    import chromadb
    from chromadb.config import Settings
    from langgraph_episodic.chroma import record_format
    client = chromadb.PersistentClient(sys.argv[1], settings=Settings(anonymized_telemetry=False))
    vectors = client.get_collection("kept__vec")
    ns = sys.argv[2].split("/")
    where = {"_ns": record_format.ns_str(tuple(ns))}
    ids = vectors.get(where=where, include=[])["ids"]
    vectors.delete(ids=ids[:2])
"""


@pytest.mark.parametrize("written", [NS, OTHER])
def test_records_changed_behind_the_store(
    fast_tmp_path: Path, filled: Path, loads: list[bool], written: tuple[str, ...]
) -> None:
    """Another process deletes vector records with chromadb itself (no store of ours sees it):
    a file of that namespace is stale and rebuilt; a file of another namespace still serves."""
    path = fast_tmp_path / "db"
    _fill(path, filled)
    _results(path, "hybrid")
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(RAW_WRITER), str(path), "/".join(written)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = _results(path, "hybrid")
    assert loads[-1] is (written != NS)
    assert got == _rebuilt(path, "hybrid")


def _rewrite(file: Path, change: Any) -> None:
    with np.load(file, allow_pickle=False) as files:
        arrays = {name: files[name] for name in files.files}
    header = json.loads(arrays["header"].tobytes())
    change(header, arrays)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with file.open("wb") as out:
        np.savez(out, **arrays)


def _truncate(file: Path) -> None:
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2])


def _flip(file: Path) -> None:
    data = bytearray(file.read_bytes())
    for at in range(len(data) // 3, len(data) // 3 + 64):
        data[at] ^= 0x5A
    file.write_bytes(bytes(data))


def _garbage(file: Path) -> None:
    file.write_bytes(b"not a zip file at all" * 50)


def _foreign(file: Path) -> None:
    _rewrite(file, lambda header, _: header.update(code="0" * 32))


def _other_layout(file: Path) -> None:
    _rewrite(file, lambda header, _: header.update(format=persisted.FORMAT + 1))


def _stale(file: Path) -> None:
    def change(header: dict[str, Any], _: Any) -> None:
        header["stamp"]["seq"] -= 1
        header["stamp"]["count"] += 1

    _rewrite(file, change)


def _positions_out_of_range(file: Path) -> None:
    def change(_: Any, arrays: dict[str, np.ndarray]) -> None:
        where = arrays["lexical_where"].copy()
        where[0] = 10**6
        arrays["lexical_where"] = where

    _rewrite(file, change)


def _pickled(file: Path) -> None:
    def change(_: Any, arrays: dict[str, Any]) -> None:
        arrays["lexical_where"] = np.array([{"x": 1}], dtype=object)

    with np.load(file, allow_pickle=False) as files:
        arrays = {name: files[name] for name in files.files}
    change(None, arrays)
    with file.open("wb") as out:
        np.savez(out, **arrays)


@pytest.mark.parametrize(
    "damage",
    [
        _truncate,
        _flip,
        _garbage,
        _foreign,
        _other_layout,
        _stale,
        _positions_out_of_range,
        _pickled,
    ],
)
def test_a_damaged_or_stale_file_is_rebuilt(
    fast_tmp_path: Path, filled: Path, loads: list[bool], damage: Any
) -> None:
    path = fast_tmp_path / "db"
    _fill(path, filled)
    expected = _results(path, "hybrid")
    (file,) = _kept_files(path)
    damage(file)
    assert _results(path, "hybrid") == expected == _rebuilt(path, "hybrid")
    assert loads[-1] is False
    assert _results(path, "hybrid") == expected  # written again by the rebuild, and used
    assert loads[-1] is True


def _holding(path: Path, word: bytes) -> list[Path]:
    """The kept files (and any file they were written through) holding ``word``."""
    return [f for f in path.glob(f"*{persisted.PREFIX}*") if word in f.read_bytes()]


def test_a_write_deletes_the_namespace_file(fast_tmp_path: Path, filled: Path) -> None:
    path = fast_tmp_path / "db"
    _fill(path, filled)
    _results(path, "hybrid")
    assert _holding(path, SECRET.encode())
    store = _open(path)
    store.delete(NS, "k0")  # a memory holding the word
    assert not _holding(path, SECRET.encode())
    assert len(_kept_files(path)) == 0  # (the other namespace was never searched)
    store.close()


def _stamp(path: Path) -> dict[str, int]:
    (file,) = _kept_files(path)
    with np.load(file, allow_pickle=False) as files:
        stamp: dict[str, int] = json.loads(files["header"].tobytes())["stamp"]
    return stamp


@pytest.mark.parametrize("cache", [None, 10])
def test_memories_added_since_are_added_to_the_kept_index(
    fast_tmp_path: Path, filled: Path, loads: list[bool], cache: int | None
) -> None:
    """New memories keep the file; the next process adds them to what it loads (and keeps
    the result), with the results of a rebuild."""
    options = {} if cache is None else {"vector_cache_size": cache}
    path = fast_tmp_path / "db"
    _fill(path, filled)
    _results(path, "hybrid", **options)
    before = _stamp(path)
    store = _open(path)
    store.batch(
        [
            PutOp(NS, f"new{i}", {"text": f"{_text(i)} violin {SECRET}", "day": "day 7"})
            for i in range(5)
        ]
        + [PutOp(NS, "bare", {"text": "no index", "day": "x"}, index=False)]
        + [PutOp(NS, "twin", {"text": _text(3), "day": "day 3"})]  # k3's vectors: ties
    )
    store.put(OTHER, "k1", {"text": "rewritten elsewhere", "day": "day 1"})
    store.close()
    assert _stamp(path) == before  # (kept: nothing of it was deleted or rewritten)
    got = _results(path, "hybrid", **options)
    assert loads[-1] is True
    assert got == _rebuilt(path, "hybrid", **options)
    assert any(key.startswith("new") for page in got for key, _ in page)
    assert _stamp(path)["count"] == before["count"] + 12  # kept again, with them (2 fields)
    assert _results(path, "hybrid", **options) == got


def test_a_rewrite_deletes_the_namespace_file(fast_tmp_path: Path, filled: Path) -> None:
    path = fast_tmp_path / "db"
    _fill(path, filled)
    _results(path, "hybrid")
    store = _open(path)
    store.put(NS, "k5", {"text": "only new words now", "day": "day 1"})  # k5 held the word
    assert _kept_files(path) == []
    store.close()


def test_forgetting_a_user_leaves_none_of_their_words(fast_tmp_path: Path, filled: Path) -> None:
    path = fast_tmp_path / "db"
    _fill(path, filled)
    store = _open(path, search_mode="hybrid")
    store.search(NS, query=QUERIES[2], limit=5)
    store.search(OTHER, query=QUERIES[2], limit=5)
    store.close()
    assert _holding(path, SECRET.encode())
    store = _open(path, search_mode="hybrid")
    store.search(NS, query=QUERIES[2], limit=5)  # loaded from the kept file
    report = forget_user("alice", store=store)
    assert report.items_deleted == 60
    assert not _holding(path, SECRET.encode())
    assert not backend_of(store).state.persisted.path(NS).exists()
    store.close()


def test_records_deleted_directly_delete_every_file(fast_tmp_path: Path, filled: Path) -> None:
    path = fast_tmp_path / "db"
    _fill(path, filled)
    _results(path, "hybrid")
    store = _open(path)
    vectors = store.collections["vectors"]
    ids = vectors.get(where={"_ns": record_format.ns_str(NS)}, include=[])["ids"]
    store.delete_vector_records(ids[:1])
    assert _kept_files(path) == []
    store.close()


def test_stores_without_a_folder_keep_nothing() -> None:
    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    store = ChromaStore(client, collection="kept", index=hash_index(fields=["text"]))
    for i in range(30):
        store.put(NS, f"k{i}", {"text": _text(i)})
    assert store.search(NS, query=QUERIES[0], limit=3)
    assert backend_of(store).state.persisted is None
    store.close()


def test_small_namespaces_are_not_kept(
    fast_tmp_path: Path, filled: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(persisted, "MIN_DOCS", 1_000)
    path = fast_tmp_path / "db"
    _fill(path, filled)
    _results(path, "hybrid")
    assert _kept_files(path) == []
