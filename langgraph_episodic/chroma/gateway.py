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
"""What Chroma (1.5, embedded and ``chroma run`` alike) raises, as an ``InternalError``, when a
read that touches its vector index runs while a delete is being applied: a read with
embeddings takes the matching ids from the metadata table, then asks the HNSW index for each
one's vector (by its label: "Error finding id"; then by its slot: "Error getting embedding"),
and the delete has reached one of the two but not yet the other. Measured with raw chromadb
(two threads upserting and deleting, two reading with embeddings): a few such errors within
seconds; none without deletes. The same read a moment later succeeds.

A sibling race raises nothing: a read with embeddings that runs while the *first* vectors of a
collection are written can return their ids without their embeddings (Chroma learns the
collection's dimension from that first write; seen in a fifth of fresh collections read by a
thread during their first upsert). :func:`index_read` treats such a torn answer the same way."""

INDEX_RACE_DELAYS = (0.005, 0.02, 0.05, 0.1, 0.25, 0.5)
"""Pauses before each new attempt of a read that met :data:`INDEX_RACES` (about 0.9 s in all)."""


class IndexReadError(Error, RuntimeError):
    """A read of Chroma's vector index kept meeting :data:`INDEX_RACES` or torn answers."""


class TornRead(Error):
    """Chroma returned records without the embeddings that were asked for."""


def index_read(call: Callable[[], _T], what: str) -> _T:
    """``call()``, attempted again after a short pause while Chroma reports the transient
    metadata/vector-index race of :data:`INDEX_RACES` or ``call`` raises :class:`TornRead`. Any
    other error propagates at once. When every attempt fails the race is not transient: the
    collection's vector index has lost records its metadata still lists, and the error says how
    to rebuild it."""
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
    """``collection.get(**kwargs)``, raising :class:`TornRead` when embeddings were asked for
    and some records came without them."""
    got = collection.get(**kwargs)
    if "embeddings" in kwargs.get("include", ()):
        embs = got.get("embeddings")
        if len(got["ids"]) != (0 if embs is None else len(embs)):
            n = 0 if embs is None else len(embs)
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
    """Every record of ``collection`` matching ``where``, as ``get`` answers of at most
    ``page`` records each, in Chroma's order (one unpaged ``get`` would be the same records).
    ``ids``: the ids of those records, known beforehand (:mod:`.metadata_index`): they are read
    by id alone, in pages, and ``where`` is not evaluated.

    Chroma builds one SQL statement per ``get`` and binds a variable per record returned
    with metadata or documents, per id asked for and per ``$in`` value; SQLite refuses more
    than 32,766 ("too many SQL variables"), so ``page`` is at most the client's
    ``get_max_batch_size()``. The first page is read with ``limit``; when it is full, the ids
    of every match are read (ids alone bind no variable per record) and the rest is fetched
    by id. Pages by ``offset`` would re-walk every record before each page (the time grows
    with the square of the namespace), and ids combined with the ``where`` made Chroma
    evaluate the filter again for every id. A record written after the ids were read is not
    in the answer, one deleted since is absent: the caller's version check decides whether
    what it read may be kept, as for any read outside the write lock."""
    if ids is not None:
        for start in range(0, len(ids), page):
            part = list(ids[start : start + page])
            yield index_read(partial(get_whole, collection, ids=part, include=include), what)
        return
    first = index_read(
        partial(get_whole, collection, where=where, include=include, limit=page), what
    )
    yield first
    if len(first["ids"]) < page:
        return
    done = set(first["ids"])
    ids = [rid for rid in collection.get(where=where, include=[])["ids"] if rid not in done]
    for start in range(0, len(ids), page):
        yield index_read(
            partial(get_whole, collection, ids=ids[start : start + page], include=include), what
        )


def _rows_of(got: Any, embeddings: bool) -> Iterator[tuple[str, Mapping[str, Any], str, Any, str]]:
    """(vector id, metadata, text, embedding or None, field path) of each record of one
    ``get`` answer."""
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
    """(id, embedding) of each record of one ``get`` answer."""
    embs = got["embeddings"] if got["embeddings"] is not None else []
    return zip(got["ids"], embs, strict=True)


