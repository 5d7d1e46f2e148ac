"""One former per user at a time, across processes: a lease record in the store.

Processes that share a store (a Chroma server, any shared ``BaseStore``) each run their own
worker; without a lease two of them could form one user's queue at the same moment. The
store has no compare-and-swap, so the lease is taken with puts and reads only:

1. the contender writes its own record under ``(LEASE, user)`` (key: its owner id, value: when
   it expires), then
2. reads every record there. It holds the lease only when its record is the *only* live one;
   otherwise it deletes its record and tries again later.

Two contenders can never both hold it: each reads after its own write, so the one that reads
last sees the other's record (a store whose reads see every write that returned before them,
as Chroma's are). Both may back off at once; they then try again after a pause. Renewing is the
same write-then-read, so a holder whose lease expired and was taken meanwhile finds the other
record and stops before it writes; a holder renews before it writes only once its lease is
``RENEW_AFTER_S`` old (a quarter of its life: younger, it cannot have expired anywhere). A crashed holder's record expires after ``LEASE_S``; the
next contender ignores it and deletes it. Expiry compares wall clocks: the machines sharing a
server need clocks within a few seconds of each other.

Within a process the worker's own bookkeeping keeps one thread per user, and
:func:`~langgraph_episodic._keylock.formation_key` names the lock the worker's writes and
:func:`~langgraph_episodic.forget_user` share, so a forget never falls between a batch's check
and its writes.
"""

from __future__ import annotations

import time
import uuid

from langgraph.store.base import BaseStore

from .._effects import run
from .._runner import all_items

LEASE = "_formation"
"""First label of the lease namespaces, ``(LEASE, user_label)``."""

LEASE_S = 60.0
"""How long a lease lasts unless renewed."""

RENEW_AFTER_S = LEASE_S / 4
"""A holder renews its lease before it writes once this long has passed since it took it:
until then its record is live for every other process (whose clock is within a few seconds),
so nobody else can hold the lease, and the write costs no store call for it."""


def new_owner() -> str:
    """An owner id, unique across processes."""
    return uuid.uuid4().hex


def acquire(store: BaseStore, user: str, owner: str) -> bool:
    """Take (or renew) the formation lease of ``user`` (a namespace label) for ``owner`` by
    write-then-read: True when ``owner``'s record is the only live one (it stays); else it is
    deleted and another owner holds the lease. Expired records of others are deleted by the
    holder."""
    ns = (LEASE, user)
    now = time.time()
    store.put(ns, owner, {"owner": owner, "expires_at": now + LEASE_S}, index=False)
    items = run(all_items(store, ns))
    live = [i.key for i in items if float(i.value.get("expires_at") or 0) > now]
    if live == [owner]:
        for item in items:
            if item.key != owner:  # expired: a crashed holder's
                store.delete(ns, item.key)
        return True
    store.delete(ns, owner)
    return False


renew = acquire
"""Extend ``owner``'s lease; False when it was lost (expired and taken by another)."""


def release(store: BaseStore, user: str, owner: str) -> None:
    """Give the lease up (delete ``owner``'s record)."""
    store.delete((LEASE, user), owner)
