"""The Chroma-backed LangGraph store: :class:`ChromaStore`, its errors and its check report.

The names are imported lazily (like the package's own), so importing a module of this package
does not load Chroma until the store is used.
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing.TYPE_CHECKING`` without importing typing

# name -> module that defines it (relative to this package)
_EXPORTS: dict[str, str] = {
    "ChromaStore": ".store",
    "FolderInUseError": ".folder_lock",
    "IndexReadError": ".gateway",
    "StoreClosedError": ".lifecycle",
    "StoreForkedError": ".lifecycle",
    "VerifyReport": ".verify",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    from importlib import import_module

    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langgraph_episodic.chroma' has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from .folder_lock import FolderInUseError as FolderInUseError
    from .gateway import IndexReadError as IndexReadError
    from .lifecycle import StoreClosedError as StoreClosedError
    from .lifecycle import StoreForkedError as StoreForkedError
    from .store import ChromaStore as ChromaStore
    from .verify import VerifyReport as VerifyReport
