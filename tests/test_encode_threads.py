"""torch threads of an encode: the decision from the machine's shape, and the scoped setting."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator

import pytest
import torch

from langgraph_episodic import encode_threads
from langgraph_episodic.encode_threads import (
    Machine,
    OthersUse,
    OwnLoad,
    busy_seconds,
    choose_threads,
    torch_threads,
)


def quiet(cpus: int, torch_default: int | None = None) -> Machine:
    return Machine(cpus=cpus, load=0.1, own=0.0, torch_default=torch_default or cpus)


@pytest.mark.parametrize("cpus", [1, 2, 8, 16, 64])
def test_a_quiet_machine_gives_a_large_call_torchs_own_count(cpus: int) -> None:
    assert choose_threads(500, quiet(cpus)) == cpus


@pytest.mark.parametrize("cpus", [2, 8, 16])
def test_a_machine_busy_on_every_core_gives_one_thread(cpus: int) -> None:
    busy = Machine(cpus=cpus, load=float(cpus), own=0.0, torch_default=cpus)
    assert choose_threads(500, busy) == 1
    overloaded = Machine(cpus=cpus, load=3.0 * cpus, own=0.0, torch_default=cpus)
    assert choose_threads(500, overloaded) == 1


@pytest.mark.parametrize(("cpus", "load", "expected"), [(8, 3.0, 5), (8, 2.6, 5), (16, 4.6, 11), (2, 0.9, 1), (2, 1.4, 1)])
def test_a_partly_busy_machine_gives_the_free_cores(cpus: int, load: float, expected: int) -> None:
    machine = Machine(cpus=cpus, load=load, own=0.0, torch_default=cpus)
    assert choose_threads(500, machine) == expected


@pytest.mark.parametrize("cpus", [2, 8])
def test_a_few_tenths_of_a_core_in_use_elsewhere_leave_every_core_free(cpus: int) -> None:
    """A light background (a desktop, the load average's lag behind our own last encode) must not
    cost a quiet machine its cores: on two, one thread encodes at about 0.85x of two."""
    light = Machine(cpus=cpus, load=0.45, own=0.0, torch_default=cpus)
    assert choose_threads(500, light) == cpus
    half = Machine(cpus=cpus, load=0.6, own=0.0, torch_default=cpus)
    assert choose_threads(500, half) == cpus - 1


def test_our_own_load_does_not_count_as_busy() -> None:
    """The load average counts our own encodes: right after a batch on both cores the machine
    is still quiet for the next one."""
    ours = Machine(cpus=2, load=2.0, own=2.0, torch_default=2)
    assert choose_threads(500, ours) == 2
    theirs = Machine(cpus=2, load=2.0, own=0.0, torch_default=2)
    assert choose_threads(500, theirs) == 1


def test_never_more_threads_than_cpus_nor_than_torchs_setting() -> None:
    told_eight = Machine(cpus=2, load=0.0, own=0.0, torch_default=8)  # OMP_NUM_THREADS=8
    assert choose_threads(500, told_eight) == 2
    pinned_low = Machine(cpus=16, load=0.0, own=0.0, torch_default=4)  # the caller's setting
    assert choose_threads(500, pinned_low) == 4


def test_small_calls_run_on_one_thread_and_unknown_load_trusts_the_machine() -> None:
    for texts in (1, 8):
        assert choose_threads(texts, quiet(16), small_call=8) == 1
    assert choose_threads(9, quiet(16), small_call=8) == 16
    windows = Machine(cpus=8, load=None, own=0.0, torch_default=8)
    assert choose_threads(500, windows) == 8


def test_machine_now_reads_affinity_load_and_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(12)), raising=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (7.5, 1.0, 1.0))
    machine = encode_threads.machine_now()
    assert (machine.cpus, machine.load) == (12, 7.5)
    assert machine.torch_default == torch.get_num_threads()


def test_own_load_follows_our_cpu_use() -> None:
    own = OwnLoad()
    time.sleep(0.2)
    idle = own.sample()
    end = time.process_time() + 0.5
    while time.process_time() < end:
        pass
    busy = own.sample()
    assert busy > idle
    assert 0.0 <= idle < busy <= (os.cpu_count() or 1)


def test_measured_cpu_use_of_others_decides_over_the_load_average() -> None:
    """Our own threads beyond the cores (torch told 8 on 2) wait in the run queue and so count
    in the load average, not in other processes' CPU time."""
    oversubscribed = Machine(cpus=2, load=8.0, own=2.0, torch_default=8, others=0.1)
    assert choose_threads(500, oversubscribed) == 2
    busy = Machine(cpus=2, load=0.0, own=0.0, torch_default=2, others=1.3)
    assert choose_threads(500, busy) == 1
    no_load_average = Machine(cpus=8, load=None, own=0.0, torch_default=8, others=3.0)
    assert choose_threads(500, no_load_average) == 5


STAT = """cpu  900 0 300 5000 50 0 10 0 0 0
cpu0 100 0 50 2000 10 0 5 0 0 0
cpu1 200 10 100 1000 20 5 5 30 0 0
cpu2 600 0 150 2000 20 0 0 0 0 0
intr 12345 0 0
ctxt 999
"""


def test_busy_seconds_sum_the_busy_fields_of_our_cpus_only() -> None:
    assert busy_seconds(STAT, {0}, 100) == pytest.approx((100 + 50 + 5) / 100)
    # user + nice + system + irq + softirq + steal; idle and I/O wait are not busy
    assert busy_seconds(STAT, {1}, 100) == pytest.approx((200 + 10 + 100 + 5 + 5 + 30) / 100)
    assert busy_seconds(STAT, {0, 1, 2}, 100) == pytest.approx(
        busy_seconds(STAT, {0}, 100) + busy_seconds(STAT, {1}, 100) + busy_seconds(STAT, {2}, 100)
    )
    assert busy_seconds(STAT, {7}, 100) == 0.0


class Counters:
    """Scripted readings: wall clock, busy CPU seconds of the machine, our own CPU seconds."""

    def __init__(self) -> None:
        self.wall, self.busy, self.own = 0.0, 0.0, 0.0

    def advance(self, seconds: float, others: float, ours: float) -> None:
        self.wall += seconds
        self.own += ours * seconds
        self.busy += (others + ours) * seconds


def test_others_use_is_the_machines_cpu_time_minus_ours() -> None:
    c = Counters()
    use = OthersUse(busy=lambda: c.busy, own=lambda: c.own, clock=lambda: c.wall)
    assert use.sample() is None  # one reading is no rate
    c.advance(2.0, others=0.25, ours=2.0)  # our 2 cores busy, a quarter core elsewhere
    assert use.sample() == pytest.approx(0.25)
    c.advance(0.1, others=2.0, ours=0.0)  # too short a window: the estimate is kept
    assert use.sample() == pytest.approx(0.25)
    for _ in range(60):  # another process takes a core for a minute: followed within seconds
        c.advance(1.0, others=1.0, ours=0.5)
    assert use.sample() == pytest.approx(1.0, abs=0.02)
    for _ in range(30):  # it ended 30 s ago: the load average would still say about 0.4
        c.advance(1.0, others=0.0, ours=1.0)
    assert use.sample() == pytest.approx(0.0, abs=0.06)


def test_others_use_is_none_without_counters() -> None:
    use = OthersUse(busy=lambda: None, own=lambda: 0.0, clock=time.monotonic)
    time.sleep(0.01)
    assert use.sample() is None


# ------------------------------------------------------------------ the scoped setting


@pytest.fixture
def caller_threads() -> Iterator[int]:
    """torch runs with 3 threads in the caller, also for threads started later; restored."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(before)


def fresh_thread_count() -> int:
    """The count a thread that starts torch work now gets."""
    out: list[int] = []
    worker = threading.Thread(target=lambda: out.append(torch.get_num_threads()))
    worker.start()
    worker.join()
    return out[0]


@pytest.fixture
def fast_switching() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_the_count_applies_inside_only(caller_threads: int) -> None:
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == caller_threads
    assert fresh_thread_count() == caller_threads
    with torch_threads(0):
        assert torch.get_num_threads() == caller_threads


def test_concurrent_bodies_each_get_their_count_and_nothing_leaks(
    caller_threads: int, fast_switching: None
) -> None:
    """Six threads (three used torch before, three never did) enter at once with different
    counts and wait for each other inside: each sees its own count inside, has its own count
    back afterwards, and threads started later get the caller's."""
    wanted = [1, 2, 4, 1, 2, 4]
    parties = len(wanted)
    inside, after, errors = [0] * parties, [0] * parties, []
    ready, barrier = threading.Barrier(parties + 1), threading.Barrier(parties)

    def body(i: int) -> None:
        try:
            if i % 2 == 0:
                torch.get_num_threads()  # this thread used torch before (the caller's count)
            ready.wait(timeout=20)
            with torch_threads(wanted[i]):
                barrier.wait(timeout=20)
                inside[i] = torch.get_num_threads()
                barrier.wait(timeout=20)
            after[i] = torch.get_num_threads()
        except threading.BrokenBarrierError as exc:  # a body that never came: checked below
            errors.append(exc)

    workers = [threading.Thread(target=body, args=(i,)) for i in range(parties)]
    for w in workers:
        w.start()
    ready.wait(timeout=20)
    for w in workers:
        w.join(timeout=30)
    assert not errors
    assert inside == wanted
    assert after == [caller_threads] * parties
    assert torch.get_num_threads() == caller_threads
    assert fresh_thread_count() == caller_threads


def test_a_thread_that_started_torch_during_our_body_gets_the_callers_count(
    caller_threads: int,
) -> None:
    started = threading.Event()
    release = threading.Event()
    seen: list[int] = []

    def ours() -> None:
        with torch_threads(1):
            started.set()
            release.wait(timeout=20)

    def late() -> None:
        seen.append(torch.get_num_threads())  # first torch work: inherits our body's count
        with torch_threads(2):
            seen.append(torch.get_num_threads())
        seen.append(torch.get_num_threads())

    first = threading.Thread(target=ours)
    first.start()
    started.wait(timeout=20)
    second = threading.Thread(target=late)
    second.start()
    second.join(timeout=20)
    release.set()
    first.join(timeout=20)
    assert seen[1:] == [2, caller_threads]
    assert fresh_thread_count() == caller_threads


def test_a_setting_changed_by_the_user_meanwhile_is_kept(caller_threads: int) -> None:
    inside = threading.Event()
    changed = threading.Event()

    def ours() -> None:
        with torch_threads(1):
            inside.set()
            changed.wait(timeout=20)

    worker = threading.Thread(target=ours)
    worker.start()
    inside.wait(timeout=20)
    torch.set_num_threads(5)  # the user's own change, in their thread, while we encode
    changed.set()
    worker.join(timeout=20)
    assert torch.get_num_threads() == 5
    assert fresh_thread_count() == 5
