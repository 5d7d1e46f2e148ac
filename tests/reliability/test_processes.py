"""Real processes on one embedded folder: SIGKILLed writers, and a second process.

* Writers overwriting keys are killed with SIGKILL at random moments, several times over one
  folder. Afterwards no search answers from a leftover (dense scores are those of each hit's
  current text; a word only an old version had finds nothing lexically), ``verify()`` counts
  the leftovers and ``verify(repair=True)`` leaves a store that verifies clean.
* While one process writes a folder, another process that opens it with a Chroma client of
  its own fails with an error naming the fix (one that opens it by path shares it:
  ``tests/store/test_sharing.py``); once the first has exited, the folder is free again. The
  commands that need the folder alone (purge, verify --repair) refuse such a folder and leave
  its files as they were; the other commands that change files work through the holder.
"""

from __future__ import annotations

import hashlib
import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import REPO, LineReader, popen_python, python_env, reap, run_python, stderr_of

KEYS = 12
ROUNDS = 4

WRITER = """
import sys
from langgraph_episodic import ChromaStore, HashEmbeddings

store = ChromaStore.persistent(
    sys.argv[1], collection="crash", search_mode="hybrid",
    index={"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]},
)
start = int(sys.argv[2])
for step in range(start, start + 100_000):
    key = f"k{step % KEYS}"
    store.put(("crash", "alice"), key, {"text": f"item {key} says word{step}x", "step": step})
    if step % 7 == 6:
        store.delete(("crash", "alice"), f"k{(step * 5) % KEYS}")
    print(step, flush=True)
""".replace("KEYS", str(KEYS))

CHECKER = """
import json, math, sys
from langgraph_episodic import ChromaStore, HashEmbeddings

embed = HashEmbeddings(64)
def open_store(mode):
    return ChromaStore.persistent(
        sys.argv[1], collection="crash", search_mode=mode,
        index={"dims": 64, "embed": embed, "fields": ["text"]},
    )
store = open_store("dense")
ns = ("crash", "alice")
last = int(sys.argv[2])
items = {i.key: i.value for i in store.search(ns, limit=1000)}
def cos(a, b):
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)) or 1)
problems = []
for step in range(max(0, last - 60), last + 1):
    word = f"word{step}x"
    q = embed.embed_query(word)
    for hit in store.search(ns, query=word, limit=KEYS):
        expected = cos(q, embed.embed_query(hit.value["text"]))
        if abs(hit.score - expected) > 1e-4:
            problems.append(["dense", word, hit.key, hit.value["text"]])
before = store.verify()
store.close()
lexical = open_store("lexical")
for step in range(max(0, last - 60), last + 1):
    word = f"word{step}x"
    for hit in lexical.search(ns, query=word, limit=KEYS):
        if word not in hit.value["text"].split():
            problems.append(["lexical", word, hit.key, hit.value["text"]])
repaired = lexical.verify(repair=True)
after = lexical.verify()
found = all(
    [h.key for h in lexical.search(ns, query=v["text"].split()[-1], limit=1)] == [k]
    for k, v in items.items()
)
print(json.dumps({"problems": problems, "items": len(items), "found": found,
                  "before": before.orphan_vectors + before.stale_vectors,
                  "repaired": repaired.orphan_vectors + repaired.stale_vectors,
                  "after_ok": after.ok, "before_ok": before.ok}))
""".replace("KEYS", str(KEYS))


