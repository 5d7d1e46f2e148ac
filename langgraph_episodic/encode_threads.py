"""torch threads of one encode: chosen from the machine at call time, set for that call only.

:func:`choose_threads` decides from the call's size and the machine (:class:`Machine`). On a
quiet machine a large call gets torch's own default (never more threads than CPUs); on a busy
one it gets the cores the other processes leave free, and at least one. A small call (a query)
runs on one thread: a thread that has to wait for a busy core stalls the others at every step
(with the other core of two busy, a query took 3.7 s on two threads against 0.11 s on one).
:func:`torch_threads` applies a count around one encode and puts everything back afterwards.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

_T = TypeVar("_T")

FREE_CORE_SLACK = 0.5
"""How much of a core the other processes may use for it to still count as free: the free
cores ``cpus - others`` are rounded to the nearest count. The two mistakes (one thread too few
on a quiet machine, one too many beside a busy core) cost about the same
(``benchmarks/embedding_threads.py``), and the estimate of the others' use is off by a few
tenths of a core, which a tighter slack would read as a busy core."""

LOAD_WINDOW_S = 60.0
"""Time constant of the kernel's 1-minute load average, used to average our own CPU use alike."""

OTHERS_WINDOW_S = 10.0
"""Time constant of the average of other processes' CPU use (:class:`OthersUse`): the shortest
window of the kernel's pressure figures (the load average's minute trails a change)."""

MIN_SAMPLE_S = 0.5
"""Shortest interval between two readings of the CPU counters that makes a new estimate (the
kernel counts CPU time in ticks of 1/100 s)."""


@dataclass(frozen=True)
class Machine:
    """What the thread decision looks at, read when a call starts (:func:`machine_now`)."""

    cpus: int
    """CPUs this process may run on (its affinity mask; ``os.cpu_count()`` where there is none)."""
    load: float | None
    """The machine's 1-minute load average, or ``None`` where the platform has none."""
    own: float
    """This process's own part of ``load``: its CPU use over about the last minute, in cores."""
    torch_default: int
    """torch's thread count in the calling thread: the caller's setting or torch's default."""
    others: float | None = None
    """Other processes' CPU use on our CPUs, in cores, from the machine's CPU time counters
    (:class:`OthersUse`); ``None`` where there are none (then ``load - own`` stands in)."""


def choose_threads(texts: int, machine: Machine, *, small_call: int = 8) -> int:
    """torch threads for an encode of ``texts`` texts on ``machine``.

    >>> choose_threads(500, Machine(cpus=8, load=0.2, own=0.0, torch_default=8))
    8
    >>> choose_threads(500, Machine(cpus=8, load=6.0, own=0.0, torch_default=8))
    2
    >>> choose_threads(1, Machine(cpus=8, load=0.0, own=0.0, torch_default=8))
    1
    """
    if texts <= small_call:
        return 1
    cap = max(1, min(machine.cpus, machine.torch_default))
    others = machine.others
    if others is None:
        if machine.load is None:
            return cap
        others = max(0.0, machine.load - machine.own)
    free = machine.cpus - others
    return max(1, min(cap, math.floor(free + FREE_CORE_SLACK)))


