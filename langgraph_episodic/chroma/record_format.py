"""How items live in Chroma: record ids and metadata for namespaces, keys, times and values.

Two collections hold a store's items:

* ``<name>__vec``: one record per indexed text. An item with exactly one indexed text (the
  usual case) *is* its vector record: id = item id, ``_vtag`` = :data:`ITEM_TAG`, the item's
  metadata plus the text's ``_path``, and no Chroma document (Chroma indexes documents for
  full-text search we never use; the text is read back from the value, :func:`indexed_text`).
  So such a put is one Chroma write. An item with several texts has a record per text
  (``<item id>.<tag>#<i>``: namespace, ``_item``, ``_path``, document = the text).
* ``<name>``: the item records of items with no vector or several, with a constant 1-d
  placeholder embedding. Metadata: the namespace, the value's scalar leaves as
  ``v.<dotted.path>`` (filter push-down) and the value as JSON (``_value``) that leaves long
  strings to their leaves (:func:`stored_value`). The keys no ``where`` names
  (:data:`IN_HEADER`) sit in ``_value``'s first line; :func:`unfold` gives them back as keys.
  ``_notext`` keeps the paths a put asked to index when none held text (for ``verify``).

``_value`` has up to three layers, outermost first, each told by its first character and each
written and read by a pair of functions here: the header (``T`` or ``R``, the
:data:`IN_HEADER` keys as a JSON line: :func:`with_header` / :func:`unfold`), the held line
(``L``, the key paths of strings left to their leaves: :func:`stored_value` /
:func:`value_of`) and the value's JSON (``B`` first when it may hold an integer beyond 64 bits:
:func:`dumps` / :func:`loads`).

Every metadata key costs a row and an index entry in Chroma's SQLite, hence the header and
the keys left out at their default. ``<tag>`` is new on every put and held as ``_vtag``: a
vector whose tag is not its item's current one is stale and never returned. When both
collections hold an item (a killed move), the ``<name>__vec`` record is the item. Records
written by earlier versions (documents, ``_item`` on own records, no tags, no header, ``_pN``)
stay readable as written.

Namespaces match by whole labels through prefix keys: ``_p2 = "users.alice"`` (LangGraph forbids
"." inside a label), so ``("users", "alice")`` never matches ``("users", "alice2")``. A record
of a namespace of N labels holds ``_p1`` .. ``_p(N-1)``; ``_ns`` stands for ``_pN``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import secrets
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import orjson
from langgraph.store.base import Item, SearchItem
from langgraph.store.base.embed import get_text_at_path

from .index_paths import is_top_field

NO_EXPIRY = 1.0e18
"""``_expires`` of an item that never expires (a far-future epoch second)."""

MAX_FLAT_LEAVES = 256
"""Scalar leaves copied into metadata for push-down; a larger value is filtered in Python."""

MAX_FLAT_STRING = 4096
"""Longest string leaf copied into metadata."""

HELD_ONCE_FROM = 32
"""Shortest string leaf a record holds once: in its ``v.<path>`` leaf, not again in ``_value``
(see :func:`stored_value`). Shorter ones cost less than the note of where they are."""

HELD_IN_LEAVES = "L"
"""Prefix of a ``_value`` that leaves some strings to their leaves (never the start of JSON,
nor :data:`EXACT`)."""

EXACT = "B"
"""Prefix of a value's JSON to parse with the standard library (never the start of JSON)."""
_LONG_DIGITS = re.compile(r"\d{19}")

ITEM_TAG = "item"
"""The ``_vtag`` of an item that is its own vector record (in ``<name>__vec``, id = item id).
Generated tags are hexadecimal, so none equals it."""


def placeholder(rid: str) -> float:
    """The 1-d embedding of an item or registry record, spread over [0, 1) by its id
    (identical placeholders make Chroma's index inserts slower)."""
    return int(rid[:8], 16) / 2**32 if len(rid) >= 8 else 0.5


def ns_str(namespace: tuple[str, ...]) -> str:
    """Join a namespace's labels with "." (labels never contain ".")."""
    return ".".join(namespace)