def test_writers_killed_at_random_moments_leave_no_wrong_answer(tmp_path: Path) -> None:
    path = tmp_path / "db"
    rng = random.Random()
    step = 0
    for _ in range(ROUNDS):
        writer = popen_python(WRITER, str(path), str(step))
        try:
            reader = LineReader(writer)
            seen = reader.wait_for(rng.randint(3, 25), timeout=120)
            if not seen:
                reap(writer)
                pytest.fail(f"writer made no progress:\n{stderr_of(writer)}")
            time.sleep(rng.uniform(0, 0.05))  # somewhere inside the next put
            writer.send_signal(signal.SIGKILL)
            writer.wait(timeout=30)
            printed = reader.finish()
        finally:
            reap(writer)
        step = int(printed[-1]) + 2  # the killed put may or may not have landed
    result = json.loads(run_python(CHECKER, str(path), str(step)).strip().splitlines()[-1])
    assert result["problems"] == [], "a search answered from a leftover of a killed write"
    assert result["items"] > 0 and result["found"]
    assert result["repaired"] == result["before"]
    assert result["after_ok"], "verify(repair=True) left problems behind"


HOLDER = """
import sys
from langgraph_episodic import ChromaStore, HashEmbeddings
store = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
store.put(("users", "alice"), "k", {"text": "held by the first process"})
print("ready", flush=True)
sys.stdin.readline()
"""

OTHER = """
import json, sys
import chromadb
from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.folder_lock import FolderInUseError
store = ChromaStore(chromadb.PersistentClient(path=sys.argv[1]),
                    index={"dims": 64, "embed": HashEmbeddings(64)})
out = {}
for name, call in [("put", lambda: store.put(("users", "bob"), "k", {"text": "x"})),
                   ("get", lambda: store.get(("users", "alice"), "k")),
                   ("list", lambda: store.list_namespaces())]:
    try:
        got = call()
        out[name] = "ok" if name == "put" else repr(got)
    except FolderInUseError as exc:
        out[name] = "error: " + str(exc)
print(json.dumps(out))
"""


def test_a_second_process_on_a_folder_being_written_gets_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "db"
    holder = popen_python(HOLDER, str(path), stdin=subprocess.PIPE)
    try:
        reader = LineReader(holder)
        if reader.wait_for(1, timeout=120) != ["ready"]:
            reap(holder)
            pytest.fail(f"holder failed:\n{stderr_of(holder)}")
        other = json.loads(run_python(OTHER, str(path)).strip().splitlines()[-1])
        for name in ("put", "get", "list"):
            assert other[name].startswith("error: "), (name, other[name])
            assert "chroma run" in other[name] and "ChromaStore.http" in other[name]
        cli = subprocess.run(
            [sys.executable, "-m", "langgraph_episodic", "sweep", "--path", str(path)],
            capture_output=True, text=True, env=python_env(), cwd=REPO, timeout=120,
            check=False,
        )
        assert cli.returncode == 0, cli.stderr[-2000:]  # by path: through the holder
    finally:
        assert holder.stdin is not None
        holder.stdin.write("done\n")
        holder.stdin.flush()
        holder.wait(timeout=60)
        reap(holder)
    after = json.loads(run_python(OTHER, str(path)).strip().splitlines()[-1])
    assert after["put"] == "ok" and "held by the first process" in after["get"]


STALE_READER = """
import json, sys
import chromadb
from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.folder_lock import FolderInUseError
store = ChromaStore(chromadb.PersistentClient(path=sys.argv[1]),
                    index={"dims": 64, "embed": HashEmbeddings(64)})
print(json.dumps(repr(store.get(("users", "alice"), "k"))), flush=True)
sys.stdin.readline()  # meanwhile another process writes the folder
try:
    print(json.dumps(repr(store.get(("users", "alice"), "k"))), flush=True)
except FolderInUseError as exc:
    print(json.dumps("error: " + str(exc)), flush=True)
"""


