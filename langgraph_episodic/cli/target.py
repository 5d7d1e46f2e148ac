"""Which store a command works on, ``--path`` (embedded) or ``--url`` (a Chroma server), and
opening it: every failure becomes a :class:`CliError` whose message names the fix."""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..admin.errors import CliError
from .parser import DEFAULT_COLLECTION, DEFAULT_FOLDER, EMBEDDINGS, HASH_DIMS

if TYPE_CHECKING:
    from ..chroma import ChromaStore

DEFAULT_PATH = Path(DEFAULT_FOLDER)

CHROMA_FILE = "chroma.sqlite3"
"""The file Chroma keeps in every persistent store folder (how we recognise a store)."""


@dataclass(frozen=True)
class Target:
    """Where the store is, and how to embed text for it."""

    path: Path | None = None
    url: str | None = None
    collection: str = DEFAULT_COLLECTION
    embeddings: str = "auto"
    """An ``--embeddings`` choice (:data:`.parser.EMBEDDINGS`)."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Target:
        url = getattr(args, "url", None)
        path = getattr(args, "path", None)
        return cls(None if url else Path(path or DEFAULT_PATH), url,
                   getattr(args, "collection", DEFAULT_COLLECTION),
                   getattr(args, "embeddings", "auto"))

    def describe(self) -> str:
        """``"server http://..."`` or ``"embedded store ./.episodic"`` for messages."""
        return f"server {self.url}" if self.url else f"embedded store {self.path}"

    def checkpoints(self) -> Path | None:
        """The SQLite checkpoint file that belongs to an embedded store (None for a server)."""
        return None if self.path is None else self.path / "checkpoints.sqlite"


def open_store(target: Target, *, semantic: bool, create: bool = False, read_only: bool = False,
               alone: bool = False, threads: int | None = None, load: bool = True,
               **options: Any) -> ChromaStore:
    """Open the target's ``ChromaStore``.

    ``semantic=False``: no embedder (no model load). ``create=False`` refuses a path that holds
    no store yet (a typo in ``--path`` is reported, not made an empty store). ``semantic=True``
    fails on vectors of other dimensions, then loads the model unless ``load=False`` (a command
    with checks to make first calls :func:`load_embedder` after them). ``read_only=True`` opens
    a folder that cannot be written through a temporary copy (Chroma writes even to read).
    ``alone=True`` (purge, verify --repair) takes the folder's lock first: while another process
    holds it, ``FolderInUseError``; otherwise such a folder is opened through that process.
    """
    from ..bilingual import named_index
    from ..chroma import EmbedderMismatchError

    kwargs: dict[str, Any] = {"collection": target.collection, **options}
    auto = semantic and target.embeddings == "auto"
    if not auto:  # "auto": the store's default index, chosen by the vectors it holds
        # ``threads``: a model instance of its own, limited to that many torch threads
        kwargs["index"] = (named_index(target.embeddings, hash_dims=HASH_DIMS, threads=threads)
                           if semantic else None)
    try:
        store = _open(target, create=create, read_only=read_only, alone=alone, **kwargs)
    except EmbedderMismatchError as exc:
        raise CliError(
            f"The {target.describe()} holds {exc.stored}-dim vectors, which no default model "
            f"makes. Try --embeddings {_embeddings_for(exc.stored, 'auto')} (use the embedder "
            "the store was written with)."
        ) from exc
    if semantic and not auto:
        _check_dims(store, target, int(kwargs["index"]["dims"]))
        if load:
            try:
                load_embedder(store)
            except BaseException:
                store.close()
                raise
    return store


def load_embedder(store: ChromaStore) -> None:
    """Load the store's embedding model now, saying so on stderr (seconds on a cold start).

    A cheap read comes first, so that what fails fast fails before the wait: a folder another
    process writes (``FolderInUseError``), a server that went away.
    """
    store.list_namespaces(limit=1)
    embed = store.embeddings
    load = getattr(embed, "load", None)
    if callable(load) and not getattr(embed, "loaded", True):
        print("loading the embedding model…", file=sys.stderr, flush=True)
        load()


def _open(
    target: Target, *, create: bool, read_only: bool, alone: bool, **kwargs: Any
) -> ChromaStore:
    from ..chroma import ChromaStore, EmbedderMismatchError, LanguageMismatchError, hold_folder

    if target.url is not None:
        try:
            return ChromaStore.from_url(target.url, **kwargs)
        except EmbedderMismatchError:
            raise
        except ValueError as exc:
            raise CliError(f"Bad --url: {exc}") from exc
        except ConnectionError as exc:
            raise CliError(str(exc)) from exc
    path = target.path or DEFAULT_PATH
    _check_path(path, create=create)
    if path.exists() and not _writable(path):
        if not read_only:
            raise CliError(
                f"{path} cannot be written (read-only mount or no permission), and this command "
                f"changes the store. Mount it read-write, or copy it (cp -r {path} <copy>) and "
                "pass --path <copy>."
            )
        path = _readable_copy(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        # the lock before Chroma opens the folder (it writes to it as it opens); without
        # ``alone`` the store takes it, or has its holder serve the folder
        with hold_folder(path) if alone else nullcontext():
            return ChromaStore.persistent(path, **kwargs)
    except LanguageMismatchError as exc:
        raise CliError(
            f"{exc} The command line opens stores with language='auto': run it once that "
            "process has closed the folder, or have that process open the store with "
            "language='auto'."
        ) from exc
    except OSError as exc:
        raise CliError(
            f"Cannot open the embedded store at {path}: {exc}. Pass --path to a folder you "
            "can write to."
        ) from exc


def _writable(path: Path) -> bool:
    """Whether the store folder and its database can be written (``access`` also sees a
    read-only mount, for root too)."""
    database = path / CHROMA_FILE
    return os.access(path, os.W_OK) and (not database.exists() or os.access(database, os.W_OK))


def _readable_copy(path: Path) -> Path:
    """Copy a store that cannot be written to a temporary folder (removed at exit)."""
    import atexit
    import shutil
    import tempfile

    copy = Path(tempfile.mkdtemp(prefix="langgraph-episodic-readonly-"))
    atexit.register(shutil.rmtree, copy, ignore_errors=True)
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    print(f"note: {path} cannot be written (read-only mount or no permission) and Chroma writes "
          f"to its database even to read; reading a copy ({size / 1e6:.1f} MB) in {copy}.",
          file=sys.stderr)
    try:
        shutil.copytree(path, copy, dirs_exist_ok=True)
    except OSError as exc:
        raise CliError(
            f"{path} cannot be written, and copying it to {copy} to read it failed: {exc}. "
            "Copy the folder somewhere writable yourself and pass that --path."
        ) from exc
    return copy


def _check_dims(store: ChromaStore, target: Target, dims: int) -> None:
    """Refuse an embedder whose vectors do not fit the ones the store already holds."""
    found = store.vector_dims()
    if found is not None and found != dims:
        store.close()
        raise CliError(
            f"The {target.describe()} holds {found}-dim vectors, but --embeddings "
            f"{target.embeddings} makes {dims}-dim ones. Try --embeddings "
            f"{_embeddings_for(found, target.embeddings)} (use the embedder the store was "
            "written with)."
        )


def _embeddings_for(dims: int, current: str) -> str:
    """The ``--embeddings`` choice that makes ``dims``-dim vectors (or the other choices)."""
    from ..bilingual import NAMED_DIMS

    by_dims = {d: name for name, d in {**NAMED_DIMS, "hash": HASH_DIMS}.items()}
    return by_dims.get(dims) or _others(current)


def _others(current: str) -> str:
    return " or ".join(c for c in EMBEDDINGS if c != current)


def _check_path(path: Path, *, create: bool) -> None:
    if path.exists() and not path.is_dir():
        raise CliError(f"--path {path} is a file, not a store folder. Pass a folder.")
    if create:
        return
    if not path.exists():
        raise CliError(
            f"No store at {path} (the folder does not exist). Pass --path to an existing store, "
            "or create one with `langgraph-episodic demo` or `langgraph-episodic import`."
        )
    if not (path / CHROMA_FILE).is_file():
        raise CliError(
            f"{path} is not a langgraph-episodic store (it has no {CHROMA_FILE}). "
            "Pass --path to the folder the store was created in."
        )


def explain_chroma_error(exc: Exception, target: Target) -> str:
    """A message for a Chroma error raised while a command ran, naming the likely fix."""
    text = str(exc)
    if "dimension" in text:
        return (
            f"The {target.describe()} was written with another embedder ({text}). "
            f"Try --embeddings {_others(target.embeddings)}."
        )
    return f"Chroma failed on the {target.describe()}: {text}"
