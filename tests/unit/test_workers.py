import contextlib
import threading

import anyio

from tool_selector.http.workers import WorkerPool


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
