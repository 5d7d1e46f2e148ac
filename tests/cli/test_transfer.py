"""export / import: exact round trips (embedded and server), validation before any write."""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from langgraph_episodic import ChromaStore
from langgraph_episodic.admin.transfer import (
    ImportFileError,
    collect_records,
    export_file,
    import_records,
    parse_lines,
    read_file,
    write_records,
)

from .conftest import HASH, INDEX, CliResult, Seeded, open_hash_store, seed

Cli = Callable[..., CliResult]


def _lines(path: Path) -> list[dict[str, Any]]:
    return sorted(
        (json.loads(line) for line in path.read_text().splitlines()),
        key=lambda d: (d["namespace"], d["key"]),
    )


def test_export_import_export_is_exact(cli: Cli, seeded_store: Seeded, tmp_path: Path) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert cli("export", str(first), "--path", str(seeded_store.path))[0] == 0
    code, _, err = cli("import", str(first), "--path", str(tmp_path / "copy"), *HASH)
    assert code == 0, err
    assert cli("export", str(second), "--path", str(tmp_path / "copy"))[0] == 0
    exported = _lines(first)
    assert len(exported) == sum(seeded_store.counts.values())
    assert exported == _lines(second)
    by_key = {(tuple(d["namespace"]), d["key"]): d for d in exported}
    assert by_key[(("memories", "bob"), "tags")]["index"] == ["tags[*]"]
    assert by_key[(("notes",), "plain")]["index"] is False
    assert by_key[(("memories", "bob"), "pet")]["ttl"] == 600


def test_imported_items_keep_values_and_times_and_get_new_vectors(
    cli: Cli, seeded_store: Seeded, tmp_path: Path
) -> None:
    dump = tmp_path / "dump.jsonl"
    cli("export", str(dump), "--path", str(seeded_store.path))
    cli("import", str(dump), "--path", str(tmp_path / "copy"), *HASH)
    with open_hash_store(seeded_store.path) as source, open_hash_store(tmp_path / "copy") as copy:
        for ns in seeded_store.counts:
            for item in source.search(ns, limit=100):
                twin = copy.get(tuple(item.namespace), item.key)
                assert twin is not None
                assert (twin.value, twin.created_at, twin.updated_at) == (
                    item.value, item.created_at, item.updated_at
                )
        hits = copy.search(("memories",), query="espresso sugar", limit=1)
        assert hits[0].key == "coffee" and hits[0].score is not None


def test_round_trip_through_a_running_server(
    cli: Cli, seeded_store: Seeded, tmp_path: Path, chroma_server: Any
) -> None:
    collection = f"cli-{tmp_path.name[-20:]}".replace("_", "-")
    server = ("--url", chroma_server.url, "--collection", collection)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    cli("export", str(first), "--path", str(seeded_store.path))
    code, _, err = cli("import", str(first), *server, *HASH)
    assert code == 0, err
    assert cli("export", str(second), *server)[0] == 0
    assert _lines(first) == _lines(second)

    code, out, _ = cli("stats", *server, "--json")
    counts = {tuple(n["namespace"]): n["items"] for n in json.loads(out)["namespaces"]}
    assert counts == seeded_store.counts
    code, out, _ = cli("search", "espresso sugar", *server, *HASH, "--json")
    assert json.loads(out)[0]["key"] == "coffee"
    code, out, _ = cli("forget", "--user", "bob", *server, "--json", "--yes")
    assert json.loads(out)["items_deleted"] == 2
    assert cli("sweep", *server)[0] == 0


