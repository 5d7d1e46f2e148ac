"""The server pieces without a server: settings from the environment, the store factory's
lifecycle (open once, sweep, close), and the isolation rules the auth handlers apply."""

from __future__ import annotations

import asyncio
import doctest
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import Auth

from langgraph_episodic.chroma.testing import ttl_sweeper
from langgraph_episodic.server import (
    StoreSettings,
    factory,
    isolate_users,
    isolation,
    pin_run_user,
    pin_store_namespace,
    settings,
    store,
)

# ------------------------------------------------------------------ settings


def test_defaults_are_an_embedded_folder_with_the_stores_own_embedder() -> None:
    s = StoreSettings.from_env({})
    assert (s.chroma_url, s.path, s.collection, s.embeddings) == (
        None, "./.episodic", "langgraph_store", "auto")  # fmt: skip
    assert (s.search_mode, s.ttl(), s.sweep_minutes) == ("hybrid", None, 5.0)
    assert StoreSettings().embeddings == "auto"


def test_auto_is_parsed_and_leaves_the_index_to_the_store() -> None:
    s = StoreSettings.from_env({"EPISODIC_EMBEDDINGS": "auto"})
    assert s.auto and "index" not in s.store_options()
    with pytest.raises(ValueError, match=r"EPISODIC_EMBEDDINGS=auto .*open_store"):
        s.index()
    for spelling in ("model", "hash", "none", "langgraph_episodic.embeddings:HashEmbeddings"):
        chosen = StoreSettings.from_env({"EPISODIC_EMBEDDINGS": spelling})
        assert not chosen.auto and "index" in chosen.store_options()
    with pytest.raises(ValueError, match="EPISODIC_EMBEDDINGS="):
        StoreSettings.from_env({"EPISODIC_EMBEDDINGS": "auto:1"})


