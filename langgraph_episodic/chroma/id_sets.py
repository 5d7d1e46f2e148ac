"""Which items a namespace holds, known in process, so an embedded store's put of a new key
skips the read of its old record.

A put reads the record it replaces (its creation time, the vectors it had, the metadata keys
to clear), and for a new key that read finds nothing: a Chroma read that is a large share of
a single put. An embedded store is the only writer of its folder (:mod:`.folder_lock`), so a
namespace this process saw empty (:meth:`.reads.Backend.empty_namespaces`: no registry record
and no item in Chroma) or read whole (a listing, :meth:`.reads.Backend.listings`) holds
exactly what it held then plus this process's puts minus its deletes since.

:class:`IdSet` keeps those record ids of one namespace, 16 bytes each: a sorted array and the
recent changes, merged when the changes grow past an eighth of the array. Every write passes
:meth:`.caches.StoreState.commit`, which keeps the sets exact; a delete made elsewhere (a
repair, a purge of leftover vectors) at worst leaves an id that is gone, which costs the read
it would have cost anyway. A store on a server keeps none: other processes write.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

import numpy as np

_MERGE_MIN = 16
"""Changes kept beside the array before a merge, whatever its size (a few: a change costs a
Python set's entry, about five times an array's)."""


_ONE_BY_ONE = 8
"""Up to this many ids are looked up by bisection, more in one numpy call (its fixed cost is
that of a few dozen bisections)."""


def _keys(rids: Iterable[str]) -> list[bytes]:
    """Record ids (32 hex digits, :func:`.record_format.item_id`) as the 16 bytes they name."""
    return [bytes.fromhex(rid) for rid in rids]


class IdSet:
    """The record ids of the items one namespace holds (not thread-safe: the store state's
    lock guards it). Lookups and changes take many ids at once: one numpy call for all."""

    __slots__ = ("_added", "_removed", "_sorted")

    def __init__(self, rids: Iterable[str] = ()) -> None:
        self._sorted = np.unique(np.array(_keys(rids), dtype="S16"))
        self._added: set[bytes] = set()
        """Held, not in ``_sorted``."""
        self._removed: set[bytes] = set()
        """In ``_sorted``, not held."""

    def __len__(self) -> int:
        return len(self._sorted) - len(self._removed) + len(self._added)

    def __contains__(self, rid: str) -> bool:
        return not self.missing([rid])

    def missing(self, rids: Iterable[str]) -> set[str]:
        """Those of ``rids`` not held."""
        ids = list(rids)
        by_key = dict(zip(_keys(ids), ids, strict=True))
        keys = [k for k in by_key if k not in self._added]
        return {
            by_key[k]
            for k, found in zip(keys, self._in_sorted(keys), strict=True)
            if not found or k in self._removed
        }

    def change(self, add: Iterable[str] = (), discard: Iterable[str] = ()) -> None:
        """Hold ``add`` and no longer ``discard`` (an id in both: held)."""
        gone = _keys(discard)
        for key, found in zip(gone, self._in_sorted(gone), strict=True):
            self._added.discard(key)
            if found:
                self._removed.add(key)
        new = _keys(add)
        for key, found in zip(new, self._in_sorted(new), strict=True):
            if found:
                self._removed.discard(key)
            else:
                self._added.add(key)
        if len(self._added) + len(self._removed) > max(_MERGE_MIN, len(self._sorted) // 8):
            self._merge()

    def _in_sorted(self, keys: list[bytes]) -> list[bool]:
        arr = self._sorted
        if not keys or not len(arr):
            return [False] * len(keys)
        if len(keys) <= _ONE_BY_ONE:
            # numpy hands elements back without trailing zero bytes and orders them as padded
            # with zeros, which is the order of the stripped bytes too.
            out = []
            for key in keys:
                bare = key.rstrip(b"\x00")
                i = bisect.bisect_left(arr, bare)
                out.append(i < len(arr) and arr[i] == bare)
            return out
        wanted = np.array(keys, dtype="S16")
        at = np.minimum(np.searchsorted(arr, wanted), len(arr) - 1)
        return (arr[at] == wanted).tolist()

    def _merge(self) -> None:
        arr = self._sorted
        if self._removed:
            arr = arr[~np.isin(arr, np.array(list(self._removed), dtype="S16"))]
        if self._added:
            arr = np.union1d(arr, np.array(list(self._added), dtype="S16"))
        self._sorted = arr
        self._added.clear()
        self._removed.clear()
