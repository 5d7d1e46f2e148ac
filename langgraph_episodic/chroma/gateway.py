"""The stateless Chroma side of a ``ChromaStore``: its three collections and the calls on them.

Nothing here is cached or locked: every method is one or a few Chroma calls, chunked to the
client's batch limit and paged where Chroma needs it. The in-process state lives in
:mod:`.caches`; the order in which writes reach Chroma is decided in :mod:`.writes`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import numpy as np

from ..errors import Error
from . import record_format
from .index_paths import UNRANKED_PATHS, is_ranked
from .metadata_index import MetadataIndex

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

INDEX_RACES = ("Error finding id", "Error getting embedding")
"""What Chroma raises (``InternalError``) when a read with embeddings runs while a delete is
half applied (the same read a moment later succeeds). A read during a collection's first upsert
can instead return ids without embeddings (:class:`TornRead`); :func:`index_read` retries both."""

INDEX_RACE_DELAYS = (0.005, 0.02, 0.05, 0.1, 0.25, 0.5)
"""Pauses before each new attempt of a read that met :data:`INDEX_RACES` (about 0.9 s in all)."""


class IndexReadError(Error, RuntimeError):
    """A read of Chroma's vector index kept meeting :data:`INDEX_RACES` or torn answers."""


class TornRead(Error):
    """Chroma returned records without the embeddings that were asked for."""