def test_auto_on_a_chroma_server_opens_without_an_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a server too the store chooses (``ChromaStore.from_url`` gets no ``index=``)."""
    seen: dict[str, Any] = {}

    class Opened:
        embeddings = None
        index_config = None

    def from_url(url: str, **kwargs: Any) -> Opened:
        seen.update(kwargs, url=url)
        return Opened()

    monkeypatch.setattr(factory.ChromaStore, "from_url", from_url)
    factory.open_store(StoreSettings(chroma_url="http://chroma:8000"))
    assert seen["url"] == "http://chroma:8000" and "index" not in seen
    assert seen["collection"] == "langgraph_store" and seen["timeout"] == 30.0


def test_every_variable_is_read() -> None:
    env = {
        "EPISODIC_CHROMA_URL": "https://chroma.example.com",
        "EPISODIC_STORE_PATH": "/data/mem",
        "EPISODIC_COLLECTION": "prod",
        "EPISODIC_EMBEDDINGS": "hash:32",
        "EPISODIC_INDEX_FIELDS": "text, summary",
        "EPISODIC_SEARCH_MODE": "dense",
        "EPISODIC_TTL_MINUTES": "1440",
        "EPISODIC_TTL_REFRESH_ON_READ": "false",
        "EPISODIC_TTL_SWEEP_MINUTES": "0",
        "EPISODIC_CHROMA_TIMEOUT": "7.5",
        "EPISODIC_CHROMA_HEADERS": '{"X-Chroma-Token": "s3cret"}',
    }
    s = StoreSettings.from_env(env)
    assert s.where() == "https://chroma.example.com"
    assert s.ttl() == {"default_ttl": 1440.0, "refresh_on_read": False}
    assert (s.sweep_minutes, s.timeout_s, s.search_mode) == (0.0, 7.5, "dense")
    index = s.index()
    assert index is not None and index["dims"] == 32 and index["fields"] == ["text", "summary"]
    assert s.store_options()["collection"] == "prod"
    assert s.chroma_headers == (("X-Chroma-Token", "s3cret"),)
    assert "s3cret" not in repr(s) + s.describe()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SEARCH_MODE", "fuzzy"),
        ("CHROMA_URL", "chroma:8000"),
        ("EMBEDDINGS", "hash:0"),
        ("EMBEDDINGS", "openai"),
        ("TTL_MINUTES", "soon"),
        ("TTL_MINUTES", "-1"),
        ("TTL_REFRESH_ON_READ", "maybe"),
        ("EMBEDDING_DIMS", "1.5"),
        ("INDEX_FIELDS", " , "),
        ("CHROMA_HEADERS", "X-Chroma-Token: s3cret"),
        ("CHROMA_HEADERS", '{"X-Chroma-Token": 1}'),
    ],
)
def test_a_bad_value_names_the_variable(name: str, value: str) -> None:
    with pytest.raises(ValueError, match=f"EPISODIC_{name}="):
        StoreSettings.from_env({f"EPISODIC_{name}": value})


def test_embeddings_from_a_module_path_and_none() -> None:
    s = StoreSettings(embeddings="langgraph_episodic.embeddings:HashEmbeddings")
    index = s.index()
    assert index is not None and index["dims"] == 64  # probed
    assert StoreSettings(embeddings="none").index() is None
    with pytest.raises(ValueError, match="cannot import 'Nope'"):
        StoreSettings(embeddings="langgraph_episodic.embeddings:Nope").index()
    function = StoreSettings(embeddings="langgraph_episodic.embeddings:simple_hash_embedding")
    index = function.index()  # an embedding function (text -> vector) is wrapped
    assert index is not None and index["dims"] == 64
    with pytest.raises(ValueError, match="not a LangChain Embeddings"):
        StoreSettings(embeddings="langgraph_episodic.embeddings:packaged_model_path").index()
    with pytest.raises(ValueError, match="names a str"):
        StoreSettings(embeddings="langgraph_episodic.server.settings:PREFIX").index()


def test_multilingual_embeddings_by_name() -> None:
    from langgraph_episodic.multilingual import MultilingualEmbeddings

    index = StoreSettings(embeddings="multilingual", index_fields=("text",)).index()
    assert index is not None and index["dims"] == 512 and index["fields"] == ["text"]
    assert isinstance(index["embed"], MultilingualEmbeddings)
    with pytest.raises(ValueError, match="expected auto, model, multilingual, hash"):
        StoreSettings.from_env({"EPISODIC_EMBEDDINGS": "openai"})


# ------------------------------------------------------------------ the factory


def test_the_factory_opens_once_sweeps_and_closes(tmp_path: Path) -> None:
    """Expired items disappear from Chroma by the factory's sweeper; exit stops the thread."""
    conf = StoreSettings(path=str(tmp_path / "mem"), embeddings="hash", sweep_minutes=0.002)

    async def main() -> tuple[Any, int, threading.Thread]:
        async with store(conf) as s:
            assert s.index_config is not None
            await s.aput(("notes", "alice"), "old", {"text": "short lived"}, ttl=0.001)
            await s.aput(("notes", "alice"), "keep", {"text": "stays"})
            deadline = time.monotonic() + 30
            # (an item with one indexed text is its own record of the vector collection)
            while s.collections["vectors"].count() > 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            sweeper = ttl_sweeper(s)
            assert isinstance(sweeper, threading.Thread) and sweeper.is_alive()
            return s, s.collections["vectors"].count(), sweeper

    opened, count, sweeper = asyncio.run(main())
    assert count == 1, "the sweeper did not delete the expired item"
    assert not sweeper.is_alive() and ttl_sweeper(opened) is None, (
        "the sweeper still runs after exit"
    )
    again = factory.open_store(conf)
    assert [i.key for i in again.search(("notes", "alice"))] == ["keep"]
    again.close()


def test_the_factory_reads_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EPISODIC_STORE_PATH", str(tmp_path / "env-mem"))
    monkeypatch.setenv("EPISODIC_EMBEDDINGS", "hash:16")

    async def main() -> int | None:
        async with store() as s:
            return (s.index_config or {}).get("dims")

    assert asyncio.run(main()) == 16
    assert (tmp_path / "env-mem").is_dir()


@pytest.mark.model
@pytest.mark.xdist_group("packaged-model")
def test_the_packaged_model_loads_at_startup(tmp_path: Path) -> None:
    """The first request does not pay for loading the model: entering the factory does."""

    async def main() -> Any:
        async with store(StoreSettings(path=str(tmp_path / "mem"), embeddings="model")) as s:
            return s.embeddings

    embeddings = asyncio.run(main())
    assert embeddings is not None and embeddings._model is not None


