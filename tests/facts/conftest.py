"""Fixtures for facts: the tools' stores and calls, and a clock the test moves by hand."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.tools.conftest import backend, call, make_store, mode, store, user

__all__ = ["Clock", "backend", "call", "clock", "make_store", "mode", "store", "user"]


class Clock:
    """A fixed clock: ``clock()`` is ``now`` until the test sets another time."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def set(self, year: int, month: int, day: int) -> None:
        self.now = datetime(year, month, day, 12, tzinfo=timezone.utc)


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 3, 10, 12, tzinfo=timezone.utc))
