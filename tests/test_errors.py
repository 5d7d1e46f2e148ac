"""One error hierarchy: every exception class the package defines derives from
``langgraph_episodic.Error``, and each keeps the built-in base existing handlers catch."""

from __future__ import annotations

import ast
import asyncio
import builtins
import importlib
import importlib.util
import inspect
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import InvalidNamespaceError, PutOp, SearchOp

import langgraph_episodic
from langgraph_episodic import ChromaStore, Error, errors


def _package_exceptions() -> dict[str, type[BaseException]]:
    """Qualified name -> class of every exception class defined in the package's modules (the
    MCP server's only with the ``[mcp]`` extra installed)."""
    skip = ("__main__",) if importlib.util.find_spec("mcp") else ("__main__", "mcp_server")
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(langgraph_episodic.__path__, "langgraph_episodic."):
        if any(part in skip for part in info.name.split(".")):
            continue  # running __main__ parses the command line
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_package_exception_derives_from_error() -> None:
    found = _package_exceptions()
    assert len(found) >= 16, sorted(found)
    assert [name for name, cls in found.items() if not issubclass(cls, Error)] == []


@pytest.mark.parametrize(
    ("name", "builtin"),
    [
        ("MissingConfigError", KeyError),
        ("UserIdError", ValueError),
        ("EpisodeSchemaError", ValueError),
        ("StoreClosedError", RuntimeError),
        ("MemoryStoreMissingError", RuntimeError),
    ],
)
def test_errors_keep_their_builtin_base(name: str, builtin: type[Exception]) -> None:
    cls = getattr(langgraph_episodic, name)
    assert issubclass(cls, Error) and issubclass(cls, builtin)


def test_a_namespace_of_the_wrong_type_is_still_what_langgraph_raises() -> None:
    from langgraph_episodic.chroma.plans import NamespaceTypeError

    error = NamespaceTypeError("not a tuple")
    assert isinstance(error, Error)
    assert isinstance(error, InvalidNamespaceError) and isinstance(error, TypeError)


def test_one_except_catches_a_missing_config_key() -> None:
    from langgraph_episodic._config import fill_namespace

    with pytest.raises(Error, match="user_id"):
        fill_namespace(("memories", "{user_id}"), {"configurable": {}})


BUILTIN_ERRORS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
) | {"InvalidNamespaceError"}
"""The exceptions the package must not raise itself: the built-ins and LangGraph's plain one."""

BUILTINS_ALLOWED = {
    # Abstract methods: a subclass that forgets one fails loudly.
    ("chroma/ranking/lexical.py", "thaw", "NotImplementedError"),
    ("chroma/ranking/lexical.py", "discard", "NotImplementedError"),
    ("embeddings.py", "_vectors", "NotImplementedError"),
    # The attribute protocol: getattr() defaults and hasattr() need a plain AttributeError.
    ("__init__.py", "__getattr__", "AttributeError"),
    ("chroma/__init__.py", "__getattr__", "AttributeError"),
    ("privacy/redacting_store.py", "__getattr__", "AttributeError"),
    ("chroma/store.py", "collections", "AttributeError"),  # a property: hasattr() says False
    # The Mapping protocol: __getitem__ of a Mapping raises KeyError for a missing key.
    ("chroma/ranking/lexical.py", "__getitem__", "KeyError"),
    # After a loop that returns or raises: a bug if ever reached, not an error to handle.
    ("chroma/gateway.py", "index_read", "AssertionError"),
    # Stands for an exception of a foreign class the process serving a folder raised: a store
    # of this process would have raised that foreign error, which is no Error either.
    ("chroma/sharing_wire.py", "error_in", "RuntimeError"),
    # A missing or unusable optional package: an installation problem, raised as the
    # ImportError Python's imports and `except ImportError` feature checks expect.
    ("embeddings.py", "packaged_model_path", "ImportError"),
    ("graph/threads.py", "_saver_class", "ImportError"),
    ("mcp_server/__init__.py", None, "ImportError"),
    ("multilingual.py", "_load_backend", "ImportError"),
}
"""(module path, enclosing function, exception) of the built-ins the package raises on purpose,
each for the reason above it."""


def _builtin_raises() -> set[tuple[str, str | None, str]]:
    """Each place the package's source makes a built-in exception (``raise ValueError(...)``,
    ``error = ValueError(...)``, ``raise ValueError``), read with ``ast``."""
    root = Path(langgraph_episodic.__file__).parent
    found = set()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [
            n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for node in ast.walk(tree):
            made = (node.func if isinstance(node, ast.Call)
                    else node.exc if isinstance(node, ast.Raise) else None)
            if isinstance(made, ast.Name) and made.id in BUILTIN_ERRORS:
                inside = [f for f in functions if f.lineno <= node.lineno <= (f.end_lineno or 0)]
                function = max(inside, key=lambda f: f.lineno).name if inside else None
                found.add((path.relative_to(root).as_posix(), function, made.id))
    return found


def test_the_package_raises_no_builtin_exception_of_its_own() -> None:
    """Every error raised on purpose is an ``Error`` (and the built-in it stands for): raise
    one from ``langgraph_episodic.errors`` (or the unit's own), not ``ValueError(...)``."""
    found = _builtin_raises()
    assert sorted(found - BUILTINS_ALLOWED) == []
    assert sorted(BUILTINS_ALLOWED - found) == [], "allowed, but no longer raised: drop it"


@pytest.mark.parametrize("name", errors.__all__)
def test_each_general_error_is_its_builtin_and_crosses_processes_as_itself(name: str) -> None:
    from langgraph_episodic.chroma.sharing_wire import error_in, error_out

    cls = getattr(errors, name)
    assert issubclass(cls, Error)
    error = cls("the message, as raised")
    again = error_in(error_out(error))
    assert type(again) is cls and str(again) == str(error)


def test_bad_input_to_a_store_is_an_error_and_the_builtin_it_was() -> None:
    store = ChromaStore.ephemeral(index=None)
    soon: Any = "soon"
    a_list: Any = ["not", "a", "dict"]
    try:
        calls: list[tuple[Callable[[], object], type[Exception], str]] = [
            (lambda: store.search(("docs",), limit=-1), ValueError, "limit"),
            (lambda: store.search(("docs",), offset=-1), ValueError, "offset"),
            (lambda: store.put(("docs",), "k", {"a": 1}, ttl=-5), ValueError, "ttl"),
            (lambda: store.put(("docs",), "k", {"a": 1}, ttl=soon), TypeError, "ttl"),
            (lambda: store.batch([PutOp((), "k", {"a": 1})]), InvalidNamespaceError, "empty"),
            (lambda: store.batch([SearchOp(("a.b",))]), InvalidNamespaceError, "period"),
            (lambda: store.put(("docs",), "k", a_list), TypeError, "dict"),
            (lambda: store.put(("docs",), "k", {"a": float("nan")}), ValueError, "finite"),
            (lambda: store.search(("docs",), filter={"a": {"$near": 1}}), ValueError, "operator"),
        ]
        for call, builtin, words in calls:
            with pytest.raises(Error, match=words) as raised:
                call()
            assert isinstance(raised.value, builtin), (words, type(raised.value))
        # (LangGraph's own put/aput check the namespace before the store sees the op, and
        # raise its plain InvalidNamespaceError: errors.py says so.)
        with pytest.raises(Error, match="empty") as raised_async:
            asyncio.run(store.abatch([PutOp((), "k", {"a": 1})]))
        assert isinstance(raised_async.value, InvalidNamespaceError)
        assert store.search(("docs",)) == []  # nothing was written
    finally:
        store.close()