@pytest.mark.model
@pytest.mark.xdist_group("packaged-model")
def test_auto_keeps_the_packaged_model_of_a_store_written_with_it(tmp_path: Path) -> None:
    """A deployment whose folder holds 384-d MiniLM vectors keeps working under the default."""
    from langgraph_episodic import ChromaStore
    from langgraph_episodic.embeddings import (
        MODEL_DIMS,
        SentenceTransformerEmbeddings,
        packaged_index,
    )

    folder = tmp_path / "mem"
    with ChromaStore.persistent(folder, index=packaged_index()) as old:
        old.put(("notes", "alice"), "coffee", {"text": "Alice drinks her coffee black"})
        old.put(("notes", "alice"), "bike", {"text": "Alice rides a red bicycle to work"})
    opened = factory.open_store(StoreSettings(path=str(folder)))
    try:
        assert isinstance(opened.embeddings, SentenceTransformerEmbeddings)
        assert opened.embeddings.loaded, "the model is loaded at startup"
        assert opened.index_config is not None and opened.index_config["dims"] == MODEL_DIMS
        hits = opened.search(("notes", "alice"), query="How does Alice take her coffee?", limit=1)
        assert [h.key for h in hits] == ["coffee"]
    finally:
        opened.close()


@pytest.mark.model
@pytest.mark.xdist_group("packaged-model")
def test_auto_gives_a_new_folder_the_two_language_default(tmp_path: Path) -> None:
    from langgraph_episodic.bilingual import BILINGUAL_DIMS, BilingualEmbeddings

    opened = factory.open_store(StoreSettings(path=str(tmp_path / "new"), index_fields=("text",)))
    try:
        assert isinstance(opened.embeddings, BilingualEmbeddings) and opened.embeddings.loaded
        assert opened.index_config is not None
        assert (opened.index_config["dims"], opened.index_config["fields"]) == (
            BILINGUAL_DIMS, ["text"])  # fmt: skip
        opened.put(("notes", "bob"), "job", {"text": "Bob arbeitet als Koch in Hamburg"})
        hits = opened.search(("notes", "bob"), query="Was ist Bobs Beruf?", limit=1)
        assert [h.key for h in hits] == ["job"]
    finally:
        opened.close()


@pytest.mark.model
def test_the_multilingual_model_loads_at_startup(tmp_path: Path) -> None:
    from langgraph_episodic.multilingual import MultilingualEmbeddings

    async def main() -> Any:
        settings = StoreSettings(path=str(tmp_path / "mem"), embeddings="multilingual")
        async with store(settings) as s:
            return s.embeddings

    embeddings = asyncio.run(main())
    assert isinstance(embeddings, MultilingualEmbeddings) and embeddings.loaded


def test_docstring_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for module in (factory, isolation, settings):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__


# ------------------------------------------------------------------ isolation rules


def pinned(action: str, namespace: tuple[str, ...] | None, user: str = "alice") -> Any:
    value: dict[str, Any] = {"namespace": namespace}
    pin_store_namespace(user, action, value)
    return value["namespace"]


