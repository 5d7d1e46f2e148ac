"""The store settings a LangGraph server deployment reads from its environment variables.

Every variable is optional; with none set the store is embedded in ``./.episodic`` with the
store's default embedder (chosen by the vectors it holds, see ``auto`` below) and hybrid
search, no TTL. A bad value raises ``ValueError``
naming the variable and what it accepts, before anything is opened.

* ``EPISODIC_CHROMA_URL``: a Chroma server (``http://host:8000``, ``https://...``), the
  production setting. Unset: the embedded folder below.
* ``EPISODIC_STORE_PATH``: the embedded store's folder (default ``./.episodic``).
* ``EPISODIC_COLLECTION``: collection name (default ``langgraph_store``).
* ``EPISODIC_EMBEDDINGS``: ``auto`` (the default: the embedder ``ChromaStore`` picks with no
  ``index=``, by the vectors the store holds: a new store or 896-d vectors get
  :class:`~langgraph_episodic.bilingual.BilingualEmbeddings`, German and English; 384-d ones the
  packaged MiniLM, 512-d ones the multilingual model, so a store written before keeps its
  embedder; other dimensions raise ``EmbedderMismatchError``: name the embedder they were
  written with), ``model`` (packaged all-MiniLM-L6-v2 alone, 384 dims), ``multilingual``
  (:class:`~langgraph_episodic.multilingual.MultilingualEmbeddings`, 512 dims,
  for German and other non-English users; the ``multilingual`` extra), ``hash`` or
  ``hash:<dims>`` (no model; tests and demos), ``none`` (no semantic index), or
  ``module.path:name`` naming a LangChain ``Embeddings``, a function returning one, or an
  embedding function (texts -> vectors or text -> vector).
* ``EPISODIC_EMBEDDING_DIMS``: dimensions of a ``module.path:name`` embedder (default: probed by
  embedding one text).
* ``EPISODIC_INDEX_FIELDS``: comma-separated fields to embed (default ``$``, the whole value),
  e.g. ``text,summary``.
* ``EPISODIC_SEARCH_MODE``: ``hybrid`` (default), ``dense`` or ``lexical``.
* ``EPISODIC_TTL_MINUTES``: default time-to-live of new items in minutes (default: none).
* ``EPISODIC_TTL_REFRESH_ON_READ``: ``true`` (default) or ``false``, whether reads extend a TTL.
* ``EPISODIC_TTL_SWEEP_MINUTES``: minutes between sweeps of expired items (default 5; ``0``
  turns the sweeper off). Items put with their own ``ttl`` expire even without a default TTL,
  so the sweeper runs by default.
* ``EPISODIC_CHROMA_TIMEOUT``: seconds a Chroma server request may take (default 30).
* ``EPISODIC_CHROMA_HEADERS``: HTTP headers for the Chroma server as a JSON object, e.g.
  ``{"X-Chroma-Token": "..."}`` for a server with token auth (never logged).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig, TTLConfig

from .._types import SEARCH_MODES
from ..errors import InvalidValueError

PREFIX = "EPISODIC_"
"""Every variable this module reads starts with it."""

DEFAULT_PATH = "./.episodic"
DEFAULT_COLLECTION = "langgraph_store"
DEFAULT_SWEEP_MINUTES = 5.0
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_HASH_DIMS = 64
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _error(name: str, value: str, accepts: str) -> InvalidValueError:
    return InvalidValueError(f"{PREFIX}{name}={value!r} is not valid: {accepts}.")


def _number(env: Mapping[str, str], name: str, default: float | None) -> float | None:
    raw = env.get(PREFIX + name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise _error(name, raw, "expected a number") from None
    if value < 0 or value != value:
        raise _error(name, raw, "expected a number >= 0")
    return value


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(PREFIX + name, "").strip().lower()
    if not raw:
        return default
    if raw not in _TRUE + _FALSE:
        raise _error(name, raw, "expected true or false")
    return raw in _TRUE


@dataclass(frozen=True)
class StoreSettings:
    """Where the server's store lives and how it indexes and expires items.

    Build it with :meth:`from_env` (what :func:`langgraph_episodic.server.store` does) or
    directly, e.g. in tests. ``embeddings`` is the spelling of ``EPISODIC_EMBEDDINGS``.
    """

    chroma_url: str | None = None
    path: str = DEFAULT_PATH
    collection: str = DEFAULT_COLLECTION
    embeddings: str = "auto"
    embedding_dims: int | None = None
    index_fields: tuple[str, ...] = ("$",)
    search_mode: str = "hybrid"
    ttl_minutes: float | None = None
    refresh_on_read: bool = True
    sweep_minutes: float = DEFAULT_SWEEP_MINUTES
    timeout_s: float = DEFAULT_TIMEOUT_S
    chroma_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if self.search_mode not in SEARCH_MODES:
            raise _error("SEARCH_MODE", self.search_mode, f"expected one of {SEARCH_MODES}")
        if self.chroma_url is not None and not self.chroma_url.startswith(("http://", "https://")):
            raise _error("CHROMA_URL", self.chroma_url, "expected http://host:port or https://...")
        if not self.index_fields:
            raise _error("INDEX_FIELDS", "", "expected at least one field, e.g. $ or text")
        _check_embeddings(self.embeddings)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> StoreSettings:
        """Settings from ``EPISODIC_*`` variables of ``env`` (e.g. ``os.environ``)."""

        def text(name: str, default: str) -> str:
            return env.get(PREFIX + name, "").strip() or default

        dims = _number(env, "EMBEDDING_DIMS", None)
        if dims is not None and (dims != int(dims) or dims < 1):
            raise _error("EMBEDDING_DIMS", str(dims), "expected a whole number >= 1")
        fields = tuple(f.strip() for f in text("INDEX_FIELDS", "$").split(",") if f.strip())
        return cls(
            chroma_url=text("CHROMA_URL", "") or None,
            path=text("STORE_PATH", DEFAULT_PATH),
            collection=text("COLLECTION", DEFAULT_COLLECTION),
            embeddings=text("EMBEDDINGS", "auto"),
            embedding_dims=int(dims) if dims is not None else None,
            index_fields=fields,
            search_mode=text("SEARCH_MODE", "hybrid"),
            ttl_minutes=_number(env, "TTL_MINUTES", None) or None,
            refresh_on_read=_flag(env, "TTL_REFRESH_ON_READ", True),
            sweep_minutes=_number(env, "TTL_SWEEP_MINUTES", DEFAULT_SWEEP_MINUTES) or 0.0,
            timeout_s=_number(env, "CHROMA_TIMEOUT", DEFAULT_TIMEOUT_S) or DEFAULT_TIMEOUT_S,
            chroma_headers=_headers(env),
        )

    def describe(self) -> str:
        """Where the store is, for log lines: ``"Chroma server <url>"`` or ``"folder <path>"``."""
        where = f"Chroma server {self.chroma_url}" if self.chroma_url else f"folder {self.path}"
        return f"{where}, collection {self.collection!r}, embeddings {self.embeddings!r}"

    @property
    def auto(self) -> bool:
        """Whether the store picks its embedder by the vectors it holds (``auto``)."""
        return self.embeddings == "auto"

    def index(self) -> IndexConfig | None:
        """The store's ``IndexConfig`` (``None`` for ``EPISODIC_EMBEDDINGS=none``).

        Raises:
            ValueError: for ``auto``, which the store resolves from the vectors it holds as it
                opens (:func:`langgraph_episodic.server.factory.open_store`).
        """
        kind, _, arg = self.embeddings.partition(":")
        fields = list(self.index_fields)
        if kind == "auto":
            raise InvalidValueError(
                f"{PREFIX}EMBEDDINGS=auto has no IndexConfig before the store is opened: the "
                "store picks its embedder by the vectors it holds. Open it with "
                "langgraph_episodic.server.factory.open_store(settings)."
            )
        if kind == "none":
            return None
        if kind in ("model", "multilingual", "hash"):
            from ..bilingual import named_index

            dims = int(arg) if kind == "hash" and arg else DEFAULT_HASH_DIMS
            return named_index(kind, fields, hash_dims=dims)
        embed = _load_embeddings(self.embeddings)
        dims = self.embedding_dims or len(embed.embed_query("dimension probe"))
        return {"dims": dims, "embed": embed, "fields": fields}

    def ttl(self) -> TTLConfig | None:
        """The store's ``TTLConfig`` (``None`` without a default TTL). The sweeper is started by
        the server factory, not by the store, so ``sweep_interval_minutes`` is left out."""
        if self.ttl_minutes is None:
            return None
        return {"default_ttl": self.ttl_minutes, "refresh_on_read": self.refresh_on_read}

    def store_options(self) -> dict[str, Any]:
        """Keyword arguments for the ``ChromaStore`` constructors (no ``index`` for ``auto``:
        the store's default index, chosen by the vectors it holds)."""
        options: dict[str, Any] = {
            "collection": self.collection,
            "ttl": self.ttl(),
            "search_mode": self.search_mode,
        }
        if not self.auto:
            options["index"] = self.index()
        return options

    def where(self) -> Path | str:
        """The Chroma URL, else the embedded folder."""
        return self.chroma_url or Path(self.path)


def _headers(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    raw = env.get(PREFIX + "CHROMA_HEADERS", "").strip()
    if not raw:
        return ()
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in parsed.items()
    ):
        raise InvalidValueError(
            f"{PREFIX}CHROMA_HEADERS=... (value not shown) is not valid: expected a JSON object "
            'of strings, e.g. {"X-Chroma-Token": "..."}.'
        )
    return tuple(parsed.items())


def _check_embeddings(spelling: str) -> None:
    kind, sep, arg = spelling.partition(":")
    named = not sep and kind in ("auto", "model", "multilingual", "none", "hash")
    hash_dims = kind == "hash" and arg.isdigit() and int(arg) > 0
    imported = kind not in ("", "hash") and arg.isidentifier()
    if not (named or hash_dims or imported):
        raise _error("EMBEDDINGS", spelling, "expected auto, model, multilingual, hash, "
                     "hash:<dims>, none or module.path:name")


def _load_embeddings(spelling: str) -> Embeddings:
    module_name, _, name = spelling.partition(":")
    try:
        target = getattr(import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise InvalidValueError(
            f"{PREFIX}EMBEDDINGS={spelling!r}: cannot import {name!r} from {module_name!r} "
            f"({exc}). Name an importable module and an Embeddings object or function in it."
        ) from exc
    if isinstance(target, Embeddings):
        return target
    if not callable(target):
        raise InvalidValueError(
            f"{PREFIX}EMBEDDINGS={spelling!r} names a {type(target).__name__}; name a LangChain "
            "Embeddings, a function returning one, or an embedding function."
        )
    if _takes_arguments(target):
        from ..embeddings import as_embeddings

        return as_embeddings(target)  # an embedding function: texts -> vectors, or text -> vector
    value = target()
    if not isinstance(value, Embeddings):
        raise InvalidValueError(
            f"{PREFIX}EMBEDDINGS={spelling!r} returned a {type(value).__name__}, not a LangChain "
            "Embeddings; name an Embeddings instance or a function returning one."
        )
    return value


def _takes_arguments(fn: Any) -> bool:
    """Whether ``fn`` needs a positional argument (an embedding function, not a factory)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(
        p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in params
    )