def test_export_to_stdout_and_import_from_stdin(
    cli: Cli, seeded_store: Seeded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = cli("export", "-", "--path", str(seeded_store.path))
    assert code == 0 and len(out.splitlines()) == sum(seeded_store.counts.values())
    monkeypatch.setattr("sys.stdin", io.StringIO(out))
    code, _, err = cli("import", "-", "--path", str(tmp_path / "copy"), *HASH)
    assert code == 0, err
    code, out, _ = cli("stats", "--path", str(tmp_path / "copy"), "--json")
    assert json.loads(out)["items"] == sum(seeded_store.counts.values())


GOOD = {
    "namespace": ["memories", "carol"],
    "key": "k",
    "value": {"text": "Carol likes jazz"},
    "created_at": "2024-05-01T10:00:00+00:00",
    "updated_at": "2024-05-02T10:00:00.123456+00:00",
}


def _variant(**changes: Any) -> str:
    data = {**GOOD, **changes}
    return json.dumps({k: v for k, v in data.items() if v is not ...})


MALFORMED = {
    "not json": "{nope",
    "not an object": "[1, 2]",
    "missing key": _variant(key=...),
    "unknown field": _variant(colour="red"),
    "empty namespace": _variant(namespace=[]),
    "dot in label": _variant(namespace=["a.b"]),
    "reserved root": _variant(namespace=["langgraph", "x"]),
    "value not object": _variant(value="text"),
    "NaN": '{"namespace": ["a"], "key": "k", "value": {"x": NaN}, "created_at": "2024-05-01T10:00:00+00:00", "updated_at": "2024-05-01T10:00:00+00:00"}',
    "naive time": _variant(created_at="2024-05-01T10:00:00"),
    "bad time": _variant(updated_at="yesterday"),
    "negative ttl": _variant(ttl=-1),
    "bad index": _variant(index="text"),
    "malformed index path": _variant(index=["text[[["]),
}


@pytest.mark.parametrize("problem", list(MALFORMED))
def test_a_malformed_line_rejects_the_whole_file(cli: Cli, tmp_path: Path, problem: str) -> None:
    good_lines = [_variant(key=f"ok{i}") for i in range(50)]
    dump = tmp_path / "bad.jsonl"
    dump.write_text("\n".join([*good_lines, MALFORMED[problem], _variant(key="after")]) + "\n")
    code, _, err = cli("import", str(dump), "--path", str(tmp_path / "new"), *HASH)
    assert code == 2
    assert "line 51" in err and "nothing was imported" in err and "Traceback" not in err
    assert not (tmp_path / "new").exists()


def test_a_rejected_file_leaves_an_existing_store_unchanged(
    cli: Cli, seeded_store: Seeded, tmp_path: Path
) -> None:
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    cli("export", str(before), "--path", str(seeded_store.path))
    dump = tmp_path / "bad.jsonl"
    dump.write_text("\n".join([_variant(key=f"ok{i}") for i in range(50)] + [MALFORMED["NaN"]]))
    code, _, err = cli("import", str(dump), "--path", str(seeded_store.path), *HASH)
    assert code == 2 and "line 51" in err
    cli("export", str(after), "--path", str(seeded_store.path))
    assert _lines(before) == _lines(after)


def test_a_repeated_key_is_an_error(cli: Cli, tmp_path: Path) -> None:
    dump = tmp_path / "dup.jsonl"
    dump.write_text(_variant() + "\n\n" + _variant() + "\n")
    code, _, err = cli("import", str(dump), "--path", str(tmp_path / "new"), *HASH)
    assert code == 2 and "line 3" in err and "repeats line 1" in err
    assert not (tmp_path / "new").exists()


def test_import_errors_for_files(cli: Cli, tmp_path: Path) -> None:
    code, _, err = cli("import", str(tmp_path / "missing.jsonl"), "--path", str(tmp_path / "s"))
    assert code == 2 and "No file" in err
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    code, _, err = cli("import", str(binary), "--path", str(tmp_path / "s"), *HASH)
    assert code == 2 and "not UTF-8" in err
    code, _, err = cli("export", str(tmp_path / "no" / "dir.jsonl"), "--path", str(tmp_path / "s"))
    assert code == 2 and "does not exist" in err


def test_many_problems_are_listed_and_capped() -> None:
    with pytest.raises(ImportFileError) as caught:
        parse_lines(["{"] * 30)
    message = str(caught.value)
    assert message.startswith("30 problem(s)")
    assert "line 20:" in message and "line 21:" not in message and "10 more" in message


def test_any_langgraph_store_round_trips_its_public_fields() -> None:
    source, target = InMemoryStore(), InMemoryStore(index=INDEX)
    seed(source, ttl=False)
    buffer = io.StringIO()
    write_records(collect_records(source), buffer)
    records = parse_lines(buffer.getvalue().splitlines())
    assert all(r.index is None for r in records)  # InMemoryStore cannot tell; defaults apply
    assert import_records(target, records) == len(records)
    for record in records:
        item = target.get(record.namespace, record.key)
        assert item is not None and item.value == record.value


# --- characters str.splitlines() takes for line ends -------------------------------------------

SEPARATORS = ("\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r", "\n")
"""Every character ``str.splitlines()`` ends a line at; JSON lines end at ``\\n`` only."""


def test_values_with_unicode_line_separators_export_and_import_byte_exact(
    cli: Cli, tmp_path: Path
) -> None:
    with open_hash_store(tmp_path / "store") as store:
        for i in range(300):
            store.put(("memories", "alice"), f"plain{i}", {"text": f"fact {i}"})
        for i, sep in enumerate(SEPARATORS):
            store.put(("memories", "alice"), f"sep{i}{sep}", {"text": f"a{sep}b", f"k{sep}": sep})
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    assert cli("export", str(first), "--path", str(tmp_path / "store"))[0] == 0
    code, _, err = cli("import", str(first), "--path", str(tmp_path / "copy"), *HASH)
    assert code == 0, err
    assert cli("export", str(second), "--path", str(tmp_path / "copy"))[0] == 0
    assert first.read_bytes() == second.read_bytes()
    assert len(first.read_bytes().split(b"\n")) == 300 + len(SEPARATORS) + 1
    with open_hash_store(tmp_path / "copy") as copy:
        item = copy.get(("memories", "alice"), "sep0\u2028")
        assert item is not None and item.value == {"text": "a\u2028b", "k\u2028": "\u2028"}


def test_a_hand_written_file_with_raw_separators_inside_strings_imports(
    cli: Cli, tmp_path: Path
) -> None:
    dump = tmp_path / "raw.jsonl"
    lines = [
        json.dumps({**GOOD, "key": f"k{i}", "value": {"text": f"x{sep}y"}}, ensure_ascii=False)
        for i, sep in enumerate(SEPARATORS[:3])
    ]
    dump.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    assert "\u2028" in dump.read_text(encoding="utf-8")
    code, _, err = cli("import", str(dump), "--path", str(tmp_path / "s"), *HASH)
    assert code == 0, err
    with open_hash_store(tmp_path / "s") as store:
        got = store.get(("memories", "carol"), "k0")
        assert got is not None and got.value == {"text": "x\u2028y"}


_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",)) | st.sampled_from(SEPARATORS), max_size=12
)
_LABEL = _TEXT.filter(lambda s: bool(s) and "." not in s and "\x00" not in s)
_VALUE = st.dictionaries(
    _TEXT,
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
        max_leaves=6,
    ),
    max_size=4,
)


