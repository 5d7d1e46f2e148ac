"""One error hierarchy: every exception class the package defines derives from
``langgraph_episodic.Error``, and each keeps the built-in base existing handlers catch."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil

import pytest
from langgraph.store.base import InvalidNamespaceError

import langgraph_episodic
from langgraph_episodic import Error


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