@functools.lru_cache(maxsize=4096)
def ns_from_str(text: str) -> tuple[str, ...]:
    """Inverse of :func:`ns_str` (memoised: every search result rebuilds its namespace)."""
    return tuple(text.split("."))


def item_id(namespace: tuple[str, ...], key: str) -> str:
    """The Chroma record id of an item: a fixed-length hash of namespace and key."""
    raw = ns_str(namespace) + "\x00" + key
    return hashlib.blake2b(raw.encode("utf-8"), digest_size=16).hexdigest()


def vector_id(iid: str, index: int, tag: str = "") -> str:
    """The id of an item's ``index``-th vector written with ``tag`` (:data:`ITEM_TAG`: its own)."""
    if tag == ITEM_TAG:
        return iid
    return f"{iid}.{tag}#{index}" if tag else f"{iid}#{index}"


def entry_key(iid: str, tag: str) -> str:
    """What rankings hold for an item's vectors and texts written with ``tag``: the vector id
    without its index."""
    return f"{iid}.{tag}" if tag else iid


def split_entry_key(key: str) -> tuple[str, str]:
    """``entry_key`` -> (item id, tag)."""
    iid, _, tag = key.partition(".")
    return iid, tag


def split_vector_id(vid: str) -> tuple[str, str, int]:
    """A vector record id -> (entry key, tag, index)."""
    key, _, index = vid.rpartition("#")
    if not key:  # an item that is its own vector record
        return entry_key(vid, ITEM_TAG), ITEM_TAG, 0
    return key, key.partition(".")[2], int(index)


def item_of_vector(vid: str) -> str:
    """A vector record id (``<item>``, ``<item>#<i>`` or ``<item>.<tag>#<i>``) -> its item id.

    >>> item_of_vector("ab12.t1#3"), item_of_vector("ab12#0"), item_of_vector("ab12")
    ('ab12', 'ab12', 'ab12')
    """
    return (vid.rpartition("#")[0] or vid).partition(".")[0]


def new_tag(now: float) -> str:
    """A fresh vector tag: epoch milliseconds (for repair grace periods) and a random suffix."""
    return f"{int(now * 1000):x}{secrets.token_hex(2)}"


def tag_time(tag: str) -> float | None:
    """Epoch seconds a tag was made at (None for the empty tag or a foreign one)."""
    try:
        return int(tag[:-4], 16) / 1000.0 if len(tag) > 4 else None
    except ValueError:
        return None


def vector_tag(meta: Mapping[str, Any] | None) -> str:
    """The tag of an item record's current vectors ("" for records written before tags)."""
    return str(meta.get("_vtag") or "") if meta else ""


def in_vectors(meta: Mapping[str, Any] | None) -> bool:
    """Whether the item record ``meta`` is its own vector record (in ``<name>__vec``)."""
    return vector_tag(meta) == ITEM_TAG


def created_of(meta: Mapping[str, Any]) -> int:
    """When the item was created (whole microseconds): ``_created``, else ``_updated``."""
    created = meta.get("_created")
    return int(meta["_updated"] if created is None else created)


def n_vectors(meta: Mapping[str, Any]) -> int:
    """How many vector records the item record ``meta`` has (one when it is its own)."""
    if in_vectors(meta):
        return 1
    return int(meta.get("_nvec", 0))


def vector_ids(iid: str, meta: Mapping[str, Any]) -> list[str]:
    """The ids of the vector records the item record ``meta`` names (its own: ``iid``)."""
    tag = vector_tag(meta)
    return [vector_id(iid, j, tag) for j in range(n_vectors(meta))]


def prefix_where(
    prefix: tuple[str, ...], known: Collection[tuple[str, ...]] | None = None
) -> dict[str, Any] | None:
    """A Chroma ``where`` matching namespaces that start with ``prefix`` (whole labels).
    ``known``: the namespaces the registry lists there; Chroma evaluates both sides of an
    ``$or``, so with them the clause names only the kind that is there."""
    if not prefix:
        return None
    text = ns_str(prefix)
    itself, below = {"_ns": text}, {f"_p{len(prefix)}": text}
    if known is not None:
        exact = prefix in known
        if exact and len(known) == 1:
            return itself
        if known and not exact:
            return below
    return {"$or": [itself, below]}


