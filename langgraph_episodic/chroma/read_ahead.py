"""Reading the next page from Chroma while the caller works on the current one.

Chroma's embedded client releases the GIL for part of a ``get``, so a thread reading page
``n + 1`` of a namespace's first load overlaps some of the Python work on page ``n``. One page
is read ahead at most.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar, cast

_T = TypeVar("_T")

_END = object()


def read_ahead(pages: Iterator[_T]) -> Generator[_T, None, None]:
    """The items of ``pages``, in order, each next one read by a thread while the caller
    handles the current one (one read at a time, so ``pages`` runs as if alone). An error
    raised by ``pages`` is raised here, in place of the item; closing this iterator early
    waits for the read under way, then reads no more."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="episodic-read-ahead") as pool:
        pending = pool.submit(next, pages, _END)
        while True:
            page = pending.result()
            if page is _END:
                return
            pending = pool.submit(next, pages, _END)
            yield cast(_T, page)
