"""The guard's in-flight slot comes back on every way a search request can end."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from tool_selector.http.app import create_app
from tool_selector.http.auth import KeyRing
from tool_selector.http.guard import Guard, GuardState
from tool_selector.settings import Settings

SCOPE = {
    "type": "http",
    "method": "POST",
    "path": "/v1/tool-discovery/search",
    "headers": [(b"content-type", b"application/json")],
}
Message = dict[str, Any]


STALL: Message = {"type": "stall"}
DISCONNECT: Message = {"type": "http.disconnect"}


def chunks(*parts: bytes, then: Message | None = None) -> Callable[[], Awaitable[Message]]:
    """A receive() that yields ``parts`` (the whole body unless ``then``), then ``then``."""
    queue: list[Message] = [
        {"type": "http.request", "body": p, "more_body": i < len(parts) - 1 or then is not None}
        for i, p in enumerate(parts)
    ]

    async def receive() -> Message:
        if queue:
            return queue.pop(0)
        if then is not STALL:
            return then or DISCONNECT
        await anyio.sleep_forever()
        raise AssertionError

    return receive


async def answer(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


async def hang(scope: Any, receive: Any, send: Any) -> None:
    await anyio.sleep_forever()


async def fail(scope: Any, receive: Any, send: Any) -> None:
    raise RuntimeError("handler bug")


@pytest.mark.parametrize(
    ("app", "receive", "outcome"),
    [
        (answer, lambda: chunks(b"{}"), 200),
        (hang, lambda: chunks(b"{}"), 503),
        (fail, lambda: chunks(b"{}"), "RuntimeError"),
        (answer, lambda: chunks(b"{", then=STALL), 408),
        (answer, lambda: chunks(b"{", then=DISCONNECT), 400),
        (answer, lambda: chunks(b"x" * 60, b"x" * 60), 413),
        (answer, lambda: chunks(b"{", then=STALL), "cancelled"),
    ],
    ids=["answered", "deadline", "raises", "body-stalls", "disconnect", "too-big", "cancelled"],
)
def test_slot_is_released(app: Any, receive: Any, outcome: int | str | None) -> None:
    settings = Settings(
        encoder="none", body_timeout_seconds=0.05, request_deadline_seconds=0.05, max_body_bytes=100
    )
    state = GuardState()
    guard = Guard(app, create_app(settings).state.runtime, KeyRing(), state)
    statuses: list[int] = []

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def scenario() -> int | str | None:
        with anyio.move_on_after(0.01 if outcome == "cancelled" else 5) as scope:
            try:
                await guard(SCOPE, receive(), send)  # type: ignore[arg-type]
            except RuntimeError as exc:
                return type(exc).__name__
        if scope.cancelled_caught:
            return "cancelled"
        return statuses[0] if statuses else None

    assert (anyio.run(scenario), state.in_flight) == (outcome, 0)


def test_a_freed_slot_goes_to_the_longest_waiter() -> None:
    state = GuardState()

    async def scenario() -> list[str]:
        order: list[str] = []
        assert state.try_acquire(1)

        async def waiter(name: str) -> None:
            if await state.acquire(5):
                order.append(name)

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter, "first")
            await anyio.sleep(0.01)
            tg.start_soon(waiter, "second")
            await anyio.sleep(0.01)
            state.release()
            await anyio.sleep(0.01)
            state.release()
        state.release()
        return order

    assert (anyio.run(scenario), state.in_flight) == (["first", "second"], 0)


@pytest.mark.parametrize("wait", [0.0, 0.02], ids=["no-wait", "times-out"])
def test_no_slot_within_the_wait_is_refused(wait: float) -> None:
    state = GuardState()
    assert state.try_acquire(1)
    assert anyio.run(state.acquire, wait) is False
    state.release()
    assert (state.in_flight, len(state._waiters)) == (0, 0)


def test_a_waiter_cancelled_just_after_the_handover_gives_the_slot_back() -> None:
    """``task.cancel()`` landing between the hand-over and the waiter resuming."""
    state = GuardState()

    async def scenario() -> None:
        assert state.try_acquire(1)
        waiter = asyncio.create_task(state.acquire(5))
        await asyncio.sleep(0.01)
        state.release()  # handed over: the waiter holds it from now on...
        waiter.cancel()  # ...but is cancelled before it resumes
        with pytest.raises(asyncio.CancelledError):
            await waiter

    asyncio.run(scenario())
    assert (state.in_flight, len(state._waiters)) == (0, 0)


def test_cancelled_waiters_hold_no_slot() -> None:
    """The guard's pattern (acquire, then release in ``finally``) under anyio cancellation."""
    state = GuardState()

    async def request() -> None:
        if await state.acquire(5):
            try:
                await anyio.sleep_forever()
            finally:
                state.release()

    async def scenario() -> None:
        assert state.try_acquire(1)
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(request)
            await anyio.sleep(0.01)
            state.release()
            await anyio.lowlevel.checkpoint()
            tg.cancel_scope.cancel()

    anyio.run(scenario)
    assert (state.in_flight, len(state._waiters)) == (0, 0)


def test_guard_serves_a_request_that_waited_for_a_slot() -> None:
    settings = Settings(encoder="none", max_in_flight=1, admission_wait_ms=2000)
    runtime = create_app(settings).state.runtime
    state = GuardState()

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        await anyio.sleep(0.05)
        await answer(scope, receive, send)

    guard = Guard(slow, runtime, KeyRing(), state)
    statuses: list[int] = []

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def scenario() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(guard, SCOPE, chunks(b"{}"), send)

    anyio.run(scenario)
    waited = runtime.metrics.registry.get_sample_value(
        "tool_selector_admission_wait_seconds_count", {"result": "admitted"}
    )
    assert (statuses, state.in_flight, waited) == ([200, 200, 200], 0, 2)