def namespaces_where(namespaces: Sequence[tuple[str, ...]]) -> dict[str, Any]:
    """A Chroma ``where`` clause matching exactly these namespaces (at least one)."""
    if len(namespaces) == 1:
        return {"_ns": ns_str(namespaces[0])}
    return {"_ns": {"$in": [ns_str(ns) for ns in namespaces]}}


def under_where(prefixes: Collection[tuple[str, ...]]) -> dict[str, Any]:
    """A Chroma ``where`` matching the records of the namespaces under ``prefixes`` (one at
    least): a record holds the prefix keys of its namespace but not of its whole namespace,
    which ``_ns`` matches."""
    by_depth: dict[int, list[str]] = {}
    for prefix in prefixes:
        by_depth.setdefault(len(prefix), []).append(ns_str(prefix))
    clauses: list[dict[str, Any]] = [
        {f"_p{depth}": {"$in": sorted(set(values))}} for depth, values in by_depth.items()
    ]
    clauses.append({"_ns": {"$in": sorted({v for values in by_depth.values() for v in values})}})
    return {"$or": clauses}


_SCALARS = (str, bool, int, float)


def flatten_leaves(value: Mapping[str, Any]) -> tuple[dict[str, Any], bool, list[list[str]]]:
    """Scalar leaves of nested dicts as ``{"v.a.b": leaf}``; whether all were kept; and the key
    paths of the strings of :data:`HELD_ONCE_FROM` characters or more the leaves hold (by
    identity: two keys may share a dotted name), which ``_value`` leaves to them
    (:func:`stored_value`). Lists are not descended into; ``None`` leaves are skipped (Chroma
    cannot store them)."""
    out: dict[str, Any] = {}
    complete = True
    held: list[list[str]] = []
    stack: list[tuple[str, tuple[str, ...], Mapping[str, Any]]] = [("v", (), value)]
    while stack:
        base, keys, node = stack.pop()
        for k, v in node.items():
            path = f"{base}.{k}"
            if isinstance(v, _SCALARS):  # (before the slower Mapping check)
                if (
                    (isinstance(v, str) and len(v) > MAX_FLAT_STRING)
                    or (isinstance(v, int) and abs(v) >= 2**63)
                    or len(out) >= MAX_FLAT_LEAVES
                    or path in out
                ):
                    complete = False
                else:
                    out[path] = v
                if type(v) is str and len(v) >= HELD_ONCE_FROM and out.get(path) is v:
                    held.append([*keys, k])
            elif isinstance(v, Mapping):
                stack.append((path, (*keys, k), v))
    return out, complete, held


def item_metadata(
    namespace: tuple[str, ...],
    key: str,
    value: Mapping[str, Any],
    *,
    created_us: int,
    updated_us: int,
    expires_at: float,
    ttl: float | None,
    n_vectors: int,
    tag: str = "",
    no_text: Sequence[str] = (),
    path: str | None = None,
) -> dict[str, Any]:
    """The view of an item record (Chroma holds :func:`stored_metadata` of it). ``no_text``: the
    paths asked to index that held no text; ``path``: the text's path of an item that is its own
    vector record. Keys at their default (``_flat``, ``_created``, ``_ttl``, ``_nvec``) are out."""
    leaves, complete, held = flatten_leaves(value)
    meta = namespace_metadata(namespace)
    meta["_key"] = key
    if not complete:
        meta["_flat"] = False
    meta.update(leaves)
    if created_us != updated_us:
        meta["_created"] = created_us
    meta.update(_updated=updated_us, _expires=expires_at)
    if ttl is not None:
        meta["_ttl"] = float(ttl)
    if tag != ITEM_TAG:
        meta["_nvec"] = n_vectors
    meta["_vtag"] = tag
    if no_text:
        meta["_notext"] = json.dumps(list(no_text), ensure_ascii=False)
    if path is not None:
        meta["_path"] = path
    meta["_value"] = stored_value(value, held)
    return with_header(meta)


IN_HEADER = ("_key", "_updated", "_created", "_ttl", "_path", "_notext")
"""Keys of an item record's view held in the first line of ``_value`` (no ``where`` names
them; an upsert's time grows with the number of keys: ``benchmarks/record_shape.py``)."""

