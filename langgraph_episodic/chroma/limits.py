"""Size limits of one item: its value as stored, and the text its index fields embed.

A put over a limit is refused before anything is written (in a batch: the whole batch), with
an error naming the limit and the fix; ``None`` turns one off. Sizes are UTF-8 bytes of the
value as compact JSON, and of every text the index fields yield, summed. The defaults leave
room for a whole transcript and a few pages to embed while a put at the limit stays well under
a second, so one oversized put cannot hold the store's other writers for long.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import orjson

DEFAULT_MAX_VALUE_BYTES = 1024 * 1024
"""1 MiB: the largest value (compact JSON, UTF-8) a put accepts by default."""

DEFAULT_MAX_INDEXED_BYTES = 64 * 1024
"""64 KiB: the most text (UTF-8, all index fields of one item) a put embeds by default."""


def json_size(value: Any) -> int:
    """UTF-8 bytes of ``value`` as compact JSON (orjson: a 20 MB value is measured in
    milliseconds; integers beyond 64 bits take the standard library)."""
    try:
        return len(orjson.dumps(value))
    except orjson.JSONEncodeError:
        return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n / 1024:.1f} KiB"


def _check_limit(limit: Any, name: str) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise ValueError(
            f"{name} must be a positive number of bytes or None (no limit), got {limit!r}."
        )
    return limit


@dataclass(frozen=True)
class Limits:
    """The size limits a store enforces on every put (``None``: no limit)."""

    max_value_bytes: int | None = DEFAULT_MAX_VALUE_BYTES
    max_indexed_bytes: int | None = DEFAULT_MAX_INDEXED_BYTES

    def __post_init__(self) -> None:
        _check_limit(self.max_value_bytes, "max_value_bytes")
        _check_limit(self.max_indexed_bytes, "max_indexed_bytes")

    def check_value(self, value: Any, where: str) -> None:
        """Raise ``ValueError`` if ``value`` (already validated) is over ``max_value_bytes``."""
        limit = self.max_value_bytes
        if limit is None:
            return
        size = json_size(value)
        if size > limit:
            raise ValueError(
                f"The value of {where} is {_size(size)} as JSON, over the store's limit of "
                f"{_size(limit)} (max_value_bytes={limit}); nothing was written. Keep large "
                "documents elsewhere (a file, a blob store) and store a reference, split them "
                "into several items, or raise the limit: ChromaStore.persistent(..., "
                "max_value_bytes=...)."
            )

    def check_texts(self, texts: Any, where: str) -> None:
        """Raise ``ValueError`` if the (path, text) pairs to embed exceed ``max_indexed_bytes``."""
        limit = self.max_indexed_bytes
        if limit is None:
            return
        size = sum(len(text.encode("utf-8")) for _, text in texts)
        if size > limit:
            paths = sorted({path for path, _ in texts})
            raise ValueError(
                f"The indexed text of {where} is {_size(size)} (fields {paths}), over the store's "
                f"limit of {_size(limit)} (max_indexed_bytes={limit}); nothing was written. "
                "Index a shorter field (index=['summary']), split the text into several items, "
                "put it with index=False, or raise the limit: ChromaStore.persistent(..., "
                "max_indexed_bytes=...)."
            )
