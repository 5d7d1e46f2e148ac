"""A user's checkpoint threads: how a user id appears in thread ids, and listing and deleting
the threads of one user. :mod:`langgraph_episodic.graph.threads` builds sessions on it;
forgetting a user (:mod:`langgraph_episodic.privacy.forget`) deletes them with it."""

from __future__ import annotations

import logging
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from ._effects import Plan, call, twins
from .errors import InvalidValueError

logger = logging.getLogger(__name__)


def check_id(value: str, what: str) -> str:
    """``value`` when it is a non-empty string, else a ``ValueError`` naming ``what``."""
    if not isinstance(value, str) or not value:
        raise InvalidValueError(f"{what} must be a non-empty string, got {value!r}.")
    return value


def encode_user_id(user_id: str) -> str:
    """The user id as it appears in thread ids (``%`` and ``:`` percent-encoded).

    >>> encode_user_id("alice"), encode_user_id("alice:x")
    ('alice', 'alice%3Ax')
    """
    return check_id(user_id, "user_id").replace("%", "%25").replace(":", "%3A")


_THREADS_SQL = "SELECT DISTINCT thread_id FROM checkpoints WHERE substr(thread_id, 1, ?) = ?"


def _thread_ids_sync(checkpointer: BaseCheckpointSaver[Any], prefix: str) -> list[str]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    if isinstance(checkpointer, SqliteSaver):  # fast path: no checkpoint is deserialised
        with checkpointer.cursor(transaction=False) as cur:
            cur.execute(_THREADS_SQL, (len(prefix), prefix))
            return sorted(row[0] for row in cur.fetchall())
    ids = {t.config["configurable"]["thread_id"] for t in checkpointer.list(None)}
    return sorted(i for i in ids if i.startswith(prefix))


async def _thread_ids_async(checkpointer: BaseCheckpointSaver[Any], prefix: str) -> list[str]:
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    if isinstance(checkpointer, AsyncSqliteSaver):  # fast path: no checkpoint is deserialised
        await checkpointer.setup()
        async with checkpointer.lock, checkpointer.conn.execute(
            _THREADS_SQL, (len(prefix), prefix)
        ) as cur:
            return sorted(row[0] for row in await cur.fetchall())
    ids = {t.config["configurable"]["thread_id"] async for t in checkpointer.alist(None)}
    return sorted(i for i in ids if i.startswith(prefix))


def user_thread_ids(checkpointer: BaseCheckpointSaver[Any], user_id: str) -> Any:
    """Effect: the sorted ids of ``user_id``'s threads."""
    prefix = encode_user_id(user_id) + ":"
    return call(_thread_ids_sync, _thread_ids_async, checkpointer, prefix)


def _delete(checkpointer: BaseCheckpointSaver[Any], user_id: str) -> Plan[list[str]]:
    """Delete every thread (all checkpoints and writes) of a user; return the deleted ids."""
    thread_ids = yield user_thread_ids(checkpointer, user_id)
    for thread_id in thread_ids:
        yield call(checkpointer.delete_thread, checkpointer.adelete_thread, thread_id)
    logger.info("deleted %d threads of one user", len(thread_ids))
    return list(thread_ids)


delete_user_threads, adelete_user_threads = twins(_delete, "delete_user_threads")