def _our_cpus() -> set[int]:
    """The CPUs this process may run on (its affinity mask, else all of them)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        try:
            return set(affinity(0))
        except OSError:  # pragma: no cover - a platform that has the call but refuses it
            pass
    return set(range(os.cpu_count() or 1))


def load_average() -> float | None:
    """The 1-minute load average, or ``None`` (Windows has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - not on Linux or macOS
        return None


class OwnLoad:
    """This process's CPU use, averaged the way the kernel averages its load (the load average
    minus this is the other processes' part). The first reading spreads the CPU used since this
    object was made over at least a minute."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._wall = time.monotonic()
        self._cpu = time.process_time()
        self._avg: float | None = None

    def sample(self) -> float:
        with self._lock:
            wall, cpu = time.monotonic(), time.process_time()
            elapsed, used = wall - self._wall, cpu - self._cpu
            if self._avg is None:
                self._avg = used / max(LOAD_WINDOW_S, elapsed)
            elif elapsed > 0:
                weight = 1.0 - math.exp(-elapsed / LOAD_WINDOW_S)
                self._avg += weight * (used / elapsed - self._avg)
            self._wall, self._cpu = wall, cpu
            return self._avg


_OWN_LOAD = OwnLoad()


def busy_seconds(stat: str, cpus: set[int], tick_hz: int) -> float:
    """CPU seconds spent busy so far on ``cpus``, from the text of ``/proc/stat``: user, nice,
    system, irq, softirq and steal time of each ``cpuN`` line (idle and I/O wait are not busy;
    steal is time the machine's host gave to somebody else)."""
    ticks = 0
    for line in stat.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or not name[3:].isdigit() or int(name[3:]) not in cpus:
            continue
        fields = [int(f) for f in rest.split()[:8]]
        fields += [0] * (8 - len(fields))
        user, nice, system, _idle, _iowait, irq, softirq, steal = fields
        ticks += user + nice + system + irq + softirq + steal
    return ticks / tick_hz


def _read_busy() -> float | None:
    try:
        with open("/proc/stat", encoding="ascii") as f:
            stat = f.read()
        hz = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, AttributeError):
        return None
    return busy_seconds(stat, _our_cpus(), hz)


class OthersUse:
    """Other processes' CPU use on our CPUs: the machine's busy CPU time minus ours, per second
    of wall time, averaged with a :data:`OTHERS_WINDOW_S` time constant.

    Unlike the load average, this counts CPU time, not threads waiting for a CPU: our own
    threads beyond the cores (torch told 8 threads on 2) are ours, not somebody else's, and a
    process that ended stops counting within seconds, not a minute. ``sample`` gives ``None``
    until two readings :data:`MIN_SAMPLE_S` apart exist, and off Linux.
    """

    def __init__(
        self,
        busy: Callable[[], float | None] = _read_busy,
        own: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._busy, self._own, self._clock = busy, own, clock
        self._lock = threading.Lock()
        self._last = (clock(), busy(), own())
        self._avg: float | None = None

    def sample(self) -> float | None:
        with self._lock:
            wall, busy, own = self._clock(), self._busy(), self._own()
            last_wall, last_busy, last_own = self._last
            elapsed = wall - last_wall
            if busy is None or last_busy is None or elapsed < MIN_SAMPLE_S:
                if busy is not None and last_busy is None:
                    self._last = (wall, busy, own)
                return self._avg
            rate = max(0.0, ((busy - last_busy) - (own - last_own)) / elapsed)
            if self._avg is None:
                self._avg = rate
            else:
                self._avg += (1.0 - math.exp(-elapsed / OTHERS_WINDOW_S)) * (rate - self._avg)
            self._last = (wall, busy, own)
            return self._avg


_OTHERS = OthersUse()


def machine_now() -> Machine:
    import torch

    return Machine(
        cpus=max(1, len(_our_cpus())),
        load=load_average(),
        own=_OWN_LOAD.sample(),
        torch_default=torch.get_num_threads(),
        others=_OTHERS.sample(),
    )


@dataclass
class _Scopes:
    """Book-keeping of the :func:`torch_threads` bodies running now (under ``lock``)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    active: int = 0
    outer: int = 0  # the count the first of the overlapping bodies found: the process's own
    imposed: Counter[int] = field(default_factory=Counter)  # the counts the running bodies set
    written: int = 0  # what our last set_num_threads wrote (torch keeps it for new threads)
    seen: threading.local = field(default_factory=threading.local)


_SCOPES = _Scopes()


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run the body with ``threads`` torch threads in this thread, then put back the caller's.

    ``0`` or ``None`` leaves torch alone, and so does a count the thread already has. torch's
    CPU builds keep a thread count per thread (OpenMP's) and one for threads that start torch
    work later; ``set_num_threads`` writes both. So, for bodies running in several threads at
    once (our encodes, concurrent):

    * each body runs with its own count, and its thread gets back the count it had;
    * a thread that first used torch while one of our bodies ran (and so inherited its count)
      gets the process's setting back when it runs a body of its own;
    * when the last body ends, threads that start torch work later get the process's setting
      again, unless somebody else changed it meanwhile: then theirs is kept.

    While a body runs, a thread that starts torch work for the first time inherits the body's
    count; this is the one thing torch does not let a caller scope more tightly.
    """
    if not threads:
        yield
        return
    import torch

    scopes = _SCOPES
    with scopes.lock:
        mine = actual = torch.get_num_threads()
        if scopes.active and scopes.imposed[mine] and not getattr(scopes.seen, "known", False):
            mine = scopes.outer  # started torch during one of our bodies: it inherited our count
        scopes.seen.known = True
        change = actual != threads or mine != actual
        if change:
            if scopes.active == 0:
                scopes.outer = mine
            scopes.active += 1
            scopes.imposed[threads] += 1
            torch.set_num_threads(threads)
            scopes.written = threads
    if not change:
        yield
        return
    try:
        yield
    finally:
        with scopes.lock:
            scopes.active -= 1
            scopes.imposed[threads] -= 1
            later = _in_fresh_thread(torch.get_num_threads)  # what threads starting now get
            torch.set_num_threads(mine)
            if later != scopes.written:  # somebody else set torch's threads meanwhile
                want: int | None = later
            else:
                want = scopes.outer if scopes.active == 0 else None
            scopes.written = mine
            if want is not None and want != mine:
                _in_fresh_thread(partial(torch.set_num_threads, want))
                scopes.written = want


def _in_fresh_thread(call: Callable[[], _T]) -> _T:
    """``call()`` in a new thread: it reads or writes the count torch gives threads that start
    torch work (a new thread inherits it) without changing any running thread's own count."""
    out: list[_T] = []
    worker = threading.Thread(target=lambda: out.append(call()), name="torch-threads", daemon=True)
    worker.start()
    worker.join()
    return out[0]
