"""The Chroma-backed LangGraph store: :class:`ChromaStore`, its errors, its check report and
what its methods beyond ``BaseStore`` return (``item_extras``, ``vector_dims``, ``raw_records``,
``delete_vector_records``, ``maintenance``: for export, forgetting a user and purging files) and
the purge of an embedded store's files (``purge_files``).

The names are imported lazily (like the package's own), so importing a module of this package
does not load Chroma until the store is used.
"""

from __future__ import annotations

TYPE_CHECKING = False  # ``typing.TYPE_CHECKING`` without importing typing

# name -> module that defines it (relative to this package)
_EXPORTS: dict[str, str] = {
    "ChromaStore": ".store",
    "EmbedderMismatchError": ".embedder",
    "FolderInUseError": ".folder_lock",
    "IndexReadError": ".gateway",
    "ItemExtras": ".raw_records",
    "LanguageMismatchError": ".sharing_wire",
    "Maintenance": ".maintenance",
    "ProtocolMismatchError": ".sharing_wire",
    "Purge": ".file_purge",
    "RawRecords": ".raw_records",
    "StoreClosedError": ".lifecycle",
    "StoreForkedError": ".lifecycle",
    "VerifyReport": ".verify",
    "check_index_fields": ".index_paths",
    "hold_folder": ".folder_lock",
    "purge_files": ".file_purge",
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
    from .embedder import EmbedderMismatchError as EmbedderMismatchError
    from .file_purge import Purge as Purge
    from .file_purge import purge_files as purge_files
    from .folder_lock import FolderInUseError as FolderInUseError
    from .folder_lock import hold_folder as hold_folder
    from .gateway import IndexReadError as IndexReadError
    from .index_paths import check_index_fields as check_index_fields
    from .lifecycle import StoreClosedError as StoreClosedError
    from .lifecycle import StoreForkedError as StoreForkedError
    from .maintenance import Maintenance as Maintenance
    from .raw_records import ItemExtras as ItemExtras
    from .raw_records import RawRecords as RawRecords
    from .sharing_wire import LanguageMismatchError as LanguageMismatchError
    from .sharing_wire import ProtocolMismatchError as ProtocolMismatchError
    from .store import ChromaStore as ChromaStore
    from .verify import VerifyReport as VerifyReport