@pytest.mark.parametrize(
    ("action", "namespace", "expected"),
    [
        ("put", ("notes", "alice"), ("notes", "alice")),
        ("get", ("notes", "alice", "sub"), ("notes", "alice", "sub")),
        ("delete", ("episodes", "alice"), ("episodes", "alice")),
        ("search", ("notes",), ("notes", "alice")),
        ("search", ("notes", "alice"), ("notes", "alice")),
        ("list_namespaces", None, ("*", "alice")),
        ("list_namespaces", (), ("*", "alice")),
        ("list_namespaces", ("notes",), ("notes", "alice")),
    ],
)
def test_own_namespaces_are_allowed_or_narrowed(
    action: str, namespace: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    assert pinned(action, namespace) == expected


@pytest.mark.parametrize(
    ("action", "namespace"),
    [
        ("put", ("notes", "bob")),
        ("put", ("notes",)),
        ("put", ("alice",)),
        ("get", ("notes", "alice2")),
        ("delete", ("notes", "*")),
        ("search", ()),
        ("search", ("notes", "bob")),
        ("search", ("*", "bob")),
        ("list_namespaces", ("notes", "bob")),
        ("list_namespaces", ("*", "*")),
        ("copy", ("notes", "alice")),
    ],
)
def test_other_namespaces_are_refused(action: str, namespace: tuple[str, ...]) -> None:
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        pinned(action, namespace)
    assert caught.value.status_code == 403


def test_user_ids_are_labels_as_the_graph_writes_them() -> None:
    """An e-mail id is compared in its namespace-label form (dots encoded), as the nodes write."""
    assert pinned("search", ("notes",), user="a.b@x.org") == ("notes", "a%2Eb@x%2Eorg")
    with pytest.raises(Auth.exceptions.HTTPException):
        pinned("get", ("notes", "a.b@x.org"), user="a.b@x.org")


def test_a_run_always_gets_the_authenticated_user() -> None:
    value: dict[str, Any] = {
        "kwargs": {"config": {"configurable": {"user_id": "bob", "thread_id": "t"}},
                   "context": {"user_id": "bob"}},
        "metadata": None,
    }  # fmt: skip
    pin_run_user("alice", value)
    assert value["kwargs"]["config"]["configurable"] == {"user_id": "alice", "thread_id": "t"}
    assert value["kwargs"]["context"] == {"user_id": "alice"}
    assert value["metadata"] == {"owner": "alice"}
    bare: dict[str, Any] = {}
    pin_run_user("alice", bare)
    assert bare["kwargs"]["config"]["configurable"]["user_id"] == "alice"
    assert bare["kwargs"]["context"] == {"user_id": "alice"}
    empty: dict[str, Any] = {"kwargs": {"context": {}}}
    pin_run_user("alice", empty)
    assert empty["kwargs"]["context"] == {"user_id": "alice"}


SYSTEM_META = {"created_by": "system"}


@pytest.mark.parametrize("action", ["read", "search"])
def test_everyone_reads_the_servers_assistants_and_their_own(action: str) -> None:
    found = isolation.assistant_filter("alice", action, {})
    assert found == {"$or": [{"owner": "alice"}, SYSTEM_META]}


@pytest.mark.parametrize("action", ["create", "update", "delete"])
def test_only_own_assistants_are_written(action: str) -> None:
    value: dict[str, Any] = {"metadata": {"owner": "bob", "topic": "x"}}
    assert isolation.assistant_filter("alice", action, value) == {"owner": "alice"}
    expected = "alice" if action in ("create", "update") else "bob"
    assert value["metadata"] == {"owner": expected, "topic": "x"}


@pytest.mark.parametrize("action", ["create", "update"])
def test_no_client_assistant_passes_for_the_servers(action: str) -> None:
    value: dict[str, Any] = {"metadata": {**SYSTEM_META, "topic": "x"}}
    with pytest.raises(Auth.exceptions.HTTPException) as caught:
        isolation.assistant_filter("alice", action, value)
    assert caught.value.status_code == 403 and "created_by" in str(caught.value.detail)


def test_the_owner_is_stamped_on_create_and_update_only() -> None:
    created: dict[str, Any] = {"metadata": None}
    isolation.stamp_owner("alice", "create", created)
    assert created["metadata"] == {"owner": "alice"}
    untouched: dict[str, Any] = {"metadata": None}
    isolation.stamp_owner("alice", "update", untouched)
    assert untouched["metadata"] is None
    read: dict[str, Any] = {"metadata": {"owner": "bob"}}
    isolation.stamp_owner("alice", "read", read)
    assert read["metadata"] == {"owner": "bob"}


def test_isolate_users_registers_store_run_and_owner_handlers() -> None:
    auth = isolate_users(Auth())
    keys = set(auth._handlers)
    assert {("store", "*"), ("threads", "create_run"), ("assistants", "*")} <= keys
    assert auth._global_handlers, "no default owner handler for threads, assistants, crons"


EXAMPLE_VARIABLES = {"EPISODIC_API_TOKENS", "EPISODIC_CHAT_MODEL"}
"""Variables of the example app (its auth and its chat model), not of the store."""


def test_every_variable_read_is_documented() -> None:
    """The variables ``from_env`` reads are those the module docstring and docs/server.md list."""
    read: set[str] = set()

    class Recording(dict[str, str]):
        def get(self, key: str, default: Any = None) -> Any:
            read.add(key)
            return super().get(key, default)

    StoreSettings.from_env(Recording())
    documented = set(re.findall(r"``(EPISODIC_[A-Z_]+)``", settings.__doc__ or ""))
    page = (Path(__file__).resolve().parents[2] / "docs" / "server.md").read_text(encoding="utf-8")
    in_docs = set(re.findall(r"`(EPISODIC_[A-Z_]+)[`=]", page)) - EXAMPLE_VARIABLES
    assert read == documented == in_docs