_INDEXES = st.sampled_from(
    [None, False, [], ["text"], ["tags[*]"], ["{text,n}"], ["text", "tags[0]"], ["*"], ["absent"]]
)
_ITEM_VALUE = st.fixed_dictionaries(
    {}, optional={"text": _TEXT, "tags": st.lists(_TEXT, max_size=3), "n": st.integers()}
).flatmap(lambda fixed: _VALUE.map(lambda extra: {**extra, **fixed}))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.dictionaries(
        st.tuples(st.tuples(st.just("memories"), _LABEL), _TEXT.filter(bool)),
        st.tuples(_ITEM_VALUE, _INDEXES),
        min_size=1, max_size=6,
    )
)
def test_the_stores_own_export_always_imports_back_byte_exact(
    items: dict[tuple[tuple[str, ...], str], tuple[dict[str, Any], Any]],
) -> None:
    """Any value, key, label and index (line separators in text): export, import, export is
    exact."""
    source = ChromaStore.ephemeral(index=INDEX)
    target = ChromaStore.ephemeral(index=INDEX)
    with tempfile.TemporaryDirectory() as folder:
        first, second = Path(folder, "first.jsonl"), Path(folder, "second.jsonl")
        for (namespace, key), (value, index) in items.items():
            source.put(namespace, key, value, index=index)
        assert export_file(source, first) == len(items)
        import_records(target, read_file(first))
        export_file(target, second)
        assert first.read_bytes() == second.read_bytes()


def test_an_export_with_values_over_the_default_limits_imports_back(
    cli: Cli, tmp_path: Path
) -> None:
    """Import restores what a store held (a store opened with higher limits, or written before
    limits existed): it applies no size limits."""
    big = {"text": "word " * 20_000, "body": "x" * (1024 * 1024)}
    with ChromaStore.persistent(tmp_path / "store", index=INDEX, max_value_bytes=None,
                                max_indexed_bytes=None) as store:  # fmt: skip
        store.put(("docs",), "big", big)
    dump = tmp_path / "dump.jsonl"
    assert cli("export", str(dump), "--path", str(tmp_path / "store"))[0] == 0
    code, _, err = cli("import", str(dump), "--path", str(tmp_path / "copy"), *HASH)
    assert code == 0, err
    with open_hash_store(tmp_path / "copy") as copy:
        item = copy.get(("docs",), "big")
        assert item is not None and item.value == big
