import contextlib
import threading

import anyio
import anyio.to_thread

from tool_selector.http.workers import WorkerPool
from tool_selector.ranking.checkpoints import checked, checkpoint


def test_abandoned_work_keeps_its_slot_and_queued_abandoned_work_never_runs() -> None:
    pool = WorkerPool(1)
    release = threading.Event()
    ran: list[str] = []

    def slow(name: str) -> str:
        release.wait(10)
        ran.append(name)
        return name

    def fast(name: str) -> str:
        ran.append(name)
        return name

    async def scenario() -> str:
        with anyio.move_on_after(0.1):
            await pool.run(slow, "abandoned")
        with anyio.move_on_after(0.3):
            await pool.run(fast, "queued-then-abandoned")
        release.set()
        return await pool.run(fast, "after")

    assert anyio.run(scenario) == "after"
    assert ran == ["abandoned", "after"]


def test_never_more_than_size_at_once() -> None:
    pool = WorkerPool(2)
    lock = threading.Lock()
    running = peak = 0

    def work(_: int) -> None:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        threading.Event().wait(0.02)
        with lock:
            running -= 1

    async def scenario() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(pool.run, work, i)

    anyio.run(scenario)
    assert peak == 2


def test_a_failing_function_gives_its_slot_back() -> None:
    pool = WorkerPool(1)

    def boom(_: int) -> int:
        raise ValueError("boom")

    async def scenario() -> int:
        with anyio.fail_after(5):
            for _ in range(2):
                with contextlib.suppress(ValueError):
                    await pool.run(boom, 0)
            return await pool.run(abs, -3)

    assert anyio.run(scenario) == 3


def test_abandoned_work_stops_at_its_next_checkpoint() -> None:
    """Work started before its caller gave up ran to its end, holding its slot (and the GIL
    every request needs); now it stops at its next ``checkpoint()`` and the slot is free."""
    pool = WorkerPool(1)
    stopped = threading.Event()
    give_up = threading.Event()  # ends the loop when the checkpoint did not

    def long(_: str) -> str:
        try:
            while not give_up.wait(0.005):
                checkpoint()
            return "ran to its end"
        finally:
            stopped.set()

    def fast(name: str) -> str:
        return name

    async def scenario() -> str:
        with anyio.move_on_after(0.1):
            await pool.run(long, "abandoned")
        assert await anyio.to_thread.run_sync(stopped.wait, 10)  # stops, or fails here
        return await pool.run(fast, "after")

    try:
        assert anyio.run(scenario) == "after"
    finally:
        give_up.set()


def test_a_checkpoint_outside_a_worker_does_nothing() -> None:
    checkpoint()
    calls: list[int] = []
    with checked(lambda: calls.append(1)):
        checkpoint()
    checkpoint()
    assert calls == [1]