def _item_records(where: dict[str, Any] | None) -> dict[str, Any]:
    """``where`` narrowed to the vector collection's item records (items that are their own
    vector record), leaving out the vectors of items with several texts."""
    mine: dict[str, Any] = {"_vtag": record_format.ITEM_TAG}
    return mine if where is None else {"$and": [where, mine]}


@dataclass(frozen=True)
class VectorRow:
    """One vector record as read back: its id, namespace, text, (if asked) embedding, and
    the field path of its text."""

    vid: str
    namespace: tuple[str, ...]
    text: str
    embedding: Any
    path: str = ""


class UnrankedTexts:
    """Whether a vector collection holds texts at unranked paths (:func:`.index_paths.is_ranked`)
    among the records of items with several texts: ``read`` from Chroma once (None: not yet),
    ``written`` by this process's puts."""

    __slots__ = ("read", "written")

    def __init__(self) -> None:
        self.read: bool | None = None
        self.written = False


@dataclass(frozen=True)
class Gateway:
    """The items, vectors and namespaces collections of store ``name`` on one client."""

    items: Any
    vectors: Any
    namespaces: Any
    max_batch: int
    unranked: UnrankedTexts = field(default_factory=UnrankedTexts, compare=False)
    """Whether searches through Chroma's index must leave some vectors out (see
    :meth:`holds_unranked`)."""
    metadata_index: MetadataIndex | None = field(default=None, compare=False)
    """Chroma's metadata index of an embedded folder: a namespace's records are read by the
    ids it lists there instead of by a ``where`` (None: by ``where``)."""

    @staticmethod
    def names(name: str) -> tuple[str, str, str]:
        """The names of store ``name``'s items, vectors and namespaces collections."""
        return name, f"{name}__vec", f"{name}__ns"

    @classmethod
    def open(
        cls, client: Any, name: str, metadata_index: MetadataIndex | None = None
    ) -> Gateway:
        """The collections of store ``name``, created on first use."""
        items, vectors, namespaces = cls.names(name)
        return cls(
            items=client.get_or_create_collection(
                items, embedding_function=None, metadata={"langgraph_episodic": "items"}
            ),
            vectors=client.get_or_create_collection(
                vectors,
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"langgraph_episodic": "vectors"},
            ),
            namespaces=client.get_or_create_collection(
                namespaces,
                embedding_function=None,
                metadata={"langgraph_episodic": "namespaces"},
            ),
            max_batch=int(client.get_max_batch_size()),
            metadata_index=metadata_index,
        )

    def _chunks(self, seq: Sequence[Any]) -> Iterator[slice]:
        for start in range(0, len(seq), self.max_batch):
            yield slice(start, start + self.max_batch)

    # items -------------------------------------------------------------------------------
    # An item's record is in ``vectors`` when it is its own vector record (``_vtag`` =
    # ``ITEM_TAG``, id = the item id), else in ``items``; when both hold one (a move between
    # them was killed), the ``vectors`` record is the item (see :mod:`.record_format`).

    def get_items(
        self, ids: Sequence[str], vectors_only: AbstractSet[str] = frozenset()
    ) -> dict[str, dict[str, Any]]:
        """Item metadata by record id (missing ids are absent): the vector collection's item
        records first, then the item collection for the rest (except ``vectors_only``: ids
        known to have no record there)."""
        out: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(ids))
        for part in self._chunks(unique):
            got = self.vectors.get(ids=unique[part], include=["metadatas"])
            for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
                out[rid] = record_format.unfold(meta)
        rest = [rid for rid in unique if rid not in out and rid not in vectors_only]
        for part in self._chunks(rest):
            got = self.items.get(ids=rest[part], include=["metadatas"])
            for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
                out[rid] = record_format.unfold(meta)
        return out

    def read_items(
        self, where: dict[str, Any] | None, ns: tuple[str, ...] | None = None
    ) -> list[tuple[str, dict[str, Any]]]:
        """(record id, metadata) of every item record matching ``where``, read in pages.
        ``ns``: ``where`` selects exactly this namespace, whose records are then read by the
        ids Chroma's metadata index lists (:mod:`.metadata_index`) when it can."""
        own = rest = None
        index = self.metadata_index
        if ns is not None and index is not None:
            value = record_format.ns_str(ns)
            own, rest = index.ids(self.vectors, "_ns", value), index.ids(self.items, "_ns", value)
            if own is None or rest is None:
                own = rest = None
            else:  # (an item's own record has no "#")
                own = [rid for rid in own if "#" not in rid]
        out: list[tuple[str, dict[str, Any]]] = []
        for got in read_pages(
            self.vectors, _item_records(where), ["metadatas"], self.max_batch, "item records", own
        ):  # (an item's own record has the item id: a vector id, with "#", is none)
            out.extend(
                (rid, record_format.unfold(meta))
                for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True)
                if "#" not in rid and (own is None or meta.get("_vtag") == record_format.ITEM_TAG)
            )
        for got in read_pages(
            self.items, where, ["metadatas"], self.max_batch, "item records", rest
        ):
            rows = list(zip(got["ids"], got["metadatas"] or [], strict=True))
            shadowed = self._in_vectors([rid for rid, _ in rows])
            out.extend(
                (rid, record_format.unfold(meta)) for rid, meta in rows if rid not in shadowed
            )
        return out

    def item_ids(self, where: dict[str, Any] | None = None) -> list[str]:
        """Record ids of every item record matching ``where`` (ids alone need no pages)."""
        found = [
            rid
            for rid in self.vectors.get(where=_item_records(where), include=[])["ids"]
            if "#" not in rid
        ]
        rest = self.items.get(where=where, include=[])["ids"]
        shadowed = self._in_vectors(rest)
        return [*found, *(rid for rid in rest if rid not in shadowed)]

    def _in_vectors(self, ids: Sequence[str]) -> set[str]:
        """Which of these item ids are their own vector record: a record of theirs in the item
        collection is a killed move's leftover, shadowed (whatever a filter matched on it)."""
        found: set[str] = set()
        for part in self._chunks(ids):
            found.update(self.vectors.get(ids=list(ids[part]), include=[])["ids"])
        return found

    def shadows(self) -> list[tuple[str, dict[str, Any]]]:
        """(id, metadata) of records in the item collection whose item is its own vector
        record: the leftovers of a killed move between the collections."""
        held = {
            rid
            for rid in self.vectors.get(where=_item_records(None), include=[])["ids"]
            if "#" not in rid
        }
        ids = [rid for rid in self.items.get(include=[])["ids"] if rid in held]
        out: list[tuple[str, dict[str, Any]]] = []
        for part in self._chunks(ids):
            got = self.items.get(ids=ids[part], include=["metadatas"])
            out.extend(
                (rid, record_format.unfold(m))
                for rid, m in zip(got["ids"], got["metadatas"] or [], strict=True)
            )
        return out

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
        """Whether namespace ``ns`` holds an item record, expired or not (from the ids Chroma's
        metadata index lists, when it can: an item's own record is one without "#")."""
        value = record_format.ns_str(ns)
        index = self.metadata_index
        if index is not None:
            own, rest = index.ids(self.vectors, "_ns", value), index.ids(self.items, "_ns", value)
            if own is not None and rest is not None:
                return bool(rest) or any("#" not in rid for rid in own)
        return self._any_item({"_ns": value})

    def latest_expiry(self, ns: tuple[str, ...]) -> float | None:
        """The latest expiry of the items in ``ns``; None when it holds none (any more)."""
        where_ns = {"_ns": record_format.ns_str(ns)}
        if self._any_item({"$and": [where_ns, {"_expires": {"$gte": record_format.NO_EXPIRY}}]}):
            return record_format.NO_EXPIRY
        metas = [m for _, m in self.read_items(where_ns)]
        return max((record_format.expiry_of(m) for m in metas), default=None)

    def upsert_items(self, ids: Sequence[str], metas: Sequence[dict[str, Any]]) -> None:
        """Write item records to the item collection (items with no vector or several; an
        item that is its own vector record is written by :meth:`upsert_vectors`)."""
        for part in self._chunks(ids):
            chunk = list(ids[part])
            self.items.upsert(
                ids=chunk,
                embeddings=[[record_format.placeholder(r)] for r in chunk],
                metadatas=list(metas[part]),
            )

    def update_items(
        self, ids: Sequence[str], metas: Sequence[dict[str, Any]], in_vectors: Sequence[bool]
    ) -> None:
        """Change some metadata of existing item records; ``in_vectors[i]``: whether item
        ``i`` is its own vector record (so which collection holds it)."""
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
        """Delete item records by id (only those also matching ``where``, when given), from
        the vector collection (``in_vectors=True``), the item collection (False) or both."""
        targets = []
        if in_vectors is not False:  # (an id without "#" there is an item record)
            targets.append((self.vectors, None if where is None else _item_records(where)))
        if in_vectors is not True:
            targets.append((self.items, where))
        for collection, w in targets:
            for part in self._chunks(ids):
                if w is None:
                    collection.delete(ids=list(ids[part]))
                else:
                    collection.delete(ids=list(ids[part]), where=w)

    def existing_items(self, ids: Sequence[str]) -> set[str]:
        """Which of the item record ids exist."""
        found: set[str] = set()
        for part in self._chunks(ids):
            found.update(self.vectors.get(ids=list(ids[part]), include=[])["ids"])
            found.update(self.items.get(ids=list(ids[part]), include=[])["ids"])
        return found

    # vectors -----------------------------------------------------------------------------

    def upsert_vectors(
        self,
        ids: Sequence[str],
        embeddings: Sequence[Sequence[float]],
        metas: Sequence[dict[str, Any]],
        docs: Sequence[str | None],
    ) -> None:
        """Upsert vector records; a None document leaves the record's as it is (none, for a
        new record)."""
        for part in self._chunks(ids):
            given = list(docs[part])
            self.vectors.upsert(
                ids=list(ids[part]),
                embeddings=np.asarray(embeddings[part], dtype=np.float32),
                metadatas=list(metas[part]),
                documents=None if all(d is None for d in given) else given,
            )

    def delete_vectors(self, ids: Sequence[str]) -> None:
        for part in self._chunks(ids):
            self.vectors.delete(ids=list(ids[part]))

    def read_vectors(self, where: dict[str, Any] | None, *, embeddings: bool) -> list[VectorRow]:
        """Vector records matching ``where`` (text always; embeddings when asked), in pages."""
        return [
            VectorRow(vid, record_format.ns_from_str(str(meta["_ns"])), text, emb, path)
            for vid, meta, text, emb, path in self._vector_rows(where, embeddings, "vector records")
        ]

    def namespace_vectors(self, ns: tuple[str, ...], *, embeddings: bool) -> list[VectorRow]:
        """The vector records of one namespace, in pages (a shared namespace can hold millions)."""
        pages = self.namespace_vector_pages(ns, embeddings=embeddings)
        return [row for page in pages for row in page]

    def namespace_vector_pages(
        self, ns: tuple[str, ...], *, embeddings: bool
    ) -> Iterator[list[VectorRow]]:
        """:meth:`namespace_vectors`, page by page as Chroma answers (for a caller that works
        on one page while the next is read)."""
        where = {"_ns": record_format.ns_str(ns)}
        ids = None if self.metadata_index is None else self.metadata_index.ids(
            self.vectors, "_ns", where["_ns"]
        )
        for got in self._vector_pages(where, embeddings, f"the vectors of namespace {ns}", ids):
            yield [
                VectorRow(vid, ns, text, emb, path)
                for vid, _, text, emb, path in _rows_of(got, embeddings)
            ]

    def _vector_rows(
        self, where: dict[str, Any] | None, embeddings: bool, what: str
    ) -> Iterator[tuple[str, Mapping[str, Any], str, Any, str]]:
        for got in self._vector_pages(where, embeddings, what):
            yield from _rows_of(got, embeddings)

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
        """(vector id, embedding) of the vector records of the given items: an item that is its
        own vector record by id, the others by ``_item`` (a ``$in`` of at most a batch of them
        per read). An item with its own record is that record, whatever else names it."""
        out: list[tuple[str, Any]] = []
        unique = list(dict.fromkeys(iids))
        for part in self._chunks(unique):
            chunk = unique[part]
            own = index_read(
                partial(get_whole, self.vectors, ids=chunk, include=["embeddings"]),
                "the vectors of items",
            )
            out.extend(_embeddings_of(own))
            found = set(own["ids"])
            rest = [iid for iid in chunk if iid not in found]
            if rest:
                holds = self.holds_unranked()
                got = index_read(
                    partial(
                        get_whole,
                        self.vectors,
                        where={"_item": {"$in": rest}},
                        include=["embeddings", *(["metadatas"] if holds else [])],
                    ),
                    "the vectors of items",
                )
                unranked = {
                    vid for vid, meta in zip(got["ids"], got["metadatas"] or [], strict=False)
                    if not is_ranked(record_format.path_of(meta or {}))
                } if holds else set()
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
        """Whether some vector record of an item with several texts holds one at an unranked
        path (written by a release whose writers indexed the thread): read from Chroma once,
        with a ``where`` on the path, then kept; a put of such a text sets it. Only then do
        searches through Chroma's index read the paths of the vectors they find."""
        seen = self.unranked
        if seen.read is None:
            got = index_read(
                partial(self.vectors.get, where={"_path": {"$in": sorted(UNRANKED_PATHS)}},
                        limit=1, include=[]),
                "the paths of the vectors",
            )
            seen.read = bool(got["ids"])
        return seen.written or seen.read

    def _unranked(self, vids: Sequence[str]) -> set[str]:
        """The ones of ``vids`` (vector records of items with several texts) whose text a
        search does not rank (:func:`.index_paths.is_ranked`): their small metadata is read."""
        out: set[str] = set()
        for part in self._chunks(vids):
            got = index_read(
                partial(get_whole, self.vectors, ids=list(vids[part]), include=["metadatas"]),
                "the paths of the vectors",
            )
            out.update(
                vid for vid, meta in zip(got["ids"], got["metadatas"] or [], strict=False)
                if not is_ranked(record_format.path_of(meta or {}))
            )
        return out

    # the namespace registry ----------------------------------------------------------------

    def registry_records(
        self, *, ids: Sequence[str] | None = None, where: dict[str, Any] | None = None
    ) -> list[Mapping[str, Any]]:
        """Registry record metadata, by record ids or by ``where`` (all when neither)."""
        out: list[Mapping[str, Any]] = []
        if ids is not None:
            unique = list(dict.fromkeys(ids))
            for part in self._chunks(unique):
                got = self.namespaces.get(ids=unique[part], include=["metadatas"])
                out.extend(got["metadatas"] or [])
            return out
        for got in read_pages(
            self.namespaces, where, ["metadatas"], self.max_batch, "registry records"
        ):
            out.extend(got["metadatas"] or [])
        return out

    def upsert_registry(self, ids: Sequence[str], metas: Sequence[dict[str, Any]]) -> None:
        for part in self._chunks(ids):
            chunk = list(ids[part])
            self.namespaces.upsert(
                ids=chunk,
                embeddings=[[record_format.placeholder(r)] for r in chunk],
                metadatas=list(metas[part]),
            )

    def delete_registry(self, ids: Sequence[str]) -> None:
        for part in self._chunks(ids):
            self.namespaces.delete(ids=list(ids[part]))
