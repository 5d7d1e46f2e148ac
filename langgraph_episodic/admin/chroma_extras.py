"""What the LangGraph ``BaseStore`` API cannot say or set, read from a ``ChromaStore`` directly.

Export wants each item's TTL, expiry and indexed fields; import wants to restore the original
``created_at`` / ``updated_at`` / expiry (``put`` always stamps "now"). ``ChromaStore`` keeps all
of these and hands them out through its own methods (:meth:`~langgraph_episodic.ChromaStore.item_extras`,
:meth:`~langgraph_episodic.ChromaStore.restore_times`). Any other store gets none of this: its
export carries the five public fields only, and imported items are stamped with the import time.
``tests/cli`` checks the exact round trip, so a change of the layout shows up there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TypeGuard

from langgraph.store.base import BaseStore

from ..chroma import ChromaStore, ItemExtras

Extras = ItemExtras
"""Store-specific facts about one item (:class:`~langgraph_episodic.chroma.ItemExtras`)."""


def supported(store: BaseStore) -> TypeGuard[ChromaStore]:
    """Whether ``store`` is a ``ChromaStore`` (the only store these helpers understand)."""
    return isinstance(store, ChromaStore)


def read_extras(
    store: ChromaStore, keys: Sequence[tuple[tuple[str, ...], str]]
) -> dict[tuple[tuple[str, ...], str], Extras]:
    """TTL, expiry and indexed fields of the items ``(namespace, key)``; missing ones are absent."""
    return store.item_extras(keys)


def restore_times(
    store: ChromaStore,
    times: Mapping[tuple[tuple[str, ...], str], tuple[datetime, datetime, datetime | None]],
) -> None:
    """Set ``created_at``, ``updated_at`` and the expiry of existing items to the given times."""
    store.restore_times(times)


def stored_dims(store: ChromaStore) -> int | None:
    """Dimensions of the vectors already in ``store`` (None when it holds none)."""
    return store.vector_dims()
