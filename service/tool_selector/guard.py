"""ASGI middleware in front of the search endpoint: auth, overload, body timeout, deadline.

In order, before any handler code runs:

1. **Auth** (when keys are configured): the token is checked from the headers, before a byte
   of the body is read; 401 ``unauthorized`` with ``WWW-Authenticate: Bearer``.
2. **In-flight cap**: at most ``max_in_flight`` search requests at once per process. One more
   waits, first come first served, up to ``admission_wait_ms`` for a slot to be handed over
   (a burst of a few milliseconds is absorbed instead of refused), then gets a 503
   ``overloaded`` with ``Retry-After`` so the proxy fails open instead of queueing behind work
   it will time out on anyway. Auth comes first, so only a trusted caller can hold a slot.
3. **Body read** with a total time budget (``body_timeout_seconds``, 408 ``request_timeout``;
   granian itself never times out a stalled body) and the size cap (413, from
   ``Content-Length`` or while reading).
4. **Deadline**: once the body is in, the handler has ``request_deadline_seconds`` to answer;
   then the request is cancelled and answered 503 ``deadline_exceeded``. Ranking already
   running finishes in its thread and keeps its worker slot (``workers.WorkerPool``);
   ranking not yet started never starts.

``/metrics`` is guarded by auth only when ``auth_metrics`` is set. ``/healthz`` and
``/readyz`` are always open (probes carry no credentials).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import Any, cast

import anyio
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from tool_selector.auth import KeyRing, token_from_headers
from tool_selector.contracts import SEARCH_PATHS, error_bytes
from tool_selector.errors import (
    PayloadTooLarge,
    RequestError,
    RequestTimeout,
    ServiceUnavailable,
    Unauthorized,
)
from tool_selector.runtime import Runtime

METRICS_PATH = "/metrics"


class Guard:
    """The middleware; one instance per route, sharing ``state`` (the in-flight count)."""

    def __init__(self, app: ASGIApp, runtime: Runtime, keys: KeyRing, state: GuardState) -> None:
        self.app = app
        self.runtime = runtime
        self.keys = keys
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        try:
            if path in SEARCH_PATHS:
                self._authenticate(scope)
                await self._search(scope, receive, send)
                return
            if path == METRICS_PATH and self.runtime.settings.auth_metrics:
                self._authenticate(scope)
        except _Disconnected:
            return
        except RequestError as exc:
            await self._refuse(send, path, exc)
            return
        await self.app(scope, receive, send)

    def _authenticate(self, scope: Scope) -> None:
        if not self.keys.enabled:
            return
        token = token_from_headers(scope["headers"])
        if token is None:
            raise Unauthorized(
                "unauthorized", "missing service token (Authorization: Bearer or X-API-Key)"
            )
        if not self.keys.accepts(token):
            raise Unauthorized("unauthorized", "service token not accepted")

    async def _search(self, scope: Scope, receive: Receive, send: Send) -> None:
        settings = self.runtime.settings
        if not await self._admit(settings.max_in_flight, settings.admission_wait_ms / 1000):
            raise ServiceUnavailable(
                "overloaded", f"{settings.max_in_flight} requests in flight; retry later"
            )
        try:
            body = await self._read_body(scope, receive)
            started = False

            async def tracking_send(message: Message) -> None:
                nonlocal started
                started = started or message["type"] == "http.response.start"
                await send(message)

            with anyio.move_on_after(settings.request_deadline_seconds) as deadline:
                await self.app(scope, _replay(body, receive), tracking_send)
            if deadline.cancelled_caught and not started:
                raise ServiceUnavailable(
                    "deadline_exceeded",
                    f"no answer within {settings.request_deadline_seconds:g} s",
                )
        finally:
            self.state.release()

    async def _admit(self, cap: int, wait: float) -> bool:
        if self.state.try_acquire(cap):
            return True
        began = time.perf_counter()
        admitted = await self.state.acquire(wait)
        self.runtime.metrics.admission_wait.labels("admitted" if admitted else "refused").observe(
            time.perf_counter() - began
        )
        return admitted

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes:
        settings = self.runtime.settings
        cap = settings.max_body_bytes
        declared = _content_length(scope)
        if declared is not None and declared > cap:
            raise _too_large(cap)
        chunks: list[bytes] = []
        size = 0
        try:
            with anyio.fail_after(settings.body_timeout_seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise _Disconnected
                    chunk = cast("bytes", message.get("body", b""))
                    size += len(chunk)
                    if size > cap:
                        raise _too_large(cap)
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        return b"".join(chunks)
        except TimeoutError as exc:
            raise RequestTimeout(
                "request_timeout",
                f"request body not received within {settings.body_timeout_seconds:g} s",
            ) from exc

    async def _refuse(self, send: Send, path: str, exc: RequestError) -> None:
        self.runtime.metrics.errors.labels(exc.code).inc()
        headers = [(b"content-type", b"application/json")]
        if exc.status == 401:
            headers.append((b"www-authenticate", b"Bearer"))
        if exc.code == "overloaded":
            retry = str(self.runtime.settings.retry_after_seconds).encode()
            headers.append((b"retry-after", retry))
        if exc.status == 408:
            headers.append((b"connection", b"close"))
        payload = error_bytes(path, exc.code, exc.detail)
        headers.append((b"content-length", str(len(payload)).encode()))
        await send({"type": "http.response.start", "status": exc.status, "headers": headers})
        await send({"type": "http.response.body", "body": payload, "more_body": False})


class _Disconnected(Exception):
    """The client closed the connection while sending its body: nobody to answer."""


class GuardState:
    """The in-flight slots shared by every route's ``Guard`` in one process (one event loop).

    A freed slot goes straight to the longest-waiting request (no barging), so a waiter is
    never starved by later arrivals and ``in_flight`` never exceeds the cap.
    """

    def __init__(self) -> None:
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    def try_acquire(self, cap: int) -> bool:
        """Take a slot if one is free and nobody is waiting for one."""
        if self.in_flight < cap and not self._waiters:
            self.in_flight += 1
            return True
        return False

    async def acquire(self, wait: float) -> bool:
        """Wait up to ``wait`` seconds for a slot to be handed over; True once it is held."""
        if wait <= 0:
            return False
        handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(handed)
        try:
            with anyio.move_on_after(wait):
                await handed
        except BaseException:
            self._give_back(handed)  # cancelled from outside: never keep a slot nobody uses
            raise
        if handed.done() and not handed.cancelled():
            return True
        self._give_back(handed)
        return False

    def release(self) -> None:
        """Free a slot: hand it to the longest waiter, or count it free."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.in_flight -= 1

    def _give_back(self, handed: asyncio.Future[None]) -> None:
        if handed.done() and not handed.cancelled():
            self.release()
            return
        handed.cancel()
        with contextlib.suppress(ValueError):
            self._waiters.remove(handed)


def guard_middleware(runtime: Runtime, keys: KeyRing) -> Any:
    """A Litestar middleware definition: ``Litestar(middleware=[guard_middleware(...)])``."""
    from litestar.middleware import DefineMiddleware  # noqa: PLC0415

    return DefineMiddleware(Guard, runtime=runtime, keys=keys, state=GuardState())


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _too_large(cap: int) -> PayloadTooLarge:
    return PayloadTooLarge("payload_too_large", f"request body is larger than {cap} bytes")