TEXT_IN_VALUE = "T"
"""Prefix of a ``_value`` whose first line holds the :data:`IN_HEADER` keys as a JSON object
(``T{"_key":"k","_updated":1733}\n`` then :func:`stored_value`), on a record with no Chroma
document. Never the start of the other forms (JSON, :data:`EXACT`, ``L``)."""

HEADED = "R"
"""The same header on a record written when an item that is its own vector record also held
its text as its Chroma document (:func:`holds_document`)."""

HEADS = (TEXT_IN_VALUE, HEADED)

HEADED_FLAG = "_headed"
"""In a cached view (kept without the header): the prefix of its record's header."""


def with_header(meta: dict[str, Any], head: str = TEXT_IN_VALUE) -> dict[str, Any]:
    """``meta`` with ``_value``'s header made from its :data:`IN_HEADER` keys (in place)."""
    keys = {k: meta[k] for k in IN_HEADER if meta.get(k) is not None}
    line = json.dumps(keys, ensure_ascii=False, separators=(",", ":"))
    meta["_value"] = f"{head}{line}\n{value_body(meta['_value'])}"
    meta.pop(HEADED_FLAG, None)
    return meta


def value_body(text: str) -> str:
    """A ``_value`` without its header (a ``_value`` written before headers is all body)."""
    return text.partition("\n")[2] if text.startswith(HEADS) else text


def head_of(meta: Mapping[str, Any]) -> str | None:
    """The prefix of the header of the record whose view is ``meta`` (None: an older record)."""
    flag = meta.get(HEADED_FLAG)
    if flag:
        return str(flag)
    text = meta.get("_value")
    if isinstance(text, str) and text.startswith(HEADS):
        return text[0]
    return None


def is_headed(meta: Mapping[str, Any]) -> bool:
    """Whether the record whose view is ``meta`` holds its :data:`IN_HEADER` keys in a header."""
    return head_of(meta) is not None


def holds_document(meta: Mapping[str, Any]) -> bool:
    """Whether an item's own vector record may hold a Chroma document (a put over it clears it)."""
    return head_of(meta) != TEXT_IN_VALUE


_IN_HEADER = frozenset(IN_HEADER)


