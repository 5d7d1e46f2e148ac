"""Several processes on one real ``chroma run`` server: exact afterwards, and repairable after
SIGKILL.

* 4 processes overwrite the same 60 keys at once. Afterwards a keyword search for text another
  writer wrote earlier never returns a key whose value no longer holds it, a dense search for
  such a text never scores the key as an exact match (its vector would), and the namespaces
  listed are exactly those with items (issue 13 found 3 keys with another writer's vectors).
* 4 processes put and delete in shared namespaces: no call fails (issue 13 found
  ``ValueError: max() arg is an empty sequence`` on 16 of 600 ops), and the listing matches the
  items afterwards.
* Writers killed with SIGKILL mid-write: search still never returns a hit that disagrees with
  the item's value; ``store.verify()`` reports the leftovers, ``verify(repair=True)`` removes
  them, a second ``verify()`` finds nothing, and every item's vector records then hold exactly
  the texts of its value (``ChromaStore.verify`` comes with the
  issue13-state branch: this test fails to run before it is merged).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from typing import Any

import pytest

from langgraph_episodic.chroma import record_format
from langgraph_episodic.chroma.plans import extract_texts, tokenized_fields

from .conftest import LineReader, popen_python, reap, stderr_of

pytestmark = [pytest.mark.server, pytest.mark.xdist_group("server-processes")]

WORDS = ["amber", "basalt", "cobalt", "dune"]
NS = ("shared",)
KEYS = [f"key{i:02d}" for i in range(60)]

WRITER = """
import json, random, sys
from langgraph_episodic import ChromaStore, HashEmbeddings