def test_a_reader_opened_before_another_process_wrote_gets_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "db"
    run_python(HOLDER.replace("sys.stdin.readline()", ""), str(path))
    reader_proc = popen_python(STALE_READER, str(path), stdin=subprocess.PIPE)
    try:
        lines = LineReader(reader_proc)
        first = lines.wait_for(1, timeout=120)
        assert first and "held by the first process" in json.loads(first[0])
        run_python(HOLDER.replace("sys.stdin.readline()", ""), str(path))  # writes again
        assert reader_proc.stdin is not None
        reader_proc.stdin.write("go\n")
        reader_proc.stdin.flush()
        second = lines.wait_for(2, timeout=120)
        assert len(second) == 2, stderr_of(reader_proc)
        message = json.loads(second[1])
        assert message.startswith("error: ") and "was written by another process" in message
    finally:
        reap(reader_proc)


ALONE_COMMANDS: dict[str, list[str]] = {
    "purge": ["purge"],
    "verify --repair": ["verify", "--repair"],
}
SHARED_COMMANDS: dict[str, list[str]] = {
    "import": ["import", "{dump}", "--embeddings", "hash"],
    "forget": ["forget", "--user", "nobody", "--yes"],
    "sweep": ["sweep"],
}


PURGE_IN_OTHER = """
import json, sys
from langgraph_episodic import ChromaStore, HashEmbeddings
from langgraph_episodic.chroma.folder_lock import FolderInUseError
from langgraph_episodic.privacy import purge_store
store = ChromaStore.persistent(sys.argv[1], index={"dims": 64, "embed": HashEmbeddings(64)})
try:
    print(json.dumps("purged: " + repr(purge_store(store))))
except FolderInUseError as exc:
    print(json.dumps("error: " + str(exc)))
"""


def _digests(folder: Path) -> dict[str, str]:
    """Each file of a store folder (but the lock file) by its content hash."""
    return {
        str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.rglob("*"))
        if f.is_file() and f.name != "langgraph-episodic.lock"
    }


def test_commands_needing_the_folder_alone_refuse_it_and_the_others_share_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "db"
    dump = tmp_path / "dump.jsonl"
    dump.write_text(json.dumps({"namespace": ["users", "carol"], "key": "k",
                                "value": {"text": "imported"}}) + "\n")  # fmt: skip
    holder = popen_python(HOLDER, str(path), stdin=subprocess.PIPE)
    failures: dict[str, object] = {}
    try:
        if LineReader(holder).wait_for(1, timeout=120) != ["ready"]:
            reap(holder)
            pytest.fail(f"holder failed:\n{stderr_of(holder)}")
        def cli_on_folder(argv: list[str]) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "langgraph_episodic",
                 *(a.format(dump=dump) for a in argv), "--path", str(path)],
                capture_output=True, text=True, env=python_env(), cwd=REPO, timeout=120,
                check=False,
            )  # fmt: skip

        for name, argv in SHARED_COMMANDS.items():
            cli = cli_on_folder(argv)
            if cli.returncode != 0:
                failures[name] = (cli.returncode, cli.stderr[-400:])
        before = _digests(path)
        for name, argv in ALONE_COMMANDS.items():
            cli = cli_on_folder(argv)
            after = _digests(path)
            changed = sorted(f for f in before.keys() | after.keys() if before.get(f) != after.get(f))
            if cli.returncode != 2 or "chroma run" not in cli.stderr or changed:
                failures[name] = (cli.returncode, changed, cli.stderr[-400:])
            before = after
        # The library call too (Chroma's own client writes to chroma.sqlite3 as it opens).
        purge = json.loads(run_python(PURGE_IN_OTHER, str(path)).strip().splitlines()[-1])
        after = _digests(path)
        index_files = sorted(f for f in before if f != "chroma.sqlite3" and before[f] != after.get(f))
        # (by path it is a client of the holder: it purges nothing, and says so)
        if not purge.startswith("purged: ") or "purged=False" not in purge or index_files:
            failures["purge_store"] = (purge[:300], index_files)
    finally:
        assert holder.stdin is not None
        holder.stdin.write("done\n")
        holder.stdin.flush()
        holder.wait(timeout=60)
        reap(holder)
    assert failures == {}, f"commands that failed, or wrote a folder they needed alone: {failures}"