def unfold(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The view of an item record as Chroma holds it, the :data:`IN_HEADER` keys taken from the
    header (which every put writes whole). A record written before headers is its own view."""
    text = meta.get("_value")
    if not (isinstance(text, str) and text.startswith(HEADS)):
        return dict(meta)
    out = {k: v for k, v in meta.items() if k not in _IN_HEADER}
    out.update(json.loads(text[1 : text.index("\n")]))
    return out


_PATH_IN_HEADER = '"_path":'
_JSON = json.JSONDecoder()


def path_of(meta: Mapping[str, Any]) -> str:
    """The field path of a vector record's text ("" when none), without parsing the whole header:
    JSON escapes quotes inside strings, so ``"_path":`` in the header can only be its key."""
    path = meta.get("_path")
    text = meta.get("_value")
    if path is None and isinstance(text, str) and text.startswith(HEADS):
        at = text.find(_PATH_IN_HEADER, 0, text.find("\n"))
        if at >= 0:
            path = _JSON.raw_decode(text, at + len(_PATH_IN_HEADER))[0]
    return str(path or "")


def text_of(meta: Mapping[str, Any], document: str | None, path: str) -> str:
    """The indexed text of a vector record: from the value, or its ``document``."""
    if head_of(meta) == TEXT_IN_VALUE:
        return indexed_text(meta, path)
    return document or ""


def indexed_text(meta: Mapping[str, Any], path: str) -> str:
    """The one text the put of ``meta`` indexed at ``path`` (a top-level field from its leaf)."""
    if is_top_field(path):
        leaf = meta.get("v." + path)
        if type(leaf) is str:
            return leaf
    texts = get_text_at_path(value_of(meta), path)
    return texts[0] if texts else ""


def stored_metadata(meta: Mapping[str, Any], old: Mapping[str, Any] | None) -> dict[str, Any]:
    """What Chroma is given for the view ``meta``, replacing ``old`` in the same collection.
    Chroma merges metadata on upsert, so keys ``old`` holds that ``meta`` lacks are set to None
    (for an ``old`` written before headers, also its :data:`IN_HEADER` keys and ``_pN``)."""
    out = {k: v for k, v in meta.items() if k not in IN_HEADER}
    if not old:
        return out
    headed = is_headed(old)
    for k in record_keys(old):  # header keys: only those of a record written before headers
        if (not headed) if k in _IN_HEADER else k not in meta:
            out[k] = None
    if not headed:
        out[f"_p{len(ns_from_str(str(old['_ns'])))}"] = None
    return out


def patched(
    old: Mapping[str, Any], patch: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What Chroma's ``update`` is given to change some keys of the record whose view is ``old``,
    and its new view (a header key's change rewrites ``_value``)."""
    view = {**old, **patch}
    head = head_of(old)
    if head is None or not _IN_HEADER.intersection(patch):
        return dict(patch), view
    with_header(view, head)
    given = {k: v for k, v in patch.items() if k not in _IN_HEADER}
    given["_value"] = view["_value"]
    return given, view


def stored_value(value: Mapping[str, Any], held: list[list[str]]) -> str:
    """``_value``: the value as JSON, each pushed-down string of :data:`HELD_ONCE_FROM`
    characters or more (``held``: their key paths, :func:`flatten_leaves`) left to its leaf
    (else Chroma writes and indexes it twice): ``null`` in the JSON, and a first line of key
    paths: ``L[["text"]]\n{"text":null,"kind":"fact"}``."""
    if not held:
        return dumps(value)
    head = json.dumps(held, ensure_ascii=False, separators=(",", ":"))
    return f"{HELD_IN_LEAVES}{head}\n{dumps(_with_nulls(value, held))}"


def _leaf_key(keys: Sequence[str]) -> str:
    return "v." + ".".join(keys)


def _with_nulls(value: Mapping[str, Any], held: list[list[str]]) -> dict[str, Any]:
    """A copy of ``value`` with ``None`` at each held path."""
    out = dict(value)
    for keys in held:
        node = out
        for k in keys[:-1]:
            node[k] = dict(node[k])
            node = node[k]
        node[keys[-1]] = None
    return out


def value_of(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The item's value from its record's metadata (see :func:`stored_value`)."""
    text = value_body(meta["_value"])
    if not text.startswith(HELD_IN_LEAVES):
        return loads(text)
    head, _, body = text.partition("\n")
    value = loads(body)
    for keys in _paths(head):
        node = value
        for k in keys[:-1]:
            node = node[k]
        node[keys[-1]] = meta[_leaf_key(keys)]
    return value


def held_leaf_keys(meta: Mapping[str, Any]) -> list[str]:
    """The metadata keys of the leaves the record's value reads strings from."""
    text = meta.get("_value")
    if not isinstance(text, str):
        return []
    text = value_body(text)
    if not text.startswith(HELD_IN_LEAVES):
        return []
    return [_leaf_key(keys) for keys in _paths(text.partition("\n")[0])]


@functools.lru_cache(maxsize=256)
def _paths(head: str) -> tuple[tuple[str, ...], ...]:
    """The key paths a ``_value``'s first line lists (memoised: most items hold the same)."""
    return tuple(tuple(keys) for keys in json.loads(head[len(HELD_IN_LEAVES) :]))


def dumps(value: Mapping[str, Any]) -> str:
    """Serialise a checked value to compact JSON (exact round trip with :func:`loads`).

    Text with a run of 19 or more digits (it may hold an integer beyond 64 bits) is prefixed
    with :data:`EXACT`, so :func:`loads` parses it with the standard library.
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return EXACT + text if _LONG_DIGITS.search(text) else text


def loads(text: str) -> dict[str, Any]:
    """Parse a value stored by :func:`dumps`.

    orjson parses JSON several times faster than the standard library (a parse sits under
    every search result), but it turns integers beyond 64 bits into floats: such values carry the
    :data:`EXACT` prefix and take the standard library.
    """
    if text.startswith(EXACT):
        exact: dict[str, Any] = json.loads(text[len(EXACT) :])
        return exact
    value: dict[str, Any] = orjson.loads(text)
    return value


def vector_metadata(namespace: tuple[str, ...], iid: str, path: str) -> dict[str, Any]:
    """Metadata of a vector record: its namespace, item id and the indexed text's path."""
    meta = namespace_metadata(namespace)
    meta.update(_item=iid, _path=path)
    return meta


def namespace_metadata(namespace: tuple[str, ...]) -> dict[str, Any]:
    """``_ns`` and the prefix keys ``_p1`` .. ``_p(N-1)`` of a namespace of N labels."""
    meta: dict[str, Any] = {"_ns": ns_str(namespace)}
    for depth in range(1, len(namespace)):
        meta[f"_p{depth}"] = ns_str(namespace[:depth])
    return meta


CACHED_KEYS = (
    "_ns",
    "_key",
    "_flat",
    "_value",
    "_created",
    "_updated",
    "_expires",
    "_ttl",
    "_nvec",
    "_vtag",
    "_notext",
    "_path",
    HEADED_FLAG,
)
"""The keys of an item record the item cache keeps, with :func:`held_leaf_keys`: the others
follow from ``_ns`` and the value (:func:`record_keys`)."""


def record_keys(meta: Mapping[str, Any]) -> set[str]:
    """Every metadata key of an item record whose (possibly cached) metadata is ``meta``."""
    keys = set(meta)
    keys.discard(HEADED_FLAG)
    if "_ns" in meta:
        keys.update(namespace_metadata(ns_from_str(str(meta["_ns"]))))
    if "_value" in meta:
        keys.update(flatten_leaves(value_of(meta))[0])
    return keys


def to_micros(epoch: float) -> int:
    """Epoch seconds as whole microseconds: Chroma returns some floats one bit off, ints exactly."""
    return round(epoch * 1_000_000)


def expired(expires: float, now: float) -> bool:
    """Whether an expiry has passed at ``now`` (live at its exact expiry), in whole microseconds
    so that every check agrees (Chroma filters use :func:`expiry_cutoff`)."""
    return to_micros(expires) < to_micros(now)


def expiry_cutoff(now: float) -> float:
    """The value for a Chroma filter on ``_expires`` (``$lt``: expired, ``$gte``: live) that
    agrees with :func:`expired`: half a microsecond before ``now``'s microsecond."""
    return (to_micros(now) - 0.5) / 1_000_000


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@functools.lru_cache(maxsize=16384)
def to_datetime(stamp: float) -> datetime:
    """A stored time (epoch microseconds) as an aware UTC datetime (memoised: two per result)."""
    return _EPOCH + timedelta(microseconds=int(stamp))


def item_from_metadata(meta: Mapping[str, Any]) -> Item:
    """Rebuild a LangGraph ``Item`` from an item record's metadata."""
    return Item(**_item_fields(meta, None))


def search_item_from_metadata(
    meta: Mapping[str, Any], score: float | None, value: dict[str, Any] | None = None
) -> SearchItem:
    """A search result straight from an item record's metadata (``value``: already parsed)."""
    return SearchItem(**_item_fields(meta, value), score=score)


def _item_fields(meta: Mapping[str, Any], value: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "namespace": ns_from_str(meta["_ns"]),
        "key": meta["_key"],
        "value": value_of(meta) if value is None else value,
        "created_at": to_datetime(created_of(meta)),
        "updated_at": to_datetime(meta["_updated"]),
    }


def ttl_of(meta: Mapping[str, Any]) -> float | None:
    """The item's TTL in minutes, or None (also for old unbounded ones, e.g. ``1e308``)."""
    ttl = meta.get("_ttl", -1.0)
    if ttl is None or ttl < 0 or not math.isfinite(ttl) or ttl * 60.0 >= NO_EXPIRY:
        return None
    return float(ttl)


def expiry_of(meta: Mapping[str, Any], key: str = "_expires") -> float:
    """The expiry in an item record (``key="_exp"``: a registry record); missing or infinite
    means never."""
    value = meta.get(key)
    if value is None:
        return NO_EXPIRY
    expires = float(value)
    return expires if math.isfinite(expires) else NO_EXPIRY