host, port, collection, mode, writer, rounds = sys.argv[1:7]
writer, rounds = int(writer), int(rounds)
words = ["amber", "basalt", "cobalt", "dune"]
store = ChromaStore.http(host, int(port), collection=collection,
                         index={"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]})
rng = random.Random(writer)
errors = 0
if mode == "overwrite":
    keys = [f"key{i:02d}" for i in range(60)]
    for r in range(rounds):
        rng.shuffle(keys)
        for key in keys:
            store.put(("shared",), key, {"text": f"{key} {words[writer]} r{r}w{writer}"})
        print(f"round {r}", flush=True)
elif mode == "churn":
    for i in range(rounds):
        ns = ("churn", f"t{rng.randrange(5)}")
        key = f"k{rng.randrange(6)}"
        try:
            if rng.random() < 0.45:
                store.delete(ns, key)
            else:
                store.put(ns, key, {"text": f"{key} {words[writer]} n{i}w{writer}"})
            if rng.random() < 0.2:
                store.list_namespaces(prefix=("churn",))
        except Exception as exc:
            errors += 1
            print("ERR", type(exc).__name__, exc, flush=True)
    print("done", flush=True)
else:  # "forever": overwrite random keys until killed, one line per put
    n = 0
    while True:
        key = f"key{rng.randrange(40):02d}"
        store.put(("killed",), key, {"text": f"{key} {words[writer % 4]} s{n}w{writer}"})
        print(json.dumps([key, n]), flush=True)
        n += 1
sys.exit(1 if errors else 0)
"""


def _store(server: Any, collection: str, **options: Any) -> Any:
    from langgraph_episodic import ChromaStore, HashEmbeddings

    return ChromaStore.http(
        server.host,
        server.port,
        collection=collection,
        index={"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]},
        **options,
    )


def _run_writers(server: Any, collection: str, mode: str, rounds: int, n: int = 4) -> list[str]:
    procs = [
        popen_python(WRITER, server.host, str(server.port), collection, mode, str(w), str(rounds))
        for w in range(n)
    ]
    readers = [LineReader(p) for p in procs]
    lines: list[str] = []
    try:
        for p, reader in zip(procs, readers, strict=True):
            p.wait(timeout=600)
            lines += reader.finish()
            assert p.returncode == 0 or mode == "churn", f"writer failed:\n{stderr_of(p)}"
    finally:
        for p in procs:
            reap(p)
    return lines


def all_items(store: Any, prefix: tuple[str, ...]) -> dict[tuple[tuple[str, ...], str], Any]:
    out = {}
    for offset in range(0, 100_000, 500):
        page = store.search(prefix, limit=500, offset=offset)
        out.update({(tuple(it.namespace), it.key): it.value for it in page})
        if len(page) < 500:
            return out
    raise AssertionError("more than 100,000 items")


def vector_problems(store: Any, items: dict[tuple[tuple[str, ...], str], Any]) -> list[str]:
    """Vector records that disagree with the items: orphans, stale texts, missing texts."""
    fields = tokenized_fields(["text"])
    want = {
        record_format.item_id(ns, key): {t for _, t in extract_texts(value, fields)}
        for (ns, key), value in items.items()
    }
    have: dict[str, set[str]] = {}
    got = store.collections["vectors"].get(include=["documents", "metadatas"])
    for vid, doc, meta in zip(got["ids"], got["documents"] or [], got["metadatas"] or [], strict=True):
        # an item with one text is its own record (id = item id), the others name it
        text = record_format.text_of(meta, doc, record_format.path_of(meta))
        have.setdefault(vid if "#" not in vid else str(meta["_item"]), set()).add(text)
    problems = [f"orphan vectors of gone item {iid}: {docs}" for iid, docs in have.items()
                if iid not in want]  # fmt: skip
    for iid, texts in want.items():
        if have.get(iid, set()) != texts:
            problems.append(f"item {iid}: vectors {have.get(iid)} != value texts {texts}")
    return problems


def stale_hits(
    server: Any, collection: str, prefix: tuple[str, ...], tokens: set[str]
) -> list[str]:
    """Keyword searches (a fresh process-local index, rebuilt from the server) for ``tokens``:
    every hit's value must hold the token searched for."""
    lexical = _store(server, collection, search_mode="lexical")
    bad = []
    for token in sorted(tokens):
        for item in lexical.search(prefix, query=token, limit=100):
            if token not in json.dumps(item.value):
                bad.append(f"{token!r} returned {item.key} = {item.value}")
    return bad


def stale_dense_hits(
    store: Any, items: dict[tuple[tuple[str, ...], str], Any], texts: set[str]
) -> list[str]:
    """Dense searches for texts a key held earlier (exact text, so a vector of it would score
    1.0): the key must not score as if it still held that text."""
    bad = []
    for text in sorted(texts):
        key = text.split()[0]
        final = items.get((NS, key))
        if final is None or final["text"] == text:
            continue
        for hit in store.search(NS, query=text, limit=len(KEYS)):
            if hit.key == key and hit.score is not None and hit.score > 0.9999:
                bad.append(f"{key} = {final} still scores {hit.score:.5f} for {text!r}")
    return bad


def test_four_processes_overwriting_the_same_keys(chroma_server: Any) -> None:
    collection = f"procs-{uuid.uuid4().hex[:10]}"
    rounds = 3
    _run_writers(chroma_server, collection, "overwrite", rounds)
    store = _store(chroma_server, collection)
    items = all_items(store, NS)
    assert sorted(k for _, k in items) == KEYS
    tokens = {f"r{r}w{w}" for r in range(rounds) for w in range(4)} | set(WORDS)
    bad = stale_hits(chroma_server, collection, NS, tokens)
    assert not bad, f"keyword searches returned keys for text they no longer hold: {bad[:5]}"
    dense = _store(chroma_server, collection, search_mode="dense")
    texts = {f"{k} {WORDS[w]} r{r}w{w}" for k in KEYS for w in range(4) for r in range(rounds)}
    for (_, key), value in list(items.items())[:5]:  # the check can see an exact match
        top = dense.search(NS, query=value["text"], limit=1)
        assert top[0].key == key and (top[0].score or 0) > 0.9999, (key, top)
    bad = stale_dense_hits(dense, items, texts)
    assert not bad, f"dense searches matched keys on another writer's old text: {bad[:5]}"
    assert store.list_namespaces() == [NS]


def test_four_processes_churning_puts_and_deletes(chroma_server: Any) -> None:
    collection = f"churn-{uuid.uuid4().hex[:10]}"
    lines = _run_writers(chroma_server, collection, "churn", 150)
    errors = [line for line in lines if line.startswith("ERR")]
    assert not errors, f"{len(errors)} calls failed during churn: {errors[:5]}"
    store = _store(chroma_server, collection)
    items = all_items(store, ("churn",))
    assert store.list_namespaces(prefix=("churn",)) == sorted({ns for ns, _ in items})
    fresh = _store(chroma_server, collection)
    assert fresh.list_namespaces(prefix=("churn",)) == sorted({ns for ns, _ in items})
    bad = stale_hits(chroma_server, collection, ("churn",), set(WORDS))
    assert not bad, f"keyword searches disagree with values after churn: {bad[:5]}"


def test_sigkilled_writers_then_verify_and_repair(chroma_server: Any) -> None:
    collection = f"killed-{uuid.uuid4().hex[:10]}"
    rng = random.Random(13)
    tokens: set[str] = set()
    for cycle in range(2):  # two generations of writers, each killed at a random point
        writers = range(3 * cycle, 3 * cycle + 3)
        procs = [
            popen_python(WRITER, chroma_server.host, str(chroma_server.port), collection,
                         "forever", str(w), "0")
            for w in writers
        ]  # fmt: skip
        readers = [LineReader(p) for p in procs]
        try:
            for p, reader in zip(procs, readers, strict=True):
                got = reader.wait_for(15 + rng.randrange(15), timeout=300)
                assert len(got) >= 15, f"writer made too little progress:\n{stderr_of(p)}"
                time.sleep(rng.random() * 0.05)  # land the kill at a random point of a put
                p.kill()
        finally:
            for p in procs:
                reap(p)
        for w, reader in zip(writers, readers, strict=True):
            written = [json.loads(line)[1] for line in reader.finish()]
            # the put after the last line printed may have been under way when it was killed
            tokens |= {f"s{n}w{w}" for n in range(max(written, default=0) + 2)}
    store = _store(chroma_server, collection)
    items = all_items(store, ("killed",))
    assert items, "the writers wrote nothing"
    bad = stale_hits(chroma_server, collection, ("killed",), tokens)
    assert not bad, f"after SIGKILL, searches disagree with values: {bad[:5]}"

    # The writers are dead: no put is still running, so no grace period is needed.
    report = store.verify()
    repaired = store.verify(repair=True, grace_seconds=0)
    after = store.verify(grace_seconds=0)
    assert after.ok, f"verify after repair still finds problems: {after}"
    problems = vector_problems(store, all_items(store, ("killed",)))
    assert not problems, f"after repair: {problems[:5]} (found {report}, repaired {repaired})"
    assert store.list_namespaces(prefix=("killed",)) == [("killed",)]
