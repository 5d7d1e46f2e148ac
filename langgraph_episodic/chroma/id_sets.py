"""Which items a namespace holds, known in process, so an embedded store's put of a new key
skips the read of its old record.

A put reads the record it replaces, and for a new key that read (a large share of a single
put) finds nothing. An embedded store is its folder's only writer, so a namespace this process
saw empty or read whole holds exactly what it held then plus this process's puts minus its
deletes. A store on a server keeps none: other processes write.

:class:`IdSet` keeps one namespace's record ids, 16 bytes each: a sorted array and the recent
changes, merged when they grow past an eighth of the array. A merge takes time in proportion
to the namespace, so it runs outside the state's lock: :meth:`IdSet.start_merge` seals the
changes (constant time), :meth:`Merge.run` builds the merged array from things that never
change, :meth:`IdSet.finish_merge` installs it; changes made meanwhile stay valid on top.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Set
from dataclasses import dataclass
from typing import Any

import numpy as np

_MERGE_MIN = 16
"""Changes kept beside the array before a merge, whatever its size."""
_ONE_BY_ONE = 8
"""Up to this many ids are looked up by bisection, more in one numpy call (its fixed cost is
that of a few dozen bisections)."""


merge_hook: Any = None
"""Tests only: called as ``merge_hook()`` at the start of :meth:`Merge.run` (outside the lock)."""


def _keys(rids: Iterable[str]) -> list[bytes]:
    """Record ids (32 hex digits, :func:`.record_format.item_id`) as the 16 bytes they name."""
    return [bytes.fromhex(rid) for rid in rids]


@dataclass(frozen=True, eq=False)
class Merge:
    """Changes of an :class:`IdSet` sealed to be merged into its sorted array, outside the store
    state's lock: neither the array nor these sets change once sealed."""

    base: np.ndarray
    """The set's sorted array when the changes were sealed."""
    added: Set[bytes]
    """Held, not in ``base``."""
    removed: Set[bytes]
    """In ``base``, not held."""

    def run(self) -> np.ndarray:
        """The sorted array of the ids ``base`` and these changes hold (``O(len(base))``)."""
        hook = merge_hook
        if hook is not None:
            hook()
        arr = self.base
        if self.removed:
            arr = arr[~np.isin(arr, np.array(list(self.removed), dtype="S16"))]
        if self.added:
            arr = np.union1d(arr, np.array(list(self.added), dtype="S16"))
        return arr


class IdSet:
    """The record ids of the items one namespace holds (not thread-safe: the store state's
    lock guards it; only :meth:`Merge.run` works outside it). Lookups and changes take many
    ids at once: one numpy call for all.

    Three layers, each deciding for the ids it names: the recent changes, the changes sealed
    in a :class:`Merge` still running (if any), the sorted array."""

    __slots__ = ("_added", "_merging", "_removed", "_sorted")

    def __init__(self, rids: Iterable[str] = ()) -> None:
        self._sorted = np.unique(np.array(_keys(rids), dtype="S16"))
        """Never changed in place (a :class:`Merge` reads it outside the lock)."""
        self._merging: Merge | None = None
        """Changes sealed by :meth:`start_merge`, not yet installed."""
        self._added: set[bytes] = set()
        """Held, not in the layers below."""
        self._removed: set[bytes] = set()
        """In the layers below, not held."""

    def __len__(self) -> int:
        below = len(self._sorted)
        if self._merging is not None:
            below += len(self._merging.added) - len(self._merging.removed)
        return below - len(self._removed) + len(self._added)

    def __contains__(self, rid: str) -> bool:
        return not self.missing([rid])

    def missing(self, rids: Iterable[str]) -> set[str]:
        """Those of ``rids`` not held."""
        ids = list(rids)
        by_key = dict(zip(_keys(ids), ids, strict=True))
        keys = [k for k in by_key if k not in self._added]
        return {
            by_key[k]
            for k, found in zip(keys, self._below(keys), strict=True)
            if not found or k in self._removed
        }

    def change(self, add: Iterable[str] = (), discard: Iterable[str] = ()) -> None:
        """Hold ``add`` and no longer ``discard`` (an id in both: held)."""
        gone = _keys(discard)
        for key, found in zip(gone, self._below(gone), strict=True):
            self._added.discard(key)
            if found:
                self._removed.add(key)
        new = _keys(add)
        for key, found in zip(new, self._below(new), strict=True):
            if found:
                self._removed.discard(key)
            else:
                self._added.add(key)

    def start_merge(self) -> Merge | None:
        """The merge to run outside the lock if one is due, else None: the recent changes,
        sealed once they grow past an eighth of the array (or those sealed before, whose merge
        never finished). Constant time."""
        if self._merging is not None:
            return self._merging
        if len(self._added) + len(self._removed) <= max(_MERGE_MIN, len(self._sorted) // 8):
            return None
        self._merging = Merge(self._sorted, self._added, self._removed)
        self._added, self._removed = set(), set()
        return self._merging

    def finish_merge(self, merge: Merge, merged: np.ndarray) -> bool:
        """Install ``merged`` (:meth:`Merge.run` of ``merge``) if ``merge`` is still the one
        sealed here (else it was installed already: False). The set holds the same ids
        before and after, so the changes made since the seal stay as they are."""
        if self._merging is not merge:
            return False
        self._sorted = merged
        self._merging = None
        return True

    def _below(self, keys: list[bytes]) -> list[bool]:
        """Whether each key is held by the layers under the recent changes."""
        found = self._in_sorted(keys)
        merging = self._merging
        if merging is None or not (merging.added or merging.removed):
            return found
        added, removed = merging.added, merging.removed
        return [
            key in added or (f and key not in removed) for key, f in zip(keys, found, strict=True)
        ]

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
