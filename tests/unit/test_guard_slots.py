"""The guard's in-flight slot comes back on every way a search request can end."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from tool_selector.app import create_app
from tool_selector.auth import KeyRing
from tool_selector.guard import Guard, GuardState
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
        (answer, lambda: chunks(b"{", then=DISCONNECT), None),
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
