"""How the command line and the inspector word a count: ``1 item``, ``2 items``, ``0 items``."""

from __future__ import annotations


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, with an ``s`` unless ``n`` is 1.

    >>> count(1, "item"), count(0, "item"), count(3, "vector record")
    ('1 item', '0 items', '3 vector records')
    """
    return f"{n} {noun if n == 1 else noun + 's'}"