def index_read(call: Callable[[], _T], what: str) -> _T:
    """``call()``, retried after short pauses while it meets :data:`INDEX_RACES` or
    :class:`TornRead`; when every attempt fails, the error says how to rebuild the index."""
    from chromadb.errors import InternalError

    for delay in (*INDEX_RACE_DELAYS, None):
        try:
            return call()
        except (InternalError, TornRead) as exc:
            if isinstance(exc, InternalError) and not any(r in str(exc) for r in INDEX_RACES):
                raise
            if delay is None:
                raise IndexReadError(
                    f"Chroma's vector index and its metadata disagree while reading {what}, "
                    f"{len(INDEX_RACE_DELAYS) + 1} attempts over about "
                    f"{sum(INDEX_RACE_DELAYS):.1f} s ({exc}). Concurrent writes cause this "
                    "briefly; if it lasts, Chroma's index has lost records its metadata still "
                    "lists: `langgraph-episodic export` the store and `import` the file into a "
                    "new collection, which embeds every item again."
                ) from exc
            _log.debug("Chroma index race while reading %s; retrying in %.3f s", what, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")  # the loop returns or raises


def get_whole(collection: Any, **kwargs: Any) -> Any:
    """``collection.get(**kwargs)``, raising :class:`TornRead` when embeddings are missing."""
    got = collection.get(**kwargs)
    if "embeddings" in kwargs.get("include", ()):
        embs = got.get("embeddings")
        n = 0 if embs is None else len(embs)
        if len(got["ids"]) != n:
            raise TornRead(f"{len(got['ids'])} records came with {n} embeddings")
    return got


def read_pages(
    collection: Any,
    where: dict[str, Any] | None,
    include: list[str],
    page: int,
    what: str,
    ids: Sequence[str] | None = None,
) -> Iterator[Any]:
    """Every record of ``collection`` matching ``where`` (or with ``ids``), as ``get`` answers of
    at most ``page`` records (SQLite binds a variable per record returned). The first page is
    read with ``limit``; when full, the ids of every match are read (they bind none) and the
    rest fetched by id: pages by ``offset`` re-walk every record (quadratic)."""
    if ids is None:
        first = index_read(
            partial(get_whole, collection, where=where, include=include, limit=page), what
        )
        yield first
        if len(first["ids"]) < page:
            return
        done = set(first["ids"])
        ids = [rid for rid in collection.get(where=where, include=[])["ids"] if rid not in done]
    for start in range(0, len(ids), page):
        part = list(ids[start : start + page])
        yield index_read(partial(get_whole, collection, ids=part, include=include), what)


def _rows_of(got: Any, embeddings: bool) -> Iterator[tuple[str, Mapping[str, Any], str, Any, str]]:
    """(vector id, metadata, text, embedding or None, field path) of each record of ``got``."""
    embs = got.get("embeddings") if embeddings else None
    metas = got.get("metadatas") or [None] * len(got["ids"])
    for n, (vid, doc, meta) in enumerate(
        zip(got["ids"], got["documents"] or [], metas, strict=True)
    ):
        meta = meta or {}
        emb = embs[n] if embs is not None else None
        path = record_format.path_of(meta)
        yield vid, meta, record_format.text_of(meta, doc, path), emb, path


def _embeddings_of(got: Any) -> Iterator[tuple[str, Any]]:
    embs = got["embeddings"] if got["embeddings"] is not None else []
    return zip(got["ids"], embs, strict=True)


def _unranked_of(got: Any) -> set[str]:
    """The ids in ``got`` whose text a search does not rank."""
    return {
        vid
        for vid, meta in zip(got["ids"], got["metadatas"] or [], strict=False)
        if not is_ranked(record_format.path_of(meta or {}))
    }


def _unfolded(got: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
        yield rid, record_format.unfold(meta)


def _item_records(where: dict[str, Any] | None) -> dict[str, Any]:
    """``where`` narrowed to the vector collection's item records (items that are their own)."""
    mine: dict[str, Any] = {"_vtag": record_format.ITEM_TAG}
    return mine if where is None else {"$and": [where, mine]}


@dataclass(frozen=True)
class VectorRow:
    """One vector record as read back (``embedding``: None unless asked)."""

    vid: str
    namespace: tuple[str, ...]
    text: str
    embedding: Any
    path: str = ""


@dataclass
class UnrankedTexts:
    """Whether vectors of items with several texts hold unranked paths: ``read`` from Chroma
    (None: not yet), ``written`` by this process."""

    read: bool | None = None
    written: bool = False


@dataclass(frozen=True)
class Gateway:
    """The items, vectors and namespaces collections of store ``name`` on one client."""

    items: Any
    vectors: Any
    namespaces: Any
    max_batch: int
    unranked: UnrankedTexts = field(default_factory=UnrankedTexts, compare=False)
    metadata_index: MetadataIndex | None = field(default=None, compare=False)
    """An embedded folder's metadata index: a namespace is read by the ids it lists."""

    @staticmethod
    def names(name: str) -> tuple[str, str, str]:
        """The names of store ``name``'s items, vectors and namespaces collections."""
        return name, f"{name}__vec", f"{name}__ns"

    @classmethod
    def open(cls, client: Any, name: str, metadata_index: MetadataIndex | None = None) -> Gateway:
        """The collections of store ``name``, created on first use."""
        items, vectors, namespaces = cls.names(name)

        def collection(name: str, kind: str, **extra: Any) -> Any:
            return client.get_or_create_collection(
                name, embedding_function=None, metadata={"langgraph_episodic": kind}, **extra
            )

        return cls(
            items=collection(items, "items"),
            vectors=collection(vectors, "vectors", configuration={"hnsw": {"space": "cosine"}}),
            namespaces=collection(namespaces, "namespaces"),
            max_batch=int(client.get_max_batch_size()),
            metadata_index=metadata_index,
        )

    def _chunks(self, seq: Sequence[Any]) -> Iterator[slice]:
        for start in range(0, len(seq), self.max_batch):
            yield slice(start, start + self.max_batch)

    def _get(self, collection: Any, ids: Sequence[str], include: list[str]) -> Iterator[Any]:
        """``collection.get`` of ``ids``, a batch at a time."""
        for part in self._chunks(ids):
            yield collection.get(ids=list(ids[part]), include=include)

    def _upsert_placeholders(
        self, collection: Any, ids: Sequence[str], metas: Sequence[dict[str, Any]]
    ) -> None:
        """Upsert records of a collection never queried by vector (placeholder embeddings)."""
        for part in self._chunks(ids):
            chunk = list(ids[part])
            collection.upsert(
                ids=chunk,
                embeddings=[[record_format.placeholder(r)] for r in chunk],
                metadatas=list(metas[part]),
            )

    def _delete(self, collection: Any, ids: Sequence[str], where: Any = None) -> None:
        for part in self._chunks(ids):
            collection.delete(ids=list(ids[part]), where=where)

    def _ids_in(self, collection: Any, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` ``collection`` holds."""
        return {rid for got in self._get(collection, ids, []) for rid in got["ids"]}

    def _index_ids(self, collection: Any, ns: tuple[str, ...]) -> list[str] | None:
        """The ids of ``ns``'s records in ``collection``, from the metadata index (None when it
        cannot tell)."""
        index = self.metadata_index
        return None if index is None else index.ids(collection, "_ns", record_format.ns_str(ns))

    def _listed(self, ns: tuple[str, ...]) -> tuple[list[str], list[str]] | None:
        """:meth:`_index_ids` of ``ns`` in the vector and item collections."""
        own, rest = self._index_ids(self.vectors, ns), self._index_ids(self.items, ns)
        return None if own is None or rest is None else (own, rest)

    def _read_vectors(self, what: str, **kwargs: Any) -> Any:
        """:func:`get_whole` of the vector collection through :func:`index_read`."""
        return index_read(partial(get_whole, self.vectors, **kwargs), what)

    # items: in ``vectors`` when it is its own vector record, else in ``items``; when both hold
    # one (a killed move), the ``vectors`` record is the item and the other a shadowed leftover.

    def get_items(
        self, ids: Sequence[str], vectors_only: AbstractSet[str] = frozenset()
    ) -> dict[str, dict[str, Any]]:
        """Item metadata by record id (missing ids are absent): the vector collection first, then
        the item collection for the rest except ``vectors_only``."""
        out: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(ids))
        for got in self._get(self.vectors, unique, ["metadatas"]):
            out.update(_unfolded(got))
        rest = [rid for rid in unique if rid not in out and rid not in vectors_only]
        for got in self._get(self.items, rest, ["metadatas"]):
            out.update(_unfolded(got))
        return out

    def read_items(
        self, where: dict[str, Any] | None, ns: tuple[str, ...] | None = None
    ) -> list[tuple[str, dict[str, Any]]]:
        """(record id, metadata) of every item record matching ``where``. ``ns``: the namespace
        ``where`` selects, read by id when :meth:`_listed` can."""
        own = rest = None
        listed = None if ns is None else self._listed(ns)
        if listed is not None:  # (an item's own record has no "#")
            own, rest = [rid for rid in listed[0] if "#" not in rid], listed[1]
        out: list[tuple[str, dict[str, Any]]] = []
        for got in read_pages(
            self.vectors, _item_records(where), ["metadatas"], self.max_batch, "item records", own
        ):  # (an item's own record has the item id: a vector id, with "#", is none)
            out.extend(
                (rid, view)
                for rid, view in _unfolded(got)
                if "#" not in rid and (own is None or view.get("_vtag") == record_format.ITEM_TAG)
            )
        for got in read_pages(
            self.items, where, ["metadatas"], self.max_batch, "item records", rest
        ):
            rows = list(_unfolded(got))
            shadowed = self._ids_in(self.vectors, [rid for rid, _ in rows])
            out.extend((rid, view) for rid, view in rows if rid not in shadowed)
        return out

    def item_ids(self, where: dict[str, Any] | None = None) -> list[str]:
        """Record ids of every item record matching ``where`` (ids alone need no pages)."""
        rest = self.items.get(where=where, include=[])["ids"]
        shadowed = self._ids_in(self.vectors, rest)
        return [*self._own_ids(where), *(rid for rid in rest if rid not in shadowed)]

    def _own_ids(self, where: dict[str, Any] | None) -> list[str]:
        """Ids of the vector collection's item records matching ``where``."""
        got = self.vectors.get(where=_item_records(where), include=[])["ids"]
        return [rid for rid in got if "#" not in rid]

    def shadows(self) -> list[tuple[str, dict[str, Any]]]:
        """(id, metadata) of records in the item collection whose item is its own vector
        record: the leftovers of a killed move between the collections."""
        held = set(self._own_ids(None))
        ids = [rid for rid in self.items.get(include=[])["ids"] if rid in held]
        return [row for got in self._get(self.items, ids, ["metadatas"]) for row in _unfolded(got)]

    def _any_item(self, where: dict[str, Any]) -> bool:
        """Whether an item record matches ``where`` (in either collection)."""
        return any(
            col.get(where=w, limit=1, include=[])["ids"]
            for col, w in ((self.vectors, _item_records(where)), (self.items, where))
        )

    def has_live_items(self, ns: tuple[str, ...], now: float) -> bool:
        """Whether namespace ``ns`` holds an item that has not expired at ``now``."""
        cutoff = record_format.expiry_cutoff(now)
        return self._any_item(
            {"$and": [{"_ns": record_format.ns_str(ns)}, {"_expires": {"$gte": cutoff}}]}
        )

    def holds_items(self, ns: tuple[str, ...]) -> bool:
        """Whether namespace ``ns`` holds an item record, expired or not."""
        listed = self._listed(ns)
        if listed is not None:
            return bool(listed[1]) or any("#" not in rid for rid in listed[0])
        return self._any_item({"_ns": record_format.ns_str(ns)})

    def latest_expiry(self, ns: tuple[str, ...]) -> float | None:
        """The latest expiry of the items in ``ns``; None when it holds none (any more)."""
        where_ns = {"_ns": record_format.ns_str(ns)}
        if self._any_item({"$and": [where_ns, {"_expires": {"$gte": record_format.NO_EXPIRY}}]}):
            return record_format.NO_EXPIRY
        metas = [m for _, m in self.read_items(where_ns)]
        return max((record_format.expiry_of(m) for m in metas), default=None)

    def upsert_items(self, ids: Sequence[str], metas: Sequence[dict[str, Any]]) -> None:
        """Write item records to the item collection (items with no vector or several)."""
        self._upsert_placeholders(self.items, ids, metas)

    def update_items(
        self, ids: Sequence[str], metas: Sequence[dict[str, Any]], in_vectors: Sequence[bool]
    ) -> None:
        """Change some metadata of existing item records (``in_vectors``: where each is)."""
        for collection, wanted in ((self.vectors, True), (self.items, False)):
            picked = [n for n in range(len(ids)) if in_vectors[n] == wanted]
            for part in self._chunks(picked):
                collection.update(
                    ids=[ids[n] for n in picked[part]], metadatas=[metas[n] for n in picked[part]]
                )

    def delete_items(
        self,
        ids: Sequence[str],
        where: dict[str, Any] | None = None,
        *,
        in_vectors: bool | None = None,
    ) -> None:
        """Delete item records by id (those matching ``where``, when given) from the vector
        collection (``in_vectors=True``), the item collection (False) or both (None)."""
        if in_vectors is not False:  # (an id without "#" there is an item record)
            self._delete(self.vectors, ids, None if where is None else _item_records(where))
        if in_vectors is not True:
            self._delete(self.items, ids, where)

    def existing_items(self, ids: Sequence[str]) -> set[str]:
        """Which of the item record ids exist."""
        return self._ids_in(self.vectors, ids) | self._ids_in(self.items, ids)

    # vectors -----------------------------------------------------------------------------

    def upsert_vectors(
        self,
        ids: Sequence[str],
        embeddings: Sequence[Sequence[float]],
        metas: Sequence[dict[str, Any]],
        docs: Sequence[str | None],
    ) -> None:
        """Upsert vector records; a None document leaves the record's as it is."""
        for part in self._chunks(ids):
            given = list(docs[part])
            self.vectors.upsert(
                ids=list(ids[part]),
                embeddings=np.asarray(embeddings[part], dtype=np.float32),
                metadatas=list(metas[part]),
                documents=None if all(d is None for d in given) else given,
            )

    def delete_vectors(self, ids: Sequence[str]) -> None:
        self._delete(self.vectors, ids)

    def read_vectors(self, where: dict[str, Any] | None, *, embeddings: bool) -> list[VectorRow]:
        """Vector records matching ``where`` (text always; embeddings when asked), in pages."""
        return [
            VectorRow(vid, record_format.ns_from_str(str(meta["_ns"])), text, emb, path)
            for got in self._vector_pages(where, embeddings, "vector records")
            for vid, meta, text, emb, path in _rows_of(got, embeddings)
        ]

    def namespace_vectors(self, ns: tuple[str, ...], *, embeddings: bool) -> list[VectorRow]:
        """The vector records of one namespace (read in pages)."""
        pages = self.namespace_vector_pages(ns, embeddings=embeddings)
        return [row for page in pages for row in page]

    def namespace_vector_pages(
        self, ns: tuple[str, ...], *, embeddings: bool
    ) -> Iterator[list[VectorRow]]:
        """:meth:`namespace_vectors`, page by page as Chroma answers."""
        where = {"_ns": record_format.ns_str(ns)}
        ids = self._index_ids(self.vectors, ns)
        for got in self._vector_pages(where, embeddings, f"the vectors of namespace {ns}", ids):
            yield [
                VectorRow(vid, ns, text, emb, path)
                for vid, _, text, emb, path in _rows_of(got, embeddings)
            ]

    def _vector_pages(
        self,
        where: dict[str, Any] | None,
        embeddings: bool,
        what: str,
        ids: Sequence[str] | None = None,
    ) -> Any:
        include = ["documents", "metadatas", *(["embeddings"] if embeddings else [])]
        return read_pages(self.vectors, where, include, self.max_batch, what, ids)

    def vector_ids(self) -> list[str]:
        """Every vector record id (ids alone need no pages)."""
        return list(self.vectors.get(include=[])["ids"])

    def vectors_of_items(self, iids: Sequence[str]) -> list[tuple[str, Any]]:
        """(vector id, embedding) of the given items' vector records: by id, else by ``_item``."""
        out: list[tuple[str, Any]] = []
        unique = list(dict.fromkeys(iids))
        for part in self._chunks(unique):
            chunk = unique[part]
            own = self._read_vectors("the vectors of items", ids=chunk, include=["embeddings"])
            out.extend(_embeddings_of(own))
            found = set(own["ids"])
            rest = [iid for iid in chunk if iid not in found]
            if rest:
                holds = self.holds_unranked()
                got = self._read_vectors(
                    "the vectors of items",
                    where={"_item": {"$in": rest}},
                    include=["embeddings", *(["metadatas"] if holds else [])],
                )
                unranked = _unranked_of(got) if holds else set()
                out.extend((vid, emb) for vid, emb in _embeddings_of(got) if vid not in unranked)
        return out

    def vector_count(self) -> int:
        """How many vector records the store holds, in every namespace."""
        return int(self.vectors.count())

    def query_vectors(
        self, qvec: Any, depth: int, where: dict[str, Any] | None
    ) -> list[tuple[str, float]]:
        """(vector id, distance) of the ``depth`` nearest vector records matching ``where``."""
        got = index_read(
            partial(
                self.vectors.query,
                query_embeddings=[qvec],
                n_results=depth,
                where=where,
                include=["distances"],
            ),
            "the nearest vectors",
        )
        ids = got["ids"][0] if got["ids"] else []
        dists = got["distances"][0] if got["distances"] else []
        found = list(zip(ids, (float(d) for d in dists), strict=True))
        if not self.holds_unranked():
            return found
        unranked = self._unranked([vid for vid in ids if "#" in vid])
        return [(vid, d) for vid, d in found if vid not in unranked]

    def holds_unranked(self) -> bool:
        """Whether a vector of an item with several texts holds an unranked path (read once); only
        then do searches through Chroma's index read the paths of what they find."""
        seen = self.unranked
        if seen.read is None:
            got = index_read(
                partial(
                    self.vectors.get,
                    where={"_path": {"$in": sorted(UNRANKED_PATHS)}},
                    limit=1,
                    include=[],
                ),
                "the paths of the vectors",
            )
            seen.read = bool(got["ids"])
        return seen.written or seen.read

    def _unranked(self, vids: Sequence[str]) -> set[str]:
        """The ones of ``vids`` whose text a search does not rank (reads their metadata)."""
        out: set[str] = set()
        for part in self._chunks(vids):
            got = self._read_vectors(
                "the paths of the vectors", ids=list(vids[part]), include=["metadatas"]
            )
            out |= _unranked_of(got)
        return out

    # the namespace registry ----------------------------------------------------------------

    def registry_records(
        self, *, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None
    ) -> list[Mapping[str, Any]]:
        """Registry record metadata, by record ids or by ``where`` (all when neither)."""
        unique = None if ids is None else list(dict.fromkeys(ids))
        pages = read_pages(
            self.namespaces, where, ["metadatas"], self.max_batch, "registry records", unique
        )
        return [meta for got in pages for meta in got["metadatas"] or []]

    def upsert_registry(self, ids: Sequence[str], metas: Sequence[dict[str, Any]]) -> None:
        self._upsert_placeholders(self.namespaces, ids, metas)

    def delete_registry(self, ids: Sequence[str]) -> None:
        self._delete(self.namespaces, ids)
